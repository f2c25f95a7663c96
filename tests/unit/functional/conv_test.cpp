// conv2d / dense: hand-computed corners of every parameter, then random shapes against a
// naive 7-loop reference.
#include <gtest/gtest.h>

#include <random>

#include "models/functional/conv.h"
#include "sim/ir/error.h"

namespace npusim::functional {
namespace {

Tensor iota(ir::Shape s, float start = 0.0f) {
  Tensor t(std::move(s));
  for (int64_t i = 0; i < t.size(); ++i) t.data[i] = start + static_cast<float>(i);
  return t;
}

TEST(Conv2d, AsymmetricPaddingCorners) {
  // x = [[1,2],[3,4]], 2x2 ones, padding top 1, bottom 0, left 0, right 1:
  // padded = [[p,p,p],[1,2,p],[3,4,p]] -> OH = (2+1+0-1-1)/1+1 = 2, OW = 2.
  Tensor x({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor w = Tensor::full({1, 1, 2, 2}, 1.0f);
  ConvParams p;
  p.padding = {1, 0, 0, 1};
  Tensor y = conv2d(x, w, nullptr, p);
  EXPECT_EQ(y.shape, (ir::Shape{1, 1, 2, 2}));
  // p = 0: (0,0) = 0+0+1+2, (0,1) = 0+0+2+0, (1,0) = 1+2+3+4, (1,1) = 2+0+4+0
  EXPECT_EQ(y.data, (std::vector<float>{3, 2, 10, 6}));
  p.pad_value = 5.0f;  // every padded tap reads 5
  EXPECT_EQ(conv2d(x, w, nullptr, p).data, (std::vector<float>{13, 17, 10, 16}));
}

TEST(Conv2d, Stride2) {
  // x[i][j] = 4i + j (4x4), w = [[1,0],[0,1]]: out(i,j) = x[2i][2j] + x[2i+1][2j+1].
  Tensor w({1, 1, 2, 2}, {1, 0, 0, 1});
  ConvParams p;
  p.stride = {2, 2};
  Tensor y = conv2d(iota({1, 1, 4, 4}), w, nullptr, p);
  EXPECT_EQ(y.shape, (ir::Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.data, (std::vector<float>{0 + 5, 2 + 7, 8 + 13, 10 + 15}));
}

TEST(Conv2d, Dilation2) {
  // x[i][j] = 5i + j (5x5), 2x2 ones dilated by 2: taps (0,0),(0,2),(2,0),(2,2);
  // OH = (5 - 2*1 - 1)/1 + 1 = 3; out(i,j) = 4*(5i+j) + (0+2+10+12) = 20i + 4j + 24.
  ConvParams p;
  p.dilation = {2, 2};
  Tensor y = conv2d(iota({1, 1, 5, 5}), Tensor::full({1, 1, 2, 2}, 1.0f), nullptr, p);
  ASSERT_EQ(y.shape, (ir::Shape{1, 1, 3, 3}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(y.data[i * 3 + j], 20 * i + 4 * j + 24) << i << "," << j;
}

TEST(Conv2d, Groups2WithBias) {
  // Group 0 sees channels {0,1}, group 1 channels {2,3}: k0 = 1+2, k1 = 3-4; bias 10, 20.
  Tensor x({1, 4, 1, 1}, {1, 2, 3, 4});
  Tensor w({2, 2, 1, 1}, {1, 1, 1, -1});
  Tensor b({2}, {10, 20});
  ConvParams p;
  p.groups = 2;
  EXPECT_EQ(conv2d(x, w, &b, p).data, (std::vector<float>{13, 19}));
}

TEST(Conv2d, DepthwiseWithPadding) {
  // Channel 0: ones * ones 3x3 with pad 1 counts the in-bounds taps; channel 1: a centre-only
  // kernel copies the input.
  Tensor x = Tensor::full({1, 2, 3, 3}, 1.0f);
  for (int i = 0; i < 9; ++i) x.data[9 + i] = static_cast<float>(i);
  Tensor w = Tensor::full({2, 1, 3, 3}, 0.0f);
  for (int i = 0; i < 9; ++i) w.data[i] = 1.0f;
  w.data[9 + 4] = 1.0f;
  ConvParams p;
  p.groups = 2;
  p.padding = {1, 1, 1, 1};
  Tensor y = conv2d(x, w, nullptr, p);
  ASSERT_EQ(y.shape, (ir::Shape{1, 2, 3, 3}));
  EXPECT_EQ(std::vector<float>(y.data.begin(), y.data.begin() + 9), (std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
  EXPECT_EQ(std::vector<float>(y.data.begin() + 9, y.data.end()), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Conv2d, FusedActivations) {
  Tensor x({1, 1, 1, 3}, {-2, 3, 8});
  Tensor w = Tensor::full({1, 1, 1, 1}, 1.0f);
  ConvParams p;
  p.activation = Activation::Relu;
  EXPECT_EQ(conv2d(x, w, nullptr, p).data, (std::vector<float>{0, 3, 8}));
  p.activation = Activation::Relu6;
  EXPECT_EQ(conv2d(x, w, nullptr, p).data, (std::vector<float>{0, 3, 6}));
  EXPECT_EQ(parse_activation("relu6"), Activation::Relu6);
  EXPECT_EQ(parse_activation(""), Activation::None);
  EXPECT_FALSE(parse_activation("gelu"));
}

TEST(Conv2d, OutputShapeRejectsInconsistentParams) {
  ConvParams p;
  std::string why;
  p.groups = 3;
  EXPECT_TRUE(conv2d_output_shape({1, 4, 5, 5}, {3, 1, 1, 1}, p, &why).empty());
  EXPECT_NE(why.find("divisible"), std::string::npos);
  p.groups = 1;
  EXPECT_TRUE(conv2d_output_shape({1, 4, 2, 2}, {3, 4, 3, 3}, p, &why).empty());  // 3x3 on 2x2
  EXPECT_TRUE(conv2d_output_shape({1, 4, 5, 5}, {3, 2, 1, 1}, p, &why).empty());  // C/groups
  EXPECT_THROW(conv2d(Tensor({1, 4, 2, 2}), Tensor({3, 4, 3, 3}), nullptr, p), InternalError);
}

// Naive definition, straight from the formula in conv.h.
Tensor naive_conv(const Tensor& x, const Tensor& w, const Tensor* b, const ConvParams& p) {
  ir::Shape os = conv2d_output_shape(x.shape, w.shape, p);
  Tensor y(os);
  const int64_t C = x.shape[1], H = x.shape[2], W = x.shape[3], K = w.shape[0], Cg = w.shape[1], R = w.shape[2],
                S = w.shape[3], Kg = K / p.groups;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < os[2]; ++oh)
        for (int64_t ow = 0; ow < os[3]; ++ow) {
          double acc = b ? b->data[k] : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                int64_t ih = oh * p.stride[0] - p.padding[0] + r * p.dilation[0];
                int64_t iw = ow * p.stride[1] - p.padding[2] + s * p.dilation[1];
                int64_t ci = (k / Kg) * Cg + c;
                double v = (ih < 0 || ih >= H || iw < 0 || iw >= W) ? p.pad_value : x.data[((n * C + ci) * H + ih) * W + iw];
                acc += v * w.data[((k * Cg + c) * R + r) * S + s];
              }
          y.data[((n * K + k) * os[2] + oh) * os[3] + ow] = apply_activation(static_cast<float>(acc), p.activation);
        }
  return y;
}

struct Config {
  ir::Shape x, w;
  std::array<int, 2> stride, dilation;
  std::array<int, 4> padding;
  int groups;
  float pad_value;
  Activation act;
};

TEST(Conv2d, MatchesNaiveLoopsOnRandomShapes) {
  const Config configs[] = {
      {{2, 3, 7, 6}, {4, 3, 3, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}, 1, 0.0f, Activation::None},
      {{1, 6, 9, 9}, {9, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 3, 0.0f, Activation::Relu},
      {{2, 5, 8, 7}, {5, 1, 3, 3}, {2, 2}, {1, 1}, {0, 2, 1, 0}, 5, 0.0f, Activation::Relu6},  // depthwise
      {{1, 8, 5, 5}, {16, 8, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 0.0f, Activation::None},  // 1x1
      {{1, 2, 11, 10}, {3, 2, 5, 5}, {3, 2}, {2, 2}, {4, 3, 4, 2}, 1, -1.5f, Activation::None},
      {{3, 4, 6, 6}, {4, 2, 2, 3}, {1, 3}, {2, 1}, {0, 1, 2, 2}, 2, 0.25f, Activation::Relu},
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (const Config& c : configs) {
    Tensor x(c.x), w(c.w), b({c.w[0]});
    for (auto* t : {&x, &w, &b})
      for (float& v : t->data) v = u(rng);
    ConvParams p{c.stride, c.dilation, c.padding, c.groups, c.pad_value, c.act};
    Tensor got = conv2d(x, w, &b, p), want = naive_conv(x, w, &b, p);
    ASSERT_EQ(got.shape, want.shape) << ir::shape_str(c.x);
    // Both sum in float64 and round once: equal except for a last-bit tie in float64.
    for (int64_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got.data[i], want.data[i], 1e-6f * (1.0f + std::fabs(want.data[i]))) << ir::shape_str(c.x) << " @" << i;
  }
}

TEST(Dense, HandComputed) {
  // w0 = [1,0,-1], w1 = [.5,.5,.5], b = [1,-1]
  // x0 = [1,2,3]: [1-3+1, 3-1] = [-1, 2]; x1 = [4,5,6]: [4-6+1, 7.5-1] = [-1, 6.5]
  Tensor x({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w({2, 3}, {1, 0, -1, 0.5f, 0.5f, 0.5f});
  Tensor b({2}, {1, -1});
  Tensor y = dense(x, w, &b);
  EXPECT_EQ(y.shape, (ir::Shape{2, 2}));
  EXPECT_EQ(y.data, (std::vector<float>{-1, 2, -1, 6.5f}));
  // Rank-4 input and weights (the IR's [N,C,1,1] / [K,C,1,1]) give [N,K,1,1]; relu clips.
  Tensor y4 = dense(Tensor({2, 3, 1, 1}, x.data), Tensor({2, 3, 1, 1}, w.data), &b, Activation::Relu);
  EXPECT_EQ(y4.shape, (ir::Shape{2, 2, 1, 1}));
  EXPECT_EQ(y4.data, (std::vector<float>{0, 2, 0, 6.5f}));
  EXPECT_TRUE(dense_output_shape({2, 3}, {2, 4}).empty());
}

}  // namespace
}  // namespace npusim::functional
