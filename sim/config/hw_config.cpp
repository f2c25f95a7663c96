#include "sim/config/hw_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/ir/error.h"

namespace npusim::config {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool parse_int(const std::string& t, int64_t& v) {
  if (t.empty()) return false;
  char* end = nullptr;
  long long x = std::strtoll(t.c_str(), &end, 10);
  if (*end != '\0') return false;
  v = x;
  return true;
}

bool parse_double(const std::string& t, double& v) {
  if (t.empty()) return false;
  char* end = nullptr;
  v = std::strtod(t.c_str(), &end);
  return *end == '\0' && std::isfinite(v);
}

bool parse_bool(const std::string& t, bool& v) {
  if (t == "true" || t == "True" || t == "1" || t == "yes") return v = true, true;
  if (t == "false" || t == "False" || t == "0" || t == "no") return v = false, true;
  return false;
}

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::Int: return "an integer";
    case ParamType::Double: return "a number";
    case ParamType::String: return "a string";
    case ParamType::Bool: return "true or false";
  }
  return "?";
}

std::string where_of(const YAML::Node& n, const std::string& path) {
  auto m = n.Mark();
  if (m.line >= 0) return path + " (line " + std::to_string(m.line + 1) + ")";
  return path;
}

// Walks a YAML mapping into dotted paths; every leaf must be a scalar.
void flatten(const YAML::Node& node, const std::string& prefix, const std::string& file,
             std::vector<std::tuple<std::string, std::string, std::string>>& out) {
  if (!node.IsMap())
    throw InputError(file, where_of(node, prefix.empty() ? "/" : prefix), "expected a mapping of keys");
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    std::string path = prefix.empty() ? key : prefix + "." + key;
    const YAML::Node& v = kv.second;
    if (v.IsMap()) {
      flatten(v, path, file, out);
    } else if (v.IsScalar()) {
      out.emplace_back(path, v.Scalar(), where_of(v, path));
    } else if (v.IsNull()) {
      throw InputError(file, where_of(kv.first, path), "missing value");
    } else {
      throw InputError(file, where_of(v, path), "expected a single value, not a list");
    }
  }
}

}  // namespace

std::string closest_param(const std::string& path) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& p : schema()) {
    size_t d = edit_distance(path, p.path);
    // Also compare the last component, so a typo in a leaf finds its siblings.
    if (d < best_d) best_d = d, best = p.path;
  }
  return best;
}

HwConfig HwConfig::defaults(const std::vector<std::string>& overrides) {
  HwConfig c;
  for (const auto& p : schema()) c.m_values[p.path] = p.default_value;
  for (const auto& o : overrides) c.set(o);
  c.validate();
  return c;
}

HwConfig HwConfig::load(const std::string& path, const std::vector<std::string>& overrides) {
  HwConfig c;
  for (const auto& p : schema()) c.m_values[p.path] = p.default_value;
  c.m_source = path;
  std::ifstream in(path);
  if (!in) throw InputError(path, "", "cannot open file");
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw InputError(path, "line " + std::to_string(e.mark.line + 1) + ", column " +
                               std::to_string(e.mark.column + 1), "malformed YAML: " + e.msg);
  }
  if (root.IsNull()) throw InputError(path, "", "empty file");
  std::vector<std::tuple<std::string, std::string, std::string>> leaves;
  flatten(root, "", path, leaves);
  for (const auto& [p, text, where] : leaves) c.assign(p, text, path, where);
  for (const auto& o : overrides) c.set(o);
  c.validate();
  return c;
}

void HwConfig::set(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", assignment, "expected path.to.key=value");
  assign(assignment.substr(0, eq), assignment.substr(eq + 1), "--set", assignment.substr(0, eq));
}

void HwConfig::assign(const std::string& path, const std::string& text, const std::string& file,
                      const std::string& where) {
  const ParamDecl* d = find_param(path);
  if (!d) throw InputError(file, where, "unknown key (did you mean '" + closest_param(path) + "'?)");
  bool ok = true;
  int64_t i = 0;
  double x = 0;
  bool b = false;
  switch (d->type) {
    case ParamType::Int: ok = parse_int(text, i); break;
    case ParamType::Double: ok = parse_double(text, x); break;
    case ParamType::Bool: ok = parse_bool(text, b); break;
    case ParamType::String: ok = !text.empty(); break;
  }
  if (!ok) throw InputError(file, where, "expected " + std::string(type_name(d->type)) + ", got '" + text + "'");
  if (!d->choices.empty() && std::find(d->choices.begin(), d->choices.end(), text) == d->choices.end()) {
    std::string list;
    for (const auto& c : d->choices) list += (list.empty() ? "" : ", ") + c;
    throw InputError(file, where, "'" + text + "' is not one of: " + list);
  }
  if ((d->type == ParamType::Int && i < 0) || (d->type == ParamType::Double && x < 0))
    throw InputError(file, where, "must not be negative, got " + text);
  m_values[path] = text;
}

void HwConfig::validate() const {
  auto positive = [&](const std::string& p) {
    if (get_double(p) <= 0) throw InputError(m_source, p, "must be greater than 0");
  };
  for (const char* p : {"clock_mhz", "npu.pe_array.rows", "npu.pe_array.cols", "npu.vector.lanes",
                        "npu.l2.size_kib", "npu.dma.channels", "npu.dma.bytes_per_cycle",
                        "memory.dram.bandwidth_gbps", "memory.dram.channels", "npu.pe_array.act_read_bytes_per_cycle",
                        "npu.pe_array.weight_read_bytes_per_cycle", "npu.pe_array.out_write_bytes_per_cycle",
                        "npu.weight_buffer.size_kib", "npu.dma.burst_bytes", "host.bandwidth_gbps"})
    positive(p);
  double share = get_double("npu.l2.weight_share");
  if (share >= 1.0) throw InputError(m_source, "npu.l2.weight_share", "must be below 1, got " + get_string("npu.l2.weight_share"));
}

int64_t HwConfig::get_int(const std::string& path) const {
  auto it = m_values.find(path);
  if (it == m_values.end()) throw InternalError("config key not in schema: " + path);
  int64_t v;
  if (!parse_int(it->second, v)) throw InternalError("config key is not an integer: " + path);
  return v;
}

double HwConfig::get_double(const std::string& path) const {
  auto it = m_values.find(path);
  if (it == m_values.end()) throw InternalError("config key not in schema: " + path);
  double v;
  if (!parse_double(it->second, v)) throw InternalError("config key is not a number: " + path);
  return v;
}

std::string HwConfig::get_string(const std::string& path) const {
  auto it = m_values.find(path);
  if (it == m_values.end()) throw InternalError("config key not in schema: " + path);
  return it->second;
}

bool HwConfig::get_bool(const std::string& path) const {
  bool b = false;
  if (!parse_bool(get_string(path), b)) throw InternalError("config key is not a bool: " + path);
  return b;
}

std::vector<std::pair<std::string, std::string>> HwConfig::resolved() const {
  std::vector<std::pair<std::string, std::string>> r;
  for (const auto& p : schema()) r.emplace_back(p.path, m_values.at(p.path));
  return r;
}

std::string schema_markdown() {
  std::ostringstream o;
  o << "| key | type | default | unit | meaning |\n|---|---|---|---|---|\n";
  for (const auto& p : schema()) {
    std::string meaning = p.meaning;
    if (!p.choices.empty()) {
      meaning += " (one of:";
      for (const auto& c : p.choices) meaning += " `" + c + "`";
      meaning += ")";
    }
    o << "| `" << p.path << "` | " << (p.type == ParamType::Int ? "int" : p.type == ParamType::Double ? "number"
                                       : p.type == ParamType::Bool ? "bool" : "string")
      << " | " << p.default_value << " | " << p.unit << " | " << meaning << " |\n";
  }
  return o.str();
}

}  // namespace npusim::config
