#include "sim/sweep/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include "sim/ir/error.h"
#include "sim/sweep/expr.h"

namespace npusim::sweep {

using Row = nlohmann::ordered_json;

namespace {

struct Objective {
  std::string label;  // as given, without prefix
  Expr expr;
  bool maximize = false;
};

Objective parse_objective(const std::string& text) {
  Objective o;
  std::string t = text;
  if (t.rfind("max:", 0) == 0) o.maximize = true, t = t.substr(4);
  else if (t.rfind("min:", 0) == 0) t = t.substr(4);
  o.label = t;
  o.expr = Expr::parse(t, "report", "objective");
  return o;
}

// Value of an objective for a row; NaN when a column is null (a failed point, no energy).
double value_of(const Objective& o, const Row& row) {
  bool null = false;
  const ExprValue v = o.expr.eval([&](const std::string& n) {
    auto it = row.find(n);
    if (it == row.end() || it->is_null()) return null = true, ExprValue::num(0);
    if (it->is_string()) return ExprValue::str(it->get<std::string>());
    return ExprValue::num(it->get<double>());
  });
  if (null || v.is_string) return std::nan("");
  return v.number;
}

void check_names(const Objective& o, const std::vector<Row>& rows) {
  if (rows.empty()) return;
  for (const auto& n : o.expr.names())
    if (!rows.front().contains(n) || rows.front()[n].is_structured()) {
      std::string cols;
      for (const auto& [k, v] : rows.front().items())
        if (!v.is_structured()) cols += (cols.empty() ? "" : ", ") + k;
      throw InputError("report", o.label, "'" + n + "' is not a result column (columns: " + cols + ")");
    }
}

std::string cell(const Row& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return v.dump();
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v.get<double>());
  return b;
}

std::string number(double x) {
  char b[48];
  if (x == std::floor(x) && std::fabs(x) < 1e15) std::snprintf(b, sizeof b, "%.0f", x);  // counts stay exact
  else std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

// Aligned table of the given rows: point, axis values, then extra columns.
void table(std::ostringstream& out, const std::vector<const Row*>& rows, const std::vector<std::string>& axis_keys,
           const std::vector<std::string>& extra_names, const std::vector<std::vector<std::string>>& extra) {
  std::vector<std::string> head = {"point"};
  head.insert(head.end(), axis_keys.begin(), axis_keys.end());
  head.insert(head.end(), extra_names.begin(), extra_names.end());
  std::vector<std::vector<std::string>> body;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> line = {cell((*rows[i])["point"])};
    for (const auto& k : axis_keys) line.push_back(cell(rows[i]->value(k, Row(nullptr))));
    line.insert(line.end(), extra[i].begin(), extra[i].end());
    body.push_back(line);
  }
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    w[c] = head[c].size();
    for (const auto& l : body) w[c] = std::max(w[c], l[c].size());
  }
  auto emit = [&](const std::vector<std::string>& l) {
    out << " ";
    for (size_t c = 0; c < l.size(); ++c) out << " " << std::string(w[c] - l[c].size(), ' ') << l[c];
    out << "\n";
  };
  emit(head);
  for (const auto& l : body) emit(l);
}

}  // namespace

std::vector<size_t> pareto_front(const std::vector<std::vector<double>>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  // Lexicographic order: a row can only be dominated by rows before it.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  auto dominates = [&](size_t a, size_t b) {
    bool better = false;
    for (size_t k = 0; k < values[a].size(); ++k) {
      if (values[a][k] > values[b][k]) return false;
      better = better || values[a][k] < values[b][k];
    }
    return better;
  };
  std::vector<size_t> front;
  for (size_t i : order)
    if (std::none_of(front.begin(), front.end(), [&](size_t f) { return dominates(f, i); })) front.push_back(i);
  std::sort(front.begin(), front.end());
  return front;
}

std::string sweep_report(const std::vector<Row>& rows, const std::vector<std::string>& axis_keys, const ReportOptions& o) {
  std::vector<Objective> best, pareto;
  for (const auto& t : o.best) best.push_back(parse_objective(t));
  for (const auto& t : o.pareto) pareto.push_back(parse_objective(t));
  for (const auto* list : {&best, &pareto})
    for (const auto& ob : *list) check_names(ob, rows);

  std::vector<std::string> workloads;
  for (const auto& r : rows)
    if (std::find(workloads.begin(), workloads.end(), r["workload"].get<std::string>()) == workloads.end())
      workloads.push_back(r["workload"].get<std::string>());
  std::ostringstream out;
  size_t failed = 0;
  for (const auto& r : rows) failed += r["status"] != "ok";
  out << rows.size() << " rows, " << rows.size() - failed << " ok, " << failed << " failed\n";

  for (const auto& wl : workloads) {
    std::vector<const Row*> ok;
    for (const auto& r : rows)
      if (r["workload"] == wl && r["status"] == "ok") ok.push_back(&r);
    out << "\n== workload " << wl << ": " << ok.size() << " points ==\n";
    for (const auto& ob : best) {
      std::vector<std::pair<double, const Row*>> scored;
      for (const Row* r : ok) {
        const double v = value_of(ob, *r);
        if (!std::isnan(v)) scored.push_back({ob.maximize ? -v : v, r});
      }
      if (scored.empty()) continue;  // e.g. no energy figures in the config
      std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      scored.resize(std::min<size_t>(scored.size(), static_cast<size_t>(std::max(1, o.top))));
      out << "\nbest by " << ob.label << " (" << (ob.maximize ? "max" : "min") << "):\n";
      std::vector<const Row*> sel;
      std::vector<std::vector<std::string>> extra;
      for (const auto& [v, r] : scored) sel.push_back(r), extra.push_back({number(ob.maximize ? -v : v)});
      table(out, sel, axis_keys, {ob.label}, extra);
    }
    std::vector<std::vector<double>> vals;
    std::vector<const Row*> valid;
    for (const Row* r : ok) {
      std::vector<double> v;
      for (const auto& ob : pareto) v.push_back(ob.maximize ? -value_of(ob, *r) : value_of(ob, *r));
      if (std::none_of(v.begin(), v.end(), [](double x) { return std::isnan(x); })) vals.push_back(v), valid.push_back(r);
    }
    if (pareto.empty() || valid.empty()) continue;
    const auto front = pareto_front(vals);
    std::string names;
    for (const auto& ob : pareto) names += (names.empty() ? "" : ", ") + std::string(ob.maximize ? "max " : "min ") + ob.label;
    out << "\nPareto front (" << names << "): " << front.size() << " of " << valid.size() << " points\n";
    std::vector<const Row*> sel;
    std::vector<std::vector<std::string>> extra;
    std::vector<std::string> labels;
    for (const auto& ob : pareto) labels.push_back(ob.label);
    for (size_t i : front) {
      sel.push_back(valid[i]);
      std::vector<std::string> e;
      for (size_t k = 0; k < pareto.size(); ++k) e.push_back(number(pareto[k].maximize ? -vals[i][k] : vals[i][k]));
      extra.push_back(e);
    }
    table(out, sel, axis_keys, labels, extra);
  }
  return out.str();
}

}  // namespace npusim::sweep
