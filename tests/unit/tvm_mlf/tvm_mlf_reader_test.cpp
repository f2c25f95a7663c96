// TVM Model Library Format reader (frontends/tvm_mlf/tvm_mlf_reader.h): every metadata
// version as a directory, .tar and .tar.gz; v7 modules; the real GraphExecutor example;
// sniffing.
#include <gtest/gtest.h>

#include "frontends/tvm_mlf/tvm_mlf_reader.h"
#include "tests/unit/tvm_mlf/mlf_test_util.h"

namespace npusim::frontends {
namespace {

using ir::OpKind;
using ir::TensorRole;
using test::expect_input_error;
using test::mlf_data;
using test::Scratch;

const ir::Tensor& in(const ir::Graph& g, const ir::Layer& l, size_t i) { return g.tensor(l.inputs.at(i)); }
const ir::Tensor& out(const ir::Graph& g, const ir::Layer& l) { return g.tensor(l.outputs.at(0)); }

std::vector<OpKind> ops(const ir::Graph& g) {
  std::vector<OpKind> r;
  for (const ir::Layer& l : g.layers) r.push_back(l.op);
  return r;
}

// The CNN of scripts/make_mlf.py: conv2d+add+relu, max_pool2d, batch_flatten, dense+add,
// softmax, float32, from a 1x3x8x8 input.
void expect_cnn(const TvmMlfResult& r, const std::string& path, const std::string& graph_member, const std::string& prefix) {
  SCOPED_TRACE(path);
  const ir::Graph& g = r.graph;
  EXPECT_NO_THROW(ir::validate(g));
  EXPECT_EQ(g.format, "tvm_mlf");
  EXPECT_EQ(g.source, path);
  EXPECT_EQ(r.graph_member, graph_member);
  EXPECT_EQ(r.num_params, 4);
  EXPECT_EQ(r.num_opaque_ops, 0);
  ASSERT_EQ(ops(g), (std::vector<OpKind>{OpKind::Conv2d, OpKind::MaxPool2d, OpKind::Reshape, OpKind::Dense, OpKind::Softmax}));

  const ir::Layer& conv = g.layers[0];
  EXPECT_EQ(conv.name, "tvmgen_" + prefix + "_fused_nn_conv2d_add_nn_relu");
  EXPECT_EQ(conv.pointer, graph_member + ": /nodes/3");
  ASSERT_EQ(conv.inputs.size(), 3u);  // data, weight, bias (the add)
  EXPECT_EQ(in(g, conv, 0).name, "data");
  EXPECT_EQ(in(g, conv, 0).role, TensorRole::GraphInput);
  EXPECT_EQ(in(g, conv, 1).role, TensorRole::Weight);
  EXPECT_EQ(in(g, conv, 2).role, TensorRole::Bias);
  EXPECT_EQ(conv.input_shapes[1], (ir::Shape{4, 3, 3, 3}));
  EXPECT_EQ(conv.output_shapes[0], (ir::Shape{1, 4, 8, 8}));
  EXPECT_EQ(conv.activation, "relu");
  EXPECT_EQ(conv.kernel, (std::array<int, 2>{3, 3}));
  EXPECT_EQ(conv.stride, (std::array<int, 2>{1, 1}));
  EXPECT_EQ(conv.padding, (std::array<int, 4>{1, 1, 1, 1}));
  EXPECT_EQ(conv.groups, 1);
  EXPECT_EQ(conv.macs(), 4 * 8 * 8 * 3 * 3 * 3);

  const ir::Layer& pool = g.layers[1];
  EXPECT_EQ(pool.pool, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(pool.stride, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(pool.padding, (std::array<int, 4>{0, 0, 0, 0}));
  EXPECT_EQ(pool.output_shapes[0], (ir::Shape{1, 4, 4, 4}));
  EXPECT_EQ(g.layers[2].output_shapes[0], (ir::Shape{1, 64}));

  const ir::Layer& dense = g.layers[3];
  ASSERT_EQ(dense.inputs.size(), 3u);
  EXPECT_EQ(in(g, dense, 1).shape, (ir::Shape{10, 64}));
  EXPECT_EQ(in(g, dense, 1).role, TensorRole::Weight);
  EXPECT_EQ(in(g, dense, 2).role, TensorRole::Bias);
  EXPECT_EQ(dense.macs(), 640);
  EXPECT_EQ(dense.previous, (std::vector<std::string>{g.layers[2].name, "p2", "p3"}));

  const ir::Layer& soft = g.layers[4];
  EXPECT_EQ(soft.axes, (std::vector<int64_t>{-1}));
  EXPECT_EQ(out(g, soft).role, TensorRole::GraphOutput);
  EXPECT_EQ(out(g, soft).dtype, ir::DType::Float32);
  EXPECT_EQ(g.graph_inputs, (std::vector<std::string>{"data"}));
  EXPECT_EQ(g.graph_outputs.size(), 1u);

  // Storage ids 0..7: data 768 + p0 432 + p1 16 + max(conv 1024, flatten 256) +
  // max(pool 256, dense 40) + p2 2560 + p3 40 + softmax 40.
  EXPECT_EQ(r.memory_footprint_bytes, 5136);
  EXPECT_EQ(r.num_storage_ids, 8);
  EXPECT_EQ(r.entry_bytes, 768 + 432 + 16 + 1024 + 256 + 256 + 2560 + 40 + 40 + 40);
}

TEST(TvmMlf, Version5And6ReadAsDirectoryTarAndTarGz) {
  Scratch s;
  for (int v : {5, 6}) {
    const std::string dir = mlf_data("v" + std::to_string(v));
    const std::string tar = s.path("v" + std::to_string(v) + ".tar");
    test::pack_dir(dir, tar, false);  // the uncompressed form is made here (tests/data has no .tar)
    for (const std::string& p : {dir, tar, dir + ".tar.gz"}) {
      const TvmMlfResult r = read_tvm_mlf_detailed(p);
      EXPECT_EQ(r.metadata_version, v);
      EXPECT_EQ(r.module, "default");
      EXPECT_EQ(r.graph.name, "default");
      EXPECT_EQ(r.params_member, "parameters/default.params");
      expect_cnn(r, p, "executor-config/graph/graph.json", "default");
      EXPECT_TRUE(sniff_tvm_mlf(p)) << p;
      EXPECT_EQ(tvm_mlf_modules(p), (std::vector<std::string>{"default"}));
      EXPECT_EQ(tvm_memory_footprint_bytes(p), 5136);
      // One model: --module may name it, and nothing else.
      EXPECT_EQ(read_tvm_mlf(p, "default").layers.size(), 5u);
      expect_input_error([&] { read_tvm_mlf(p, "other"); }, "metadata.json: /model_name", "names none");
    }
  }
}

TEST(TvmMlf, Version7HasTwoModulesChosenByName) {
  Scratch s;
  const std::string dir = mlf_data("v7");
  const std::string tar = s.path("v7.tar");
  test::pack_dir(dir, tar, false);
  for (const std::string& p : {dir, tar, dir + ".tar.gz"}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(tvm_mlf_modules(p), (std::vector<std::string>{"cnn", "tiny"}));
    const std::string msg = expect_input_error([&] { read_tvm_mlf(p); }, "metadata.json: /modules",
                                               "holds 2 modules (cnn, tiny); choose one with --module NAME");
    EXPECT_EQ(msg.rfind(p + ": ", 0), 0u) << msg;
    expect_input_error([&] { read_tvm_mlf(p, "resnet"); }, "metadata.json: /modules",
                       "has no module 'resnet'; modules: cnn, tiny");

    const TvmMlfResult cnn = read_tvm_mlf_detailed(p, "cnn");
    EXPECT_EQ(cnn.metadata_version, 7);
    EXPECT_EQ(cnn.graph.name, "cnn");
    EXPECT_EQ(cnn.params_member, "parameters/cnn.params");
    expect_cnn(cnn, p, "executor-config/graph/cnn.graph", "cnn");

    const TvmMlfResult tiny = read_tvm_mlf_detailed(p, "tiny");
    const ir::Graph& g = tiny.graph;
    EXPECT_NO_THROW(ir::validate(g));
    EXPECT_EQ(tiny.num_params, 5);
    ASSERT_EQ(ops(g), (std::vector<OpKind>{OpKind::Conv2d, OpKind::Opaque, OpKind::AvgPool2d, OpKind::Transpose,
                                           OpKind::Reshape, OpKind::Dense, OpKind::Mul, OpKind::ElementWiseAdd}));
    const ir::Layer& conv = g.layers[0];
    EXPECT_EQ(conv.input_dtypes[0], ir::DType::Float16);
    EXPECT_EQ(conv.stride, (std::array<int, 2>{2, 2}));  // 9x9 -> 5x5 with a 3x3 kernel
    EXPECT_EQ(conv.padding, (std::array<int, 4>{1, 1, 1, 1}));
    EXPECT_EQ(conv.input_shapes[2], (ir::Shape{1, 4, 1, 1}));
    EXPECT_EQ(conv.macs(), 4 * 5 * 5 * 27);
    // The unknown fused function: opaque, bytes = its input + output, labelled by name.
    const ir::Layer& lrn = g.layers[1];
    EXPECT_EQ(tiny.num_opaque_ops, 1);
    EXPECT_EQ(lrn.opaque_bytes, 2 * (100 * 2));
    EXPECT_EQ(lrn.opaque_flops, 100);
    EXPECT_NE(lrn.opaque_label.find("tvmgen_tiny_fused_nn_lrn"), std::string::npos) << lrn.opaque_label;
    EXPECT_NE(lrn.opaque_label.find("unrecognised op 'nn_lrn'"), std::string::npos) << lrn.opaque_label;
    EXPECT_EQ(lrn.pointer, "executor-config/graph/tiny.graph: /nodes/4");
    EXPECT_EQ(g.layers[2].pool, (std::array<int, 2>{2, 2}));
    EXPECT_EQ(g.layers[3].perm, (std::vector<int64_t>{0, 2, 3, 1}));  // layout_transform NCHW -> NHWC
    EXPECT_EQ(g.layers[5].inputs.size(), 2u);                          // dense without bias
    // multiply_add: two ops, named after the node, the last writing the node's output.
    EXPECT_EQ(g.layers[6].name, "tvmgen_tiny_fused_multiply_add/multiply");
    EXPECT_EQ(g.layers[7].name, "tvmgen_tiny_fused_multiply_add/add");
    EXPECT_EQ(out(g, g.layers[7]).name, "tvmgen_tiny_fused_multiply_add");
    EXPECT_EQ(out(g, g.layers[7]).role, TensorRole::GraphOutput);
    EXPECT_EQ(in(g, g.layers[7], 0).name, "tvmgen_tiny_fused_multiply_add/multiply");
    EXPECT_EQ(in(g, g.layers[6], 1).role, TensorRole::Constant);
  }
}

TEST(TvmMlf, RealGraphExecutorExampleReads) {
  const std::string p = test::tvm_example();
  EXPECT_TRUE(sniff_tvm_mlf(p));
  EXPECT_TRUE(tvm_mlf_modules(p).empty());
  const TvmMlfResult r = read_tvm_mlf_detailed(p);
  const ir::Graph& g = r.graph;
  EXPECT_EQ(r.metadata_version, 0);
  EXPECT_EQ(g.format, "tvm_mlf");
  EXPECT_EQ(g.name, "graph_executor_test");
  ASSERT_EQ(g.layers.size(), 1u);
  const ir::Layer& add = g.layers[0];
  EXPECT_EQ(add.op, OpKind::ElementWiseAdd);
  EXPECT_EQ(add.pointer, "/nodes/2");
  EXPECT_EQ(add.input_shapes, (std::vector<ir::Shape>{{10, 5}, {1, 5}}));
  EXPECT_EQ(in(g, add, 0).role, TensorRole::GraphInput);
  EXPECT_EQ(in(g, add, 1).role, TensorRole::Constant);  // p0: named like relay's bound constants
  EXPECT_EQ(out(g, add).role, TensorRole::GraphOutput);
  EXPECT_EQ(r.memory_footprint_bytes, 200 + 20 + 200);
  // A bare graph has one model.
  expect_input_error([&] { read_tvm_mlf(p, "x"); }, "", "applies to Model Library Format archives");
}

TEST(TvmMlf, SniffingLooksAtContent) {
  Scratch s;
  // A .tar.gz named .json is still an archive; a graph named .bin still a graph.
  std::filesystem::copy_file(mlf_data("v5.tar.gz"), s.path("model.json"));
  EXPECT_TRUE(sniff_tvm_mlf(s.path("model.json")));
  EXPECT_EQ(read_tvm_mlf(s.path("model.json")).layers.size(), 5u);
  std::filesystem::copy_file(test::tvm_example(), s.path("graph.bin"));
  EXPECT_TRUE(sniff_tvm_mlf(s.path("graph.bin")));
  // A tar without metadata.json, a Frontend IR file, text, a directory without metadata.json.
  test::write_tar(s.path("other.tar"), {{"a.txt", "hello"}}, false);
  EXPECT_FALSE(sniff_tvm_mlf(s.path("other.tar")));
  EXPECT_FALSE(sniff_tvm_mlf(std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/frontend_ir/int8_resnet50.sim_quantized_b1.json"));
  test::spit(s.path("notes.txt"), "not a model");
  EXPECT_FALSE(sniff_tvm_mlf(s.path("notes.txt")));
  EXPECT_FALSE(sniff_tvm_mlf(s.path("")));
  EXPECT_FALSE(sniff_tvm_mlf(s.path("missing.tar")));
  // In memory.
  EXPECT_TRUE(sniff_tvm_mlf_bytes(test::slurp(mlf_data("v7.tar.gz"))));
  EXPECT_TRUE(sniff_tvm_mlf_bytes(test::slurp(test::tvm_example())));
  EXPECT_FALSE(sniff_tvm_mlf_bytes(test::slurp(s.path("other.tar"))));
  EXPECT_FALSE(sniff_tvm_mlf_bytes("{\"Nodes\": []}"));
  EXPECT_FALSE(sniff_tvm_mlf_bytes(""));
  // Reading what is not MLF says so.
  expect_input_error([&] { read_tvm_mlf(s.path("notes.txt")); }, "", "not a TVM Model Library Format");
  expect_input_error([&] { read_tvm_mlf(s.path("missing.tar")); }, "", "no such file");
  expect_input_error([&] { read_tvm_mlf(s.path("other.tar")); }, "metadata.json", "missing");
}

}  // namespace
}  // namespace npusim::frontends
