// Tolerances of the golden comparison per dtype.
#include <gtest/gtest.h>

#include <cmath>

#include "models/functional/compare.h"
#include "models/functional/fp_round.h"

namespace npusim::functional {
namespace {

using ir::DType;

TEST(Compare, Int8WithinOneLsbOnAlmostAllElements) {
  Tensor e = Tensor::full({2000}, 5.0f, DType::Int8);
  Tensor a = e;
  a.data[0] = 6, a.data[1] = 4;  // two 1-LSB differences: pass
  CompareResult r = compare_tensors(a, e, DType::Int8);
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.beyond_one, 0);
  EXPECT_EQ(r.max_units, 1.0);
  a.data[2] = 7;  // one 2-LSB difference: 1999/2000 = 99.95% within 1 LSB: still a pass
  r = compare_tensors(a, e, DType::Int8);
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.beyond_one, 1);
  a.data[3] = 3;  // two beyond 1 LSB: 1998/2000 = 99.9% is still enough ...
  EXPECT_TRUE(compare_tensors(a, e, DType::Int8).pass);
  a.data[4] = 7;  // ... three is not (99.85%)
  EXPECT_FALSE(compare_tensors(a, e, DType::Int8).pass);
  Tensor b = e;
  b.data[9] = 8;  // any 3-LSB difference fails
  r = compare_tensors(b, e, DType::Int8);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.out_of_tolerance, 1);
  EXPECT_EQ(r.max_abs_error, 3.0);
}

TEST(Compare, Float16RelativeAndAbsoluteTolerance) {
  // max|e| = 100 -> atol = 100 * 2^-10 = 0.0977; rtol = 2^-8.
  Tensor e({3}, {100.0f, 1.0f, 0.0f}, DType::Float16);
  Tensor a({3}, {100.25f, 1.0f + 1.0f / 1024, 0.09f}, DType::Float16);
  CompareResult r = compare_tensors(a, e, DType::Float16);
  EXPECT_TRUE(r.pass) << r.summary();  // 0.25 <= 0.0977 + 0.39; 1 ulp; 0.09 <= 0.0977
  EXPECT_EQ(r.max_units, static_cast<double>(ulp_distance(0.09f, 0.0f, DType::Float16)));
  a.data[2] = 0.2f;
  EXPECT_FALSE(compare_tensors(a, e, DType::Float16).pass);
  a.data[2] = std::nanf("");
  r = compare_tensors(a, e, DType::Float16);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.nan_mismatches, 1);
}

TEST(Compare, Float32AndShapes) {
  Tensor e({2}, {1.0f, -3.0f});
  Tensor a({2}, {1.0f + 4e-6f, -3.0f});
  EXPECT_TRUE(compare_tensors(a, e, DType::Float32).pass);  // 4e-6 <= 3e-6 + 1e-5
  a.data[0] = 1.0001f;
  EXPECT_FALSE(compare_tensors(a, e, DType::Float32).pass);
  CompareResult r = compare_tensors(Tensor({2, 1}), Tensor({1, 2}), DType::Float32);
  EXPECT_FALSE(r.shape_match);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.summary(), "fail: shapes differ");
}

}  // namespace
}  // namespace npusim::functional
