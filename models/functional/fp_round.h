// Rounding float32 values to the narrower float formats the IR names (fp16, bf16), and the
// ordered-integer view used to count ULPs. Own helpers (not npy.h's) so kernels do not depend on
// the file reader; both implement IEEE round-to-nearest-even.
#pragma once
#include <cstdint>

#include "sim/ir/dtype.h"

namespace npusim::functional {

// binary32 -> binary16 bits, round to nearest even, subnormals kept, overflow to +-inf
// (|x| >= 65520), NaN stays NaN.
uint16_t fp16_bits_of(float x);
float fp16_value_of(uint16_t bits);
// The float32 value of x rounded to fp16 / bf16 (exactly representable in float32).
float round_to_fp16(float x);
float round_to_bf16(float x);
// Float dtypes: round to that format (Float32 / Float64: unchanged). Other dtypes: unchanged.
float round_to_float_dtype(float x, ir::DType t);

// Distance in units in the last place of format t (Float16, BFloat16 or Float32) between two
// values representable in t: the difference of their sign-magnitude-ordered bit patterns, so
// +0 and -0 are 0 apart and the largest finite and inf are 1 apart. NaN anywhere: INT64_MAX.
int64_t ulp_distance(float a, float b, ir::DType t);

}  // namespace npusim::functional
