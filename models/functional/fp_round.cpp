#include "models/functional/fp_round.h"

#include "models/functional/npy.h"

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

// One implementation of the IEEE half conversions (round to nearest even, subnormals, inf,
// NaN payloads), shared with the .npy reader/writer.
uint16_t fp16_bits_of(float x) { return float_to_half(x); }

float fp16_value_of(uint16_t b) { return half_to_float(b); }

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
