// `sim sweep`, `sim sweep merge`, `sim sweep report`, `sim sweep submit --slurm`, `sim sweep
// status` (docs/sweeps.md). The options live here
// rather than in main.cpp so the subcommand is one self-contained unit; the sweep itself is
// sim/sweep (SystemC-free), and this file gives it the one thing it lacks: the simulation,
// which runs in a forked worker per point.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>

#include "sim/cli/commands.h"
#include "sim/ir/error.h"
#include "sim/llm/serve.h"
#include "sim/run/run.h"
#include "sim/sweep/results.h"
#include "sim/sweep/slurm.h"
#include "sim/sweep/sweep_report.h"
#include "sim/sweep/sweep_run.h"

namespace npusim::cli {

namespace {

struct SweepCliOptions {
  std::string file;
  std::vector<std::string> irs, zoos, sets, constraints;
  std::string hw = "configs/npu.yaml";
  std::string out, shard = "0/1";
  int jobs = 0;
  bool resume = false, retry_failed = false, quiet = false;
  double timeout_s = 0;
  // merge
  std::vector<std::string> merge_dirs;
  std::string merge_out;
  // report
  std::string report_dir;
  sweep::ReportOptions report;
  // submit, status
  std::string submit_file, status_dir;
  bool slurm = false;
  sweep::SubmitOptions submit;
};

// One point in a worker process (once per process): the config's own device, with run::run's
// defaults (a GPU: the library plan, fusion on, graph launch, as `sim --ir` runs it).
nlohmann::ordered_json simulate(const run::Workload& w, const std::string& hw, const std::vector<std::string>& overrides) {
  if (w.serving) return llm::serve_point(w.serving->model, w.serving->options, hw, overrides).sweep_metrics();
  return run::run(w, run::Hardware::load(hw, overrides)).sweep_metrics();
}

// Options that cannot mean anything are refused by name, not run as some default.
void check_pool_options(int jobs, double timeout_s, const char* what) {
  if (jobs < 0) throw InputError(what, "--jobs", "must be 0 (one worker per core) or more, got " + std::to_string(jobs));
  if (!(timeout_s >= 0) || !std::isfinite(timeout_s))
    throw InputError(what, "--timeout", "must be 0 (none) or a finite number of seconds, got " + std::to_string(timeout_s));
}

int run_sweep(const SweepCliOptions& o) {
  check_pool_options(o.jobs, o.timeout_s, "sweep");
  const bool from_flags = !o.irs.empty() || !o.zoos.empty() || !o.sets.empty();
  if (!o.file.empty() && from_flags)
    throw InputError("sweep", o.file, "give a sweep file or --ir/--zoo/--set, not both");
  std::unique_ptr<sweep::SweepSpec> spec;
  if (!o.file.empty()) {
    spec = std::make_unique<sweep::SweepSpec>(sweep::load_sweep_file(o.file));
  } else if (from_flags) {
    spec = std::make_unique<sweep::SweepSpec>(sweep::sweep_from_flags(o.irs, o.zoos, o.hw, o.sets, o.constraints));
  } else if (!o.resume) {
    throw InputError("sweep", "", "nothing to sweep: give a sweep file, or --ir and --set key=v1,v2 (see --help)");
  }
  sweep::SweepRunOptions r;
  r.out_dir = o.out;
  if (r.out_dir.empty()) {
    if (!spec) throw InputError("sweep", "--resume", "name the directory to resume with --out");
    r.out_dir = o.file.empty() ? "sweep_out" : "sweep_" + std::filesystem::path(o.file).stem().string();
  }
  r.jobs = o.jobs;
  r.shard = sweep::Shard::parse(o.shard);
  r.resume = o.resume || o.retry_failed;
  r.retry_failed = o.retry_failed;
  r.quiet = o.quiet;
  r.tty = ::isatty(STDERR_FILENO) != 0;
  r.timeout_s = o.timeout_s;
  return sweep::run_sweep(spec.get(), r, simulate, std::cerr);
}

}  // namespace

std::function<int()> add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepCliOptions>();
  auto* cmd = app.add_subcommand("sweep", "run a design-space sweep: every point in a forked worker (docs/sweeps.md)");
  cmd->add_option("file", o->file, "sweep file (YAML): workloads, hw, axes, constraints");
  cmd->add_option("--ir", o->irs, "workload: Frontend IR file (repeatable; with --set)");
  cmd->add_option("--zoo", o->zoos, "workload: zoo network model[:batch[:dtype]], e.g. resnet50:1 (repeatable)");
  cmd->add_option("--hw", o->hw, "base hardware description (with --set)")->capture_default_str();
  cmd->add_option("--set", o->sets, "axis: key=v1,v2,... or key=start:stop:step or key=start:stop:x2 (repeatable)");
  cmd->add_option("--constraint", o->constraints, "keep only points where this holds, e.g. 'npu.pe_array.rows <= 64'");
  cmd->add_option("-o,--out", o->out, "output directory (default sweep_<file stem>, or sweep_out)");
  cmd->add_option("-j,--jobs", o->jobs, "worker processes (default: number of cores)");
  cmd->add_option("--shard", o->shard, "run only slice i of N (0-based): i/N")->capture_default_str();
  cmd->add_flag("--resume", o->resume, "continue the sweep in --out after a kill: run only the missing points");
  cmd->add_flag("--retry-failed", o->retry_failed, "with --resume: run the points that failed again");
  cmd->add_option("--timeout", o->timeout_s, "seconds per point before it is killed and recorded failed (0: none)");
  cmd->add_flag("-q,--quiet", o->quiet, "no progress output");

  auto* merge = cmd->add_subcommand("merge", "join the output directories of shards (or of `sweep submit`), checking no point is missing or duplicated");
  merge->add_option("dirs", o->merge_dirs, "shard output directories, or the directory of `sim sweep submit`")->required();
  merge->add_option("-o,--out", o->merge_out, "merged output directory")->required();

  auto* rep = cmd->add_subcommand("report", "best points per objective and the Pareto front of a sweep");
  rep->add_option("dir", o->report_dir, "sweep output directory")->required();
  rep->add_option("--best", o->report.best, "objective to rank by: expression over result columns, max: to maximise (repeatable)");
  rep->add_option("--pareto", o->report.pareto, "Pareto objective (repeatable; default cycles, pe_count, l2_bytes)");
  rep->add_option("--top", o->report.top, "points shown per objective")->capture_default_str();

  auto* sub = cmd->add_subcommand("submit", "submit a sweep to a cluster: a Slurm job array, one shard per array task; "
                                            "again: only the unfinished shards (docs/sweeps.md#slurm)");
  sub->add_option("file", o->submit_file, "sweep file (YAML); not needed to submit a sweep in --out again");
  sub->add_option("-o,--out", o->submit.out_dir, "output directory: shard_<i>/ per task, sweep.sbatch, logs/")->required();
  sub->add_flag("--slurm", o->slurm, "submit with Slurm's sbatch (the scheduler there is)");
  sub->add_option("--array-size", o->submit.array_size, "array tasks = shards (default: min(points, 16))");
  sub->add_option("--partition", o->submit.partition, "Slurm partition");
  sub->add_option("--time", o->submit.time_limit, "time limit per task (Slurm syntax, e.g. 02:00:00)");
  sub->add_option("--cpus-per-task", o->submit.cpus_per_task, "CPUs per task = worker processes per shard")->capture_default_str();
  sub->add_option("--timeout", o->submit.timeout_s, "seconds per point before it is killed and recorded failed (0: none)");
  sub->add_option("--sbatch-arg", o->submit.sbatch_args, "pass this option to sbatch as it is, e.g. --sbatch-arg=--qos=long (repeatable)");
  sub->add_flag("--dry-run", o->submit.dry_run, "write the job script and shard directories, print the sbatch command, submit nothing");

  auto* status = cmd->add_subcommand("status", "per-shard progress of a sweep (finished points from the journals, Slurm's queue)");
  status->add_option("dir", o->status_dir, "output directory of `sim sweep submit` or of a sweep")->required();

  return [o, cmd, merge, rep, sub, status]() -> int {
    if (!cmd->parsed()) return -1;
    if (sub->parsed()) {
      if (!o->slurm) throw InputError("sweep submit", "", "name the scheduler: --slurm (the only one so far)");
      check_pool_options(0, o->submit.timeout_s, "sweep submit");
      std::unique_ptr<sweep::SweepSpec> spec;
      if (!o->submit_file.empty()) spec = std::make_unique<sweep::SweepSpec>(sweep::load_sweep_file(o->submit_file));
      return sweep::submit_sweep(spec.get(), o->submit, std::cout, std::cerr);
    }
    if (status->parsed()) return sweep::sweep_status(o->status_dir, std::cout) == 0 ? kOk : kCheckFailed;
    if (merge->parsed()) {
      const int rc = sweep::merge_sweeps(o->merge_dirs, o->merge_out, std::cerr);
      return rc == 0 ? kOk : kCheckFailed;
    }
    if (rep->parsed()) {
      std::vector<std::string> keys;
      std::string device;
      const auto rows = sweep::load_rows(o->report_dir, &keys, &device);
      sweep::ReportOptions ro = o->report;
      if (device == "gpu") {  // the NPU's default objectives name NPU columns
        if (rep->get_option("--best")->count() == 0) ro.best = {"time_ms", "max:tflops", "hbm_bytes"};
        if (rep->get_option("--pareto")->count() == 0) ro.pareto = {"cycles", "num_sms"};
      } else if (device == "llm") {
        if (rep->get_option("--best")->count() == 0) ro.best = {"ttft_ms", "tpot_ms", "max:output_tokens_per_s"};
        if (rep->get_option("--pareto")->count() == 0) ro.pareto = {"ttft_ms", "max:output_tokens_per_s"};
      } else if (device == "system") {
        if (rep->get_option("--best")->count() == 0) ro.best = {"time_ms", "comm_wait_us", "link_bytes"};
        if (rep->get_option("--pareto")->count() == 0) ro.pareto = {"time_ms", "devices"};
      }
      std::cout << sweep::sweep_report(rows, keys, ro);
      return kOk;
    }
    return run_sweep(*o) == 0 ? kOk : kCheckFailed;
  };
}

}  // namespace npusim::cli
