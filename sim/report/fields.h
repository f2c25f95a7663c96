// Report fields declared once (docs/reports.md): a field's name, unit and meaning, where it
// appears, and how a row yields its value. Every writer of a row kind - JSON, CSV, sweep rows and
// the generated tables of docs/reports.md (`sim config --report-fields`) - reads the one table,
// so the outputs cannot drift apart.
#pragma once
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "sim/report/format.h"

namespace npusim::report {

// Where a field appears (a bit mask).
enum FieldIn : unsigned {
  kInRows = 1,    // each row of the report's list (a layer, a kernel, a supertask) and its CSV
  kInTotals = 2,  // the JSON report's "totals"
  kInSweep = 4,   // a column of sweep results (results.csv / results.jsonl), in table order
};

template <class Row, class Json = nlohmann::json>
struct Field {
  const char* name;
  const char* unit;
  const char* meaning;
  Json (*value)(const Row&);
  unsigned in = kInRows;
  bool fraction = false;  // CSV prints it with 6 decimals
};

// The fields of `fields` that appear in `where`, with their values for one row, in table order.
template <class Row, class Json>
Json fields_object(const std::vector<Field<Row, Json>>& fields, const Row& row, unsigned where) {
  Json j = Json::object();
  for (const auto& f : fields)
    if (f.in & where) j[f.name] = f.value(row);
  return j;
}

// A CSV cell: strings as they are (quoted when they hold a comma, quote or line break), numbers
// as JSON writes them.
inline std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Header and one line per row: the fields that appear in rows, in table order.
template <class Row, class Json, class Rows>
std::string fields_csv(const std::vector<Field<Row, Json>>& fields, const Rows& rows) {
  std::ostringstream o;
  bool first = true;
  for (const auto& f : fields)
    if (f.in & kInRows) o << (first ? "" : ",") << f.name, first = false;
  o << "\n";
  for (const Row& row : rows) {
    first = true;
    for (const auto& f : fields) {
      if (!(f.in & kInRows)) continue;
      const Json v = f.value(row);
      o << (first ? "" : ",");
      first = false;
      if (v.is_string()) o << csv_cell(v.template get<std::string>());
      else if (f.fraction) o << fmt("%.6f", v.template get<double>());
      else o << v.dump();
    }
    o << "\n";
  }
  return o.str();
}

// The Markdown table of a field list (docs/reports.md). with_in: a column saying where each
// field appears (totals, sweeps).
template <class Row, class Json>
std::string fields_markdown(const std::vector<Field<Row, Json>>& fields, bool with_in = false) {
  std::ostringstream o;
  o << (with_in ? "| field | unit | in | meaning |\n|---|---|---|---|\n" : "| field | unit | meaning |\n|---|---|---|\n");
  for (const auto& f : fields) {
    o << "| `" << f.name << "` | " << f.unit << " | ";
    if (with_in) {
      const bool t = f.in & kInTotals, s = f.in & kInSweep;
      o << (t && s ? "totals, sweeps" : t ? "totals" : "sweeps") << " | ";
    }
    o << f.meaning << " |\n";
  }
  return o.str();
}

}  // namespace npusim::report
