#include "sim/sweep/sweep_run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "sim/config/system_config.h"
#include "sim/ir/error.h"
#include "sim/sweep/results.h"
#include "sim/run/fork_pool.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_dir.h"

namespace npusim::sweep {

namespace fs = std::filesystem;

namespace {

// Held for the whole run: two sweeps appending to one journal would repeat points.
class DirLock {
 public:
  explicit DirLock(const std::string& dir) {
    const std::string path = dir + "/lock";
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw InputError(path, "", "cannot create the lock file");
    if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(m_fd);
      throw InputError(dir, "", "another sweep is running in this directory");
    }
  }
  ~DirLock() { ::close(m_fd); }

 private:
  int m_fd = -1;
};

// --retry-failed: rewrite the journal without its failed rows, so they run again.
void drop_failed(const std::string& journal_path) {
  const std::vector<JournalEntry> all = Journal::index(journal_path, 0, true);
  if (std::none_of(all.begin(), all.end(), [](const JournalEntry& e) { return e.status != "ok"; })) return;
  std::string kept;
  for (const Row& r : Journal::read(journal_path, false))
    if (r.at("status") == "ok") kept += r.dump() + "\n";
  write_file_atomic(journal_path, kept);
}

}  // namespace

int run_sweep(const SweepSpec* given, const SweepRunOptions& o, const SimulateFn& simulate, std::ostream& log) {
  if (o.out_dir.empty()) throw InputError("--out", "", "name an output directory");
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) throw InputError(o.out_dir, "", "cannot create the output directory: " + ec.message());
  DirLock lock(o.out_dir);

  const std::string manifest_path = o.out_dir + "/manifest.json";
  const bool have_manifest = path_exists(manifest_path);
  if (have_manifest && !o.resume)
    throw InputError(o.out_dir, "", "already holds a sweep: add --resume to continue it, or choose another --out");
  Manifest old;
  if (have_manifest) old = read_manifest(o.out_dir);
  if (!given && !have_manifest)
    throw InputError(o.out_dir, "", "no sweep to resume here (no manifest.json): give the sweep file too");
  const SweepSpec spec = given ? *given : old.spec;

  // Every point runs the base config's device (or system), whose metric columns the files hold.
  const SweepBase base = resolve_base(spec);
  const std::string& device = base.device;
  const Expansion& ex = base.expansion;
  const std::vector<std::string> keys = spec.axis_keys();
  const bool on_system = device == "system";
  const bool serving = device == "llm";
  Manifest m = make_manifest(spec, base.fingerprint, o.shard, ex);
  m.device = device;
  if (have_manifest) {
    if (old.fingerprint != m.fingerprint)
      throw InputError(manifest_path, "", "holds a different sweep (another sweep file, base config or workload): choose another --out");
    if (old.shard.index != o.shard.index || old.shard.count != o.shard.count)
      throw InputError(manifest_path, "", "holds shard " + old.shard.text() + ", not " + o.shard.text());
  }

  // Jobs of this shard not yet in the journal (a torn last line is cut and runs again).
  const std::string journal_path = o.out_dir + "/journal.jsonl";
  if (o.retry_failed) drop_failed(journal_path);
  const std::vector<JournalEntry> before = Journal::index(journal_path, 0, true);
  if (!have_manifest && !before.empty())
    throw InputError(journal_path, "", "a journal without manifest.json: not resumable, choose another --out");
  std::set<std::pair<int, std::string>> done;
  for (const auto& e : before)
    if (!done.insert({e.point, e.workload}).second)
      throw InputError(journal_path, "", "point " + std::to_string(e.point) + " " + e.workload + " appears twice");
  struct Job {
    const Point* point;
    size_t workload;
  };
  std::vector<Job> jobs;
  size_t shard_rows = 0;
  for (const auto& p : ex.points) {
    if (!o.shard.contains(p.id)) continue;
    for (size_t w = 0; w < spec.workloads.size(); ++w, ++shard_rows)
      if (!done.count({p.id, spec.workloads[w].name})) jobs.push_back({&p, w});
  }

  if (!o.quiet) {
    log << "sweep: " << ex.points.size() << " points";
    if (ex.dropped) log << " (" << ex.dropped << " of " << ex.grid_size << " dropped by constraints)";
    log << " x " << spec.workloads.size() << " workload(s)";
    if (o.shard.count > 1) log << ", shard " << o.shard.text() << ": " << shard_rows << " runs";
    if (!before.empty()) log << ", " << before.size() << " already done";
    log << "\n" << std::flush;
  }

  // Parse every workload once, before the directory is claimed; forked workers inherit them.
  std::vector<ir::Graph> graphs;
  std::vector<ir::System> systems;
  std::vector<run::ServingWorkload> servings;
  if (!jobs.empty())
    for (const auto& w : spec.workloads) {
      try {
        run::LoadedWorkload l =
            run::load_workload(w, serving ? run::WorkloadKind::Any : on_system ? run::WorkloadKind::System : run::WorkloadKind::Device);
        if (serving) servings.push_back(std::move(*l.serving));
        else if (on_system) systems.push_back(std::move(*l.system));
        else graphs.push_back(std::move(*l.graph));
      } catch (const InputError& e) {  // say which entry of the sweep it was
        throw InputError(spec.source, w.where.empty() ? "workload " + w.name : w.where, e.what());
      }
    }
  if (!have_manifest) write_manifest(o.out_dir, m);

  if (!jobs.empty()) {
    Journal journal(journal_path);
    run::PoolOptions pool;
    pool.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    pool.timeout_s = o.timeout_s;
    Progress progress(log, o.tty && !o.quiet, shard_rows, shard_rows - jobs.size());
    auto child = [&](size_t i) {
      const Job& j = jobs[i];
      run::Workload w;
      if (serving) w.serving = &servings[j.workload];
      else if (on_system) w.system = &systems[j.workload];
      else w.graph = &graphs[j.workload];
      return simulate(w, spec.hw, j.point->overrides(keys)).dump();
    };
    auto on_done = [&](const run::TaskOutcome& t) {
      const Job& j = jobs[t.index];
      const std::string& wname = spec.workloads[j.workload].name;
      Row row;
      if (t.ok) {
        const Row metrics = Row::parse(t.payload);
        row = make_row(*j.point, wname, keys, &metrics, "", device);
      } else {
        std::ostringstream timed_out;
        timed_out << "timed out after " << o.timeout_s << " s";
        const std::string err = t.payload == "timed out" ? timed_out.str() : t.payload;
        row = make_row(*j.point, wname, keys, nullptr, err, device);
      }
      row["wall_s"] = t.wall_s;
      journal.append(row);
      if (!o.quiet) progress.tick(!t.ok, "point " + std::to_string(j.point->id) + " " + wname + ": " + row["error"].get<std::string>());
    };
    run::run_forked(jobs.size(), pool, child, on_done);
    if (!o.quiet) progress.finish();
  }

  std::vector<std::string> names;
  for (const auto& w : spec.workloads) names.push_back(w.name);
  const std::vector<JournalEntry> entries = Journal::index(journal_path, 0, false);
  if (entries.size() != shard_rows)
    throw InternalError("sweep finished with " + std::to_string(entries.size()) + " of " + std::to_string(shard_rows) + " rows");
  size_t failed = 0;
  for (const auto& e : entries) failed += e.status != "ok";
  write_results(o.out_dir, {journal_path}, entries, keys, names, false, device);
  if (!o.quiet)
    log << "sweep: " << entries.size() - failed << " ok, " << failed << " failed; results in " << o.out_dir
        << "/results.csv\n";
  return failed ? 1 : 0;
}

}  // namespace npusim::sweep
