// Pooling shapes and values with PyTorch semantics (ceil_mode, padding, count_include_pad).
#include <gtest/gtest.h>

#include "models/functional/pool.h"
#include "sim/ir/error.h"

namespace npusim::functional {
namespace {

TEST(PoolOutputSize, FloorAndCeil) {
  // (5 - 2) / 2 = 1.5: floor -> 1 + 1 = 2 windows, ceil -> 2 + 1 = 3 (the last starts at 4 < 5).
  EXPECT_EQ(pool_output_size(5, 2, 2, 1, 0, 0, false), 2);
  EXPECT_EQ(pool_output_size(5, 2, 2, 1, 0, 0, true), 3);
  // ResNet stem: (112 + 2 - 3) / 2 + 1 = 56.
  EXPECT_EQ(pool_output_size(112, 3, 2, 1, 1, 1, false), 56);
  // in 5, k 2, s 2, pad 1+1: ceil((5+2-2)/2) + 1 = 4, but window 3 would start at 6 >= 5 + 1
  // (wholly in the right padding), so PyTorch drops it: 3.
  EXPECT_EQ(pool_output_size(5, 2, 2, 1, 1, 1, true), 3);
  EXPECT_EQ(pool_output_size(5, 2, 2, 1, 1, 1, false), 3);
  // Asymmetric padding 0 / 1: ceil((5+1-2)/2) + 1 = 3, last start 4 < 5: kept.
  EXPECT_EQ(pool_output_size(5, 2, 2, 1, 0, 1, true), 3);
  // Dilation 2 makes a 3-tap window span 5: (7 - 5) / 1 + 1 = 3.
  EXPECT_EQ(pool_output_size(7, 3, 1, 2, 0, 0, false), 3);
  EXPECT_EQ(pool_output_size(2, 3, 1, 1, 0, 0, false), 0);  // no window fits
}

TEST(MaxPool, CeilModeValues) {
  // Row [0,1,2,3,4], window 1x2, stride 2, ceil: [0,1] [2,3] [4] -> 1, 3, 4.
  Tensor x({1, 1, 1, 5}, {0, 1, 2, 3, 4});
  PoolParams p;
  p.kernel = {1, 2};
  p.stride = {1, 2};
  p.ceil_mode = true;
  Tensor y = max_pool2d(x, p);
  EXPECT_EQ(y.shape, (ir::Shape{1, 1, 1, 3}));
  EXPECT_EQ(y.data, (std::vector<float>{1, 3, 4}));
  // avg: the last window is clipped to the (unpadded) input: 4 / 1. PyTorch: [0.5, 2.5, 4].
  EXPECT_EQ(avg_pool2d(x, p).data, (std::vector<float>{0.5f, 2.5f, 4.0f}));
}

TEST(MaxPool, PaddingNeverWins) {
  // All-negative input with pad 1: corners see only x[0][0] = -1, not a padded 0.
  Tensor x({1, 1, 2, 2}, {-1, -2, -3, -4});
  PoolParams p;
  p.kernel = {2, 2};
  p.padding = {1, 1, 1, 1};
  Tensor y = max_pool2d(x, p);
  ASSERT_EQ(y.shape, (ir::Shape{1, 1, 3, 3}));
  EXPECT_EQ(y.data, (std::vector<float>{-1, -1, -2, -1, -1, -2, -3, -3, -4}));
  EXPECT_EQ(min_pool2d(x, p).data, (std::vector<float>{-1, -2, -2, -3, -4, -4, -3, -4, -4}));
}

TEST(AvgPool, PaddingCountsByDefault) {
  // x = [[1,2],[3,4]], 2x2 window, stride 1, pad 1: 3x3 outputs.
  // count_include_pad: corner (0,0) = 1/4, edge (0,1) = (1+2)/4, centre = 10/4.
  Tensor x({1, 1, 2, 2}, {1, 2, 3, 4});
  PoolParams p;
  p.kernel = {2, 2};
  p.padding = {1, 1, 1, 1};
  Tensor y = avg_pool2d(x, p);
  ASSERT_EQ(y.shape, (ir::Shape{1, 1, 3, 3}));
  EXPECT_EQ(y.data, (std::vector<float>{0.25f, 0.75f, 0.5f, 1.0f, 2.5f, 1.5f, 0.75f, 1.75f, 1.0f}));
  // Without: divide by the in-bounds count: corner 1/1, edge 3/2, centre 10/4.
  p.count_include_pad = false;
  EXPECT_EQ(avg_pool2d(x, p).data, (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
}

TEST(AvgPool, CeilWindowClippedToPaddedInput) {
  // [1,2,3,4], window 3, stride 2, pad 1+1, ceil: starts -1, 1, 3.
  // [-1,2): (pad+1+2)/3 = 1; [1,4): 9/3 = 3; [3,6) clipped to [3,5) (input + right pad): 4/2.
  Tensor x({1, 1, 1, 4}, {1, 2, 3, 4});
  PoolParams p;
  p.kernel = {1, 3};
  p.stride = {1, 2};
  p.padding = {0, 0, 1, 1};
  p.ceil_mode = true;
  EXPECT_EQ(avg_pool2d(x, p).data, (std::vector<float>{1, 3, 2}));
}

TEST(WindowSum, PaddingAddsZero) {
  Tensor x({1, 1, 2, 2}, {1, 2, 3, 4});
  PoolParams p;
  p.kernel = {2, 2};
  p.padding = {1, 0, 1, 0};  // top-left only: 2x2 outputs
  EXPECT_EQ(window_sum(x, p).data, (std::vector<float>{1, 3, 4, 10}));
}

TEST(Pool, InvalidGeometryIsReported) {
  std::string why;
  PoolParams p;
  p.kernel = {3, 3};
  EXPECT_TRUE(pool_output_shape({1, 1, 2, 2}, p, &why).empty());
  EXPECT_FALSE(why.empty());
  EXPECT_THROW(max_pool2d(Tensor({1, 1, 2, 2}), p), InternalError);
  p.kernel = {2, 2};
  p.dilation = {2, 1};
  EXPECT_THROW(avg_pool2d(Tensor({1, 1, 4, 4}), p), InternalError);
}

}  // namespace
}  // namespace npusim::functional
