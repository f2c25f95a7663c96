// Comparison of a computed tensor with a golden one for `sim --check`: error statistics in the
// output dtype's units and a pass/fail verdict against a per-dtype tolerance
// (docs/functional.md#comparison-compareh).
#pragma once
#include <cstdint>
#include <string>

#include "models/functional/tensor.h"

namespace npusim::functional {

struct Tolerance {
  // Integer dtypes: every |a - e| <= max_lsb, and at least min_within_one of the elements
  // within 1 LSB.
  double max_lsb = 2.0;
  double min_within_one = 0.999;
  // Float dtypes: every |a - e| <= atol + rtol * |e|, with atol = atol_of_max * max|e|.
  double rtol = 0.0;
  double atol_of_max = 0.0;
};
// int*: 2 LSB / 99.9% within 1; float16: rtol 2^-8, atol 2^-10 max|e|; bfloat16: rtol 2^-5,
// atol 2^-7 max|e|; float32: rtol 1e-5, atol 1e-6 max|e|; float64: rtol 1e-12, atol 1e-13 max|e|.
Tolerance default_tolerance(ir::DType t);

struct CompareResult {
  bool shape_match = true;
  int64_t count = 0;         // elements compared
  int64_t mismatches = 0;    // elements that differ at all
  int64_t beyond_one = 0;    // elements more than 1 LSB / ULP apart
  int64_t out_of_tolerance = 0;
  int64_t nan_mismatches = 0;  // NaN on one side only (always out of tolerance)
  double max_abs_error = 0.0;
  double max_units = 0.0;    // largest error in LSBs (integer dtypes) or ULPs of the dtype
  double max_abs_expected = 0.0;
  const char* unit = "lsb";  // "lsb" or "ulp"
  bool pass = false;
  std::string summary() const;  // one line: "pass: max 1 lsb, 12/802816 differ, ..."
};

// Compares element by element in dtype `t` (the layer's output dtype).
CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, ir::DType t);
CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, ir::DType t, const Tolerance& tol);

}  // namespace npusim::functional
