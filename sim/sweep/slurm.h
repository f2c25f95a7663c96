// Sweeps on a Slurm cluster (docs/sweeps.md#slurm): `sim sweep submit SPEC -o OUT --slurm`
// writes OUT/sweep.sbatch, a job array with one shard per array task (each task runs
// `sim sweep --resume -o OUT/shard_<i> --shard <i>/<N>`), prepares every shard directory, and
// submits it with sbatch; submitting again submits only the shards that are neither complete nor
// still queued or running (after a scancel, a node failure, a time limit). `sim sweep status
// OUT` counts each shard's finished points from its journal; `sim sweep merge OUT -o M` joins
// the shards (merge_sweeps takes a submit directory for its shard directories).
//
// OUT/submit.json records the sweep's fingerprint, the shard count and the submitted jobs.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/sweep/sweep_spec.h"

namespace npusim::sweep {

struct SubmitOptions {
  std::string out_dir;
  int array_size = 0;         // shards = array tasks; 0: as before, else min(points, 16)
  std::string partition;      // --partition
  std::string time_limit;     // --time (Slurm's syntax, e.g. 02:00:00)
  int cpus_per_task = 1;      // --cpus-per-task, also -j of each task
  double timeout_s = 0;       // --timeout per point, passed to the tasks
  std::vector<std::string> sbatch_args;  // more sbatch options, as given
  bool dry_run = false;       // write the script and directories, print the sbatch command
  std::string sim_path;       // the sim the tasks run (default: this binary)
};

// Submits (or re-submits) a sweep. spec may be null when OUT already holds a submitted sweep.
// Prints the job id on out (dry run: the sbatch command), progress on log. Returns 0.
// InputErrors: a directory holding another sweep or a plain sweep, a different --array-size
// than before, sbatch missing or failing.
int submit_sweep(const SweepSpec* spec, const SubmitOptions& o, std::ostream& out, std::ostream& log);

// The shard directories of a submit directory (OUT/shard_<i>, i < N, whether they exist or not);
// {} when dir holds no submit.json.
std::vector<std::string> submitted_shard_dirs(const std::string& dir);

// Per-shard progress of a sweep directory (a submit directory or one sweep output directory):
// points finished / expected, failed, and the state (done, running, queued, incomplete, not
// started). Returns 0 when every shard is complete, 1 otherwise.
int sweep_status(const std::string& dir, std::ostream& out);

}  // namespace npusim::sweep
