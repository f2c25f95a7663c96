#include "models/functional/fp_round.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace npusim::functional {

namespace {
uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float float_of(uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
}  // namespace

uint16_t fp16_bits_of(float x) {
  uint32_t u = bits_of(x);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x3ffu);  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 (the tie above 65504) and inf
  if (a < 0x38800000u) {
    // Below 2^-14: an fp16 subnormal m * 2^-24. Scaling by 2^24 is exact, nearbyint rounds
    // to even in the default rounding mode; m == 1024 is the smallest normal, same bits.
    float m = std::nearbyint(float_of(a) * 16777216.0f);
    return sign | static_cast<uint16_t>(m);
  }
  uint32_t h = ((((a >> 23) - 127u + 15u) << 10) | ((a & 0x7fffffu) >> 13));
  uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return sign | static_cast<uint16_t>(h);
}

float fp16_value_of(uint16_t b) {
  uint32_t sign = static_cast<uint32_t>(b & 0x8000u) << 16;
  uint32_t e = (b >> 10) & 0x1fu, m = b & 0x3ffu;
  if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float
    float v = static_cast<float>(m) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
  return float_of(sign | ((e - 15u + 127u) << 23) | (m << 13));
}

float round_to_fp16(float x) { return fp16_value_of(fp16_bits_of(x)); }

float round_to_bf16(float x) {
  uint32_t u = bits_of(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return float_of(u | 0x00400000u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return float_of(u & 0xffff0000u);
}

float round_to_float_dtype(float x, ir::DType t) {
  switch (t) {
    case ir::DType::Float16: return round_to_fp16(x);
    case ir::DType::BFloat16: return round_to_bf16(x);
    default: return x;
  }
}

int64_t ulp_distance(float a, float b, ir::DType t) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  // Sign-magnitude bits -> a monotonic integer line (negative values mirrored below zero).
  auto ordered = [t](float v) -> int64_t {
    int64_t mag, neg;
    if (t == ir::DType::Float16) {
      uint16_t h = fp16_bits_of(v);
      mag = h & 0x7fff, neg = h >> 15;
    } else if (t == ir::DType::BFloat16) {
      uint32_t u = bits_of(round_to_bf16(v)) >> 16;
      mag = u & 0x7fff, neg = u >> 15;
    } else {
      uint32_t u = bits_of(v);
      mag = u & 0x7fffffff, neg = u >> 31;
    }
    return neg ? -mag : mag;
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

}  // namespace npusim::functional
