#include "sim/config/hw_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <set>
#include <sstream>

#include "sim/config/hw_paths.h"
#include "sim/config/yaml_load.h"
#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

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
  errno = 0;
  long long x = std::strtoll(t.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;  // beyond int64 is no integer here
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

std::string fmt_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
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

HwConfig HwConfig::load(const std::string& value, const std::vector<std::string>& overrides) {
  // A file, or the name of a shipped config ("npu", "configs/gpu_h100.yaml" from any folder):
  // a miss names what the user typed; problems inside the file name the file that was read.
  {
    // A device, FIFO or socket (not a directory: resolve_hw names that) is refused before
    // reading, and so is a file over kMaxYamlFileBytes (sim/ir/input_file.h).
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(value, ec);
    if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
      check_input_file(value, "a YAML hardware description", kMaxYamlFileBytes);
  }
  const std::string path = resolve_hw(value);
  HwConfig c;
  for (const auto& p : schema()) c.m_values[p.path] = p.default_value;
  c.m_source = path;
  const std::string text = read_hw_text(path);  // a file, or the built-in npu.yaml (hw_paths.h)
  // One document; a second one or a key given twice is an error (sim/config/yaml_load.h).
  const YAML::Node root = load_yaml_document(text, path);
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
  if (d->type == ParamType::Int || d->type == ParamType::Double) {
    const double v = d->type == ParamType::Int ? static_cast<double>(i) : x;
    const ParamRange& r = d->range;
    std::string why;
    if (v < 0 && r.lo >= 0) why = "must not be negative";
    else if (r.positive && v <= 0) why = "must be greater than 0";
    else if (v < r.lo) why = "must be at least " + fmt_number(r.lo);
    else if (r.hi_open && v >= r.hi) why = "must be below " + fmt_number(r.hi);
    else if (v > r.hi) why = "must be at most " + fmt_number(r.hi);
    if (!why.empty())
      throw InputError(file, where, path + " = " + text + ": " + why + " (allowed: " + r.text() + ")");
  }
  m_values[path] = text;
  m_origin[path] = {file, where};
}

bool is_multicore_key(const std::string& path) {
  return path == "npu.cores" || path.rfind("npu.noc.", 0) == 0 || path == "mapping.multicore" ||
         path == "mapping.multicore_layers" || path == "mapping.pipeline_images";
}

bool param_applies(const std::string& path, const std::string& device) {
  if (path == "name" || path == "clock_mhz" || path == "device") return true;
  return (path.rfind("gpu.", 0) == 0) == (device == "gpu");
}

void HwConfig::validate() const {
  // Single values are range-checked where they are assigned (file:line or --set); cross-field
  // rules go here. A key of the other device's root is an error where it was written.
  const std::string device = get_string("device");
  for (const auto& [path, origin] : m_origin)
    if (!param_applies(path, device))
      throw InputError(origin.first, origin.second,
                       path + " is " + (device == "gpu" ? "an NPU" : "a GPU") + " key, but this config's device is " + device +
                           " (set `device: " + (device == "gpu" ? "npu" : "gpu") + "` for that device)");
  auto where = [&](const std::string& key) {
    auto it = m_origin.find(key);
    return it == m_origin.end() ? std::string("the default") : it->second.first + ": " + it->second.second;
  };
  for (const KeyOrder& r : key_orders()) {
    if (!param_applies(r.lesser, device) || !param_applies(r.greater, device)) continue;
    if (get_double(r.lesser) <= get_double(r.greater)) continue;
    // Named where the lesser key was set (else the greater's, else the file).
    const auto at = m_origin.count(r.lesser) ? m_origin.at(r.lesser)
                    : m_origin.count(r.greater) ? m_origin.at(r.greater) : std::make_pair(m_source, std::string(""));
    throw InputError(at.first, at.second,
                     std::string(r.lesser) + " = " + get_string(r.lesser) + " (" + where(r.lesser) + ") exceeds " + r.greater +
                         " = " + get_string(r.greater) + " (" + where(r.greater) + "): " + r.why);
  }
}

std::string ParamRange::text() const {
  return "[" + fmt_number(lo) + ", " + fmt_number(hi) + (hi_open ? ")" : "]");
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
  const std::string device = get_string("device");
  // A one-core NPU lists no multi-core key, so its reports and sweep fingerprints are those of
  // the chips before cores existed (docs/multicore.md).
  const bool one_core = device != "gpu" && get_int("npu.cores") == 1;
  for (const auto& p : schema())
    if (param_applies(p.path, device) && !(one_core && is_multicore_key(p.path))) r.emplace_back(p.path, m_values.at(p.path));
  return r;
}

const std::vector<KeyOrder>& key_orders() {
  static const std::vector<KeyOrder> rules = {
      {"gpu.max_warps_per_block", "gpu.max_warps_per_sm", "an SM holds at least one whole thread block"},
      {"gpu.smem_per_block_kib", "gpu.smem_per_sm_kib", "a thread block's shared memory is part of its SM's"},
      {"gpu.l2.latency_ns", "gpu.hbm.latency_ns", "an L2 hit cannot take longer than a miss to HBM"},
      {"npu.pe_array.pe_groups", "npu.pe_array.cols", "the PE columns form the groups"},
      {"npu.noc.mesh_cols", "npu.cores", "a mesh row holds at most every core (0: square)"},
  };
  return rules;
}

const char* param_type_name(ParamType t) {
  return t == ParamType::Int ? "int" : t == ParamType::Double ? "number" : t == ParamType::Bool ? "bool" : "string";
}

std::string schema_markdown() {
  std::ostringstream o;
  o << "| key | type | default | unit | range | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& p : schema()) {
    std::string meaning = p.meaning;
    if (!p.choices.empty()) {
      meaning += " (one of:";
      for (const auto& c : p.choices) meaning += " `" + c + "`";
      meaning += ")";
    }
    o << "| `" << p.path << "` | " << param_type_name(p.type)
      << " | " << p.default_value << " | " << p.unit << " | "
      << (p.type == ParamType::Int || p.type == ParamType::Double ? p.range.text() : "") << " | " << meaning << " |\n";
  }
  o << "\nRules between keys (checked when a config is loaded; the error names both keys and where each was set):\n\n"
    << "| key | must not exceed | why |\n|---|---|---|\n";
  for (const KeyOrder& r : key_orders()) o << "| `" << r.lesser << "` | `" << r.greater << "` | " << r.why << " |\n";
  return o.str();
}

}  // namespace npusim::config
