// The ONNX reader (frontends/onnx) on small models built here with libonnx's protobuf API:
// the lowering of each op to IR ops and shapes, the recognized patterns (BatchNorm folding,
// GELU, decomposed LayerNorm, MatMul + bias), static shape computations, quantized ops,
// opaque ops, and the InputErrors for malformed files (file + node / initializer place).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "frontends/onnx/onnx_reader.h"
#include "frontends/registry/registry.h"
#include "tests/unit/expect_input_error.h"
#include "tests/unit/onnx/onnx_model_builder.h"

namespace npusim::frontends {
namespace {

using ir::OpKind;
using ir::Shape;
using test::expect_input_error;
using test::OnnxBuilder;
using TP = onnx::TensorProto;

struct Read {
  ir::Graph g;
  OnnxReadInfo info;
};

Read lower(const OnnxBuilder& b, const std::string& name = "model.onnx") {
  Read r;
  r.g = read_onnx_bytes(b.bytes(), name, &r.info);
  return r;
}

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> r;
  for (const auto& l : g.layers) r.push_back(ir::op_name(l.op));
  return r;
}

int64_t total_macs(const ir::Graph& g) {
  int64_t m = 0;
  for (const auto& l : g.layers) m += l.macs();
  return m;
}

std::filesystem::path scratch() {
  const auto p = std::filesystem::path(::testing::TempDir()) / "npusim_onnx_test";
  std::filesystem::create_directories(p);
  return p;
}

// input x [1,3,32,32] -> conv 3x3 pad 1 (8 ch) -> relu -> maxpool 2 -> gap -> flatten -> gemm 10.
OnnxBuilder small_cnn() {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 32, 32});
  b.init("w", {8, 3, 3, 3});
  b.init("b", {8});
  auto* c = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  OnnxBuilder::attr(c, "pads", std::vector<int64_t>{1, 1, 1, 1});
  OnnxBuilder::attr(c, "kernel_shape", std::vector<int64_t>{3, 3});
  b.node("Relu", {"c"}, {"r"}, "relu");
  auto* p = b.node("MaxPool", {"r"}, {"p"}, "pool");
  OnnxBuilder::attr(p, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(p, "strides", std::vector<int64_t>{2, 2});
  b.node("GlobalAveragePool", {"p"}, {"g"}, "gap");
  b.node("Flatten", {"g"}, {"f"}, "flatten");
  b.init("fw", {10, 8});
  b.init("fb", {10});
  auto* gm = b.node("Gemm", {"f", "fw", "fb"}, {"y"}, "fc");
  OnnxBuilder::attr(gm, "transB", int64_t{1});
  b.output("y");
  return b;
}

// ---------------------------------------------------------------- lowering

TEST(OnnxReader, LowersASmallCnn) {
  Read r = lower(small_cnn());
  const ir::Graph& g = r.g;
  EXPECT_EQ(g.format, "onnx");
  EXPECT_EQ(g.name, "model");
  EXPECT_EQ(ops(g), (std::vector<std::string>{"conv2d", "relu", "max_pool2d", "global_avg_pool2d", "reshape", "dense"}));
  const ir::Layer& conv = g.layers[0];
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.pointer, "/graph/node/0 (conv)");
  EXPECT_EQ(conv.output_shapes[0], (Shape{1, 8, 32, 32}));
  EXPECT_EQ(conv.padding, (std::array<int, 4>{1, 1, 1, 1}));
  EXPECT_EQ(conv.kernel, (std::array<int, 2>{3, 3}));
  EXPECT_EQ(g.tensor(conv.inputs[0]).role, ir::TensorRole::GraphInput);
  EXPECT_EQ(g.tensor(conv.inputs[1]).role, ir::TensorRole::Weight);
  EXPECT_EQ(g.tensor(conv.inputs[2]).role, ir::TensorRole::Bias);
  EXPECT_EQ(g.tensor(conv.inputs[1]).dtype, ir::DType::Float32);
  EXPECT_EQ(g.layers[2].pool, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(g.layers[2].output_shapes[0], (Shape{1, 8, 16, 16}));
  EXPECT_EQ(g.layers[4].output_shapes[0], (Shape{1, 8}));
  const ir::Layer& fc = g.layers[5];
  EXPECT_EQ(fc.output_shapes[0], (Shape{1, 10}));
  EXPECT_EQ(g.tensor(fc.outputs[0]).role, ir::TensorRole::GraphOutput);
  EXPECT_EQ(g.graph_inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(total_macs(g), 32 * 32 * 8 * 27 + 8 * 10);
  EXPECT_EQ(r.info.opaque_summary(), "");
}

TEST(OnnxReader, ConvAttributesGroupsDilationAutoPadAndConv1d) {
  OnnxBuilder b(13);
  b.input("x", {1, 8, 15, 15});
  b.init("dw", {8, 1, 3, 3});
  auto* d = b.node("Conv", {"x", "dw"}, {"d"}, "depthwise");
  OnnxBuilder::attr(d, "group", int64_t{8});
  OnnxBuilder::attr(d, "dilations", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(d, "pads", std::vector<int64_t>{0, 1, 2, 3});  // top, left, bottom, right
  b.init("w2", {4, 8, 3, 3});
  auto* s = b.node("Conv", {"d", "w2"}, {"s"}, "same");
  OnnxBuilder::attr(s, "auto_pad", std::string("SAME_UPPER"));
  OnnxBuilder::attr(s, "strides", std::vector<int64_t>{2, 2});
  b.output("s");
  b.input("seq", {1, 4, 20});
  b.init("w1", {6, 4, 5});
  auto* c1 = b.node("Conv", {"seq", "w1"}, {"c1"}, "conv1d");
  OnnxBuilder::attr(c1, "strides", std::vector<int64_t>{2});
  b.output("c1");
  Read r = lower(b);
  const ir::Layer& dw = r.g.layers[0];
  EXPECT_EQ(dw.groups, 8);
  EXPECT_EQ(dw.dilation, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(dw.padding, (std::array<int, 4>{0, 2, 1, 3}));
  // H: 15 + 0 + 2 - 2*2 - 1 + 1 = 13, W: 15 + 1 + 3 - 4 = 15.
  EXPECT_EQ(dw.output_shapes[0], (Shape{1, 8, 13, 15}));
  const ir::Layer& same = r.g.layers[1];
  EXPECT_EQ(same.output_shapes[0], (Shape{1, 4, 7, 8}));  // ceil(13/2), ceil(15/2)
  EXPECT_EQ(same.padding, (std::array<int, 4>{1, 1, 1, 1}));
  // Conv1d: a 2-D conv over H = 1 between two reshapes.
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"conv2d", "conv2d", "reshape", "conv2d", "reshape"}));
  const ir::Layer& c1d = r.g.layers[3];
  EXPECT_EQ(c1d.input_shapes[1], (Shape{6, 4, 1, 5}));
  EXPECT_EQ(c1d.stride, (std::array<int, 2>{1, 2}));
  EXPECT_EQ(r.g.layers[4].output_shapes[0], (Shape{1, 6, 8}));
}

TEST(OnnxReader, BatchNormFoldsIntoTheConvItFollowsElseMulAdd) {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  b.init("w", {4, 3, 1, 1});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  for (const char* p : {"g", "beta", "mean", "var"}) b.init(p, {4});
  b.node("BatchNormalization", {"c", "g", "beta", "mean", "var"}, {"bn"}, "bn");
  b.node("Relu", {"bn"}, {"r"}, "relu");
  b.node("BatchNormalization", {"r", "g", "beta", "mean", "var"}, {"bn2"}, "bn2");
  b.output("bn2");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"conv2d", "relu", "element_wise_mul", "element_wise_add"}));
  const ir::Layer& conv = r.g.layers[0];
  ASSERT_EQ(conv.inputs.size(), 3u);  // BN's bias became the conv's
  EXPECT_EQ(r.g.tensor(conv.inputs[2]).name, "beta");
  EXPECT_EQ(r.g.tensor(conv.inputs[2]).role, ir::TensorRole::Bias);
  EXPECT_EQ(r.g.tensor(conv.outputs[0]).name, "bn");
  EXPECT_EQ(r.g.layers[2].input_shapes[1], (Shape{4, 1, 1}));
  EXPECT_EQ(r.info.fused.at("batch_norm into conv"), 1);
}

TEST(OnnxReader, GemmVariants) {
  OnnxBuilder b(13);
  b.input("a", {16, 4});  // transA: A is [K, M] = [16, 4]
  b.init("w", {16, 32});
  auto* g1 = b.node("Gemm", {"a", "w"}, {"y1"}, "trans_a");
  OnnxBuilder::attr(g1, "transA", int64_t{1});
  b.init("w2", {32, 8});
  b.init("c_full", {4, 8});  // a full [M,N] C: added after the product
  auto* g2 = b.node("Gemm", {"y1", "w2", "c_full"}, {"y2"}, "alpha");
  OnnxBuilder::attr(g2, "alpha", 2.0f);
  b.input("act", {8, 5});
  b.node("Gemm", {"y2", "act"}, {"y3"}, "two_activations");
  b.output("y3");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"matmul", "matmul", "element_wise_mul", "element_wise_add", "matmul"}));
  EXPECT_TRUE(r.g.layers[0].transpose_a);
  EXPECT_EQ(r.g.layers[0].output_shapes[0], (Shape{4, 32}));
  EXPECT_EQ(r.g.layers[1].inputs.size(), 2u);  // C [M,N] is added after alpha
  EXPECT_EQ(r.g.layers[2].output_shapes[0], (Shape{4, 8}));
  EXPECT_EQ(r.g.layers[3].output_shapes[0], (Shape{4, 8}));
  EXPECT_FALSE(r.g.layers[4].weight_is_parameter);
  EXPECT_EQ(total_macs(r.g), 4 * 32 * 16 + 4 * 8 * 32 + 4 * 5 * 8);
}

TEST(OnnxReader, MatMulWeightBatchAndRank1) {
  OnnxBuilder b(13);
  b.input("x", {2, 10, 16});
  b.init("w", {16, 24});
  b.init("bias", {24});
  b.node("MatMul", {"x", "w"}, {"m"}, "proj");
  b.node("Add", {"bias", "m"}, {"p"}, "proj_bias");  // bias first, as torch exports it
  b.input("k", {2, 24, 7});
  b.node("MatMul", {"p", "k"}, {"s"}, "scores");
  b.init("v", {7});
  b.node("MatMul", {"s", "v"}, {"o"}, "vec");
  b.output("o");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"matmul", "batch_matmul", "matmul", "reshape"}));
  const ir::Layer& proj = r.g.layers[0];
  ASSERT_EQ(proj.inputs.size(), 3u);  // the Add of a [N] constant became the matmul's bias
  EXPECT_EQ(r.g.tensor(proj.inputs[1]).role, ir::TensorRole::Weight);
  EXPECT_EQ(r.g.tensor(proj.inputs[2]).role, ir::TensorRole::Bias);
  EXPECT_EQ(r.g.tensor(proj.outputs[0]).name, "p");
  EXPECT_EQ(r.g.layers[1].output_shapes[0], (Shape{2, 10, 7}));
  // A rank-1 B is [K, 1]; the N of 1 is dropped again afterwards.
  EXPECT_EQ(r.g.layers[2].input_shapes[1], (Shape{7, 1}));
  EXPECT_EQ(r.g.layers[3].output_shapes[0], (Shape{2, 10}));
  EXPECT_EQ(total_macs(r.g), 2 * 10 * 24 * 16 + 2 * 10 * 7 * 24 + 2 * 10 * 7);
}

TEST(OnnxReader, GeluErfFormBecomesOneGeluAndALoneErfIsTanhClass) {
  OnnxBuilder b(13);
  b.input("x", {1, 4, 8});
  // Form A: ((x * (erf(x / sqrt2) + 1)) * 0.5
  b.const_float("sqrt2", 1.4142135f);
  b.node("Div", {"x", "sqrt2"}, {"d"}, "/mlp/Div");
  b.node("Erf", {"d"}, {"e"}, "/mlp/Erf");
  b.const_float("one", 1.0f);
  b.node("Add", {"e", "one"}, {"a"}, "/mlp/Add");
  b.node("Mul", {"x", "a"}, {"m"}, "/mlp/Mul");
  b.const_float("half", 0.5f);
  b.node("Mul", {"m", "half"}, {"g1"}, "/mlp/Mul_1");
  // Form B: (x * 0.5) * (1 + erf(x * 0.7071))
  b.node("Mul", {"g1", "half"}, {"h"}, "/b/Mul_h");
  b.const_float("rsqrt2", 0.70710678f);
  b.node("Mul", {"g1", "rsqrt2"}, {"d2"}, "/b/Mul_d");
  b.node("Erf", {"d2"}, {"e2"}, "/b/Erf");
  b.node("Add", {"one", "e2"}, {"a2"}, "/b/Add");
  b.node("Mul", {"h", "a2"}, {"g2"}, "/b/Mul");
  // A lone Erf.
  b.node("Erf", {"g2"}, {"lone"}, "lone_erf");
  b.output("lone");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"gelu", "gelu", "tanh"}));
  EXPECT_EQ(r.g.layers[0].name, "/mlp/gelu");
  EXPECT_EQ(r.g.tensor(r.g.layers[0].outputs[0]).name, "g1");
  EXPECT_EQ(r.g.tensor(r.g.layers[1].outputs[0]).name, "g2");
  EXPECT_EQ(r.info.fused.at("gelu (Erf form)"), 2);
  EXPECT_EQ(r.info.fused.at("erf read as tanh"), 1);
}

TEST(OnnxReader, GeluFormIsNotFusedWhenAnInnerValueIsUsedElsewhere) {
  OnnxBuilder b(13);
  b.input("x", {2, 8});
  b.const_float("sqrt2", 1.4142135f);
  b.node("Div", {"x", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.const_float("one", 1.0f);
  b.node("Add", {"e", "one"}, {"a"});
  b.node("Mul", {"x", "a"}, {"m"});
  b.const_float("half", 0.5f);
  b.node("Mul", {"m", "half"}, {"y"});
  b.output("y");
  b.output("e");  // the erf is a graph output too
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"element_wise_div", "tanh", "element_wise_add", "element_wise_mul",
                                                "element_wise_mul"}));
}

TEST(OnnxReader, SiluFormBecomesOneSilu) {
  OnnxBuilder b(13);
  b.input("x", {1, 8, 4, 4});
  b.node("Sigmoid", {"x"}, {"s"}, "/act/Sigmoid");
  b.node("Mul", {"s", "x"}, {"y"}, "/act/Mul");
  b.node("Sigmoid", {"y"}, {"z"}, "/plain/Sigmoid");  // read by nothing but the graph output
  b.output("z");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"silu", "sigmoid"}));
  EXPECT_EQ(r.g.layers[0].name, "/act/silu");
}

TEST(OnnxReader, DecomposedLayerNormAndLayerNormalization) {
  OnnxBuilder b(13);
  b.input("x", {1, 6, 16});
  auto* r1 = b.node("ReduceMean", {"x"}, {"mu"}, "/ln/ReduceMean");
  OnnxBuilder::attr(r1, "axes", std::vector<int64_t>{-1});
  b.node("Sub", {"x", "mu"}, {"d"}, "/ln/Sub");
  b.const_float("two", 2.0f);
  b.node("Pow", {"d", "two"}, {"p"}, "/ln/Pow");
  auto* r2 = b.node("ReduceMean", {"p"}, {"var"}, "/ln/ReduceMean_1");
  OnnxBuilder::attr(r2, "axes", std::vector<int64_t>{-1});
  b.const_float("eps", 1e-6f);
  b.node("Add", {"var", "eps"}, {"ve"}, "/ln/Add");
  b.node("Sqrt", {"ve"}, {"sd"}, "/ln/Sqrt");
  b.node("Div", {"d", "sd"}, {"n"}, "/ln/Div");
  b.init("gamma", {16});
  b.init("beta", {16});
  b.node("Identity", {"gamma"}, {"gamma_alias"});  // torch shares parameters through Identity
  b.node("Mul", {"n", "gamma_alias"}, {"ng"}, "/ln/Mul");
  b.node("Add", {"ng", "beta"}, {"y"}, "/ln/Add_1");
  // A ReduceMean that is not part of a layer norm stays one.
  auto* r3 = b.node("ReduceMean", {"y"}, {"pooled"}, "pool");
  OnnxBuilder::attr(r3, "axes", std::vector<int64_t>{1});
  OnnxBuilder::attr(r3, "keepdims", int64_t{0});
  b.output("pooled");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"layer_norm", "reduce_mean"}));
  const ir::Layer& ln = r.g.layers[0];
  EXPECT_EQ(ln.name, "/ln/layer_norm");
  EXPECT_EQ(ln.axes, (std::vector<int64_t>{2}));
  EXPECT_NEAR(ln.epsilon, 1e-6, 1e-12);
  ASSERT_EQ(ln.inputs.size(), 3u);
  EXPECT_EQ(r.g.tensor(ln.inputs[1]).name, "gamma");
  EXPECT_EQ(r.g.tensor(ln.inputs[1]).role, ir::TensorRole::Weight);
  EXPECT_EQ(r.g.tensor(ln.inputs[2]).role, ir::TensorRole::Bias);
  EXPECT_EQ(r.g.layers[1].output_shapes[0], (Shape{1, 16}));
  EXPECT_FALSE(r.g.layers[1].keepdims);

  OnnxBuilder b17(17);
  b17.input("x", {2, 5, 4, 8});
  b17.init("s", {4, 8});
  b17.init("bb", {4, 8});
  auto* n = b17.node("LayerNormalization", {"x", "s", "bb"}, {"y"}, "ln");
  OnnxBuilder::attr(n, "axis", int64_t{-2});
  OnnxBuilder::attr(n, "epsilon", 1e-3f);
  b17.output("y");
  Read r17 = lower(b17);
  ASSERT_EQ(ops(r17.g), (std::vector<std::string>{"layer_norm"}));
  EXPECT_EQ(r17.g.layers[0].axes, (std::vector<int64_t>{2, 3}));
  EXPECT_NEAR(r17.g.layers[0].epsilon, 1e-3, 1e-9);
}

TEST(OnnxReader, ShapeComputationsAreEvaluatedAndDropped) {
  // torch's x.reshape(x.size(0), -1, 4): Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
  OnnxBuilder b(13);
  b.input("x", {3, 8, 2});
  b.node("Shape", {"x"}, {"s"});
  b.init_ints("zero", {0}, true);
  auto* ga = b.node("Gather", {"s", "zero"}, {"n"});
  OnnxBuilder::attr(ga, "axis", int64_t{0});
  b.init_ints("axes0", {0});
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  b.const_ints("rest", {-1, 4});
  auto* cc = b.node("Concat", {"n1", "rest"}, {"shape"});
  OnnxBuilder::attr(cc, "axis", int64_t{0});
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  // ConstantOfShape + Mul + Equal + Where on constants (torch's expand(-1, ...) idiom).
  b.const_ints("three", {3});
  b.node("ConstantOfShape", {"three"}, {"ones"});
  b.node("Dropout", {"y"}, {"y2"});
  b.node("Identity", {"y2"}, {"y3"});
  b.node("Relu", {"y3"}, {"out"}, "relu");
  b.output("out");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"reshape", "relu"}));
  EXPECT_EQ(r.g.layers[0].output_shapes[0], (Shape{3, 4, 4}));
  EXPECT_GE(r.info.folded_nodes, 7);
  // The shape constants never become IR tensors.
  for (const auto& t : r.g.tensors) EXPECT_NE(t.dtype, ir::DType::Int64) << t.name;
}

TEST(OnnxReader, SoftmaxBeforeAndFromOpset13) {
  OnnxBuilder b11(11);
  b11.input("x", {2, 3, 4});
  b11.node("Softmax", {"x"}, {"y"}, "sm");  // axis 1: over the flattened [3,4]
  b11.output("y");
  Read r11 = lower(b11);
  EXPECT_EQ(ops(r11.g), (std::vector<std::string>{"reshape", "softmax", "reshape"}));
  EXPECT_EQ(r11.g.layers[1].input_shapes[0], (Shape{2, 12}));
  EXPECT_EQ(r11.g.layers[1].axes, (std::vector<int64_t>{1}));

  OnnxBuilder b13(13);
  b13.input("x", {2, 3, 4});
  b13.node("Softmax", {"x"}, {"y"}, "sm");
  b13.output("y");
  Read r13 = lower(b13);
  EXPECT_EQ(ops(r13.g), (std::vector<std::string>{"softmax"}));
  EXPECT_EQ(r13.g.layers[0].axes, (std::vector<int64_t>{2}));
}

TEST(OnnxReader, DataMovementOps) {
  OnnxBuilder b(13);
  b.input("x", {1, 6, 10});
  b.node("Transpose", {"x"}, {"t"}, "t");  // reversed: [10, 6, 1]
  b.init_ints("s_starts", {8});
  b.init_ints("s_ends", {-100});
  b.init_ints("s_axes", {0});
  b.init_ints("s_steps", {-3});
  b.node("Slice", {"t", "s_starts", "s_ends", "s_axes", "s_steps"}, {"sl"}, "slice");  // rows 8, 5, 2
  b.init_ints("split", {2, 4});
  auto* sp = b.node("Split", {"sl", "split"}, {"p0", "p1"}, "split");
  OnnxBuilder::attr(sp, "axis", int64_t{1});
  b.init("extra", {3, 1, 1});
  auto* cc = b.node("Concat", {"p1", "extra", "p0"}, {"c"}, "concat");
  OnnxBuilder::attr(cc, "axis", int64_t{1});
  b.init_ints("pads", {0, 1, 0, 0, 2, 0});
  b.node("Pad", {"c", "pads"}, {"pd"}, "pad");
  b.init_ints("idx", {1}, true);
  auto* ga = b.node("Gather", {"pd", "idx"}, {"ga"}, "gather");  // scalar index drops the axis
  OnnxBuilder::attr(ga, "axis", int64_t{1});
  b.init_ints("ax", {1});
  b.node("Unsqueeze", {"ga", "ax"}, {"u"}, "unsqueeze");
  b.node("Squeeze", {"u", "ax"}, {"sq"}, "squeeze");
  b.output("sq");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"transpose", "slice", "split", "concat", "pad", "gather", "reshape",
                                                "reshape", "reshape"}));
  EXPECT_EQ(r.g.layers[0].perm, (std::vector<int64_t>{2, 1, 0}));
  const ir::Layer& sl = r.g.layers[1];
  EXPECT_EQ(sl.output_shapes[0], (Shape{3, 6, 1}));
  EXPECT_EQ(sl.starts[0], 2);  // the same rows read forward
  EXPECT_EQ(sl.steps[0], 3);
  EXPECT_EQ(r.g.layers[2].output_shapes, (std::vector<Shape>{{3, 2, 1}, {3, 4, 1}}));
  EXPECT_EQ(r.g.layers[3].output_shapes[0], (Shape{3, 7, 1}));
  EXPECT_EQ(r.g.tensor(r.g.layers[3].inputs[1]).role, ir::TensorRole::Constant);
  EXPECT_EQ(r.g.layers[4].pads, (std::vector<int64_t>{0, 0, 1, 2, 0, 0}));
  EXPECT_EQ(r.g.layers[4].output_shapes[0], (Shape{3, 10, 1}));
  EXPECT_EQ(r.g.layers[5].output_shapes[0], (Shape{3, 1, 1}));
  EXPECT_EQ(r.g.layers[6].output_shapes[0], (Shape{3, 1}));
}

TEST(OnnxReader, QuantizedOps) {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  b.init("xs", {});
  b.init("xz", {}, TP::INT8);
  b.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, "quant");
  b.init("wq", {4, 3, 3, 3}, TP::INT8);
  b.init("ws", {});
  b.init("wz", {}, TP::INT8);
  b.init("ys", {});
  b.init("yz", {}, TP::INT8);
  b.init("bq", {4}, TP::INT32);
  b.node("QLinearConv", {"xq", "xs", "xz", "wq", "ws", "wz", "ys", "yz", "bq"}, {"yq"}, "qconv");
  b.node("DequantizeLinear", {"yq", "ys", "yz"}, {"y"}, "dequant");
  // QDQ: a DequantizeLinear of an int8 weight feeds a float Conv: the weight stays int8.
  b.node("DequantizeLinear", {"wq2", "ws", "wz"}, {"wf"}, "dq_weight");
  b.init("wq2", {2, 4, 1, 1}, TP::INT8);
  b.node("Conv", {"y", "wf"}, {"z"}, "conv");
  b.output("z");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"quantize", "conv2d", "dequantize", "conv2d"}));
  EXPECT_EQ(r.g.layers[0].output_dtypes[0], ir::DType::Int8);
  const ir::Layer& qc = r.g.layers[1];
  EXPECT_EQ(qc.input_dtypes, (std::vector<ir::DType>{ir::DType::Int8, ir::DType::Int8, ir::DType::Int32}));
  EXPECT_EQ(qc.output_dtypes[0], ir::DType::Int8);
  EXPECT_EQ(qc.output_shapes[0], (Shape{1, 4, 6, 6}));
  EXPECT_EQ(r.g.layers[2].output_dtypes[0], ir::DType::Float32);
  EXPECT_EQ(r.g.layers[3].input_dtypes[1], ir::DType::Int8);
  EXPECT_EQ(r.g.layers[3].weight_bytes(), 8);
}

TEST(OnnxReader, UnknownOpsBecomeOpaqueAndAreListed) {
  OnnxBuilder b(14);
  auto* dom = b.m.add_opset_import();
  dom->set_domain("com.example");
  dom->set_version(1);
  b.input("x", {1, 4, 6, 6});
  b.node("HardSwish", {"x"}, {"h"}, "hswish");  // libonnx's shape inference gives its shape
  b.node("MyOp", {"h"}, {"m"}, "custom", "com.example");
  b.value_info("m", {1, 4, 3, 3});  // nothing can infer a custom op: the model says it
  b.node("HardSwish", {"m"}, {"y"}, "hswish2");
  b.output("y");
  Read r = lower(b);
  EXPECT_EQ(ops(r.g), (std::vector<std::string>{"opaque", "opaque", "opaque"}));
  const ir::Layer& h = r.g.layers[0];
  EXPECT_EQ(h.opaque_label, "HardSwish");
  EXPECT_EQ(h.output_shapes[0], (Shape{1, 4, 6, 6}));
  EXPECT_EQ(h.opaque_bytes, 2 * 144 * 4);  // input + output: 144 float32 each
  EXPECT_EQ(r.g.layers[1].opaque_label, "com.example.MyOp");
  EXPECT_EQ(r.g.layers[1].output_shapes[0], (Shape{1, 4, 3, 3}));
  EXPECT_EQ(r.info.opaque_types.at("HardSwish"), 2);
  EXPECT_EQ(r.info.opaque_summary(), "3 opaque ops: HardSwish x2, com.example.MyOp x1");
}

TEST(OnnxReader, Opset18AxesAsInputs) {
  // From opset 18 ReduceMean takes its axes as an input, Split may give num_outputs, Pad axes.
  OnnxBuilder b(18);
  b.input("x", {2, 6, 16});
  b.init_ints("last", {-1});
  b.node("ReduceMean", {"x", "last"}, {"mu"}, "/ln/ReduceMean");
  b.node("Sub", {"x", "mu"}, {"d"}, "/ln/Sub");
  b.node("Mul", {"d", "d"}, {"p"}, "/ln/Mul_sq");
  b.node("ReduceMean", {"p", "last"}, {"var"}, "/ln/ReduceMean_1");
  b.const_float("eps", 1e-5f);
  b.node("Add", {"var", "eps"}, {"ve"}, "/ln/Add");
  b.node("Sqrt", {"ve"}, {"sd"}, "/ln/Sqrt");
  b.node("Div", {"d", "sd"}, {"n"}, "/ln/Div");
  auto* sp = b.node("Split", {"n"}, {"a", "c"}, "split");
  OnnxBuilder::attr(sp, "axis", int64_t{1});
  OnnxBuilder::attr(sp, "num_outputs", int64_t{2});
  b.init_ints("one", {1});
  auto* r = b.node("ReduceMean", {"a", "one"}, {"m"}, "mean");
  OnnxBuilder::attr(r, "keepdims", int64_t{0});
  b.init_ints("pads", {1, 2});
  b.init_ints("pad_axes", {-1});
  b.node("Pad", {"m", "pads", "", "pad_axes"}, {"y"}, "pad");
  b.output("y");
  b.output("c");
  Read rd = lower(b);
  EXPECT_EQ(ops(rd.g), (std::vector<std::string>{"layer_norm", "split", "reduce_mean", "pad"}));
  EXPECT_EQ(rd.g.layers[0].inputs.size(), 1u);  // no gamma / beta
  EXPECT_EQ(rd.g.layers[1].output_shapes, (std::vector<Shape>{{2, 3, 16}, {2, 3, 16}}));
  EXPECT_EQ(rd.g.layers[2].output_shapes[0], (Shape{2, 16}));
  EXPECT_EQ(rd.g.layers[3].pads, (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(rd.g.layers[3].output_shapes[0], (Shape{2, 19}));
}

TEST(OnnxReader, SymbolicInputDimsAreTakenAsOne) {
  OnnxBuilder b(13);
  b.input("x", {-1, 16});  // dim_param "batch"
  b.init("w", {16, 4});
  b.node("MatMul", {"x", "w"}, {"y"}, "mm");
  b.output("y");
  Read r = lower(b);
  EXPECT_EQ(r.g.layers[0].input_shapes[0], (Shape{1, 16}));
  ASSERT_FALSE(r.info.notes.empty());
  EXPECT_NE(r.info.notes[0].find("'batch'"), std::string::npos) << r.info.notes[0];
}

// ---------------------------------------------------------------- errors

TEST(OnnxReaderErrors, EmptyGarbageAndTruncatedFiles) {
  expect_input_error([] { read_onnx_bytes("", "m.onnx"); }, "", "empty");
  std::mt19937 rng(7);
  std::string garbage(4096, '\0');
  for (char& c : garbage) c = static_cast<char>(rng() & 0xff);
  garbage[0] = 0x37;
  expect_input_error([&] { read_onnx_bytes(garbage, "m.onnx"); }, "", "not an ONNX model");
  const std::string full = small_cnn().bytes();
  const std::string cut = full.substr(0, full.size() / 2);
  EXPECT_TRUE(sniff_onnx(cut));
  const std::string msg = expect_input_error([&] { read_onnx_bytes(cut, "m.onnx"); }, "", "truncated");
  EXPECT_EQ(msg.rfind("m.onnx: ", 0), 0u) << msg;
}

TEST(OnnxReaderErrors, MissingFileAndDirectory) {
  expect_input_error([] { read_onnx("/nonexistent/model.onnx"); }, "", "no such file");
  expect_input_error([] { read_onnx(scratch().string()); }, "", "is a directory");
}

TEST(OnnxReaderErrors, NodeReadingAMissingTensor) {
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Add", {"r", "nowhere"}, {"y"}, "Add_3");
  b.output("y");
  expect_input_error([&] { lower(b); }, "/graph/node/1 (Add_3)", "input 1 'nowhere' is not a graph input");
}

TEST(OnnxReaderErrors, InitializerDataShorterThanItsDims) {
  OnnxBuilder b = small_cnn();
  b.g->mutable_initializer(0)->set_raw_data(std::string(8, '\0'));
  expect_input_error([&] { lower(b); }, "/graph/initializer/0 (w)", "raw_data has 8 bytes but dims [8,3,3,3] x FLOAT need 864");
  OnnxBuilder t = small_cnn();
  auto* w = t.g->mutable_initializer(1);
  w->clear_raw_data();
  for (int i = 0; i < 5; ++i) w->add_float_data(1.0f);
  expect_input_error([&] { lower(t); }, "/graph/initializer/1 (b)", "float_data has 5 values but dims [8] x FLOAT need 8");
  OnnxBuilder neg = small_cnn();
  neg.g->mutable_initializer(1)->set_dims(0, -8);
  expect_input_error([&] { lower(neg); }, "/graph/initializer/1 (b)", "negative dimension");
}

TEST(OnnxReaderErrors, ExternalData) {
  const auto dir = scratch() / "external";
  std::filesystem::create_directories(dir);
  OnnxBuilder b = small_cnn();
  auto* w = b.g->mutable_initializer(0);  // [8,3,3,3] float: 864 bytes
  w->clear_raw_data();
  w->set_data_location(TP::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  std::ofstream(dir / "weights.bin", std::ios::binary) << std::string(864, '\0');
  const std::string path = b.write(dir, "ext.onnx");
  EXPECT_EQ(ops(read_onnx(path)).size(), 6u);
  std::ofstream(dir / "weights.bin", std::ios::binary) << std::string(100, '\0');
  expect_input_error([&] { read_onnx(path); }, "/graph/initializer/0 (w)", "external data has 100 bytes but dims [8,3,3,3] x FLOAT need 864");
}

TEST(OnnxReaderErrors, UnsupportedOpsetAndModelFields) {
  OnnxBuilder old = small_cnn();
  old.m.mutable_opset_import(0)->set_version(5);
  expect_input_error([&] { lower(old); }, "/opset_import/0", "opset 5 of the default domain is not supported");
  OnnxBuilder future = small_cnn();
  future.m.mutable_opset_import(0)->set_version(30);
  expect_input_error([&] { lower(future); }, "/opset_import/0", "npusim reads opsets 7 to 21");
  OnnxBuilder none = small_cnn();
  none.m.mutable_opset_import(0)->set_domain("com.example");
  expect_input_error([&] { lower(none); }, "/opset_import", "no opset is imported for the default domain");
  OnnxBuilder no_graph = small_cnn();
  no_graph.m.clear_graph();
  expect_input_error([&] { lower(no_graph); }, "/graph", "no graph");
}

TEST(OnnxReaderErrors, MissingShapes) {
  OnnxBuilder b(13);
  b.g->add_input()->set_name("x");  // no type at all
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  expect_input_error([&] { lower(b); }, "/graph/input/0 (x)", "not a tensor");
  OnnxBuilder c(13);
  auto* in = c.g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT);  // a tensor without a shape
  c.node("Relu", {"x"}, {"y"});
  c.output("y");
  expect_input_error([&] { lower(c); }, "/graph/input/0 (x)", "has no shape");
  // A custom op whose output shape nobody knows, read by a later node.
  OnnxBuilder d(13);
  d.input("x", {1, 4});
  d.node("Mystery", {"x"}, {"m"}, "Mystery_0", "com.example");
  d.node("Relu", {"m"}, {"y"}, "relu");
  d.output("y");
  expect_input_error([&] { lower(d); }, "/graph/node/0 (Mystery_0)", "has no static shape");
  // A Reshape whose target shape is computed at run time from data.
  OnnxBuilder e(13);
  e.input("x", {2, 6});
  e.input("shape", {2}, TP::INT64);
  e.node("Reshape", {"x", "shape"}, {"y"}, "Reshape_1");
  e.output("y");
  expect_input_error([&] { lower(e); }, "/graph/node/0 (Reshape_1)", "not known before run time");
}

TEST(OnnxReaderErrors, ShapesThatDisagree) {
  OnnxBuilder b(13);
  b.input("x", {1, 3, 8, 8});
  b.init("w", {4, 5, 3, 3});  // C = 5, the input has 3
  b.node("Conv", {"x", "w"}, {"y"}, "Conv_3");
  b.output("y");
  expect_input_error([&] { lower(b); }, "/graph/node/0 (Conv_3)", "the weight needs C/group at dim 1");
  OnnxBuilder v(13);
  v.input("x", {2, 3});
  v.node("Relu", {"x"}, {"y"}, "relu");
  v.value_info("y", {3, 2});
  v.output("y");
  expect_input_error([&] { lower(v); }, "/graph/node/0 (relu)", "value_info says [3,2]");
}

// ---------------------------------------------------------------- sniffing and the registry

TEST(OnnxSniff, FromTheContentOnly) {
  const std::string bytes = small_cnn().bytes();
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x08);
  EXPECT_TRUE(sniff_onnx(bytes));
  EXPECT_FALSE(sniff_onnx(""));
  EXPECT_FALSE(sniff_onnx("{\"layers\": []}"));
  EXPECT_FALSE(sniff_onnx(std::string("\x08\x07\xff\xff", 4)));
  EXPECT_FALSE(sniff_onnx(std::string("\x08\x00", 2)));  // ir_version 0
  std::string bad_field = bytes;
  bad_field[2] = static_cast<char>((9 << 3) | 2);  // the field after ir_version: unknown field 9
  EXPECT_FALSE(sniff_onnx(bad_field));
}

TEST(OnnxSniff, RegistryReadsOnnxWhateverTheFileName) {
  const std::string path = small_cnn().write(scratch(), "model.bin");
  EXPECT_EQ(sniff_workload(WorkloadSource(path)), "onnx");
  const ir::Graph g = read_workload(path);
  EXPECT_EQ(g.format, "onnx");
  EXPECT_EQ(g.layers.size(), 6u);
  EXPECT_EQ(read_workload(path, "onnx").layers.size(), 6u);
  ASSERT_NE(find_workload_reader("onnx"), nullptr);
}

}  // namespace
}  // namespace npusim::frontends
