#include "sim/sweep/sweep_run.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <set>
#include <thread>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"
#include "sim/sweep/results.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_dir.h"

namespace npusim::sweep {

namespace fs = std::filesystem;

ir::Graph load_workload(const WorkloadSpec& w) {
  if (w.zoo_model.empty()) return frontends::read_frontend_ir(w.path);
  frontends::zoo::ZooOptions z;
  z.model = w.zoo_model;
  z.batch = w.zoo_batch;
  z.dtype = w.zoo_dtype;
  return frontends::parse_frontend_ir(frontends::zoo::make_frontend_ir(z), w.name);
}

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

std::pair<int, std::string> job_key(const Row& r) {
  return {r.at("point").get<int>(), r.at("workload").get<std::string>()};
}

}  // namespace

int run_sweep(const SweepSpec* given, const SweepRunOptions& o, const SimulateFn& simulate, std::ostream& log) {
  if (o.out_dir.empty()) throw InputError("--out", "", "name an output directory");
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) throw InputError(o.out_dir, "", "cannot create the output directory: " + ec.message());
  DirLock lock(o.out_dir);

  const std::string manifest_path = o.out_dir + "/manifest.json";
  const bool have_manifest = fs::exists(manifest_path);
  if (have_manifest && !o.resume)
    throw InputError(o.out_dir, "", "already holds a sweep: add --resume to continue it, or choose another --out");
  Manifest old;
  if (have_manifest) old = read_manifest(o.out_dir);
  if (!given && !have_manifest)
    throw InputError(o.out_dir, "", "no sweep to resume here (no manifest.json): give the sweep file too");
  const SweepSpec spec = given ? *given : old.spec;

  const config::HwConfig base = config::HwConfig::load(spec.hw);
  const Expansion ex = expand(spec, base);
  const std::vector<std::string> keys = spec.axis_keys();
  Manifest m = make_manifest(spec, fingerprint(spec, base), o.shard, ex);
  if (have_manifest) {
    if (old.fingerprint != m.fingerprint)
      throw InputError(manifest_path, "", "holds a different sweep (another sweep file, base config or workload): choose another --out");
    if (old.shard.index != o.shard.index || old.shard.count != o.shard.count)
      throw InputError(manifest_path, "", "holds shard " + old.shard.text() + ", not " + o.shard.text());
  }

  // Jobs of this shard not yet in the journal (a torn last line is cut and runs again).
  const std::string journal_path = o.out_dir + "/journal.jsonl";
  std::vector<Row> rows = Journal::read(journal_path, true);
  std::set<std::pair<int, std::string>> done;
  for (const auto& r : rows)
    if (!done.insert(job_key(r)).second)
      throw InputError(journal_path, "", "point " + std::to_string(job_key(r).first) + " appears twice");
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
    if (!rows.empty()) log << ", " << rows.size() << " already done";
    log << "\n" << std::flush;
  }

  // Parse every workload once, before the directory is claimed; forked workers inherit them.
  std::vector<ir::Graph> graphs;
  if (!jobs.empty())
    for (const auto& w : spec.workloads) graphs.push_back(load_workload(w));
  if (!have_manifest) write_manifest(o.out_dir, m);

  if (!jobs.empty()) {
    Journal journal(journal_path);
    PoolOptions pool;
    pool.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    pool.timeout_s = o.timeout_s;
    Progress progress(log, o.tty && !o.quiet, shard_rows, shard_rows - jobs.size());
    auto child = [&](size_t i) {
      const Job& j = jobs[i];
      const config::HwConfig cfg = config::HwConfig::load(spec.hw, j.point->overrides(keys));
      return metrics_of(simulate(graphs[j.workload], cfg), cfg).dump();
    };
    auto on_done = [&](const TaskOutcome& t) {
      const Job& j = jobs[t.index];
      const std::string& wname = spec.workloads[j.workload].name;
      Row row;
      if (t.ok) {
        const Row metrics = Row::parse(t.payload);
        row = make_row(*j.point, wname, keys, &metrics, "");
      } else {
        const std::string err = t.payload == "timed out" ? "timed out after " + std::to_string(o.timeout_s) + " s" : t.payload;
        row = make_row(*j.point, wname, keys, nullptr, err);
      }
      row["wall_s"] = t.wall_s;
      journal.append(row);
      rows.push_back(row);
      if (!o.quiet) progress.tick(!t.ok, "point " + std::to_string(j.point->id) + " " + wname + ": " + row["error"].get<std::string>());
    };
    run_forked(jobs.size(), pool, child, on_done);
    if (!o.quiet) progress.finish();
  }

  std::vector<std::string> names;
  for (const auto& w : spec.workloads) names.push_back(w.name);
  if (rows.size() != shard_rows)
    throw InternalError("sweep finished with " + std::to_string(rows.size()) + " of " + std::to_string(shard_rows) + " rows");
  size_t failed = 0;
  for (const auto& r : rows) failed += r.at("status") != "ok";
  write_results(o.out_dir, rows, keys, names);
  if (!o.quiet)
    log << "sweep: " << rows.size() - failed << " ok, " << failed << " failed; results in " << o.out_dir
        << "/results.csv\n";
  return failed ? 1 : 0;
}

}  // namespace npusim::sweep
