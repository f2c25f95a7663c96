#include "models/functional/quant.h"

#include <cmath>

#include "models/functional/fp_round.h"
#include "sim/ir/error.h"

// The quantizer is defined as a float32 multiply, then a float32 add (docs/functional.md). GCC
// contracts a*b+c into an FMA in C++ whenever the target has one (-march=native); forbid it.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace npusim::functional {

std::optional<RoundMode> parse_round_mode(const std::string& s) {
  if (s == "round") return RoundMode::HalfAwayFromZero;
  if (s == "floor") return RoundMode::Floor;
  if (s == "ceil") return RoundMode::Ceil;
  return std::nullopt;
}

const char* round_mode_name(RoundMode m) {
  switch (m) {
    case RoundMode::HalfAwayFromZero: return "round";
    case RoundMode::Floor: return "floor";
    case RoundMode::Ceil: return "ceil";
  }
  return "?";
}

double round_value(double x, RoundMode m) {
  switch (m) {
    case RoundMode::HalfAwayFromZero: return std::round(x);  // C round(): ties away from zero
    case RoundMode::Floor: return std::floor(x);
    case RoundMode::Ceil: return std::ceil(x);
  }
  return x;
}

bool is_integer_dtype(ir::DType t) { return !ir::is_float(t); }

double dtype_min(ir::DType t) {
  switch (t) {
    case ir::DType::Int8: return -128.0;
    case ir::DType::UInt8: return 0.0;
    case ir::DType::Int16: return -32768.0;
    case ir::DType::Int32: return -2147483648.0;
    case ir::DType::Int64: return -9223372036854775808.0;
    case ir::DType::Bool: return 0.0;
    default: throw InternalError(std::string("dtype_min of float dtype ") + ir::dtype_name(t));
  }
}

double dtype_max(ir::DType t) {
  switch (t) {
    case ir::DType::Int8: return 127.0;
    case ir::DType::UInt8: return 255.0;
    case ir::DType::Int16: return 32767.0;
    case ir::DType::Int32: return 2147483647.0;
    case ir::DType::Int64: return 9223372036854775807.0;
    case ir::DType::Bool: return 1.0;
    default: throw InternalError(std::string("dtype_max of float dtype ") + ir::dtype_name(t));
  }
}

float saturate(double x, ir::DType t) {
  if (std::isnan(x)) return 0.0f;
  double lo = dtype_min(t), hi = dtype_max(t);
  return static_cast<float>(x < lo ? lo : (x > hi ? hi : x));
}

float requantize(float x, float k, float b, bool subtract, RoundMode mode, ir::DType out) {
  // Two float32 roundings: no FMA (see the pragma above).
  float p = x * k;
  float t = subtract ? p - b : p + b;
  if (is_integer_dtype(out)) return saturate(round_value(t, mode), out);
  return round_to_float_dtype(t, out);
}

}  // namespace npusim::functional
