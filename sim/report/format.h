// Number formatting shared by the report writers: the console tables' printf-style cells and the
// rounding the JSON and CSV writers apply (so that the same run gives the same bytes).
#pragma once
#include <cmath>
#include <cstdio>
#include <string>

namespace npusim::report {

// One printf-style cell: fmt("%.2f", 1.234) == "1.23".
inline std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// To a thousandth (microseconds in JSON and CSV: nanosecond resolution).
inline double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

}  // namespace npusim::report
