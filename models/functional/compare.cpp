#include "models/functional/compare.h"

#include <cmath>
#include <cstdio>

#include "models/functional/fp_round.h"
#include "models/functional/quant.h"

namespace npusim::functional {

Tolerance default_tolerance(ir::DType t) {
  Tolerance tol;
  switch (t) {
    case ir::DType::Float16: tol.rtol = std::ldexp(1.0, -8), tol.atol_of_max = std::ldexp(1.0, -10); break;
    case ir::DType::BFloat16: tol.rtol = std::ldexp(1.0, -5), tol.atol_of_max = std::ldexp(1.0, -7); break;
    case ir::DType::Float32: tol.rtol = 1e-5, tol.atol_of_max = 1e-6; break;
    case ir::DType::Float64: tol.rtol = 1e-12, tol.atol_of_max = 1e-13; break;
    default: break;  // integers: the LSB rule
  }
  return tol;
}

CompareResult compare_tensors(const Tensor& actual, const Tensor& expected, ir::DType t) {
  return compare_tensors(actual, expected, t, default_tolerance(t));
}

CompareResult compare_tensors(const Tensor& a, const Tensor& e, ir::DType t, const Tolerance& tol) {
  CompareResult r;
  const bool integer = is_integer_dtype(t);
  r.unit = integer ? "lsb" : "ulp";
  if (a.shape != e.shape || a.size() != e.size()) {
    r.shape_match = false;
    return r;
  }
  r.count = a.size();
  for (float v : e.data)
    if (std::isfinite(v)) r.max_abs_expected = std::max(r.max_abs_expected, std::fabs(static_cast<double>(v)));
  const double atol = tol.atol_of_max * r.max_abs_expected;
  int64_t within_one = 0;
  for (int64_t i = 0; i < r.count; ++i) {
    const double x = a.data[i], y = e.data[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) && std::isnan(y)) {
        ++within_one;
        continue;
      }
      ++r.mismatches, ++r.beyond_one, ++r.out_of_tolerance, ++r.nan_mismatches;
      continue;
    }
    if (x == y) {  // also equal infinities
      ++within_one;
      continue;
    }
    ++r.mismatches;
    const double err = std::fabs(x - y);
    double units;
    bool ok;
    if (integer) {
      units = err;
      ok = err <= tol.max_lsb;
    } else {
      units = static_cast<double>(ulp_distance(a.data[i], e.data[i], t == ir::DType::Float64 ? ir::DType::Float32 : t));
      ok = err <= atol + tol.rtol * std::fabs(y);  // inf - x: err inf, never ok
    }
    if (!std::isnan(err)) r.max_abs_error = std::max(r.max_abs_error, err);
    r.max_units = std::max(r.max_units, units);
    if (units <= 1.0) ++within_one;
    else ++r.beyond_one;
    if (!ok) ++r.out_of_tolerance;
  }
  r.pass = r.out_of_tolerance == 0;
  if (integer && r.count > 0)
    r.pass = r.pass && static_cast<double>(within_one) >= tol.min_within_one * static_cast<double>(r.count);
  return r;
}

std::string CompareResult::summary() const {
  if (!shape_match) return "fail: shapes differ";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: max %.6g %s (abs %.6g), %lld/%lld differ, %lld beyond 1 %s, %lld out of tolerance",
                pass ? "pass" : "fail", max_units, unit, max_abs_error, static_cast<long long>(mismatches),
                static_cast<long long>(count), static_cast<long long>(beyond_one), unit,
                static_cast<long long>(out_of_tolerance));
  return buf;
}

}  // namespace npusim::functional
