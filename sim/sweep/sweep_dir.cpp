#include "sim/sweep/sweep_dir.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "sim/ir/error.h"
#include "sim/sweep/results.h"
#include "sim/sweep/slurm.h"
#include "sim/sweep/sweep_run.h"

namespace npusim::sweep {

bool path_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

namespace fs = std::filesystem;

namespace {
constexpr const char* kFormat = "npusim-sweep/1";
}

Manifest make_manifest(const SweepSpec& spec, const std::string& fp, const Shard& shard, const Expansion& ex) {
  Manifest m;
  m.fingerprint = fp;
  m.shard = shard;
  m.points = static_cast<int>(ex.points.size());
  for (const auto& w : spec.workloads) m.workloads.push_back(w.name);
  m.axis_keys = spec.axis_keys();
  m.spec = spec;
  return m;
}

void write_manifest(const std::string& dir, const Manifest& m) {
  Row j;
  j["format"] = kFormat;
  j["fingerprint"] = m.fingerprint;
  j["shard"] = m.shard.text();
  j["points"] = m.points;
  j["workloads"] = m.workloads;
  j["axis_keys"] = m.axis_keys;
  j["spec"] = spec_to_json(m.spec);
  if (m.device != "npu") j["device"] = m.device;  // absent: an NPU sweep (files of older versions too)
  write_file_atomic(dir + "/manifest.json", j.dump(2) + "\n");
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  if (!path_exists(path)) throw InputError(dir, "", "not a sweep output directory (no manifest.json)");
  Manifest m;
  try {
    const Row j = Row::parse(read_file(path));
    if (j.value("format", "") != kFormat) throw InputError(path, "format", "not an npusim sweep manifest");
    m.fingerprint = j.at("fingerprint").get<std::string>();
    m.shard = Shard::parse(j.at("shard").get<std::string>());
    m.points = j.at("points").get<int>();
    m.workloads = j.at("workloads").get<std::vector<std::string>>();
    m.axis_keys = j.at("axis_keys").get<std::vector<std::string>>();
    m.spec = spec_from_json(j.at("spec"), path);
    m.device = j.value("device", "npu");
    if (m.device != "npu" && m.device != "gpu" && m.device != "system" && m.device != "llm")
      throw InputError(path, "device", "is '" + m.device + "': npu, gpu, system or llm (a serving sweep)");
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, "", std::string("damaged manifest: ") + e.what());
  }
  return m;
}

int merge_sweeps(const std::vector<std::string>& given, const std::string& out_dir, std::ostream& log) {
  if (given.empty()) throw InputError("merge", "", "name the shard directories to merge");
  // A directory of `sim sweep submit --slurm` stands for its shard directories; those never
  // started are named as missing shards.
  std::vector<std::string> dirs;
  std::map<int, std::string> not_started;  // shard index -> its directory
  for (const auto& g : given) {
    const std::vector<std::string> shards = path_exists(g + "/manifest.json") ? std::vector<std::string>{} : submitted_shard_dirs(g);
    if (shards.empty()) {
      dirs.push_back(g);
      continue;
    }
    for (size_t i = 0; i < shards.size(); ++i) {
      if (path_exists(shards[i] + "/manifest.json")) dirs.push_back(shards[i]);
      else not_started[static_cast<int>(i)] = shards[i];
    }
  }
  if (dirs.empty()) throw InputError(given.front(), "", "no shard directory to merge (none started)");
  const Manifest first = read_manifest(dirs.front());
  std::map<std::pair<int, std::string>, std::string> seen;  // job -> directory
  std::vector<std::string> journals;
  std::vector<JournalEntry> entries;
  std::vector<std::string> problems;
  std::map<int, std::string> shard_dirs;  // shard index -> directory, when all are shards of one count
  bool same_count = true;
  for (const auto& d : dirs) {
    const Manifest m = read_manifest(d);
    same_count = same_count && m.shard.count == first.shard.count;
    shard_dirs.emplace(m.shard.index, d);
    if (m.fingerprint != first.fingerprint)
      throw InputError(d, "", "holds a different sweep than " + dirs.front() + " (fingerprints differ)");
    journals.push_back(d + "/journal.jsonl");
    for (auto& e : Journal::index(journals.back(), journals.size() - 1, false)) {
      if (e.point < 0 || e.point >= first.points ||
          std::find(first.workloads.begin(), first.workloads.end(), e.workload) == first.workloads.end())
        throw InputError(journals.back(), "point " + std::to_string(e.point), "not a point of this sweep");
      auto [it, fresh] = seen.emplace(std::make_pair(e.point, e.workload), d);
      if (!fresh) {
        problems.push_back("point " + std::to_string(e.point) + " " + e.workload + " is in both " + it->second + " and " + d);
        continue;
      }
      entries.push_back(std::move(e));
    }
  }
  std::map<int, int> missing_of_shard;
  for (int p = 0; p < first.points; ++p)
    for (const auto& w : first.workloads)
      if (!seen.count({p, w})) {
        problems.push_back("point " + std::to_string(p) + " " + w + " is missing");
        ++missing_of_shard[p % first.shard.count];
      }
  // Shards first: which are absent, which are incomplete (and how to finish them).
  if (same_count && first.shard.count > 1) {
    std::vector<std::string> shard_problems;
    const int n = first.shard.count;
    for (int i = 0; i < n; ++i) {
      const std::string s = Shard{i, n}.text();
      const auto d = shard_dirs.find(i);
      if (d == shard_dirs.end()) {
        const auto ns = not_started.find(i);
        shard_problems.push_back("shard " + s + " is missing" +
                                 (ns != not_started.end() ? " (" + ns->second + ": not started)" : ": give its directory too"));
      } else if (missing_of_shard.count(i)) {
        shard_problems.push_back("shard " + s + " in " + d->second + " is incomplete: " + std::to_string(missing_of_shard[i]) +
                                 " run(s) missing (finish it: sim sweep --resume -o " + d->second + " --shard " + s +
                                 ", or submit again)");
      }
    }
    problems.insert(problems.begin(), shard_problems.begin(), shard_problems.end());
  }
  if (!problems.empty()) {
    log << "merge: " << problems.size() << " problem(s); nothing written:\n";
    for (size_t i = 0; i < problems.size() && i < 20; ++i) log << "  " << problems[i] << "\n";
    if (problems.size() > 20) log << "  ... and " << problems.size() - 20 << " more\n";
    return 1;
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) throw InputError(out_dir, "", "cannot create the output directory: " + ec.message());
  if (path_exists(out_dir + "/manifest.json")) throw InputError(out_dir, "", "already holds a sweep: choose another output");
  Manifest merged = first;
  merged.shard = Shard{};
  // The merged directory gets a journal too (sorted, with wall times): report and merge read it.
  write_results(out_dir, journals, entries, first.axis_keys, first.workloads, true, first.device);
  write_manifest(out_dir, merged);
  size_t failed = 0;
  for (const auto& e : entries) failed += e.status != "ok";
  log << "merge: " << dirs.size() << " director" << (dirs.size() == 1 ? "y" : "ies") << ", " << first.points
      << " points x " << first.workloads.size() << " workload(s), " << failed << " failed; results in " << out_dir
      << "/results.csv\n";
  return 0;
}

std::vector<Row> load_rows(const std::string& dir, std::vector<std::string>* axis_keys, std::string* device) {
  // The journal, not results.jsonl: it is current even while a sweep runs or after a kill.
  const Manifest m = read_manifest(dir);
  if (axis_keys) *axis_keys = m.axis_keys;
  if (device) *device = m.device;
  std::vector<Row> rows = Journal::read(dir + "/journal.jsonl", false);
  auto rank = [&](const Row& r) {
    return std::make_pair(r.at("point").get<int>(),
                          std::find(m.workloads.begin(), m.workloads.end(), r.at("workload").get<std::string>()) -
                              m.workloads.begin());
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) { return rank(a) < rank(b); });
  for (auto& r : rows) r.erase("wall_s");
  return rows;
}

}  // namespace npusim::sweep
