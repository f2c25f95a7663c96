// `sim --ir PIPELINE --hw SYSTEM`: a multi-device pipeline (docs/system.md), simulated by
// sim/run/system_run.h and reported.
#include <iostream>

#include "sim/cli/commands.h"
#include "sim/config/system_config.h"
#include "sim/ir/error.h"
#include "sim/report/system_report.h"
#include "sim/run/system_run.h"

namespace npusim::cli {

namespace {

// The report of one run: the system's devices named per supertask.
report::SystemReport system_report(const ir::System& sys, const config::SystemConfig& cfg, const run::SystemRun& run) {
  report::SystemReport rep;
  rep.workload = sys.name.empty() ? sys.source : sys.name;
  rep.hw_name = cfg.name;
  rep.hw_source = cfg.source;
  rep.sys = &sys;
  rep.sim = &run.sim;
  rep.estimated = run.estimated;
  for (const ir::SuperTask& t : sys.supertasks)
    rep.lane_of_task.push_back(t.device_index < 0 ? ""
                                                  : run.sim.devices[static_cast<size_t>(run.slot_device[static_cast<size_t>(t.device_index)])].name);
  return rep;
}

}  // namespace

nlohmann::ordered_json simulate_system_point(const ir::System& sys, const std::string& hw, const std::vector<std::string>& overrides) {
  const config::SystemConfig cfg = config::SystemConfig::load(hw, overrides);
  run::DeviceRunOptions ro;
  ro.library = library_options({});  // as `sim --ir` runs it by default
  const run::SystemRun run = run::simulate_pipeline(sys, cfg, ro);
  return report::system_sweep_metrics(system_report(sys, cfg, run));
}

int run_system(const ir::System& sys, const RunOptions& o) {
  if (!config::is_system_config(o.hw))
    throw InputError(o.hw, "", "a pipeline runs on a system: give --hw a YAML with a `system:` section (docs/system.md), "
                               "e.g. configs/system_2x_npu.yaml");
  const config::SystemConfig cfg = config::SystemConfig::load(o.hw, o.sets);
  run::DeviceRunOptions ro;
  ro.library = library_options(o);
  ro.ark_plan = o.gpu_plan == "ark";
  const run::SystemRun run = run::simulate_pipeline(sys, cfg, ro);
  const report::SystemReport rep = system_report(sys, cfg, run);
  if (!o.quiet) std::cout << report::format_system_table(rep);
  if (!o.report_json.empty()) write_output(o.report_json, report::system_to_json(rep).dump(2) + "\n");
  if (!o.csv.empty()) write_output(o.csv, report::system_to_csv(rep));
  if (!o.trace.empty()) write_output(o.trace, report::system_chrome_trace(rep).dump() + "\n");
  return kOk;
}

}  // namespace npusim::cli
