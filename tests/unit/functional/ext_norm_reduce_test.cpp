// Functional kernels of the npusim extension ops, part 2: softmax, layer_norm, rms_norm,
// reductions and global pools. Sums by hand in the comments; normalizations computed offline
// with PyTorch 1.13.1 in float64 (torch.softmax, F.layer_norm, the rms formula) and rounded to
// float32 with numpy.
#include <gtest/gtest.h>

#include <limits>

#include "models/functional/normalization.h"
#include "models/functional/reduce.h"
#include "tests/unit/functional/ext_layer.h"

namespace npusim::functional {
namespace {

using namespace ext_test;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---- softmax ----

// s = [[1,2,3],[0,0,0]]
const std::vector<float> kS = {1, 2, 3, 0, 0, 0};
const std::vector<float> kSoftmaxLast = {0.09003057f, 0.24472848f, 0.66524094f, 0.33333334f, 0.33333334f, 0.33333334f};
const std::vector<float> kSoftmaxFirst = {0.7310586f, 0.8807971f, 0.95257413f, 0.26894143f, 0.11920292f, 0.047425874f};

TEST(ExtSoftmax, LastAndFirstAxis) {
  expect_floats(softmax(Tensor({2, 3}, kS), -1).data, kSoftmaxLast, "axis -1");
  expect_floats(softmax(Tensor({2, 3}, kS), 1).data, kSoftmaxLast, "axis 1");
  expect_floats(softmax(Tensor({2, 3}, kS), 0).data, kSoftmaxFirst, "axis 0");
  EXPECT_THROW(softmax(Tensor({2, 3}, kS), 2), InternalError);
}

TEST(ExtSoftmax, SubtractsTheMaximum) {
  // exp(1000) overflows; softmax([1000,1001,1002]) = softmax([0,1,2]) = row 0 above.
  expect_floats(softmax(Tensor({3}, {1000, 1001, 1002}), 0).data, {0.09003057f, 0.24472848f, 0.66524094f});
  expect_floats(softmax(Tensor({2}, {kNaN, 1}), 0).data, {kNaN, kNaN});
}

TEST(ExtSoftmax, RunLayerAxisAttribute) {
  ir::Layer l = layer(OpKind::Softmax, {{2, 3}}, {{2, 3}});
  expect_floats(run_layer(l, {Tensor({2, 3}, kS)}, {}).data, kSoftmaxLast, "default axis");  // axes empty: -1
  l.axes = {-2};
  expect_floats(run_layer(l, {Tensor({2, 3}, kS)}, {}).data, kSoftmaxFirst, "axis -2");
  l.axes = {0, 1};
  EXPECT_EQ(failure(l, {Tensor({2, 3}, kS)}).where, "/L/axes");
  l.axes = {2};
  EXPECT_EQ(failure(l, {Tensor({2, 3}, kS)}).where, "/L/axes/0");
}

// ---- layer_norm / rms_norm ----

// x [2,2,2] = [1,2,3,4, -1,0,2,7]; over the last two axes with gamma [[1,2],[0.5,-1]] and
// beta [[0,1],[0,0.5]], eps 1e-5 (F.layer_norm(x, (2,2), g, b)).
const std::vector<float> kLn = {1, 2, 3, 4, -1, 0, 2, 7};
const std::vector<float> kGamma = {1, 2, 0.5f, -1}, kBeta = {0, 1, 0, 0.5f};
const std::vector<float> kLnAffine = {-1.3416355f, 0.10557639f, 0.2236059f, -0.8416354f,
                                      -0.973328f,  -0.29777068f, 0.0f,      -1.1222134f};
// Over the last axis only, no affine: pairs (a, b) -> (-+1) / sqrt(1 + 4 eps / d^2) for d = |a-b|.
const std::vector<float> kLnLast = {-0.99998f, 0.99998f, -0.99998f, 0.99998f, -0.99998f, 0.99998f, -0.9999992f, 0.9999992f};

TEST(ExtLayerNorm, TrailingAxesWithAffine) {
  const Tensor g({2, 2}, kGamma), b({2, 2}, kBeta);
  expect_floats(layer_norm(Tensor({2, 2, 2}, kLn), {-2, -1}, 1e-5, &g, &b).data, kLnAffine);
  expect_floats(layer_norm(Tensor({2, 2, 2}, kLn), {1, 2}, 1e-5, &g, &b).data, kLnAffine, "positive axes");
  expect_floats(layer_norm(Tensor({2, 2, 2}, kLn), {}, 1e-5, nullptr, nullptr).data, kLnLast, "default axis");
  EXPECT_THROW(layer_norm(Tensor({2, 2, 2}, kLn), {-1}, 1e-5, &g, nullptr), InternalError);  // 4 gammas for 2
}

TEST(ExtLayerNorm, RunLayerGammaBetaFromInputsOrParams) {
  ir::Layer l = layer(OpKind::LayerNorm, {{2, 2, 2}, {2, 2}, {2, 2}}, {{2, 2, 2}});
  l.axes = {-2, -1};
  const Tensor x({2, 2, 2}, kLn), g({2, 2}, kGamma), b({2, 2}, kBeta);
  expect_floats(run_layer(l, {x, g, b}, {}).data, kLnAffine, "inputs");
  // file_list k / b (the tensor table's weight / bias roles).
  expect_floats(run_layer(l, {x}, {{"k", g}, {"b", b}}).data, kLnAffine, "params");
  EXPECT_EQ(failure(l, {x}, {{"k", Tensor({3})}}).where, "/L/file_list/k");
  EXPECT_EQ(failure(l, {x}, {{"b", Tensor({3})}}).where, "/L/file_list/b");
  // Without gamma and beta, over the last axis; fp16 output: -0.99998 -> -1 (fp16 ULP 2^-11 below 1).
  ir::Layer plain = layer(OpKind::LayerNorm, {{2, 2, 2}}, {{2, 2, 2}});
  expect_floats(run_layer(plain, {x}, {}).data, kLnLast);
  plain.output_dtypes = {DType::Float16};
  EXPECT_EQ(run_layer(plain, {x}, {}).data, (std::vector<float>{-1, 1, -1, 1, -1, 1, -1, 1}));
  // The IR's rules: gamma with the wrong element count, epsilon <= 0.
  ir::Layer bad = layer(OpKind::LayerNorm, {{2, 2, 2}, {3}}, {{2, 2, 2}});
  EXPECT_EQ(failure(bad, {x, Tensor({3})}).where, "/L/input_shape/1");
  plain.epsilon = 0;
  EXPECT_EQ(failure(plain, {x}).where, "/L/epsilon");
}

TEST(ExtRmsNorm, LastAxisWithGamma) {
  // x / sqrt(mean(x^2) + 1e-6) * gamma, gamma = [1, 0.5, 2, -1]:
  // row [1,2,3,4]: mean sq 7.5; row [0.5,-0.5,1.5,-2.5]: mean sq 2.25 -> / 1.5.
  const Tensor x({2, 4}, {1, 2, 3, 4, 0.5f, -0.5f, 1.5f, -2.5f}), g({4}, {1, 0.5f, 2, -1});
  const std::vector<float> want = {0.36514834f, 0.36514834f, 2.19089f, -1.4605933f,
                                   0.33333325f, -0.16666663f, 1.9999995f, 1.6666663f};
  expect_floats(rms_norm(x, {-1}, 1e-6, &g).data, want);
  ir::Layer l = layer(OpKind::RmsNorm, {{2, 4}, {4}}, {{2, 4}});
  l.epsilon = 1e-6;
  expect_floats(run_layer(l, {x, g}, {}).data, want, "run_layer");
  expect_floats(run_layer(l, {x}, {{"k", g}}).data, want, "gamma as k");
  // Without gamma: row 2 is [1/3, -1/3, 1, -5/3] (times 1/sqrt(1 + 1e-6/2.25)).
  ir::Layer n = layer(OpKind::RmsNorm, {{2, 4}}, {{2, 4}});
  n.epsilon = 1e-6;
  const Tensor y = run_layer(n, {x}, {});
  EXPECT_FLOAT_EQ(y.data[4], 0.33333325f);
  EXPECT_FLOAT_EQ(y.data[6], 0.99999978f);
}

// ---- reductions ----

// x [2,3] = [[1,2,3],[4,5,6]]
const std::vector<float> kR = {1, 2, 3, 4, 5, 6};

TEST(ExtReduce, AxesKeepdimsAndNegativeAxes) {
  const Tensor x({2, 3}, kR);
  Tensor y = reduce(x, {1}, true, ReduceOp::Sum);
  EXPECT_EQ(y.shape, (ir::Shape{2, 1}));
  EXPECT_EQ(y.data, (std::vector<float>{6, 15}));
  y = reduce(x, {-1}, false, ReduceOp::Sum);
  EXPECT_EQ(y.shape, (ir::Shape{2}));
  EXPECT_EQ(y.data, (std::vector<float>{6, 15}));
  y = reduce(x, {-2}, false, ReduceOp::Mean);
  EXPECT_EQ(y.shape, (ir::Shape{3}));
  EXPECT_EQ(y.data, (std::vector<float>{2.5f, 3.5f, 4.5f}));
  y = reduce(x, {0, 1}, false, ReduceOp::Max);
  EXPECT_EQ(y.shape, (ir::Shape{1}));  // nothing left: [1]
  EXPECT_EQ(y.data, (std::vector<float>{6}));
  y = reduce(x, {1, 0}, true, ReduceOp::Mean);
  EXPECT_EQ(y.shape, (ir::Shape{1, 1}));
  EXPECT_EQ(y.data, (std::vector<float>{3.5f}));
  // Non-adjacent axes of [2,3,2] with x[i,j,k] = 6i + 2j + k, over i and k:
  // j = 0: 0+1+6+7 = 14; j = 1: 2+3+8+9 = 22; j = 2: 4+5+10+11 = 30.
  Tensor z({2, 3, 2});
  for (int i = 0; i < 12; ++i) z.data[i] = static_cast<float>(i);
  y = reduce(z, {0, -1}, true, ReduceOp::Sum);
  EXPECT_EQ(y.shape, (ir::Shape{1, 3, 1}));
  EXPECT_EQ(y.data, (std::vector<float>{14, 22, 30}));
  EXPECT_THROW(reduce(x, {2}, true, ReduceOp::Sum), InternalError);
  EXPECT_THROW(reduce(x, {1, -1}, true, ReduceOp::Sum), InternalError);
}

TEST(ExtReduce, Float64SumAndNaNMax) {
  // 1e8 + 1 - 1e8 = 1 in float64 (float32 running sum: 0); mean = 1/3 rounded once.
  EXPECT_EQ(reduce(Tensor({3}, {1e8f, 1, -1e8f}), {0}, true, ReduceOp::Sum).data, (std::vector<float>{1}));
  EXPECT_EQ(reduce(Tensor({3}, {1e8f, 1, -1e8f}), {0}, true, ReduceOp::Mean).data, (std::vector<float>{1.0f / 3.0f}));
  EXPECT_TRUE(std::isnan(reduce(Tensor({3}, {1, kNaN, 2}), {0}, true, ReduceOp::Max).data[0]));
  EXPECT_EQ(reduce(Tensor({2}, {-5, -3}), {0}, true, ReduceOp::Max).data, (std::vector<float>{-3}));
}

TEST(ExtReduce, RunLayerEveryOp) {
  ir::Layer l = layer(OpKind::ReduceSum, {{2, 3}}, {{2}});
  l.axes = {-1};
  l.keepdims = false;
  const Tensor x({2, 3}, kR);
  EXPECT_EQ(run_layer(l, {x}, {}).data, (std::vector<float>{6, 15}));
  l.op = OpKind::ReduceMean;
  EXPECT_EQ(run_layer(l, {x}, {}).data, (std::vector<float>{2, 5}));
  l.op = OpKind::ReduceMax;
  EXPECT_EQ(run_layer(l, {x}, {}).data, (std::vector<float>{3, 6}));
  // keepdims true needs [2,1]: the IR's rule names the mismatch; no axes is an error too.
  l.keepdims = true;
  EXPECT_EQ(failure(l, {x}).where, "/L/output_shape/0");
  l.axes.clear();
  EXPECT_EQ(failure(l, {x}).where, "/L/axes");
  // int8 in and out with quant_info: (q - 0) * 0.5 summed, then * 4 + 1: [6, 15] * 0.5 * 4 + 1 = [13, 31].
  ir::Layer q = layer(OpKind::ReduceSum, {{2, 3}}, {{2, 1}}, DType::Int8);
  q.axes = {1};
  q.gemini.quant.input_scale1 = 0.5;
  q.gemini.quant.output_scale = 4;
  q.gemini.quant.output_zero_point = 1;
  EXPECT_EQ(run_layer(q, {Tensor({2, 3}, kR, DType::Int8)}, {}).data, (std::vector<float>{13, 31}));
}

TEST(ExtGlobalPool, AvgAndMax) {
  // [1,2,2,2]: channel 0 = [1,2,3,4] (mean 2.5, max 4), channel 1 = [-1,-2,-3,-4] (-2.5, -1).
  const Tensor x({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  EXPECT_EQ(global_pool(x, false).data, (std::vector<float>{2.5f, -2.5f}));
  EXPECT_EQ(global_pool(x, true).data, (std::vector<float>{4, -1}));
  EXPECT_EQ(global_pool(x, true).shape, (ir::Shape{1, 2, 1, 1}));
  ir::Layer l = layer(OpKind::GlobalAvgPool2d, {{1, 2, 2, 2}}, {{1, 2, 1, 1}});
  EXPECT_EQ(run_layer(l, {x}, {}).data, (std::vector<float>{2.5f, -2.5f}));
  l.op = OpKind::GlobalMaxPool2d;
  EXPECT_EQ(run_layer(l, {x}, {}).data, (std::vector<float>{4, -1}));
  l.output_shapes = {{1, 2}};
  EXPECT_EQ(failure(l, {x}).where, "/L/output_shape/0");
  EXPECT_THROW(global_pool(Tensor({2, 2}), false), InternalError);
}

}  // namespace
}  // namespace npusim::functional
