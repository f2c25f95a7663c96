// `sim sweep report`: the best points per objective and the Pareto front of a sweep's rows.
// An objective is an expression over result columns (sim/sweep/expr.h), minimised, or
// maximised with a "max:" prefix: "time_ms", "max:pe_utilization", "cycles * pe_count".
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace npusim::sweep {

struct ReportOptions {
  std::vector<std::string> best = {"time_ms", "max:pe_utilization", "dram_bytes", "energy_uj", "max:inferences_per_j"};
  std::vector<std::string> pareto = {"cycles", "pe_count", "l2_bytes"};
  int top = 3;
};

// Rows on the Pareto front when every column of values is minimised: no other row is at least
// as good in all and better in one. Indices ascending. O(n * front size).
std::vector<size_t> pareto_front(const std::vector<std::vector<double>>& values);

// Text report per workload. A name that is not a column is an InputError listing the columns.
std::string sweep_report(const std::vector<nlohmann::ordered_json>& rows, const std::vector<std::string>& axis_keys,
                         const ReportOptions& o);

}  // namespace npusim::sweep
