// `sim --ir X --check [--check-only] [--npy-dir D] [--chain] [--dump D]` and `sim regress`
// (docs/golden.md). The check itself is sim/check (SystemC-free); it runs before the timing
// simulation in this process, and `sim regress` gives each set's simulation a forked child.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

#include "sim/check/check.h"
#include "sim/check/regress.h"
#include "sim/cli/commands.h"
#include "sim/config/hw_config.h"
#include "sim/ir/error.h"
#include "sim/report/report.h"
#include "sim/run/run.h"
#include "sim/run/workload_loader.h"

namespace npusim::cli {

void add_check_options(CLI::App& app, CheckCliOptions& o) {
  app.add_flag("--check", o.check, "check every layer's output against the golden .npy files of its file_list (exit 1 on a mismatch)");
  app.add_flag("--check-only", o.check_only, "like --check, without the timing simulation");
  app.add_option("--npy-dir", o.npy_dir, "folder of the golden .npy files (default: the IR's folder)");
  app.add_flag("--chain", o.chain, "with --check: feed each layer the outputs computed for its producers, not the golden inputs");
  app.add_option("--dump", o.dump, "with --check: write the computed outputs as .npy files (file_list names) into this folder");
}

int run_check(const RunOptions& run, const CheckCliOptions& o) {
  run::WorkloadSpec spec;
  spec.path = run.ir, spec.format = run.format, spec.module = run.module;
  const ir::Graph graph = std::move(*run::load_workload(spec, run::WorkloadKind::Device).graph);
  check::CheckOptions co;
  co.npy_dir = o.npy_dir.empty() ? std::filesystem::path(run.ir).parent_path().string() : o.npy_dir;
  co.chain = o.chain;
  co.dump_dir = o.dump;
  if (!co.dump_dir.empty()) {
    // A folder to write into: an existing file there, or a folder that cannot be made, is the
    // user's to fix (exit 2), not an internal error.
    std::error_code ec;
    if (std::filesystem::exists(co.dump_dir, ec) && !std::filesystem::is_directory(co.dump_dir, ec))
      throw InputError("--dump", co.dump_dir, "exists and is not a folder");
    std::filesystem::create_directories(co.dump_dir, ec);
    if (ec) throw InputError("--dump", co.dump_dir, "cannot create the folder: " + ec.message());
  }
  const check::CheckReport r = check::check_graph(graph, co);
  std::cout << "functional check of " << graph.name << " against " << (co.npy_dir.empty() ? "." : co.npy_dir)
            << (co.chain ? " (chained: each layer reads its producers' computed outputs)" : " (golden inputs per layer)")
            << "\n"
            << format_check_table(r) << std::flush;
  int rc = kOk;
  if (!o.check_only) {
    std::cout << "\n";
    rc = run_npu(run);
  }
  return r.ok() ? rc : kCheckFailed;
}

namespace {
struct RegressCliOptions {
  std::string root;
  check::RegressOptions opt;
};

// One golden set's report in a child process (once per process), as `sim --ir` writes it.
std::string simulate_report(const std::string& ir_path, const std::string& hw) {
  run::WorkloadSpec spec;
  spec.path = ir_path;
  const ir::Graph g = std::move(*run::load_workload(spec, run::WorkloadKind::Device).graph);
  run::Workload w;
  w.graph = &g;
  return run::run(w, run::Hardware::load(hw)).json_text();
}
}  // namespace

std::function<int()> add_regress_command(CLI::App& app) {
  auto o = std::make_shared<RegressCliOptions>();
  auto* cmd = app.add_subcommand("regress", "re-check the golden sets: numerics and cycles against expected_report.json (docs/golden.md)");
  cmd->add_option("dir", o->root, "a golden set (folder with meta.json) or a folder of sets, e.g. golden/")->required();
  cmd->add_flag("--update", o->opt.update, "rewrite every expected_report.json with the current simulation");
  cmd->add_option("--hw", o->opt.hw, "hardware description for every set (default: meta.json's hw)");
  cmd->add_option("-j,--jobs", o->opt.jobs, "simulations at a time")->capture_default_str();
  return [o, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return check::run_regress(o->root, o->opt, simulate_report, std::cout) == 0 ? kOk : kCheckFailed;
  };
}

}  // namespace npusim::cli
