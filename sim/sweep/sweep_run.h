// `sim sweep` and `sim sweep merge`: runs a sweep into an output directory (manifest.json,
// journal.jsonl, results.csv/.jsonl, timing.csv; docs/sweeps.md), resumes one after a kill,
// and joins the results of shards. SystemC-free: the simulation itself is a callback that runs
// in a forked worker, so the CLI passes the engine and tests can pass anything.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/ir/graph.h"
#include "sim/ir/system.h"
#include "sim/report/report.h"
#include "sim/run/workload.h"
#include "sim/sweep/points.h"
#include "sim/sweep/sweep_spec.h"

namespace npusim::sweep {

struct SweepRunOptions {
  std::string out_dir;
  int jobs = 0;            // worker processes; 0 = number of cores
  Shard shard;
  bool resume = false;     // continue the sweep in out_dir (or start it when out_dir has none)
  bool retry_failed = false;  // with resume: run the failed points again
  bool quiet = false;      // no progress output
  bool tty = false;        // progress as a redrawn bar
  double timeout_s = 0;    // per point and workload; 0 = none
};

// One simulation: called in a worker process, at most once per process, with the workload (a
// graph, or a pipeline on a system config), the sweep's hardware and the point's overrides
// (config::HwConfig::load / config::SystemConfig::load). Returns the row's metrics: the metric
// columns of the config's device (sim/sweep/results.h) and "layers" (run::RunRecord::sweep_metrics).
using SimulateFn = std::function<nlohmann::ordered_json(const run::Workload&, const std::string& hw,
                                                        const std::vector<std::string>& overrides)>;

// Runs the sweep. spec may be null with resume: the manifest in out_dir then gives it.
// Returns 0 when every (point, workload) of this shard succeeded, 1 when any failed.
// Bad sweeps, a directory holding another sweep and unreadable workloads are InputErrors. A
// system config as hw runs pipeline files as workloads.
int run_sweep(const SweepSpec* spec, const SweepRunOptions& o, const SimulateFn& simulate, std::ostream& log);

// Joins the output directories of shards into out_dir (results as if run in one go). Returns
// 0 when every point is present exactly once, 1 (writing nothing) when some are missing or
// duplicated; directories of different sweeps are an InputError.
int merge_sweeps(const std::vector<std::string>& dirs, const std::string& out_dir, std::ostream& log);

// Rows of a sweep directory for analysis (from its journal, so also of a running or killed
// sweep), sorted by (point, workload), without wall times.
std::vector<nlohmann::ordered_json> load_rows(const std::string& dir, std::vector<std::string>* axis_keys,
                                              std::string* device = nullptr);

}  // namespace npusim::sweep
