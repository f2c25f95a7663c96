// Per-layer measured-vs-simulated comparison and its text table (calibration reports).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontends/zebu_trace/zebu_trace.h"

namespace npusim::frontends::zebu {

struct LayerComparison {
  int layer_index = -1;
  std::string name;
  std::string op;  // the layer's operation (conv2d, add, ...): misses are grouped by it
  int64_t measured = 0, simulated = 0;
  double error = 0.0;  // (simulated - measured) / measured; 0 when measured is 0
};

// One row per measured layer, in the order of `measured`. A layer missing from `simulated`
// gets simulated = 0 (error -100%); names come from `names` (empty when absent).
std::vector<LayerComparison> compare_layers(const std::vector<LayerMeasurement>& measured,
                                            const std::map<int, int64_t>& simulated,
                                            const std::map<int, std::string>& names = {},
                                            const std::map<int, std::string>& ops = {});

struct ComparisonSummary {
  int64_t measured_total = 0, simulated_total = 0;
  double total_error = 0.0;       // of the totals
  double median_abs_error = 0.0;  // over rows with measured > 0
  double mean_abs_error = 0.0;
  int rows_compared = 0;
  int within_10pct = 0;           // rows with measured > 0 and |error| <= 10%
};
ComparisonSummary summarize(const std::vector<LayerComparison>& rows);

// Fixed-width table: header, one row per layer (index, name, measured, simulated, error %),
// a TOTAL row, then "median |error| X%, mean |error| Y% over N layers", the share of layers
// within 10%, and the misses (|error| > 10%) grouped by op: count, median error, and the
// cycles they are off in all (the largest first).
std::string format_comparison_table(const std::vector<LayerComparison>& rows,
                                    const std::string& measured_label = "measured",
                                    const std::string& simulated_label = "simulated");

}  // namespace npusim::frontends::zebu
