#include "sim/check/regress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "frontends/json_util.h"
#include "sim/check/check.h"
#include "sim/config/hw_config.h"
#include "sim/config/hw_paths.h"
#include "sim/config/system_config.h"
#include "sim/ir/error.h"
#include "sim/run/fork_pool.h"
#include "sim/run/workload_loader.h"

namespace npusim::check {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "", "cannot open");
  std::stringstream s;
  s << f.rdbuf();
  // The checked parse first: a file nested deeper than its limit is refused before any value of
  // unbounded depth is built (nlohmann copies and compares recursively).
  (void)npusim::json::parse_text(s.str(), path);
  try {
    return json::parse(s.str());
  } catch (const json::exception& e) {
    throw InputError(path, "", std::string("not valid JSON: ") + e.what());
  }
}

std::string string_key(const json& meta, const std::string& path, const char* key, const std::string& dflt) {
  if (!meta.contains(key)) {
    if (dflt.empty()) throw InputError(path, std::string("/") + key, "missing (the set's IR file, e.g. \"ir.json\")");
    return dflt;
  }
  if (!meta[key].is_string()) throw InputError(path, std::string("/") + key, "expected a string");
  return meta[key].get<std::string>();
}

// A relative hw path: the set folder, each folder above it, then the current folder.
std::string resolve_hw(const fs::path& set_dir, const std::string& hw, const std::string& meta_path) {
  if (fs::path(hw).is_absolute()) return hw;
  std::error_code ec;
  for (fs::path d = fs::absolute(set_dir, ec);; d = d.parent_path()) {
    if (fs::is_regular_file(d / hw, ec)) return (d / hw).lexically_normal().string();
    if (d == d.parent_path()) break;
  }
  if (fs::is_regular_file(hw, ec)) return hw;
  throw InputError(meta_path, "/hw", "'" + hw + "' found neither in the set's folder or a folder above it nor in the "
                                     "current folder; give sim regress --hw");
}

GoldenSet load_set(const fs::path& dir, const std::string& hw_override) {
  const std::string meta_path = (dir / "meta.json").string();
  const json meta = read_json(meta_path);
  if (!meta.is_object()) throw InputError(meta_path, "", "expected an object {\"ir\": ..., \"hw\": ...}");
  GoldenSet s;
  s.dir = dir.string();
  s.name = dir.filename().string();
  s.ir = (dir / string_key(meta, meta_path, "ir", "")).lexically_normal().string();
  s.npy_dir = (dir / string_key(meta, meta_path, "npy_dir", ".")).lexically_normal().string();
  s.hw_label = hw_override.empty() ? string_key(meta, meta_path, "hw", "configs/npu.yaml") : hw_override;
  s.hw = hw_override.empty() ? resolve_hw(dir, s.hw_label, meta_path) : hw_override;
  s.expected_report = (dir / "expected_report.json").string();
  return s;
}

std::string signed_str(long long d) { return (d > 0 ? "+" : "") + std::to_string(d); }

std::string change(const std::string& what, long long e, long long a) {
  char pct[32] = "";
  if (e != 0) std::snprintf(pct, sizeof pct, ", %+.2f%%", 100.0 * static_cast<double>(a - e) / static_cast<double>(e));
  return what + ": " + std::to_string(e) + " -> " + std::to_string(a) + " (" + signed_str(a - e) + pct + ")";
}

// The totals compared, when the expected report has them: an NPU report's cycle counts, or a
// GPU report's cycles at its clock (a GPU report has no npu_cycles).
constexpr const char* kTotalKeys[] = {"npu_cycles", "host_cycles", "cycles"};

// The fields diff_reports reads, with the types it reads them as: anything else in a stored
// report is a file error naming the JSON pointer, not an exception from deep in the compare.
void check_expected_report(const json& j, const std::string& path) {
  if (!j.is_object()) throw InputError(path, "", "expected the JSON object of a `sim --report` file");
  if (j.contains("totals")) {
    if (!j["totals"].is_object()) throw InputError(path, "/totals", "expected an object");
    for (const char* k : kTotalKeys)
      if (j["totals"].contains(k) && !j["totals"][k].is_number_integer())
        throw InputError(path, std::string("/totals/") + k, "expected an integer, got " + j["totals"][k].dump());
  }
  if (!j.contains("layers")) return;
  if (!j["layers"].is_array()) throw InputError(path, "/layers", "expected an array of layers");
  for (size_t i = 0; i < j["layers"].size(); ++i) {
    const json& l = j["layers"][i];
    const std::string at = "/layers/" + std::to_string(i);
    if (!l.is_object()) throw InputError(path, at, "expected a layer object");
    if (l.contains("name") && !l["name"].is_string()) throw InputError(path, at + "/name", "expected a string");
    if (l.contains("cycles") && !l["cycles"].is_number_integer())
      throw InputError(path, at + "/cycles", "expected an integer, got " + l["cycles"].dump());
    if (l.contains("time_us") && !l["time_us"].is_number())
      throw InputError(path, at + "/time_us", "expected a number, got " + l["time_us"].dump());
  }
}

long long int_at(const json& j, const char* a, const char* b) {
  if (!j.contains(a) || !j[a].contains(b) || !j[a][b].is_number_integer()) return -1;
  return j[a][b].get<long long>();
}

}  // namespace

std::vector<GoldenSet> find_golden_sets(const std::string& root, const std::string& hw_override) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw InputError(root, "", "not a folder of golden sets");
  if (fs::is_regular_file(fs::path(root) / "meta.json", ec)) return {load_set(root, hw_override)};
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && fs::is_regular_file(e.path() / "meta.json")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) throw InputError(root, "", "holds no golden set (a folder with meta.json)");
  std::vector<GoldenSet> sets;
  for (const auto& d : dirs) sets.push_back(load_set(d, hw_override));
  return sets;
}

std::vector<std::string> diff_reports(const json& expected, const json& actual) {
  std::vector<std::string> d;
  const bool npu = int_at(expected, "totals", "npu_cycles") >= 0;
  if (npu != (int_at(actual, "totals", "npu_cycles") >= 0)) {
    d.push_back(std::string("device: the expected report is ") + (npu ? "an NPU's" : "a GPU's") + ", the simulation " +
                (npu ? "a GPU's" : "an NPU's") + " (another --hw than the baseline's?)");
    return d;
  }
  for (const char* k : kTotalKeys) {
    if (npu && std::string(k) == "cycles") continue;  // an NPU's cycles are its npu_cycles
    const long long e = int_at(expected, "totals", k), a = int_at(actual, "totals", k);
    if (e != a && (e >= 0 || std::string(k) != "cycles")) d.push_back(change(std::string("totals.") + k, e, a));
  }
  // Per layer: cycles (NPU layers), or time in ns (GPU kernels, which repeat names: the n-th
  // kernel of a name is "name (n)").
  auto cycles_by_name = [](const json& r) {
    std::vector<std::pair<std::string, long long>> v;
    std::map<std::string, int> seen;
    if (r.contains("layers") && r["layers"].is_array())
      for (const auto& l : r["layers"])
        if (l.contains("name") && l["name"].is_string()) {
          std::string name = l["name"].get<std::string>();
          if (const int n = ++seen[name]; n > 1) name += " (" + std::to_string(n) + ")";
          long long value = l.value("cycles", -1LL);
          if (!l.contains("cycles") && l.contains("time_us") && l["time_us"].is_number())
            value = std::llround(l["time_us"].get<double>() * 1000);
          v.emplace_back(name, value);
        }
    return v;
  };
  const auto ev = cycles_by_name(expected), av = cycles_by_name(actual);
  const std::map<std::string, long long> em(ev.begin(), ev.end()), am(av.begin(), av.end());
  for (const auto& [name, e] : ev) {
    auto it = am.find(name);
    if (it == am.end()) d.push_back("layer " + name + ": missing from the new report");
    else if (it->second != e) d.push_back(change("layer " + name + (npu ? " cycles" : " ns"), e, it->second));
  }
  for (const auto& [name, a] : av)
    if (!em.count(name)) d.push_back("layer " + name + ": not in the expected report (" + std::to_string(a) + " cycles)");
  return d;
}

std::vector<std::string> diff_expected_file(const std::string& expected_path, const json& actual) {
  const json expected = read_json(expected_path);
  check_expected_report(expected, expected_path);
  return diff_reports(expected, actual);
}

int run_regress(const std::string& root, const RegressOptions& o, const SimulateFn& simulate, std::ostream& out) {
  const std::vector<GoldenSet> sets = find_golden_sets(root, o.hw);
  // A set's timing is one device's report (NPU cycles, or a GPU's kernels); a system runs
  // pipelines, which golden sets are not.
  for (const GoldenSet& s : sets)
    if (config::is_system_config(s.hw))
      throw InputError(s.hw, "system", "regress re-checks one device's golden sets; give an NPU or GPU config, not a system");
  bool failed = false;
  // Numerics in this process (no SystemC here).
  for (const GoldenSet& s : sets) {
    run::WorkloadSpec spec;
    spec.path = s.ir;
    const ir::Graph g = std::move(*run::load_workload(spec, run::WorkloadKind::Device).graph);
    CheckOptions co;
    co.npy_dir = s.npy_dir;
    const CheckReport r = check_graph(g, co);
    out << s.name << ": numerics: " << check_summary(r) << "\n";
    if (!r.ok()) {
      out << format_check_table(r, true);
      failed = true;
    }
  }
  // Timing: one forked child per set.
  std::vector<run::TaskOutcome> done(sets.size());
  run::PoolOptions po;
  po.jobs = std::max(1, o.jobs);
  run::run_forked(
      sets.size(), po, [&](size_t i) { return simulate(sets[i].ir, sets[i].hw); },
      [&](const run::TaskOutcome& t) { done[t.index] = t; });
  for (size_t i = 0; i < sets.size(); ++i) {
    const GoldenSet& s = sets[i];
    if (!done[i].ok) {
      out << s.name << ": timing: simulation failed: " << done[i].payload << "\n";
      failed = true;
      continue;
    }
    json actual;
    try {
      actual = json::parse(done[i].payload);
    } catch (const json::exception& e) {
      throw InternalError("regress: the simulation of " + s.ir + " returned no JSON report: " + e.what());
    }
    // The same bytes wherever the repository lives: the config and workload as meta.json names them.
    actual[actual.contains("hw") ? "hw" : "hardware"]["source"] = s.hw_label;
    if (actual.contains("hw")) actual["workload"] = s.name;
    if (o.update) {
      std::ofstream f(s.expected_report, std::ios::binary);
      f << actual.dump(2) << "\n";
      if (!f) throw InputError(s.expected_report, "", "cannot write");
      const bool gpu = int_at(actual, "totals", "npu_cycles") < 0;
      out << s.name << ": timing: wrote " << s.expected_report << " ("
          << int_at(actual, "totals", gpu ? "cycles" : "npu_cycles") << (gpu ? " GPU cycles)\n" : " NPU cycles)\n");
      continue;
    }
    std::error_code ec;
    if (!fs::is_regular_file(s.expected_report, ec)) {
      out << s.name << ": timing: no expected_report.json; create it with sim regress --update " << s.dir << "\n";
      failed = true;
      continue;
    }
    const std::vector<std::string> diffs = diff_expected_file(s.expected_report, actual);
    if (diffs.empty()) {
      const bool gpu = int_at(actual, "totals", "npu_cycles") < 0;
      out << s.name << ": timing: match (" << int_at(actual, "totals", gpu ? "cycles" : "npu_cycles")
          << (gpu ? " GPU cycles, " : " NPU cycles, ") << actual["layers"].size() << (gpu ? " kernels)\n" : " layers)\n");
    } else {
      out << s.name << ": timing: " << diffs.size() << " difference(s) from " << s.expected_report << "\n";
      for (const auto& d : diffs) out << "  " << d << "\n";
      failed = true;
    }
  }
  out << "regress: " << sets.size() << " set(s): ";
  if (failed) out << "DIFFERENCES (exit 1)" << (o.update ? "\n" : "; if the timing change is intended: sim regress --update\n");
  else out << (o.update ? "numerics pass, baselines rewritten\n" : "all match\n");
  return failed ? 1 : 0;
}

}  // namespace npusim::check
