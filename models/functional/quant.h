// Float -> integer conversion of the NPU's quantizers (the VP post_cal stage and the PE array's
// output requantization share it): t = x * k + b in float32, then carry_sel rounding and
// saturation to the output dtype. docs/functional.md#rounding-carry_sel-round_type-and-saturation
// gives the evidence and the PyTorch recipe that reproduces it bit for bit.
#pragma once
#include <optional>
#include <string>

#include "sim/ir/dtype.h"

namespace npusim::functional {

// carry_sel / round_type values. "round" is round half away from zero.
enum class RoundMode { HalfAwayFromZero, Floor, Ceil };
// "round", "floor", "ceil" (the IR spellings); nullopt for anything else.
std::optional<RoundMode> parse_round_mode(const std::string& s);
const char* round_mode_name(RoundMode m);

double round_value(double x, RoundMode m);

bool is_integer_dtype(ir::DType t);  // int8/uint8/int16/int32/int64/bool
// [lo, hi] of an integer dtype (bool: [0, 1]); InternalError for float dtypes.
double dtype_min(ir::DType t);
double dtype_max(ir::DType t);
// Clamp to the integer dtype's range; NaN -> 0.
float saturate(double x, ir::DType t);

// The post_cal / requantize arithmetic on one value, all in float32 (no fused multiply-add):
//   t = fl32(fl32(x * fl32(k)) +/- fl32(b))
// Integer `out`: saturate(round_value(t, mode)). Float `out`: t rounded to that format (mode
// unused). `subtract` is sumsub_mode "sub".
float requantize(float x, float k, float b, bool subtract, RoundMode mode, ir::DType out);

}  // namespace npusim::functional
