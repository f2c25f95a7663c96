// binary16 and bfloat16 conversions: every 16-bit pattern round-trips, and rounding is
// checked at every midpoint between neighbouring representable values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "models/functional/npy.h"

using namespace npusim::functional;

namespace {
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
// The half value by its definition: subnormal man * 2^-24, normal (1024 + man) * 2^(exp-25).
double half_reference(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  const double mag = exp == 0 ? std::ldexp(man, -24) : std::ldexp(1024 + man, exp - 25);
  return (h & 0x8000) ? -mag : mag;
}
}  // namespace

TEST(Half, EveryPatternDecodesToItsValueAndRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint16_t b = static_cast<uint16_t>(h);
    const float f = half_to_float(b);
    const int exp = (h >> 10) & 0x1f;
    if (exp == 31 && (h & 0x3ff) != 0) {
      EXPECT_TRUE(std::isnan(f)) << h;
    } else if (exp == 31) {
      EXPECT_EQ(f, (h & 0x8000) ? -INFINITY : INFINITY) << h;
    } else {
      EXPECT_EQ(static_cast<double>(f), half_reference(b)) << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;  // -0 stays -0
    }
    ASSERT_EQ(float_to_half(f), b) << "half bits " << h;  // NaN payloads included
  }
}

TEST(Half, RoundsToNearestEvenAtEveryMidpoint) {
  // For each pair of neighbours lo = h, hi = h + 1 (hi = 2^16 past the largest, 65504), the
  // midpoint is exact in float (12 significant bits). It rounds to the even one; one float ulp
  // below goes to lo, one above to hi. Covers subnormals, the normal boundary and overflow.
  for (uint16_t h = 0; h < 0x7c00; ++h) {
    const float lo = half_to_float(h);
    const float hi = h == 0x7bff ? 65536.0f : half_to_float(static_cast<uint16_t>(h + 1));
    const float mid = (lo + hi) / 2;
    ASSERT_EQ(static_cast<double>(mid), (static_cast<double>(lo) + hi) / 2) << h;
    const uint16_t even = (h & 1) ? h + 1 : h;
    ASSERT_EQ(float_to_half(mid), even) << h;
    ASSERT_EQ(float_to_half(-mid), even | 0x8000) << h;
    ASSERT_EQ(float_to_half(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(float_to_half(std::nextafter(mid, INFINITY)), h + 1) << h;
  }
}

TEST(Half, TinyHugeAndNan) {
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0);          // below half the smallest
  EXPECT_EQ(float_to_half(-std::ldexp(1.0f, -30)), 0x8000);    // keeps the sign
  EXPECT_EQ(float_to_half(from_bits(0x00000001)), 0);          // float subnormal
  EXPECT_EQ(float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(float_to_half(-INFINITY), 0xfc00);
  // A float NaN whose payload sits below the 10 bits half keeps must stay NaN, not become inf.
  const uint16_t n = float_to_half(from_bits(0x7f800001));
  EXPECT_EQ(n & 0x7c00, 0x7c00);
  EXPECT_NE(n & 0x3ff, 0);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
}

TEST(Bf16, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16_to_float(static_cast<uint16_t>(b));
    EXPECT_EQ(to_bits(f), b << 16) << b;  // bfloat16 is the top half of a float
    ASSERT_EQ(float_to_bf16(f), b) << b;
  }
}

TEST(Bf16, RoundsToNearestEvenAtEveryMidpoint) {
  // The midpoint between b and b + 1 is the float with bits (b << 16) | 0x8000, finite even
  // above the largest bf16 (0x7f7f), where rounding up gives inf.
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    const float mid = from_bits((b << 16) | 0x8000);
    const uint32_t even = (b & 1) ? b + 1 : b;
    ASSERT_EQ(float_to_bf16(mid), even) << b;
    ASSERT_EQ(float_to_bf16(-mid), even | 0x8000) << b;
    ASSERT_EQ(float_to_bf16(from_bits((b << 16) | 0x7fff)), b) << b;
    ASSERT_EQ(float_to_bf16(from_bits((b << 16) | 0x8001)), b + 1) << b;
  }
  EXPECT_EQ(float_to_bf16(from_bits(0x7f7fffff)), 0x7f80);  // largest float -> inf
  const uint16_t n = float_to_bf16(from_bits(0x7f800001));  // low-payload NaN stays NaN
  EXPECT_TRUE(std::isnan(bf16_to_float(n)));
}
