#include "sim/sweep/sweep_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/config/hw_paths.h"
#include "sim/config/system_config.h"
#include "sim/config/yaml_load.h"
#include "sim/ir/error.h"
#include "sim/ir/input_file.h"
#include "sim/llm/serving.h"

namespace npusim::sweep {

namespace fs = std::filesystem;

std::vector<std::string> SweepSpec::axis_keys() const {
  std::vector<std::string> keys;
  for (const auto& a : axes) keys.insert(keys.end(), a.keys.begin(), a.keys.end());
  return keys;
}

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool to_int(const std::string& t, int64_t& v) {
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtoll(t.c_str(), &end, 10);
  return *end == '\0' && errno != ERANGE;  // beyond int64: not an integer here (a double range)
}

bool to_double(const std::string& t, double& v) {
  if (t.empty()) return false;
  char* end = nullptr;
  v = std::strtod(t.c_str(), &end);
  return *end == '\0' && std::isfinite(v);
}

std::string number_text(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.12g", v);
  return b;
}

constexpr size_t kMaxAxisValues = 100000;

// One range item "start:stop[:step]" (step "xF", "×F" or "*F": geometric).
std::vector<std::string> expand_range(const std::string& item, const std::string& file, const std::string& where) {
  std::vector<std::string> parts;
  std::stringstream ss(item);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(trim(p));
  if (parts.size() < 2 || parts.size() > 3)
    throw InputError(file, where, "bad range '" + item + "': expected start:stop:step or start:stop:x2");
  std::string step = parts.size() == 3 ? parts[2] : "1";
  bool geometric = false;
  for (const std::string& mark : {std::string("x"), std::string("\xC3\x97"), std::string("*")})
    if (step.compare(0, mark.size(), mark) == 0) {
      geometric = true;
      step = step.substr(mark.size());
      break;
    }
  int64_t i0 = 0, i1 = 0, is = 0;
  const bool ints = to_int(parts[0], i0) && to_int(parts[1], i1) && to_int(step, is);
  double start, stop, by;
  if (!to_double(parts[0], start) || !to_double(parts[1], stop) || !to_double(step, by))
    throw InputError(file, where, "bad range '" + item + "': start, stop and step must be numbers");
  if (start > stop) throw InputError(file, where, "bad range '" + item + "': start is above stop");
  if (geometric && (by <= 1 || start <= 0))
    throw InputError(file, where, "bad range '" + item + "': a geometric range needs start > 0 and a factor above 1");
  if (!geometric && by <= 0) throw InputError(file, where, "bad range '" + item + "': step must be above 0");
  std::vector<std::string> out;
  if (ints) {
    for (int64_t v = i0; v <= i1; v = geometric ? v * is : v + is) {
      out.push_back(std::to_string(v));
      if (out.size() > kMaxAxisValues) break;
      // The next value would pass stop (and maybe int64): the range ends here, no overflow.
      const uint64_t room = static_cast<uint64_t>(i1) - static_cast<uint64_t>(v);
      if (geometric ? v > i1 / is : static_cast<uint64_t>(is) > room) break;
    }
  } else {
    // Index-based, so steps like 0.1 do not accumulate rounding; a stop within 1e-9 counts.
    for (size_t i = 0;; ++i) {
      const double v = geometric ? start * std::pow(by, static_cast<double>(i)) : start + by * static_cast<double>(i);
      if (v > stop + 1e-9 * std::max(1.0, std::fabs(stop))) break;
      out.push_back(number_text(v));
      if (out.size() > kMaxAxisValues) break;
    }
  }
  if (out.size() > kMaxAxisValues)
    throw InputError(file, where, "range '" + item + "' has more than " + std::to_string(kMaxAxisValues) + " values");
  return out;
}

void check_key(const std::string& key, const std::string& file, const std::string& where) {
  const auto& sys = config::system_keys();  // valid with a system config (sweep::resolve_base)
  // serving.<option>: valid with llm: workloads (sweep::resolve_base)
  if (key.rfind("serving.", 0) == 0 && llm::find_serving_option(key.substr(8))) return;
  if (!config::find_param(key) && std::find(sys.begin(), sys.end(), key) == sys.end())
    throw InputError(file, where, "'" + key + "' is not a config key (did you mean '" + config::closest_param(key) + "'?)");
}

std::string line_of(const YAML::Node& n) {
  const auto m = n.Mark();
  return m.line >= 0 ? " (line " + std::to_string(m.line + 1) + ")" : "";
}

std::string resolve(const fs::path& base_dir, const std::string& p) {
  const fs::path path(p);
  return (path.is_absolute() ? path : base_dir / path).lexically_normal().string();
}

std::vector<std::string> values_of(const YAML::Node& v, const std::string& file, const std::string& where) {
  std::vector<std::string> out;
  if (v.IsScalar()) return expand_values(v.Scalar(), file, where);
  if (!v.IsSequence() || v.size() == 0) throw InputError(file, where, "expected a list of values or a range");
  for (const auto& item : v) {
    if (!item.IsScalar()) throw InputError(file, where + line_of(item), "expected a single value");
    for (auto& x : expand_values(item.Scalar(), file, where + line_of(item))) out.push_back(std::move(x));
  }
  return out;
}

// One axis entry: `key: values` or `zip: {key: values, ...}`.
Axis axis_of(const std::string& key, const YAML::Node& v, const std::string& file) {
  Axis a;
  a.where = "axes/" + key + line_of(v);
  if (key != "zip") {
    check_key(key, file, a.where);
    a.keys = {key};
    for (auto& x : values_of(v, file, a.where)) a.values.push_back({x});
    return a;
  }
  if (!v.IsMap() || v.size() < 2) throw InputError(file, a.where, "zip needs a mapping of two or more keys to value lists");
  std::vector<std::vector<std::string>> cols;
  for (const auto& kv : v) {
    const std::string k = kv.first.as<std::string>(), w = "axes/zip/" + k + line_of(kv.first);
    check_key(k, file, w);
    cols.push_back(values_of(kv.second, file, w));
    if (cols.size() > 1 && cols.back().size() != cols.front().size())
      throw InputError(file, w, "zipped keys need lists of equal length: " + std::to_string(cols.back().size()) +
                                    " values here, " + std::to_string(cols.front().size()) + " for '" + a.keys.front() + "'");
    a.keys.push_back(k);
  }
  a.values.assign(cols.front().size(), {});
  for (size_t i = 0; i < a.values.size(); ++i)
    for (const auto& c : cols) a.values[i].push_back(c[i]);
  return a;
}

void check_axes(const SweepSpec& s) {
  std::set<std::string> seen;
  for (const auto& a : s.axes) {
    for (const auto& k : a.keys)
      if (!seen.insert(k).second) throw InputError(s.source, a.where, "'" + k + "' is swept by more than one axis");
    std::set<std::vector<std::string>> steps;
    for (const auto& v : a.values)
      if (!steps.insert(v).second) throw InputError(s.source, a.where, "value '" + v.front() + "' appears twice");
  }
}

void check_workload_names(const SweepSpec& s) {
  std::set<std::string> seen;
  for (const auto& w : s.workloads)
    if (!seen.insert(w.name).second) throw InputError(s.source, "workloads", "workload '" + w.name + "' is listed twice");
  if (s.workloads.empty()) throw InputError(s.source, "workloads", "no workload: give at least one");
  const auto serving = std::count_if(s.workloads.begin(), s.workloads.end(), [](const WorkloadSpec& w) { return !w.llm_model.empty(); });
  if (serving != 0 && serving != static_cast<long>(s.workloads.size()))
    throw InputError(s.source, "workloads", "serving (llm:) and single-pass workloads have different result columns: sweep them apart");
}

WorkloadSpec zoo_workload(const std::string& model, int batch, const std::string& dtype) {
  WorkloadSpec w;
  w.zoo_model = model;
  w.zoo_batch = batch;
  w.zoo_dtype = dtype;
  w.name = "zoo:" + model + ":b" + std::to_string(batch) + (dtype == "int8" ? "" : ":" + dtype);
  return w;
}

// `{llm: model, input: 512, arrival_rate: 8, ...}`: named llm:model:option=value:...
WorkloadSpec llm_workload(const YAML::Node& w, const std::string& path, const std::string& where) {
  WorkloadSpec x;
  x.where = where;
  if (!w["llm"].IsScalar()) throw InputError(path, where, "llm: expected a zoo model name, e.g. llama2-7b");
  x.llm_model = w["llm"].Scalar();
  x.name = "llm:" + x.llm_model;
  for (const auto& f : w) {
    const std::string k = f.first.as<std::string>();
    if (k == "llm") continue;
    const std::string at = "workloads/" + k + line_of(f.first);
    const llm::ServingOption* o = llm::find_serving_option(k);
    if (!o) {
      std::string names;
      for (const auto& so : llm::serving_options()) names += (names.empty() ? "" : ", ") + std::string(so.name);
      throw InputError(path, at, "unknown serving option (expected one of: " + names + ")");
    }
    if (!f.second.IsScalar()) throw InputError(path, at, "expected a value");
    const std::string v = f.second.Scalar();
    if (const std::string e = llm::serving_value_error(*o, v); !e.empty()) throw InputError(path, at, e);
    x.llm_options.push_back({k, v});
    x.name += ":" + k + "=" + v;
  }
  return x;
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

std::vector<std::string> expand_values(const std::string& text, const std::string& file, const std::string& where) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item = trim(item);
    if (item.empty()) throw InputError(file, where, "empty value in '" + text + "'");
    if (item.find(':') == std::string::npos) {
      out.push_back(item);
    } else {
      for (auto& v : expand_range(item, file, where)) out.push_back(std::move(v));
    }
  }
  if (out.empty()) throw InputError(file, where, "no values");
  return out;
}

SweepSpec load_sweep_file(const std::string& path) {
  SweepSpec s;
  s.source = path;
  std::ifstream in(path);
  if (!in || !fs::is_regular_file(path)) throw InputError(path, "", "cannot open file");
  // At most kMaxYamlFileBytes, one document, no key given twice (sim/config/yaml_load.h).
  const YAML::Node root =
      config::load_yaml_document(read_input_file(path, "a YAML sweep spec", kMaxYamlFileBytes), path);
  if (!root.IsMap()) throw InputError(path, "", "expected a mapping with workloads, hw, axes and constraints");
  const fs::path dir = fs::path(path).parent_path();
  try {  // a value of the wrong YAML kind (a map where a name belongs) fails in yaml-cpp's as<>
    for (const auto& kv : root) {
      const std::string field = kv.first.as<std::string>();
      const YAML::Node& v = kv.second;
      const std::string where = field + line_of(kv.first);
      if (field == "hw") {
        if (!v.IsScalar()) throw InputError(path, where, "expected a file name");
        // A file relative to the sweep file; else, when that is no file, a shipped config's
        // name ("npu", "gemini_zebu") as --hw takes it.
        const std::string rel = resolve(dir, v.Scalar());
        std::error_code ec;
        const fs::path parent = fs::path(v.Scalar()).parent_path().lexically_normal();
        const bool name = parent.empty() || parent == "configs";
        s.hw = fs::is_regular_file(rel, ec) || !name ? rel : v.Scalar();
      } else if (field == "workloads") {
        if (!v.IsSequence()) throw InputError(path, where, "expected a list of workloads");
        for (const auto& w : v) {
          const std::string ww = "workloads" + line_of(w);
          if (w.IsMap() && w["llm"]) {  // a serving workload: sim llm's options
            s.workloads.push_back(llm_workload(w, path, ww));
            continue;
          }
          if (w.IsMap())
            for (const auto& f : w) {
              const std::string k = f.first.as<std::string>();
              if (k != "ir" && k != "zoo" && k != "batch" && k != "dtype")
                throw InputError(path, "workloads/" + k + line_of(f.first),
                                 "unknown field (expected ir, zoo with batch and dtype, or llm with serving options)");
            }
          if (w.IsScalar() || (w.IsMap() && w["ir"])) {
            WorkloadSpec x;
            x.name = w.IsScalar() ? w.Scalar() : w["ir"].as<std::string>();
            x.path = resolve(dir, x.name);
            x.where = ww;
            s.workloads.push_back(x);
          } else if (w.IsMap() && w["zoo"]) {
            int batch = 1;
            try {
              if (w["batch"]) batch = w["batch"].as<int>();
            } catch (const YAML::Exception&) {
              throw InputError(path, ww, "batch must be an integer");
            }
            s.workloads.push_back(zoo_workload(w["zoo"].as<std::string>(), batch,
                                               w["dtype"] ? w["dtype"].as<std::string>() : "int8"));
            s.workloads.back().where = ww;
          } else {
            throw InputError(path, ww, "expected a file name, {ir: file} or {zoo: model, batch: N}");
          }
        }
      } else if (field == "axes") {
        if (v.IsMap()) {
          for (const auto& a : v) s.axes.push_back(axis_of(a.first.as<std::string>(), a.second, path));
        } else if (v.IsSequence()) {
          for (const auto& item : v) {
            if (!item.IsMap() || item.size() != 1) throw InputError(path, "axes" + line_of(item), "expected 'key: values' or 'zip: {...}'");
            for (const auto& a : item) s.axes.push_back(axis_of(a.first.as<std::string>(), a.second, path));
          }
        } else {
          throw InputError(path, where, "expected a mapping or list of axes");
        }
      } else if (field == "constraints") {
        auto add = [&](const YAML::Node& c) {
          if (!c.IsScalar()) throw InputError(path, "constraints" + line_of(c), "expected an expression");
          s.constraints.push_back(c.Scalar());
          s.constraint_where.push_back("constraints" + line_of(c));
        };
        if (v.IsScalar()) {
          add(v);
        } else if (v.IsSequence()) {
          for (const auto& c : v) add(c);
        } else {
          throw InputError(path, where, "expected a list of expressions");
        }
      } else {
        throw InputError(path, where, "unknown field (expected workloads, hw, axes, constraints)");
      }
    }
  } catch (const YAML::Exception& e) {
    throw InputError(path, "line " + std::to_string(e.mark.line + 1), "unexpected value: " + e.msg);
  }
  if (s.hw.empty()) throw InputError(path, "hw", "missing: name the base hardware description");
  if (s.axes.empty()) throw InputError(path, "axes", "missing: give at least one axis");
  check_workload_names(s);
  check_axes(s);
  return s;
}

SweepSpec sweep_from_flags(const std::vector<std::string>& irs, const std::vector<std::string>& zoos,
                           const std::string& hw, const std::vector<std::string>& sets,
                           const std::vector<std::string>& constraints) {
  SweepSpec s;
  s.source = "--set";
  s.hw = hw;
  for (const auto& p : irs) {
    WorkloadSpec w;
    w.name = w.path = p;
    w.where = "--ir " + p;
    s.workloads.push_back(w);
  }
  for (const auto& z : zoos) {
    // model[:batch[:dtype]]
    std::vector<std::string> parts;
    std::stringstream ss(z);
    for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
    int64_t batch = 1;
    if (parts.empty() || parts.size() > 3 || (parts.size() > 1 && (!to_int(parts[1], batch) || batch < 1)))
      throw InputError("--zoo", z, "expected model[:batch[:dtype]], e.g. resnet50:1");
    s.workloads.push_back(zoo_workload(parts[0], static_cast<int>(batch), parts.size() > 2 ? parts[2] : "int8"));
    s.workloads.back().where = "--zoo " + z;
  }
  for (const auto& a : sets) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--set", a, "expected path.to.key=v1,v2,... or key=start:stop:step");
    Axis axis;
    axis.keys = {a.substr(0, eq)};
    axis.where = axis.keys[0];
    check_key(axis.keys[0], "--set", axis.where);
    for (auto& v : expand_values(a.substr(eq + 1), "--set", axis.where)) axis.values.push_back({v});
    s.axes.push_back(axis);
  }
  for (const auto& c : constraints) {
    s.constraints.push_back(c);
    s.constraint_where.push_back("--constraint");
  }
  if (s.axes.empty()) throw InputError("--set", "", "no axis: give --set key=v1,v2,... or a sweep file");
  check_workload_names(s);
  check_axes(s);
  return s;
}

nlohmann::ordered_json spec_to_json(const SweepSpec& s) {
  nlohmann::ordered_json j;
  j["source"] = s.source;
  std::string hw = s.hw;  // a shipped config's short name ("npu") as the file it names
  try {
    hw = config::resolve_hw(s.hw);
  } catch (const InputError&) {  // a missing file is reported when the config is loaded
  }
  j["hw"] = hw == config::kBuiltinHw ? hw : fs::absolute(hw).lexically_normal().string();
  auto& ws = j["workloads"] = nlohmann::ordered_json::array();
  for (const auto& w : s.workloads) {
    nlohmann::ordered_json x{{"name", w.name}};
    if (!w.llm_model.empty()) {
      x["llm"] = w.llm_model;
      nlohmann::ordered_json opts = nlohmann::ordered_json::array();
      for (const auto& [k, v] : w.llm_options) opts.push_back({k, v});
      x["options"] = opts;
    } else if (w.zoo_model.empty()) {
      x["path"] = fs::absolute(w.path).lexically_normal().string();
    } else {
      x["zoo"] = w.zoo_model, x["batch"] = w.zoo_batch, x["dtype"] = w.zoo_dtype;
    }
    ws.push_back(x);
  }
  auto& as = j["axes"] = nlohmann::ordered_json::array();
  for (const auto& a : s.axes) as.push_back({{"keys", a.keys}, {"values", a.values}, {"where", a.where}});
  j["constraints"] = s.constraints;
  j["constraint_where"] = s.constraint_where;
  return j;
}

SweepSpec spec_from_json(const nlohmann::ordered_json& j, const std::string& source) {
  try {
    SweepSpec s;
    s.source = j.at("source").get<std::string>();
    s.hw = j.at("hw").get<std::string>();
    for (const auto& w : j.at("workloads")) {
      WorkloadSpec x;
      x.name = w.at("name").get<std::string>();
      if (w.contains("llm")) {
        x.llm_model = w["llm"].get<std::string>();
        for (const auto& kv : w.at("options")) x.llm_options.push_back({kv.at(0).get<std::string>(), kv.at(1).get<std::string>()});
      } else if (w.contains("path")) x.path = w["path"].get<std::string>();
      else x.zoo_model = w.at("zoo").get<std::string>(), x.zoo_batch = w.at("batch").get<int>(), x.zoo_dtype = w.at("dtype").get<std::string>();
      s.workloads.push_back(x);
    }
    for (const auto& a : j.at("axes"))
      s.axes.push_back({a.at("keys").get<std::vector<std::string>>(),
                        a.at("values").get<std::vector<std::vector<std::string>>>(), a.value("where", "")});
    s.constraints = j.at("constraints").get<std::vector<std::string>>();
    s.constraint_where = j.at("constraint_where").get<std::vector<std::string>>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source, "spec", std::string("not a sweep manifest: ") + e.what());
  }
}

std::string fingerprint(const SweepSpec& s, const std::vector<std::pair<std::string, std::string>>& resolved) {
  nlohmann::ordered_json j;
  for (const auto& w : s.workloads) {
    nlohmann::ordered_json x{{"name", w.name}, {"zoo", w.zoo_model}, {"batch", w.zoo_batch}, {"dtype", w.zoo_dtype}};
    if (!w.llm_model.empty()) x["llm"] = w.llm_model;  // its options are in its name
    if (!w.path.empty()) {
      // A regular file within the limits (a device or FIFO would never end); a folder (TVM MLF)
      // or a missing file hashes as empty and is read, or reported, with the workloads.
      std::error_code ec;
      const bool file = fs::exists(w.path, ec) && !fs::is_directory(w.path, ec);
      x["content"] = fnv1a(file ? read_input_file(w.path, "a workload file") : std::string());
    }
    j["workloads"].push_back(x);
  }
  for (const auto& [k, v] : resolved) j["base"][k] = v;
  for (const auto& a : s.axes) j["axes"].push_back({{"keys", a.keys}, {"values", a.values}});
  j["constraints"] = s.constraints;
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(fnv1a(j.dump())));
  return b;
}

}  // namespace npusim::sweep
