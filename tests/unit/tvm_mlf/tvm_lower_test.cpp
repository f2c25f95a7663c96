// Lowering of fused TVM functions to IR ops (frontends/tvm_mlf/tvm_lower.h): the function
// name table, bias / activation folding, window inference and the opaque fallback, on
// synthetic GraphExecutor graphs.
#include <gtest/gtest.h>

#include "frontends/tvm_mlf/tvm_lower.h"
#include "frontends/tvm_mlf/tvm_mlf_reader.h"
#include "tests/unit/tvm_mlf/mlf_test_util.h"

namespace npusim::frontends {
namespace {

using ir::OpKind;
using json::Json;
using tvm::infer_conv_axis;
using tvm::infer_pool_axis;
using tvm::WindowAxis;

// Builds a GraphExecutor graph node by node (one output each).
class G {
 public:
  int input(const std::string& name, const ir::Shape& shape, const std::string& dtype = "float32") {
    m_args.push_back(static_cast<int>(m_nodes.size()));
    m_nodes.push_back({{"op", "null"}, {"name", name}, {"inputs", Json::array()}});
    return entry(shape, dtype);
  }
  int op(const std::string& func, const std::vector<int>& inputs, const ir::Shape& shape, const std::string& dtype = "float32") {
    Json ins = Json::array();
    for (int i : inputs) ins.push_back(Json::array({i, 0, 0}));
    m_nodes.push_back({{"op", "tvm_op"},
                       {"name", func},
                       {"attrs", {{"func_name", func}, {"num_inputs", std::to_string(inputs.size())}, {"num_outputs", "1"}, {"flatten_data", "0"}}},
                       {"inputs", ins}});
    return entry(shape, dtype);
  }
  Json json(int head) const {
    Json rows = Json::array();
    for (size_t i = 0; i <= m_nodes.size(); ++i) rows.push_back(i);
    return Json{{"nodes", m_nodes},
                {"arg_nodes", m_args},
                {"heads", Json::array({Json::array({head, 0, 0})})},
                {"attrs", {{"dltype", Json::array({"list_str", m_dltypes})},
                           {"storage_id", Json::array({"list_int", m_sids})},
                           {"shape", Json::array({"list_shape", m_shapes})}}},
                {"node_row_ptr", rows}};
  }
  TvmMlfResult read(int head) const { return read_tvm_graph_json(json(head), "synthetic.json"); }

 private:
  int entry(const ir::Shape& shape, const std::string& dtype) {
    m_shapes.push_back(shape);
    m_dltypes.push_back(dtype);
    m_sids.push_back(static_cast<int>(m_sids.size()));
    return static_cast<int>(m_nodes.size()) - 1;
  }
  Json m_nodes = Json::array(), m_shapes = Json::array(), m_dltypes = Json::array(), m_sids = Json::array();
  std::vector<int> m_args;
};

std::vector<OpKind> ops(const ir::Graph& g) {
  std::vector<OpKind> r;
  for (const ir::Layer& l : g.layers) r.push_back(l.op);
  return r;
}

void expect_axis(std::optional<WindowAxis> a, int64_t k, int64_t s, int64_t lo, int64_t hi) {
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->kernel, k);
  EXPECT_EQ(a->stride, s);
  EXPECT_EQ(a->pad_lo, lo);
  EXPECT_EQ(a->pad_hi, hi);
}

TEST(TvmLower, ConvWindowInference) {
  expect_axis(infer_conv_axis(224, 112, 7), 7, 2, 3, 3);  // ResNet stem
  expect_axis(infer_conv_axis(56, 56, 3), 3, 1, 1, 1);
  expect_axis(infer_conv_axis(56, 28, 3), 3, 2, 1, 1);
  expect_axis(infer_conv_axis(56, 28, 1), 1, 2, 0, 0);    // 1x1 stride-2 downsample
  expect_axis(infer_conv_axis(32, 30, 3), 3, 1, 0, 0);    // valid padding
  expect_axis(infer_conv_axis(9, 5, 3), 3, 2, 1, 1);
  expect_axis(infer_conv_axis(7, 1, 7), 7, 1, 0, 0);
  expect_axis(infer_conv_axis(8, 8, 2), 2, 1, 0, 1);      // even kernel, same size: extra padding at the end
  expect_axis(infer_conv_axis(8, 4, 2), 2, 2, 0, 0);      // patchify
  expect_axis(infer_conv_axis(4, 10, 3), 3, 1, 4, 4);     // more padding than the kernel: second pass
  EXPECT_FALSE(infer_conv_axis(0, 1, 1).has_value());
}

TEST(TvmLower, PoolWindowInference) {
  expect_axis(infer_pool_axis(8, 4), 2, 2, 0, 0);
  expect_axis(infer_pool_axis(112, 56), 2, 2, 0, 0);
  expect_axis(infer_pool_axis(5, 2), 2, 2, 0, 0);
  expect_axis(infer_pool_axis(5, 3), 2, 2, 1, 1);
  expect_axis(infer_pool_axis(7, 1), 7, 7, 0, 0);
  expect_axis(infer_pool_axis(6, 6), 1, 1, 0, 0);
  EXPECT_FALSE(infer_pool_axis(4, 9).has_value());
}

TEST(TvmLower, ResidualBlockWithBiasAddAndRelu) {
  G g;
  const int x = g.input("x", {1, 8, 16, 16});
  const int w1 = g.input("p0", {8, 8, 3, 3});
  const int b1 = g.input("p1", {8, 1, 1});
  const int c1 = g.op("tvmgen_default_fused_nn_conv2d_add_nn_relu", {x, w1, b1}, {1, 8, 16, 16});
  const int w2 = g.input("p2", {8, 8, 3, 3});
  const int b2 = g.input("p3", {8, 1, 1});
  // conv + bias + residual add + relu: the relu follows the residual add, so it is an op of its own.
  const int c2 = g.op("tvmgen_default_fused_nn_conv2d_add_add_nn_relu_1", {c1, w2, b2, x}, {1, 8, 16, 16});
  const int gap = g.op("tvmgen_default_fused_nn_global_avg_pool2d", {c2}, {1, 8, 1, 1});
  const int flat = g.op("tvmgen_default_fused_reshape_squeeze", {gap}, {1, 8});
  const TvmMlfResult r = g.read(flat);
  const ir::Graph& ir = r.graph;
  ASSERT_EQ(ops(ir), (std::vector<OpKind>{OpKind::Conv2d, OpKind::Conv2d, OpKind::ElementWiseAdd, OpKind::Relu,
                                          OpKind::GlobalAvgPool2d, OpKind::Reshape}));
  EXPECT_EQ(ir.layers[0].activation, "relu");
  EXPECT_EQ(ir.layers[1].activation, "");
  EXPECT_EQ(ir.layers[1].inputs.size(), 3u);
  EXPECT_EQ(ir.layers[1].name, "tvmgen_default_fused_nn_conv2d_add_add_nn_relu_1/nn_conv2d");
  EXPECT_EQ(ir.layers[2].previous, (std::vector<std::string>{ir.layers[1].name, "x"}));
  EXPECT_EQ(ir.layers[3].name, "tvmgen_default_fused_nn_conv2d_add_add_nn_relu_1/nn_relu");
  EXPECT_EQ(ir.tensor(ir.layers[1].inputs[2]).role, ir::TensorRole::Bias);
  EXPECT_EQ(ir.layers[0].macs(), 8 * 16 * 16 * 8 * 9);
  EXPECT_EQ(r.num_opaque_ops, 0);
}

TEST(TvmLower, FunctionNameTable) {
  G g;
  const int x = g.input("x", {1, 4, 8, 8});
  const int dw = g.input("p0", {4, 1, 3, 3});
  const int c = g.op("tvmgen_m_fused_nn_conv2d_add_clip", {x, dw, g.input("p1", {4})}, {1, 4, 4, 4});  // depthwise, stride 2
  const int pad = g.op("tvmgen_m_fused_nn_pad", {c}, {1, 4, 6, 6});
  const int mp = g.op("tvmgen_m_fused_nn_max_pool2d", {pad}, {1, 4, 3, 3});
  const int cat = g.op("tvmgen_m_fused_concatenate", {mp, mp}, {1, 8, 3, 3});
  const int mean = g.op("tvmgen_m_fused_mean", {cat}, {1, 8});
  const int t = g.op("tvmgen_m_fused_transpose", {mean}, {8, 1});
  const int sl = g.op("tvmgen_m_fused_strided_slice", {t}, {4, 1});
  const int q = g.op("tvmgen_m_fused_cast_nn_relu_cast", {sl}, {4, 1}, "int8");  // casts fold away
  const int a = g.input("a", {2, 4, 16});
  const int b = g.input("b", {2, 8, 16});
  const int bmm = g.op("tvmgen_m_fused_nn_batch_matmul", {a, b}, {2, 4, 8});
  const int sm = g.op("tvmgen_m_fused_nn_softmax_1", {bmm}, {2, 4, 8});
  const int dw3 = g.input("p9", {6, 8});
  const int d3 = g.op("tvmgen_m_fused_nn_dense", {sm, dw3}, {2, 4, 6});  // dense on [.., C]: matmul, B transposed
  const int nop = g.op("__nop", {d3}, {8, 6});
  const int s = g.op("tvmgen_m_fused_sigmoid_multiply", {nop, nop}, {8, 6});
  const TvmMlfResult r = g.read(s);
  (void)q;
  const ir::Graph& ir = r.graph;
  ASSERT_EQ(ops(ir), (std::vector<OpKind>{OpKind::Conv2d, OpKind::Pad, OpKind::MaxPool2d, OpKind::Concat,
                                          OpKind::ReduceMean, OpKind::Transpose, OpKind::Slice, OpKind::Relu,
                                          OpKind::BatchMatMul, OpKind::Softmax, OpKind::MatMul, OpKind::Reshape,
                                          OpKind::Sigmoid, OpKind::Mul}));
  const ir::Layer& conv = ir.layers[0];
  EXPECT_EQ(conv.groups, 4);
  EXPECT_EQ(conv.stride, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(conv.activation, "relu6");  // clip after a conv: ReLU6 (MobileNet)
  EXPECT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(ir.layers[1].pads, (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(ir.layers[2].pool, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(ir.layers[3].axes, (std::vector<int64_t>{1}));
  EXPECT_EQ(ir.layers[4].axes, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(ir.layers[4].keepdims);
  EXPECT_EQ(ir.layers[5].perm, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ir.layers[6].ends, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(ir.layers[7].output_dtypes[0], ir::DType::Int8);
  EXPECT_TRUE(ir.layers[8].transpose_b);  // relay's batch_matmul: B is [B, N, K]
  EXPECT_EQ(ir.layers[8].macs(), 2 * 4 * 8 * 16);
  EXPECT_FALSE(ir.layers[8].weight_is_parameter);
  EXPECT_TRUE(ir.layers[10].transpose_b);
  EXPECT_EQ(ir.tensor(ir.layers[10].inputs[1]).role, ir::TensorRole::Weight);
  EXPECT_EQ(ir.layers[12].name, "tvmgen_m_fused_sigmoid_multiply/sigmoid");
  EXPECT_EQ(r.num_opaque_ops, 0);
}

TEST(TvmLower, UnrecognisedOrMisshapenFunctionsBecomeOpaque) {
  G g;
  const int x = g.input("x", {1, 8, 8, 4});  // NHWC
  const int w = g.input("p0", {3, 3, 4, 16});  // HWIO
  const int c = g.op("tvmgen_default_fused_nn_conv2d_add", {x, w, g.input("p1", {16})}, {1, 8, 8, 16});
  const int t = g.op("tvmgen_default_fused_nn_conv2d_transpose", {c, g.input("p2", {16, 16, 2, 2})}, {1, 16, 16, 16});
  const int u = g.op("tvmgen_default_fused_image_resize2d", {t}, {1, 16, 32, 32});
  const int v = g.op("tvmgen_default_fused_add_nn_relu", {u}, {1, 16, 32, 32});        // add needs 2 inputs
  const int w2 = g.op("tvmgen_default_fused_nn_max_pool2d", {v}, {1, 8, 16, 16});      // channels change: not NCHW
  const int cp = g.op("__copy", {w2}, {1, 8, 16, 16});
  const TvmMlfResult r = g.read(cp);
  const ir::Graph& ir = r.graph;
  ASSERT_EQ(ir.layers.size(), 6u);
  EXPECT_EQ(r.num_opaque_ops, 6);
  for (const ir::Layer& l : ir.layers) EXPECT_EQ(l.op, OpKind::Opaque) << l.name;
  const ir::Layer& conv = ir.layers[0];
  EXPECT_NE(conv.opaque_label.find("tvmgen_default_fused_nn_conv2d_add (conv2d input [1,8,8,4], weight [3,3,4,16], output [1,8,8,16] are not NCHW / OIHW)"),
            std::string::npos) << conv.opaque_label;
  // 2 x MACs: output elements x (weight elements / output channels).
  EXPECT_EQ(conv.opaque_flops, 2 * (8 * 8 * 16) * (3 * 3 * 4));
  EXPECT_EQ(conv.opaque_bytes, (8 * 8 * 4 + 3 * 3 * 4 * 16 + 16 + 8 * 8 * 16) * 4);
  EXPECT_NE(ir.layers[1].opaque_label.find("unsupported op 'nn_conv2d_transpose'"), std::string::npos);
  EXPECT_NE(ir.layers[2].opaque_label.find("unrecognised op 'image_resize2d'"), std::string::npos);
  EXPECT_NE(ir.layers[3].opaque_label.find("need more than the node's 1 inputs"), std::string::npos) << ir.layers[3].opaque_label;
  EXPECT_NE(ir.layers[4].opaque_label.find("is not NCHW"), std::string::npos) << ir.layers[4].opaque_label;
  EXPECT_NE(ir.layers[5].opaque_label.find("device copy"), std::string::npos);
  EXPECT_EQ(ir.layers[5].opaque_flops, 8 * 16 * 16);
  EXPECT_NO_THROW(ir::validate(ir));
}

TEST(TvmLower, ShapeRuleFailuresAreOpaqueWithTheRuleInTheLabel) {
  G g;
  const int x = g.input("x", {4, 3});
  // A weight whose C differs from the input's: the IR's dense rule says why.
  const int d = g.op("tvmgen_default_fused_nn_dense", {x, g.input("p0", {10, 5})}, {4, 10});
  const TvmMlfResult r = g.read(d);
  ASSERT_EQ(r.graph.layers.size(), 1u);
  const ir::Layer& l = r.graph.layers[0];
  EXPECT_EQ(l.op, OpKind::Opaque);
  EXPECT_NE(l.opaque_label.find("dense shape rule: dense weight [10,5] must have C = 3"), std::string::npos) << l.opaque_label;
  EXPECT_EQ(l.name, "tvmgen_default_fused_nn_dense");
  EXPECT_EQ(r.graph.tensor(l.outputs[0]).name, "tvmgen_default_fused_nn_dense");
}

TEST(TvmLower, AGraphWithoutOperationsIsAnError) {
  G g;
  const int x = g.input("x", {1, 4});
  test::expect_input_error([&] { g.read(x); }, "/nodes", "no tvm_op nodes");
}

TEST(TvmLower, MultipleOutputsAndNamesWithoutParams) {
  Json doc = json::parse_text(R"({
    "nodes": [
      {"op": "null", "name": "data", "inputs": []},
      {"op": "tvm_op", "name": "split", "attrs": {"func_name": "tvmgen_default_fused_split", "num_inputs": 1,
       "num_outputs": 2, "flatten_data": 0}, "inputs": [[0, 0, 0]]},
      {"op": "tvm_op", "name": "add", "attrs": {"func_name": "tvmgen_default_fused_add", "num_inputs": "2",
       "num_outputs": "1", "flatten_data": "0"}, "inputs": [[1, 0, 0], [1, 1]]}
    ],
    "arg_nodes": [0], "node_row_ptr": [0, 1, 3, 4], "heads": [[2, 0, 0]],
    "attrs": {"dltype": ["list_str", ["int8", "int8", "int8", "int8"]],
              "storage_id": ["list_int", [0, 1, 2, 1]],
              "shape": ["list_shape", [[2, 4], [1, 4], [1, 4], [1, 4]]],
              "dtype": ["list_int", [0, 0, 0, 0]]},
    "metadata": {"ignored": true}
  })", "split.json");
  const TvmMlfResult r = read_tvm_graph_json(doc, "split.json");
  const ir::Graph& g = r.graph;
  ASSERT_EQ(g.layers.size(), 2u);
  EXPECT_EQ(g.layers[0].op, OpKind::Opaque);
  EXPECT_NE(g.layers[0].opaque_label.find("2 outputs"), std::string::npos);
  EXPECT_EQ(g.tensor(g.layers[0].outputs[1]).name, "split:1");
  EXPECT_EQ(g.layers[1].op, OpKind::ElementWiseAdd);
  EXPECT_EQ(g.layers[1].input_dtypes[0], ir::DType::Int8);
  EXPECT_EQ(r.memory_footprint_bytes, 8 + 4 + 4);
  EXPECT_EQ(r.num_storage_ids, 3);
}

}  // namespace
}  // namespace npusim::frontends
