// `sim`: command-line entry point. Exit codes: 0 ok, 1 check failed, 2 bad input or usage,
// 3 internal error (docs/exit_codes.md).
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "sim/cli/commands.h"
#include "sim/ir/error.h"

using namespace npusim;

static int sim_main(int argc, char** argv) {
  CLI::App app{"npusim: performance simulator for neural-network accelerators"};
  app.require_subcommand(0, 1);
  cli::RunOptions run;
  app.add_option("--ir", run.ir, "Frontend IR (.json) to simulate on the NPU");
  app.add_option("--hw", run.hw, "hardware description (YAML)")->capture_default_str();
  app.add_option("--set", run.sets, "override a hardware parameter: path.to.key=value (repeatable)");
  app.add_option("--report", run.report_json, "write the per-layer report as JSON");
  app.add_option("--csv", run.csv, "write the per-layer report as CSV");
  app.add_option("--trace", run.trace, "write a Chrome/Perfetto trace (JSON)");
  app.add_flag("-q,--quiet", run.quiet, "do not print the table");

  cli::ZooCliOptions zoo;
  auto* zoo_cmd = app.add_subcommand("zoo", "write a Frontend IR for a known network");
  zoo_cmd->add_option("model", zoo.model, "resnet18|resnet34|resnet50|resnet101|vgg16|mobilenetv2")->required();
  zoo_cmd->add_option("--batch", zoo.batch, "batch size")->capture_default_str();
  zoo_cmd->add_option("--dtype", zoo.dtype, "int8 or fp16")->capture_default_str();
  zoo_cmd->add_option("--input", zoo.input, "input size HxW (default 224x224)");
  zoo_cmd->add_option("-o,--output", zoo.out, "output file (default: stdout)");

  cli::CompareTraceOptions cmp;
  auto* cmp_cmd = app.add_subcommand("compare-trace", "per-layer measured (ZeBu trace) vs simulated cycles");
  cmp_cmd->add_option("--trace", cmp.trace, "ZeBu per-instruction trace (*_sim.txt)")->required();
  cmp_cmd->add_option("--ir", cmp.ir, "Frontend IR of the traced run")->required();
  cmp_cmd->add_option("--hw", cmp.hw, "hardware description")->capture_default_str();
  cmp_cmd->add_option("--set", cmp.sets, "override a hardware parameter (repeatable)");
  cmp_cmd->add_option("--csv", cmp.csv, "write the comparison as CSV");

  bool markdown = false;
  std::string cfg_hw;
  std::vector<std::string> cfg_sets;
  auto* cfg_cmd = app.add_subcommand("config", "list every hardware parameter with its resolved value");
  cfg_cmd->add_option("--hw", cfg_hw, "hardware description to resolve (default: schema defaults)");
  cfg_cmd->add_option("--set", cfg_sets, "override a hardware parameter (repeatable)");
  cfg_cmd->add_flag("--markdown", markdown, "print the schema as a Markdown table (docs/config.md)");
  auto run_sweep_cmd = cli::add_sweep_command(app);  // sim sweep [merge|report] (run_sweep.cpp)
  auto run_gpu_cmd = cli::add_gpu_command(app, run);  // --model/--plan, gpu-calibrate (run_gpu.cpp)
  cli::CheckCliOptions check;  // --check and friends, sim regress (run_check.cpp)
  cli::add_check_options(app, check);
  auto run_regress_cmd = cli::add_regress_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return cli::kBadInput;
  }
  try {
    if (zoo_cmd->parsed()) return cli::run_zoo(zoo);
    if (cmp_cmd->parsed()) return cli::run_compare_trace(cmp);
    if (cfg_cmd->parsed()) return cli::run_config(markdown, cfg_hw, cfg_sets);
    if (const int rc = run_sweep_cmd(); rc >= 0) return rc;
    if (const int rc = run_gpu_cmd(); rc >= 0) return rc;
    if (const int rc = run_regress_cmd(); rc >= 0) return rc;
    if (run.ir.empty()) {
      std::cerr << "sim: nothing to do: give --ir <Frontend IR> or --plan/--model <ARK file> (see --help)\n";
      return cli::kBadInput;
    }
    if (check.wanted()) return cli::run_check(run, check);
    return cli::run_npu(run);
  } catch (const InputError& e) {
    std::cerr << "sim: error: " << e.what() << "\n";
    return cli::kBadInput;
  } catch (const InternalError& e) {
    std::cerr << "sim: " << e.what() << "\n";
    return cli::kInternal;
  } catch (const std::exception& e) {
    std::cerr << "sim: internal error: " << e.what() << "\n";
    return cli::kInternal;
  }
}

// libsystemc.so also defines main() (which prints the SystemC banner and calls sc_main). The
// executable's own main() takes precedence, so `sim` output stays clean; sc_main exists only
// because the library refers to it.
int main(int argc, char** argv) { return sim_main(argc, argv); }
extern "C" int sc_main(int argc, char** argv) { return sim_main(argc, argv); }
