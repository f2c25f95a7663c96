// Functional kernels of the npusim extension ops, part 1: matmul / batch_matmul, element-wise
// binary ops with NumPy broadcasting, unary activations and clip. Expected values are worked
// out by hand in the comments, or (transcendental functions) computed offline with PyTorch
// 1.13 in float64 and rounded to float32 with numpy, as noted at each table.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "models/functional/activations.h"
#include "models/functional/elementwise.h"
#include "models/functional/matmul.h"
#include "tests/unit/functional/ext_layer.h"

namespace npusim::functional {
namespace {

using namespace ext_test;
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// ---- matmul ----

// A = [[1,2,3],[4,5,6]], B = [[1,0,1],[0,1,1]]^T ([3,2]: columns e1+e3, e2+e3):
// A.B = [[1+3, 2+3], [4+6, 5+6]] = [[4,5],[10,11]].
const std::vector<float> kA = {1, 2, 3, 4, 5, 6}, kAt = {1, 4, 2, 5, 3, 6};
const std::vector<float> kB = {1, 0, 0, 1, 1, 1}, kBt = {1, 0, 1, 0, 1, 1};
const std::vector<float> kAB = {4, 5, 10, 11};

TEST(ExtMatMul, PlainAndEveryTransposeFlag) {
  EXPECT_EQ(matmul(Tensor({2, 3}, kA), Tensor({3, 2}, kB), nullptr).data, kAB);
  EXPECT_EQ(matmul(Tensor({3, 2}, kAt), Tensor({3, 2}, kB), nullptr, true, false).data, kAB);
  EXPECT_EQ(matmul(Tensor({2, 3}, kA), Tensor({2, 3}, kBt), nullptr, false, true).data, kAB);
  const Tensor y = matmul(Tensor({3, 2}, kAt), Tensor({2, 3}, kBt), nullptr, true, true);
  EXPECT_EQ(y.shape, (ir::Shape{2, 2}));
  EXPECT_EQ(y.data, kAB);
}

TEST(ExtMatMul, BiasPerColumn) {
  // [[4,5],[10,11]] + [0.5, -1] = [[4.5, 4], [10.5, 10]]
  const Tensor bias({2}, {0.5f, -1.0f});
  EXPECT_EQ(matmul(Tensor({2, 3}, kA), Tensor({3, 2}, kB), &bias).data, (std::vector<float>{4.5f, 4, 10.5f, 10}));
}

TEST(ExtMatMul, BatchDimsBroadcast) {
  // A [2,1,1,2] (batch [2,1]): A0 = [1,2], A1 = [3,4]; B [3,2,1] (batch [3]): B0 = [1,0]^T,
  // B1 = [0,1]^T, B2 = [1,1]^T. Out [2,3,1,1]: A_i . B_j = [1,2,3, 3,4,7].
  const Tensor y = matmul(Tensor({2, 1, 1, 2}, {1, 2, 3, 4}), Tensor({3, 2, 1}, {1, 0, 0, 1, 1, 1}), nullptr);
  EXPECT_EQ(y.shape, (ir::Shape{2, 3, 1, 1}));
  EXPECT_EQ(y.data, (std::vector<float>{1, 2, 3, 3, 4, 7}));
  // A rank 3 against a rank-2 weight: [2,1,2] x [2,2]: [1,2].[[1,2],[3,4]] = [7,10]; [3,4] -> [15,22].
  const Tensor z = matmul(Tensor({2, 1, 2}, {1, 2, 3, 4}), Tensor({2, 2}, {1, 2, 3, 4}), nullptr);
  EXPECT_EQ(z.shape, (ir::Shape{2, 1, 2}));
  EXPECT_EQ(z.data, (std::vector<float>{7, 10, 15, 22}));
}

TEST(ExtMatMul, AccumulatesInFloat64) {
  // 1e8 + 1 - 1e8: a float32 running sum loses the 1 (fl32(1e8 + 1) = 1e8); float64 keeps it.
  const Tensor y = matmul(Tensor({1, 3}, {1e8f, 1, -1e8f}), Tensor({3, 1}, {1, 1, 1}), nullptr);
  EXPECT_EQ(y.data, (std::vector<float>{1}));
}

TEST(ExtMatMul, ShapeRules) {
  std::string why;
  EXPECT_EQ(matmul_output_shape({4, 2, 3}, {1, 3, 5}, false, false), (ir::Shape{4, 2, 5}));
  EXPECT_EQ(matmul_output_shape({3, 2}, {5, 3}, true, true), (ir::Shape{2, 5}));
  EXPECT_TRUE(matmul_output_shape({2, 3}, {2, 5}, false, false, &why).empty());
  EXPECT_NE(why.find("K = 3"), std::string::npos) << why;
  EXPECT_TRUE(matmul_output_shape({2, 2, 3}, {3, 3, 5}, false, false, &why).empty());
  EXPECT_NE(why.find("batch"), std::string::npos) << why;
  EXPECT_THROW(matmul(Tensor({2, 3}), Tensor({2, 5}), nullptr), InternalError);
}

TEST(ExtMatMul, RunLayerWithWeightsBiasAndFloat16Output) {
  // [1,1] . [0.1, 0.2]^T = fl32(0.1) + fl32(0.2) in float64 -> float32 0.3 -> fp16 0.300048828125
  // (0.3 / 2^-12 = 1228.8 -> 1229 * 2^-12).
  ir::Layer l = layer(OpKind::MatMul, {{1, 2}, {2, 1}}, {{1, 1}});
  l.output_dtypes = {DType::Float16};
  Tensor y = run_layer(l, {Tensor({1, 2}, {1, 1})}, {{"k", Tensor({2, 1}, {0.1f, 0.2f})}});
  EXPECT_EQ(y.dtype, DType::Float16);
  EXPECT_EQ(y.data, (std::vector<float>{0.300048828125f}));
  // The bias may also come as input 3 (after B as input 2): 0.3 + 1 = 1.3 -> fp16 1.2998046875.
  y = run_layer(l, {Tensor({1, 2}, {1, 1}), Tensor({2, 1}, {0.1f, 0.2f}), Tensor({1}, {1.0f})}, {});
  EXPECT_EQ(y.data, (std::vector<float>{1.2998046875f}));
}

TEST(ExtMatMul, RunLayerInt8WeightsWithPerColumnScale) {
  // k = [[1,2],[3,4]] (int8) with k_scale [0.5, 2] per column n: w = [[0.5,4],[1.5,8]].
  // [1,1] . w = [2, 12]. Transposed (k stored [N,K] = [[1,3],[2,4]]) gives the same.
  ir::Layer l = layer(OpKind::MatMul, {{1, 2}, {2, 2}}, {{1, 2}});
  ParamMap p{{"k", Tensor({2, 2}, {1, 2, 3, 4}, DType::Int8)}, {"k_scale", Tensor({2}, {0.5f, 2})}};
  EXPECT_EQ(run_layer(l, {Tensor({1, 2}, {1, 1})}, p).data, (std::vector<float>{2, 12}));
  l.transpose_b = true;
  p["k"] = Tensor({2, 2}, {1, 3, 2, 4}, DType::Int8);
  EXPECT_EQ(run_layer(l, {Tensor({1, 2}, {1, 1})}, p).data, (std::vector<float>{2, 12}));
  p.erase("k_scale");
  EXPECT_EQ(failure(l, {Tensor({1, 2}, {1, 1})}, p).where, "/L/file_list/k");
}

TEST(ExtMatMul, BatchMatMulOfTwoActivations) {
  // Q [1,2,1,2] . K^T with K [1,2,1,2] (transpose_b): per head h, q_h . k_h:
  // head 0: [1,2].[3,4] = 11; head 1: [0,1].[5,-1] = -1.
  ir::Layer l = layer(OpKind::BatchMatMul, {{1, 2, 1, 2}, {1, 2, 1, 2}}, {{1, 2, 1, 1}});
  l.transpose_b = true;
  const Tensor y = run_layer(l, {Tensor({1, 2, 1, 2}, {1, 2, 0, 1}), Tensor({1, 2, 1, 2}, {3, 4, 5, -1})}, {});
  EXPECT_EQ(y.data, (std::vector<float>{11, -1}));
}

TEST(ExtMatMul, RunLayerErrors) {
  // K differs: the IR's shape rule, reported under the layer.
  ir::Layer l = layer(OpKind::MatMul, {{1, 2}, {3, 1}}, {{1, 1}});
  Failure f = failure(l, {Tensor({1, 2}), Tensor({3, 1})});
  EXPECT_EQ(f.where, "/L/input_shape/1");
  EXPECT_NE(f.message.find("reduction dims differ"), std::string::npos) << f.message;
  // A bias of the wrong size.
  l = layer(OpKind::MatMul, {{1, 2}, {2, 2}}, {{1, 2}});
  EXPECT_EQ(failure(l, {Tensor({1, 2})}, {{"k", Tensor({2, 2})}, {"b", Tensor({3})}}).where, "/L/file_list/b");
  // No B at all.
  EXPECT_EQ(failure(l, {Tensor({1, 2})}).where, "/L/file_list");
  // An input that differs from the recorded shape.
  EXPECT_EQ(failure(l, {Tensor({1, 3})}, {{"k", Tensor({2, 2})}}).where, "/L/input_shape/0");
}

// ---- element-wise binary ----

TEST(ExtBinary, NumpyBroadcasting) {
  // a [2,1] = [10, 20] against b [1,3] = [1, 2, 3] -> [2,3].
  const Tensor a({2, 1}, {10, 20}), b({1, 3}, {1, 2, 3});
  EXPECT_EQ(binary(a, b, BinaryOp::Sub).data, (std::vector<float>{9, 8, 7, 19, 18, 17}));
  EXPECT_EQ(binary(a, b, BinaryOp::Mul).data, (std::vector<float>{10, 20, 30, 20, 40, 60}));
  EXPECT_EQ(binary(a, b, BinaryOp::Div).data, (std::vector<float>{10, 5, 10.0f / 3.0f, 20, 10, 20.0f / 3.0f}));
  const Tensor c({1, 3}, {15, 5, 25});
  EXPECT_EQ(binary(a, c, BinaryOp::Max).data, (std::vector<float>{15, 10, 25, 20, 20, 25}));
  EXPECT_EQ(binary(a, c, BinaryOp::Min).data, (std::vector<float>{10, 5, 10, 15, 5, 20}));
  // Rank-3 against rank-1 (aligned at the last dim): [2,1,2] - [2] -> [2,1,2].
  EXPECT_EQ(binary(Tensor({2, 1, 2}, {1, 2, 3, 4}), Tensor({2}, {1, 10}), BinaryOp::Sub).data,
            (std::vector<float>{0, -8, 2, -6}));
}

TEST(ExtBinary, IeeeSpecialValues) {
  // Division by zero gives inf / NaN; max and min propagate a NaN from either side.
  expect_floats(binary(Tensor({3}, {1, -1, 0}), Tensor({1}, {0}), BinaryOp::Div).data, {kInf, -kInf, kNaN});
  expect_floats(binary(Tensor({2}, {kNaN, 1}), Tensor({2}, {1, kNaN}), BinaryOp::Max).data, {kNaN, kNaN});
  expect_floats(binary(Tensor({2}, {kNaN, 1}), Tensor({2}, {1, kNaN}), BinaryOp::Min).data, {kNaN, kNaN});
}

TEST(ExtBinary, RunLayerEveryOp) {
  const Tensor a({2, 1}, {10, 20}), c({1, 3}, {15, 5, 25});
  const std::vector<std::pair<OpKind, std::vector<float>>> cases = {
      {OpKind::Sub, {-5, 5, -15, 5, 15, -5}},     {OpKind::Mul, {150, 50, 250, 300, 100, 500}},
      {OpKind::Div, {10.0f / 15, 2, 0.4f, 20.0f / 15, 4, 0.8f}}, {OpKind::Maximum, {15, 10, 25, 20, 20, 25}},
      {OpKind::Minimum, {10, 5, 10, 15, 5, 20}}};
  for (const auto& [op, want] : cases) {
    const ir::Layer l = layer(op, {{2, 1}, {1, 3}}, {{2, 3}});
    const Tensor y = run_layer(l, {a, c}, {});
    EXPECT_EQ(y.shape, (ir::Shape{2, 3})) << ir::op_name(op);
    EXPECT_EQ(y.data, want) << ir::op_name(op);
  }
  // element_wise_add (a Frontend IR op with its own kernel) takes the same NumPy broadcasting.
  EXPECT_EQ(run_layer(layer(OpKind::ElementWiseAdd, {{2, 1}, {1, 3}}, {{2, 3}}), {a, c}, {}).data,
            (std::vector<float>{25, 15, 35, 35, 25, 45}));
  // The output must be the broadcast shape (the IR's rule).
  const ir::Layer bad = layer(OpKind::Sub, {{2, 1}, {1, 3}}, {{2, 1}});
  EXPECT_EQ(failure(bad, {a, c}).where, "/L/output_shape/0");
  const ir::Layer nob = layer(OpKind::Sub, {{2, 1}, {1, 3}}, {{2, 3}});
  EXPECT_EQ(failure(nob, {a}).where, "/L/file_list");
}

TEST(ExtBinary, Int8WithAndWithoutQuantInfo) {
  // quant_info: a = [10, 20] * 0.5 = [5, 10]; b = (4 + -2) * 0.25 = 0.5; a - b = [4.5, 9.5];
  // * 1 + 0 rounded half away from zero: [5, 10].
  ir::Layer l = layer(OpKind::Sub, {{2}, {1}}, {{2}}, DType::Int8);
  l.gemini.quant.present = true;
  l.gemini.quant.input_scale1 = 0.5;
  l.gemini.quant.input_scale2 = 0.25;
  l.gemini.quant.input_zero_point2 = -2;
  l.gemini.quant.output_scale = 1.0;
  l.gemini.quant.output_zero_point = 0.0;
  const Tensor a({2}, {10, 20}, DType::Int8), b({1}, {4}, DType::Int8);
  Tensor y = run_layer(l, {a, b}, {});
  EXPECT_EQ(y.dtype, DType::Int8);
  EXPECT_EQ(y.data, (std::vector<float>{5, 10}));
  // Without quant_info the integers are the values: [10 - 4, 20 - 4]; a product saturates.
  l.gemini.quant = {};
  EXPECT_EQ(run_layer(l, {a, b}, {}).data, (std::vector<float>{6, 16}));
  l.op = OpKind::Mul;
  EXPECT_EQ(run_layer(l, {Tensor({2}, {100, -100}, DType::Int8), Tensor({1}, {2}, DType::Int8)}, {}).data,
            (std::vector<float>{127, -128}));
}

// ---- unary ----

// x = [-3, -1, -0.5, 0, 0.5, 1, 2, 3]. Expected: torch.nn.functional.gelu / silu, torch.sigmoid,
// tanh, exp of the float64 tensor, rounded to float32 with numpy (offline, PyTorch 1.13.1).
const std::vector<float> kX = {-3, -1, -0.5f, 0, 0.5f, 1, 2, 3};
const std::vector<std::pair<UnaryOp, std::vector<float>>> kTranscendental = {
    {UnaryOp::Gelu, {-0.004049694f, -0.15865526f, -0.15426877f, 0.0f, 0.34573123f, 0.8413448f, 1.9544997f, 2.9959502f}},
    {UnaryOp::Silu, {-0.14227761f, -0.26894143f, -0.18877034f, 0.0f, 0.31122968f, 0.7310586f, 1.7615942f, 2.8577223f}},
    {UnaryOp::Sigmoid, {0.047425874f, 0.26894143f, 0.37754068f, 0.5f, 0.62245935f, 0.7310586f, 0.8807971f, 0.95257413f}},
    {UnaryOp::Tanh, {-0.9950548f, -0.7615942f, -0.46211717f, 0.0f, 0.46211717f, 0.7615942f, 0.9640276f, 0.9950548f}},
    {UnaryOp::Exp, {0.049787067f, 0.36787945f, 0.60653067f, 1.0f, 1.6487212f, 2.7182817f, 7.389056f, 20.085537f}},
};

TEST(ExtUnary, TranscendentalAgainstFloat64Torch) {
  for (const auto& [op, want] : kTranscendental) expect_floats(unary(Tensor({8}, kX), op).data, want, std::to_string(static_cast<int>(op)));
}

TEST(ExtUnary, PiecewiseAndRoots) {
  EXPECT_EQ(unary(Tensor({4}, {-1, 0, 0.5f, 7}), UnaryOp::Relu).data, (std::vector<float>{0, 0, 0.5f, 7}));
  EXPECT_EQ(unary(Tensor({4}, {-1, 0, 0.5f, 7}), UnaryOp::Relu6).data, (std::vector<float>{0, 0, 0.5f, 6}));
  EXPECT_EQ(unary(Tensor({3}, {-1, 0, 2.5f}), UnaryOp::Neg).data, (std::vector<float>{1, 0, -2.5f}));
  // sqrt / rsqrt of [0.25, 1, 2, 4, 10] (torch float64 -> float32, offline); negative -> NaN, rsqrt(0) = inf.
  expect_floats(unary(Tensor({6}, {0.25f, 1, 2, 4, 10, -1}), UnaryOp::Sqrt).data, {0.5f, 1, 1.4142135f, 2, 3.1622777f, kNaN});
  expect_floats(unary(Tensor({6}, {0.25f, 1, 2, 4, 10, 0}), UnaryOp::Rsqrt).data, {2, 1, 0.70710677f, 0.5f, 0.31622776f, kInf});
  // NaN stays NaN in every op.
  for (UnaryOp op : {UnaryOp::Relu, UnaryOp::Relu6, UnaryOp::Gelu, UnaryOp::Exp, UnaryOp::Neg})
    EXPECT_TRUE(std::isnan(unary(Tensor({1}, {kNaN}), op).data[0]));
  // clip to [-1, 2]
  expect_floats(clip(Tensor({4}, {-3, 0.5f, 5, kNaN}), -1, 2).data, {-1, 0.5f, 2, kNaN});
}

TEST(ExtUnary, RunLayerEveryOpAndClip) {
  const std::vector<std::pair<OpKind, UnaryOp>> ops = {{OpKind::Gelu, UnaryOp::Gelu}, {OpKind::Silu, UnaryOp::Silu},
                                                       {OpKind::Sigmoid, UnaryOp::Sigmoid}, {OpKind::Tanh, UnaryOp::Tanh},
                                                       {OpKind::Exp, UnaryOp::Exp}};
  for (const auto& [op, u] : ops) {
    for (const auto& [uo, want] : kTranscendental)
      if (uo == u) expect_floats(run_layer(layer(op, {{2, 4}}, {{2, 4}}), {Tensor({2, 4}, kX)}, {}).data, want, ir::op_name(op));
  }
  EXPECT_EQ(run_layer(layer(OpKind::Relu, {{3}}, {{3}}), {Tensor({3}, {-1, 2, 9})}, {}).data, (std::vector<float>{0, 2, 9}));
  EXPECT_EQ(run_layer(layer(OpKind::Relu6, {{3}}, {{3}}), {Tensor({3}, {-1, 2, 9})}, {}).data, (std::vector<float>{0, 2, 6}));
  EXPECT_EQ(run_layer(layer(OpKind::Neg, {{3}}, {{3}}), {Tensor({3}, {-1, 2, 9})}, {}).data, (std::vector<float>{1, -2, -9}));
  EXPECT_EQ(run_layer(layer(OpKind::Sqrt, {{2}}, {{2}}), {Tensor({2}, {4, 9})}, {}).data, (std::vector<float>{2, 3}));
  EXPECT_EQ(run_layer(layer(OpKind::Rsqrt, {{2}}, {{2}}), {Tensor({2}, {4, 0.25f})}, {}).data, (std::vector<float>{0.5f, 2}));
  ir::Layer c = layer(OpKind::Clip, {{4}}, {{4}});
  c.clip_min = -0.5;
  c.clip_max = 1.5;
  EXPECT_EQ(run_layer(c, {Tensor({4}, {-2, 0, 1, 3})}, {}).data, (std::vector<float>{-0.5f, 0, 1, 1.5f}));
  c.clip_min = 2;  // min > max: the IR's rule
  EXPECT_EQ(failure(c, {Tensor({4})}).where, "/L/clip_min");
}

TEST(ExtUnary, Float16OutputRoundsToNearestEven) {
  // gelu(1) = 0.8413448 -> fp16 0.84130859375 (1723.07 ULPs of 2^-11 -> 1723);
  // gelu(-1) = -0.15865526 -> -0.15869140625 (1299.72 ULPs of 2^-13 -> 1300);
  // exp(1) = 2.7182817 -> 2.71875 (1391.76 ULPs of 2^-9 -> 1392). numpy float16 agrees.
  ir::Layer l = layer(OpKind::Gelu, {{2}}, {{2}}, DType::Float16);
  Tensor y = run_layer(l, {Tensor({2}, {1, -1}, DType::Float16)}, {});
  EXPECT_EQ(y.dtype, DType::Float16);
  EXPECT_EQ(y.data, (std::vector<float>{0.84130859375f, -0.15869140625f}));
  l.op = OpKind::Exp;
  l.input_shapes = l.output_shapes = {{1}};
  EXPECT_EQ(run_layer(l, {Tensor({1}, {1}, DType::Float16)}, {}).data, (std::vector<float>{2.71875f}));
  // bfloat16: exp(1) -> 2.71875 too (8 bits: 2 + 0.71875 = 2 + 23/32).
  l.output_dtypes = {DType::BFloat16};
  EXPECT_EQ(run_layer(l, {Tensor({1}, {1}, DType::Float16)}, {}).data, (std::vector<float>{2.71875f}));
}

TEST(ExtUnary, RunLayerErrors) {
  EXPECT_EQ(failure(layer(OpKind::Gelu, {{2, 3}}, {{3, 2}}), {Tensor({2, 3})}).where, "/L/output_shape/0");
  EXPECT_EQ(failure(layer(OpKind::Gelu, {{2, 3}}, {{2, 3}}), {Tensor({3, 2})}).where, "/L/input_shape/0");
  EXPECT_EQ(failure(layer(OpKind::Gelu, {{2, 3}}, {{2, 3}}), {}).where, "/L/file_list");
  // A layer without a pointer is named by its name.
  ir::Layer l = layer(OpKind::Tanh, {{2}}, {{3}});
  l.pointer.clear();
  EXPECT_EQ(failure(l, {Tensor({2})}).where, "/L/output_shape/0");
}

}  // namespace
}  // namespace npusim::functional
