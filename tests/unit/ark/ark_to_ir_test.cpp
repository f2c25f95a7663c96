// ARK model -> workload IR (frontends/ark/ark_to_ir.h): every real model file converts and
// validates; a synthetic model covers every op type, tensor roles, views and the opaque fallback.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontends/ark/ark_to_ir.h"
#include "tests/unit/ark/ark_test_util.h"

namespace npusim::frontends {
namespace {

using json::Json;
using ir::OpKind;
using ir::TensorRole;

// Every ARK model file under shared/examples/ark: JSON files with "Nodes".
std::vector<std::string> real_model_files() {
  namespace fs = std::filesystem;
  std::vector<std::string> r;
  for (const auto& e : fs::recursive_directory_iterator(test::ark_example(""))) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find("\"Nodes\"") != std::string::npos) r.push_back(e.path().string());
  }
  std::sort(r.begin(), r.end());
  return r;
}

const ir::Tensor& input(const ir::Graph& g, const ir::Layer& l, size_t i) { return g.tensor(l.inputs.at(i)); }
const ir::Tensor& output(const ir::Graph& g, const ir::Layer& l, size_t i = 0) { return g.tensor(l.outputs.at(i)); }

TEST(ArkToIr, EveryRealModelFileConvertsAndValidates) {
  const auto files = real_model_files();
  ASSERT_GE(files.size(), 2u) << "expected tutorial/model.json and tutorial_v2/model.json";
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const gpu::Model m = read_ark_model(f);
    const ir::Graph g = ark_model_to_ir(m);
    EXPECT_NO_THROW(ir::validate(g));
    EXPECT_EQ(g.format, "ark_model");
    EXPECT_EQ(g.source, f);
    size_t ops = 0;
    for (const gpu::Node& n : m.nodes)
      for (const gpu::Op& op : n.ops) ops += !op.is_virtual && gpu::op_class(op.type) != gpu::OpClass::Virtual;
    EXPECT_EQ(g.layers.size(), ops);
    for (const ir::Layer& l : g.layers) {
      ASSERT_TRUE(l.ark.has_value()) << l.name;
      EXPECT_NE(l.pointer.find("/Nodes/"), std::string::npos) << l.pointer;
      EXPECT_NE(l.op, OpKind::Opaque) << l.name << ": " << l.opaque_label;  // the real files fit the IR rules
    }
    std::set<std::string> names;
    for (const ir::Layer& l : g.layers) EXPECT_TRUE(names.insert(l.name).second) << "duplicate layer name " << l.name;
  }
}

// The tutorial's FFN: matmul, sigmoid, mul (SiLU), matmul, mul, matmul; both file layouts.
TEST(ArkToIr, TutorialModelsAreTheLlamaFfn) {
  for (const char* rel : {"tutorial/model.json", "tutorial_v2/model.json"}) {
    SCOPED_TRACE(rel);
    const bool v2 = std::string(rel).find("v2") != std::string::npos;
    const ir::Graph g = ark_model_to_ir(read_ark_model(test::ark_example(rel)));
    ASSERT_EQ(g.layers.size(), 6u);
    const OpKind kinds[] = {OpKind::MatMul, OpKind::Sigmoid, OpKind::Mul, OpKind::MatMul, OpKind::Mul, OpKind::MatMul};
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(g.layers[i].op, kinds[i]) << g.layers[i].name;
    const ir::Layer& mm = g.layers[0];
    EXPECT_EQ(mm.name, "matmul");
    EXPECT_EQ(mm.ark->op_type, "Matmul");
    EXPECT_EQ(mm.ark->node_id, 0);
    EXPECT_EQ(mm.pointer, v2 ? "/Nodes/0/Op" : "/Nodes/0/Ops/0");
    EXPECT_FALSE(mm.transpose_a);
    EXPECT_TRUE(mm.transpose_b);
    EXPECT_EQ(mm.input_shapes[0], (ir::Shape{1, 512, 4096}));
    EXPECT_EQ(mm.input_shapes[1], (ir::Shape{11008, 4096}));
    EXPECT_EQ(mm.output_shapes[0], (ir::Shape{1, 512, 11008}));
    EXPECT_EQ(mm.input_dtypes[0], ir::DType::Float16);
    EXPECT_EQ(mm.macs(), int64_t{512} * 11008 * 4096);
    // Roles: the activation read by two matmuls is the graph input; the B operands are weights.
    EXPECT_EQ(input(g, mm, 0).role, TensorRole::GraphInput);
    EXPECT_EQ(input(g, mm, 0).name, "input1");
    EXPECT_EQ(input(g, g.layers[3], 0).name, "input1");  // the same tensor
    EXPECT_EQ(input(g, mm, 1).role, TensorRole::Weight);
    EXPECT_TRUE(mm.weight_is_parameter);
    EXPECT_EQ(g.graph_inputs, std::vector<std::string>{"input1"});
    // Data flows through result tensors: the mul reads the matmul's and the sigmoid's outputs.
    EXPECT_EQ(g.layers[2].previous, (std::vector<std::string>{"matmul", "sigmoid"}));
    EXPECT_EQ(output(g, g.layers[0]).role, TensorRole::Activation);
    EXPECT_EQ(output(g, g.layers[5]).role, TensorRole::GraphOutput);
    EXPECT_EQ(g.graph_outputs.size(), 1u);
    EXPECT_EQ(g.layers[5].output_shapes[0], (ir::Shape{1, 512, 4096}));
    // tutorial/model.json names two ops "matmul_1": IR names are unique.
    EXPECT_EQ(g.layers[5].name, v2 ? "matmul_2" : "matmul_1_1");
    EXPECT_EQ(g.layers[5].ark->node_id, v2 ? 5 : 2);
  }
}

// ---- A synthetic model with every op type ----

Json buffer(int id, int rank = -1) {
  return Json{{"Id", id}, {"Rank", rank}, {"SendTags", Json::array()}, {"RecvTags", Json::array()}};
}

Json tensor(int id, int buf, std::vector<int64_t> shape, const std::string& dt = "FP16", int rank = -1,
            std::vector<int64_t> strides = {}, std::vector<int64_t> offsets = {}) {
  if (strides.empty()) strides = shape;
  if (offsets.empty()) offsets.assign(shape.size(), 0);
  return Json{{"Id", id}, {"DataType", dt}, {"Buffer", buffer(buf, rank)}, {"Shape", shape},
              {"Strides", strides}, {"Offsets", offsets}, {"PaddedShape", shape}};
}

Json op(const std::string& type, const std::string& name, std::vector<Json> reads, std::vector<Json> writes,
        std::vector<Json> results, Json args = Json::object(), bool is_virtual = false) {
  return Json{{"Type", type}, {"Name", name}, {"IsVirtual", is_virtual}, {"ReadTensors", reads},
              {"WriteTensors", writes}, {"ResultTensors", results}, {"Args", args}};
}

// Main's layout: one "Op" per node, no producer/consumer links (the converter does not need them).
Json model(const std::vector<Json>& ops, int world_size = 1) {
  Json nodes = Json::array();
  for (size_t i = 0; i < ops.size(); ++i)
    nodes.push_back(Json{{"Id", i}, {"ProducerNodeIds", Json::array()}, {"ConsumerNodeIds", Json::array()}, {"Op", ops[i]}});
  return Json{{"Rank", 0}, {"WorldSize", world_size}, {"Nodes", nodes}};
}

// op(type, R, W/Res with the same buffer): the usual shape of an ARK op in a model file.
Json unary(const std::string& type, const std::string& name, const Json& in, int out_id, int out_buf,
           std::vector<int64_t> shape, Json args = Json::object(), const std::string& dt = "FP16") {
  return op(type, name, {in}, {tensor(out_id, out_buf, shape, dt)}, {tensor(out_id + 1, out_buf, shape, dt)}, args);
}

ir::Graph convert(const Json& doc) { return ark_model_to_ir(parse_ark_model(doc, "synthetic.json")); }

class ArkToIrOps : public ::testing::Test {
 protected:
  const std::vector<int64_t> s3{1, 8, 64};
  ir::Graph g;
  void SetUp() override {
    std::vector<Json> ops = {
        // Embedding(indices, table) -> gather(table, indices)
        op("Embedding", "embed", {tensor(0, 0, {1, 8}, "INT32"), tensor(1, 1, {100, 64})}, {tensor(2, 2, s3)},
           {tensor(3, 2, s3)}),
        op("Matmul", "proj", {tensor(3, 2, s3), tensor(4, 3, {64, 64})}, {tensor(5, 4, s3)}, {tensor(6, 4, s3)},
           Json{{"TransposeOther", {{"BOOL", true}}}}),
        unary("ScalarMul", "scale", tensor(6, 4, s3), 7, 5, s3, Json{{"Factor", {{"FLOAT", 0.125}}}}),
        op("Add", "bias", {tensor(7, 5, s3), tensor(9, 6, {64})}, {tensor(10, 7, s3)}, {tensor(11, 7, s3)}),
        unary("Relu", "relu", tensor(11, 7, s3), 12, 8, s3),
        op("ReduceSum", "rsum", {tensor(13, 8, s3)}, {tensor(14, 9, {1, 8, 1})}, {tensor(15, 9, {1, 8, 1})},
           Json{{"Axis", {{"INT", 2}}}, {"KeepDim", {{"BOOL", true}}}}),
        op("Sub", "sub", {tensor(13, 8, s3), tensor(15, 9, {1, 8, 1})}, {tensor(16, 10, s3)}, {tensor(17, 10, s3)}),
        unary("Exp", "exp", tensor(17, 10, s3), 18, 11, s3),
        // No KeepDim: ARK keeps the dim by default, visible in the output's rank.
        op("ReduceMean", "rmean", {tensor(19, 11, s3)}, {tensor(20, 12, {1, 8, 1})}, {tensor(21, 12, {1, 8, 1})},
           Json{{"Axis", {{"INT", -1}}}}),
        op("Div", "div", {tensor(19, 11, s3), tensor(21, 12, {1, 8, 1})}, {tensor(22, 13, s3)}, {tensor(23, 13, s3)}),
        unary("Transpose", "tr", tensor(23, 13, s3), 24, 14, {1, 64, 8}, Json{{"Permutation", {{"DIMS", {0, 2, 1}}}}}),
        op("Reshape", "flat", {tensor(25, 14, {1, 64, 8})}, {}, {tensor(26, 14, {64, 8})}, Json::object(), true),
        unary("Sqrt", "sqrt", tensor(26, 14, {64, 8}), 27, 15, {64, 8}),
        unary("Gelu", "gelu", tensor(28, 15, {64, 8}), 60, 30, {64, 8}),
        unary("Sigmoid", "sig", tensor(61, 30, {64, 8}), 62, 31, {64, 8}),
        unary("Rsqrt", "rsqrt", tensor(63, 31, {64, 8}), 64, 32, {64, 8}),
        unary("ScalarAdd", "shift", tensor(65, 32, {64, 8}), 66, 33, {64, 8}, Json{{"Factor", {{"FLOAT", 1.0}}}}),
        unary("Cast", "cast", tensor(67, 33, {64, 8}), 29, 16, {64, 8}, Json::object(), "FP32"),
        op("Noop", "noop", {tensor(30, 16, {64, 8}, "FP32")}, {}, {}),
        // A view of the cast's buffer: reads of it are reads of the cast's output.
        op("Tensor", "view", {}, {}, {tensor(31, 16, {64, 8}, "FP32")}, Json::object(), true),
        op("Rope", "rope", {tensor(31, 16, {64, 8}, "FP32"), tensor(32, 17, {64, 8}, "FP32")},
           {tensor(33, 18, {64, 8}, "FP32")}, {tensor(34, 18, {64, 8}, "FP32")}),
        op("Send", "send", {tensor(34, 18, {64, 8}, "FP32")}, {tensor(35, 19, {64, 8}, "FP32", 1)},
           {tensor(36, 19, {64, 8}, "FP32", 1)}),
        op("SendDone", "send_done", {tensor(36, 19, {64, 8}, "FP32", 1)}, {}, {}),
        // ARK pads the output's rank: the IR's broadcasting rule says [64,8]; kept as opaque.
        op("Mul", "padded", {tensor(34, 18, {64, 8}, "FP32"), tensor(34, 18, {64, 8}, "FP32")},
           {tensor(37, 20, {1, 64, 8}, "FP32")}, {tensor(38, 20, {1, 64, 8}, "FP32")}),
        op("Copy", "copy", {tensor(34, 18, {64, 8}, "FP32")}, {tensor(39, 21, {64, 8}, "FP32")},
           {tensor(40, 21, {64, 8}, "FP32")}),
        op("ReduceMax", "rmax", {tensor(40, 21, {64, 8}, "FP32")}, {tensor(41, 22, {64}, "FP32")},
           {tensor(42, 22, {64}, "FP32")}, Json{{"Axis", {{"INT", 1}}}, {"KeepDim", {{"BOOL", false}}}}),
        op("DeviceSync", "sync", {}, {}, {}),
    };
    g = convert(model(ops, 2));
  }
  const ir::Layer& layer(const std::string& name) {
    const ir::Layer* l = g.find(name);
    if (!l) throw std::runtime_error("no layer " + name);
    return *l;
  }
};

TEST_F(ArkToIrOps, EachArkOpBecomesOneIrOp) {
  const std::vector<std::pair<const char*, OpKind>> expect = {
      {"embed", OpKind::Gather},       {"proj", OpKind::MatMul},      {"scale", OpKind::Mul},
      {"bias", OpKind::ElementWiseAdd}, {"relu", OpKind::Relu},       {"rsum", OpKind::ReduceSum},
      {"sub", OpKind::Sub},            {"exp", OpKind::Exp},          {"rmean", OpKind::ReduceMean},
      {"div", OpKind::Div},            {"tr", OpKind::Transpose},     {"flat", OpKind::Reshape},
      {"sqrt", OpKind::Sqrt},          {"gelu", OpKind::Gelu},        {"sig", OpKind::Sigmoid},
      {"rsqrt", OpKind::Rsqrt},        {"shift", OpKind::ElementWiseAdd}, {"cast", OpKind::Opaque},
      {"rope", OpKind::Opaque},        {"send", OpKind::Opaque},      {"send_done", OpKind::Opaque},
      {"padded", OpKind::Opaque},      {"copy", OpKind::Opaque},      {"rmax", OpKind::ReduceMax},
      {"sync", OpKind::Opaque}};
  ASSERT_EQ(g.layers.size(), expect.size());  // Noop and Tensor: no IR op
  for (size_t i = 0; i < expect.size(); ++i) {
    EXPECT_EQ(g.layers[i].name, expect[i].first);
    EXPECT_EQ(g.layers[i].op, expect[i].second) << expect[i].first;
    EXPECT_EQ(g.layers[i].index, static_cast<int>(i));
    EXPECT_EQ(g.layers[i].ark->node_id, static_cast<int64_t>(i < 18 ? i : i + 2)) << expect[i].first;
  }
  EXPECT_EQ(layer("embed").ark->op_type, "Embedding");
  EXPECT_EQ(layer("embed").pointer, "/Nodes/0/Op");
}

TEST_F(ArkToIrOps, AttributesAndShapes) {
  const ir::Layer& e = layer("embed");
  EXPECT_EQ(e.input_shapes[0], (ir::Shape{100, 64}));  // table first
  EXPECT_EQ(e.input_shapes[1], (ir::Shape{1, 8}));
  EXPECT_EQ(e.input_dtypes[1], ir::DType::Int32);
  EXPECT_EQ(e.axes, std::vector<int64_t>{0});
  EXPECT_TRUE(layer("proj").transpose_b);
  EXPECT_EQ(layer("rsum").axes, std::vector<int64_t>{2});
  EXPECT_TRUE(layer("rsum").keepdims);
  EXPECT_EQ(layer("rmean").axes, std::vector<int64_t>{-1});
  EXPECT_TRUE(layer("rmean").keepdims);
  EXPECT_FALSE(layer("rmax").keepdims);
  EXPECT_EQ(layer("rmax").output_shapes[0], (ir::Shape{64}));
  EXPECT_EQ(layer("tr").perm, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(layer("tr").output_shapes[0], (ir::Shape{1, 64, 8}));
  EXPECT_EQ(layer("flat").output_shapes[0], (ir::Shape{64, 8}));
  EXPECT_EQ(layer("bias").input_shapes[1], (ir::Shape{64}));  // numpy broadcasting
  EXPECT_EQ(layer("sub").input_shapes[1], (ir::Shape{1, 8, 1}));
  EXPECT_EQ(layer("cast").output_dtypes[0], ir::DType::Float32);
  EXPECT_EQ(layer("cast").input_dtypes[0], ir::DType::Float16);
}

TEST_F(ArkToIrOps, TensorRoles) {
  EXPECT_EQ(input(g, layer("embed"), 0).role, TensorRole::Weight);  // the table
  EXPECT_EQ(input(g, layer("embed"), 0).name, "embed_table");
  EXPECT_EQ(input(g, layer("embed"), 1).role, TensorRole::GraphInput);  // the indices
  EXPECT_EQ(input(g, layer("proj"), 1).role, TensorRole::Weight);
  EXPECT_EQ(input(g, layer("proj"), 1).name, "proj_weight");
  EXPECT_EQ(input(g, layer("bias"), 1).role, TensorRole::GraphInput);  // not a Matmul's B
  EXPECT_EQ(input(g, layer("rope"), 1).role, TensorRole::GraphInput);
  // Scalars are constant [1] tensors of the input's type.
  const ir::Tensor& k = input(g, layer("scale"), 1);
  EXPECT_EQ(k.role, TensorRole::Constant);
  EXPECT_EQ(k.shape, (ir::Shape{1}));
  EXPECT_EQ(k.dtype, ir::DType::Float16);
  EXPECT_NE(k.name.find("0.125"), std::string::npos) << k.name;
  EXPECT_EQ(g.graph_inputs, (std::vector<std::string>{"input1", "input2", "input3"}));
  // Outputs nobody reads are graph outputs: the padded mul, the max, and the two tokens.
  std::vector<std::string> outs;
  for (const ir::Tensor& t : g.tensors)
    if (t.role == TensorRole::GraphOutput) outs.push_back(t.name);
  EXPECT_EQ(outs, (std::vector<std::string>{"send_done_done", "padded", "rmax", "sync_done"}));
  EXPECT_EQ(output(g, layer("send")).role, TensorRole::Activation);  // read by send_done
}

TEST_F(ArkToIrOps, DataFlowsThroughResultsWritesAndViews) {
  EXPECT_EQ(layer("proj").previous[0], "embed");
  EXPECT_EQ(layer("scale").previous[0], "proj");
  // "bias" reads tensor 7, the WriteTensor of "scale" (not its result 8).
  EXPECT_EQ(layer("bias").previous[0], "scale");
  EXPECT_EQ(layer("sub").previous, (std::vector<std::string>{"relu", "rsum"}));
  EXPECT_EQ(layer("sqrt").previous[0], "flat");
  // Tensor 31 is a Tensor-op view of the cast's buffer: rope reads the cast's output.
  EXPECT_EQ(layer("rope").previous[0], "cast");
  EXPECT_EQ(layer("send_done").previous[0], "send");
}

TEST_F(ArkToIrOps, OpaqueOpsCarryArkCostAndSayWhatTheyAre) {
  const ir::Layer& rope = layer("rope");
  EXPECT_EQ(rope.opaque_flops, 64 * 8);
  EXPECT_EQ(rope.opaque_bytes, 3 * 64 * 8 * 4);
  EXPECT_NE(rope.opaque_label.find("Rope"), std::string::npos);
  EXPECT_EQ(layer("cast").opaque_label, "Cast FP16 -> FP32");
  EXPECT_EQ(layer("cast").opaque_bytes, 64 * 8 * (2 + 4));
  EXPECT_EQ(layer("send").opaque_label, "Send to rank 1");
  EXPECT_EQ(layer("send").opaque_bytes, 2 * 64 * 8 * 4);
  EXPECT_NE(layer("send_done").opaque_label.find("SendDone"), std::string::npos);
  EXPECT_NE(layer("sync").opaque_label.find("DeviceSync"), std::string::npos);
  EXPECT_EQ(layer("sync").inputs.size(), 0u);
  EXPECT_EQ(layer("copy").opaque_label, "Copy");
  // The rank-padded Mul: ARK's cost, and the reason in the label.
  const ir::Layer& p = layer("padded");
  EXPECT_EQ(p.opaque_flops, 64 * 8);
  EXPECT_NE(p.opaque_label.find("Mul (its shapes do not fit the IR's element_wise_mul rule"), std::string::npos)
      << p.opaque_label;
  EXPECT_EQ(p.ark->op_type, "Mul");
}

// Views that are not one write: a reshape of a single write, or an opaque view over several.
TEST(ArkToIr, ViewsOfWrittenBuffersBecomeReshapeOrOpaqueViews) {
  std::vector<Json> ops = {
      // Two copies fill the two rows of buffer 5 ([2,8]).
      op("Copy", "row0", {tensor(0, 0, {1, 8})}, {tensor(1, 5, {1, 8}, "FP16", -1, {2, 8}, {0, 0})},
         {tensor(2, 5, {1, 8}, "FP16", -1, {2, 8}, {0, 0})}),
      op("Copy", "row1", {tensor(3, 1, {1, 8})}, {tensor(4, 5, {1, 8}, "FP16", -1, {2, 8}, {1, 0})},
         {tensor(5, 5, {1, 8}, "FP16", -1, {2, 8}, {1, 0})}),
      unary("Relu", "both", tensor(6, 5, {2, 8}), 7, 6, {2, 8}),
      // The relu's [2,8] output read as [16]: a reshape.
      unary("Exp", "flat", tensor(9, 6, {16}), 10, 7, {16}),
      // Only row 1 of buffer 5: the copy that wrote it.
      unary("Sqrt", "second", tensor(12, 5, {1, 8}, "FP16", -1, {2, 8}, {1, 0}), 13, 8, {1, 8}),
  };
  const ir::Graph g = convert(model(ops));
  ASSERT_EQ(g.layers.size(), 7u);
  const ir::Layer& v = g.layers[2];
  EXPECT_EQ(v.name, "both_view");
  EXPECT_EQ(v.op, OpKind::Opaque);
  EXPECT_EQ(v.previous, (std::vector<std::string>{"row0", "row1"}));
  EXPECT_EQ(v.opaque_bytes, 0);
  EXPECT_EQ(v.ark->op_type, "Tensor");
  EXPECT_EQ(v.pointer, "/Nodes/2/Op/ReadTensors/0");
  EXPECT_EQ(g.layers[3].previous, std::vector<std::string>{"both_view"});
  const ir::Layer& r = g.layers[4];
  EXPECT_EQ(r.op, OpKind::Reshape);
  EXPECT_EQ(r.previous, std::vector<std::string>{"both"});
  EXPECT_EQ(r.output_shapes[0], (ir::Shape{16}));
  EXPECT_EQ(g.layers[5].previous, std::vector<std::string>{"flat_view"});
  EXPECT_EQ(g.layers[6].name, "second");
  EXPECT_EQ(g.layers[6].previous, std::vector<std::string>{"row1"});
}

TEST(ArkToIr, BatchedMatmulWithTransposedInput) {
  std::vector<Json> ops = {
      op("Matmul", "scores", {tensor(0, 0, {1, 4, 32, 16}), tensor(1, 1, {1, 4, 32, 16})},
         {tensor(2, 2, {1, 4, 16, 16})}, {tensor(3, 2, {1, 4, 16, 16})},
         Json{{"TransposeInput", {{"BOOL", true}}}}),
  };
  const ir::Graph g = convert(model(ops));
  const ir::Layer& l = g.layers.at(0);
  EXPECT_EQ(l.op, OpKind::BatchMatMul);
  EXPECT_TRUE(l.transpose_a);
  EXPECT_FALSE(l.transpose_b);
  EXPECT_EQ(l.macs(), int64_t{4} * 16 * 16 * 32);
  // B is only ever a Matmul's second operand: a weight, even in a batched matmul.
  EXPECT_EQ(input(g, l, 1).role, TensorRole::Weight);
}

TEST(ArkToIr, AModelWithOnlyViewsHasNoOperations) {
  std::vector<Json> ops = {op("Tensor", "t", {}, {}, {tensor(0, 0, {4})}, Json::object(), true)};
  test::expect_input_error([&] { convert(model(ops)); }, "", "no operations");
}

TEST(ArkToIr, DataTypes) {
  EXPECT_EQ(ark_dtype(gpu::DataType::FP32), ir::DType::Float32);
  EXPECT_EQ(ark_dtype(gpu::DataType::FP16), ir::DType::Float16);
  EXPECT_EQ(ark_dtype(gpu::DataType::BF16), ir::DType::BFloat16);
  EXPECT_EQ(ark_dtype(gpu::DataType::INT32), ir::DType::Int32);
  EXPECT_EQ(ark_dtype(gpu::DataType::UINT32), ir::DType::Int32);
  EXPECT_EQ(ark_dtype(gpu::DataType::INT8), ir::DType::Int8);
  EXPECT_EQ(ark_dtype(gpu::DataType::UINT8), ir::DType::UInt8);
  EXPECT_EQ(ark_dtype(gpu::DataType::BYTE), ir::DType::UInt8);
}

}  // namespace
}  // namespace npusim::frontends
