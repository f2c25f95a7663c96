#include "frontends/zebu_trace/layer_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace npusim::frontends::zebu {
namespace {

double rel_error(int64_t measured, int64_t simulated) {
  return measured == 0 ? 0.0 : static_cast<double>(simulated - measured) / static_cast<double>(measured);
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

}  // namespace

std::vector<LayerComparison> compare_layers(const std::vector<LayerMeasurement>& measured,
                                            const std::map<int, int64_t>& simulated,
                                            const std::map<int, std::string>& names,
                                            const std::map<int, std::string>& ops) {
  std::vector<LayerComparison> out;
  for (const auto& m : measured) {
    LayerComparison c;
    c.layer_index = m.layer_index;
    auto n = names.find(m.layer_index);
    if (n != names.end()) c.name = n->second;
    if (auto op = ops.find(m.layer_index); op != ops.end()) c.op = op->second;
    c.measured = m.cycles;
    auto s = simulated.find(m.layer_index);
    c.simulated = s == simulated.end() ? 0 : s->second;
    c.error = rel_error(c.measured, c.simulated);
    out.push_back(c);
  }
  return out;
}

ComparisonSummary summarize(const std::vector<LayerComparison>& rows) {
  ComparisonSummary s;
  std::vector<double> abs_err;
  for (const auto& r : rows) {
    s.measured_total += r.measured;
    s.simulated_total += r.simulated;
    if (r.measured > 0) abs_err.push_back(std::fabs(r.error));
    if (r.measured > 0 && std::fabs(r.error) <= 0.10) ++s.within_10pct;
  }
  s.total_error = rel_error(s.measured_total, s.simulated_total);
  s.rows_compared = static_cast<int>(abs_err.size());
  if (!abs_err.empty()) {
    std::sort(abs_err.begin(), abs_err.end());
    size_t n = abs_err.size();
    s.median_abs_error = n % 2 ? abs_err[n / 2] : 0.5 * (abs_err[n / 2 - 1] + abs_err[n / 2]);
    double sum = 0;
    for (double e : abs_err) sum += e;
    s.mean_abs_error = sum / static_cast<double>(n);
  }
  return s;
}

std::string format_comparison_table(const std::vector<LayerComparison>& rows,
                                    const std::string& measured_label,
                                    const std::string& simulated_label) {
  size_t name_w = 4;
  for (const auto& r : rows) name_w = std::max(name_w, r.name.size());
  name_w = std::min<size_t>(name_w, 40);
  const int nw = static_cast<int>(name_w);
  std::string out = fmt("%5s  %-*s  %12s  %12s  %8s\n", "layer", nw, "name", measured_label.c_str(),
                        simulated_label.c_str(), "error");
  for (const auto& r : rows) {
    std::string name = r.name.substr(0, name_w);
    std::string err = r.measured == 0 ? std::string("-") : fmt("%+.1f%%", 100.0 * r.error);
    out += fmt("%5d  %-*s  %12lld  %12lld  %8s\n", r.layer_index, nw, name.c_str(),
               static_cast<long long>(r.measured), static_cast<long long>(r.simulated), err.c_str());
  }
  ComparisonSummary s = summarize(rows);
  out += fmt("%5s  %-*s  %12lld  %12lld  %+7.1f%%\n", "", nw, "TOTAL", static_cast<long long>(s.measured_total),
             static_cast<long long>(s.simulated_total), 100.0 * s.total_error);
  out += fmt("median |error| %.1f%%, mean |error| %.1f%% over %d layers\n", 100.0 * s.median_abs_error,
             100.0 * s.mean_abs_error, s.rows_compared);
  if (s.rows_compared == 0) return out;
  out += fmt("within 10%%: %d of %d layers (%.1f%%)\n", s.within_10pct, s.rows_compared,
             100.0 * s.within_10pct / s.rows_compared);
  // Misses by op: how many, their median error, and the cycles they are off together.
  struct Group {
    std::vector<double> errors;
    int64_t off = 0;
  };
  std::map<std::string, Group> by_op;
  for (const auto& r : rows)
    if (r.measured > 0 && std::fabs(r.error) > 0.10) {
      Group& g = by_op[r.op.empty() ? "?" : r.op];
      g.errors.push_back(r.error);
      g.off += r.simulated - r.measured;
    }
  if (by_op.empty()) return out;
  std::vector<std::pair<std::string, Group>> groups(by_op.begin(), by_op.end());
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return std::llabs(a.second.off) > std::llabs(b.second.off);
  });
  out += "misses (|error| > 10%) by op:\n";
  for (auto& [op, g] : groups) {
    std::sort(g.errors.begin(), g.errors.end());
    const size_t n = g.errors.size();
    const double median = n % 2 ? g.errors[n / 2] : 0.5 * (g.errors[n / 2 - 1] + g.errors[n / 2]);
    out += fmt("  %-16s %4zu layers, median %+.1f%%, %+lld cycles in all\n", op.c_str(), n, 100.0 * median,
               static_cast<long long>(g.off));
  }
  return out;
}

}  // namespace npusim::frontends::zebu
