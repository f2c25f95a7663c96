// Rounding, saturation and the float32 quantizer arithmetic; fp16 / bf16 rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "models/functional/fp_round.h"
#include "models/functional/quant.h"
#include "models/functional/vp_stages.h"

namespace npusim::functional {
namespace {

using ir::DType;

float rq(float x, RoundMode m, DType out = DType::Int8) { return requantize(x, 1.0f, 0.0f, false, m, out); }

TEST(Requantize, TiesUnderEachCarrySel) {
  // "round": half away from zero.
  EXPECT_EQ(rq(0.5f, RoundMode::HalfAwayFromZero), 1);
  EXPECT_EQ(rq(1.5f, RoundMode::HalfAwayFromZero), 2);
  EXPECT_EQ(rq(2.5f, RoundMode::HalfAwayFromZero), 3);  // not 2 as half-to-even would give
  EXPECT_EQ(rq(-0.5f, RoundMode::HalfAwayFromZero), -1);
  EXPECT_EQ(rq(-2.5f, RoundMode::HalfAwayFromZero), -3);
  EXPECT_EQ(rq(0.49999997f, RoundMode::HalfAwayFromZero), 0);  // largest float below 0.5
  // "floor" / "ceil": toward -inf / +inf.
  EXPECT_EQ(rq(0.5f, RoundMode::Floor), 0);
  EXPECT_EQ(rq(1.5f, RoundMode::Floor), 1);
  EXPECT_EQ(rq(-0.5f, RoundMode::Floor), -1);
  EXPECT_EQ(rq(-2.5f, RoundMode::Floor), -3);
  EXPECT_EQ(rq(0.5f, RoundMode::Ceil), 1);
  EXPECT_EQ(rq(1.5f, RoundMode::Ceil), 2);
  EXPECT_EQ(rq(-0.5f, RoundMode::Ceil), 0);
  EXPECT_EQ(rq(-2.5f, RoundMode::Ceil), -2);
  EXPECT_EQ(parse_round_mode("round"), RoundMode::HalfAwayFromZero);
  EXPECT_EQ(parse_round_mode("ceil"), RoundMode::Ceil);
  EXPECT_FALSE(parse_round_mode("nearest"));
}

TEST(Requantize, SaturatesToTheOutputDtype) {
  EXPECT_EQ(rq(127.4f, RoundMode::HalfAwayFromZero), 127);
  EXPECT_EQ(rq(127.5f, RoundMode::HalfAwayFromZero), 127);  // 128 clamps
  EXPECT_EQ(rq(200.0f, RoundMode::HalfAwayFromZero), 127);
  EXPECT_EQ(rq(-128.5f, RoundMode::HalfAwayFromZero), -128);  // -129 clamps
  EXPECT_EQ(rq(-1e30f, RoundMode::HalfAwayFromZero), -128);
  EXPECT_EQ(rq(std::numeric_limits<float>::infinity(), RoundMode::Floor), 127);
  EXPECT_EQ(rq(std::nanf(""), RoundMode::HalfAwayFromZero), 0);
  EXPECT_EQ(rq(-5.0f, RoundMode::HalfAwayFromZero, DType::UInt8), 0);
  EXPECT_EQ(rq(300.0f, RoundMode::HalfAwayFromZero, DType::UInt8), 255);
}

TEST(Requantize, MultiplyThenAddInFloat32) {
  // Conv_0 of int8_resnet50: output_scale 43.62298146446928, zero point -128.
  // y = 1.0: 43.62298 - 128 = -84.377 -> -84; y = 3.0: 130.869 - 128 = 2.869 -> 3.
  EXPECT_EQ(requantize(1.0f, 43.62298146446928f, -128.0f, false, RoundMode::HalfAwayFromZero, DType::Int8), -84);
  EXPECT_EQ(requantize(3.0f, 43.62298146446928f, -128.0f, false, RoundMode::HalfAwayFromZero, DType::Int8), 3);
  // sumsub_mode "sub": 2 * 3 - 1 = 5.
  EXPECT_EQ(requantize(2.0f, 3.0f, 1.0f, true, RoundMode::HalfAwayFromZero, DType::Int8), 5);
  // No fused multiply-add: x = k = 1 + 2^-12 gives x*k = 1 + 2^-11 + 2^-24, which float32
  // rounds (a tie, to even) to 1 + 2^-11; adding -(1 + 2^-11) then gives exactly 0. An FMA
  // would keep the 2^-24.
  const float x = 1.0f + std::ldexp(1.0f, -12);
  EXPECT_EQ(requantize(x, x, -(1.0f + std::ldexp(1.0f, -11)), false, RoundMode::Floor, DType::Float32), 0.0f);
  // Float outputs skip carry_sel and round to the format: 1/3 in fp16 is 0x3555 = 0.333251953125.
  EXPECT_EQ(requantize(1.0f / 3.0f, 1.0f, 0.0f, false, RoundMode::Floor, DType::Float16), 0.333251953125f);
}

TEST(PreCalPostCal, RoundTripOfTheMaxPoolScales) {
  // MaxPool_2_1 of int8_resnet50 dequantizes with requan_scale_a = 1/43.62298 and
  // requan_zp_a = 128/43.62298, and requantizes with mul_k = 43.62298, sum_b = -128:
  // every int8 value survives the round trip exactly.
  Tensor q({256});
  for (int i = 0; i < 256; ++i) q.data[i] = static_cast<float>(i - 128);
  Tensor real = pre_cal(q, 0.022923696786165237, 2.9342331886291504);
  EXPECT_NEAR(real.data[0], 0.0f, 1e-6f);             // q = -128 is real 0
  EXPECT_NEAR(real.data[255], 255 * 0.0229237f, 1e-5f);  // q = 127
  Tensor back = post_cal(real, 43.62298146446928, -128.0, false, RoundMode::HalfAwayFromZero, DType::Int8);
  EXPECT_EQ(back.dtype, DType::Int8);
  EXPECT_EQ(back.data, q.data);
}

TEST(FpRound, HalfRoundsToNearestEven) {
  EXPECT_EQ(round_to_fp16(1.0f + std::ldexp(1.0f, -11)), 1.0f);                         // tie -> even
  EXPECT_EQ(round_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));  // tie -> even
  EXPECT_EQ(round_to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(round_to_fp16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(round_to_fp16(65520.0f)));
  EXPECT_EQ(round_to_fp16(-65519.0f), -65504.0f);
  // Subnormals: multiples of 2^-24; ties to even.
  EXPECT_EQ(round_to_fp16(std::ldexp(1.0f, -25)), 0.0f);
  EXPECT_EQ(round_to_fp16(3 * std::ldexp(1.0f, -25)), std::ldexp(1.0f, -23));
  EXPECT_EQ(round_to_fp16(std::ldexp(1.0f, -14)), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isnan(round_to_fp16(std::nanf(""))));
  EXPECT_EQ(fp16_bits_of(1.0f), 0x3c00);
  EXPECT_EQ(fp16_bits_of(-2.0f), 0xc000);
  EXPECT_EQ(fp16_value_of(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_value_of(0x0001), std::ldexp(1.0f, -24));
  // Every fp16 bit pattern that is not NaN survives value -> bits.
  for (uint32_t b = 0; b < 0x10000; ++b)
    if ((b & 0x7c00) != 0x7c00 || (b & 0x3ff) == 0) {
      ASSERT_EQ(fp16_bits_of(fp16_value_of(static_cast<uint16_t>(b))), b);
    }
}

TEST(FpRound, Bf16AndUlps) {
  EXPECT_EQ(round_to_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);  // tie -> even
  EXPECT_EQ(round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(round_to_float_dtype(0.1f, DType::Float32), 0.1f);
  EXPECT_EQ(ulp_distance(1.0f, 1.0f + std::ldexp(1.0f, -10), DType::Float16), 1);
  EXPECT_EQ(ulp_distance(-0.0f, 0.0f, DType::Float16), 0);
  EXPECT_EQ(ulp_distance(-std::ldexp(1.0f, -24), std::ldexp(1.0f, -24), DType::Float16), 2);  // across zero
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f), DType::Float32), 1);
}

}  // namespace
}  // namespace npusim::functional
