// `sim --ir X --hw Y`: read, validate, map, simulate, report.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>

#include "frontends/tvm_mlf/tvm_mlf_reader.h"
#include "sim/cli/commands.h"
#include "sim/config/hw_config.h"
#include "sim/config/system_config.h"
#include "sim/ir/error.h"
#include "sim/report/gpu_library_report.h"
#include "sim/report/report.h"
#include "sim/report/system_report.h"
#include "sim/run/run.h"
#include "sim/run/workload_loader.h"

namespace npusim::cli {

void write_output(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "", "cannot open for writing");
  f << text;
  if (!f) throw InputError(path, "", "write failed");
}

void write_outputs(const run::RunRecord& rec, const RunOptions& o) {
  if (!o.quiet) std::cout << rec.table();
  if (!o.report_json.empty()) write_output(o.report_json, rec.json_text());
  if (!o.csv.empty()) write_output(o.csv, rec.csv_text());
  if (!o.trace.empty()) write_output(o.trace, rec.trace_text());
}

run::RunOptions run_options(const RunOptions& o) {
  run::RunOptions r;
  r.library = library_options(o);
  r.ark_plan = o.gpu_plan == "ark";
  r.max_program_bytes = o.max_memory_mib << 20;
  return r;
}

int run_npu(const RunOptions& o) {
  // A multi-device pipeline runs on a system (docs/system.md); everything else on one device.
  run::WorkloadSpec spec;
  spec.path = o.ir, spec.format = o.format, spec.module = o.module;
  run::LoadedWorkload loaded = run::load_workload(spec);
  if (loaded.system) {
    const ir::System& sys = *loaded.system;
    if (!config::is_system_config(o.hw))
      throw InputError(o.hw, "", "a pipeline runs on a system: give --hw a YAML with a `system:` section (docs/system.md), "
                                 "e.g. configs/system_2x_npu.yaml");
    const run::Hardware hw = run::Hardware::load(o.hw, o.sets);
    run::Workload w;
    w.system = &sys;
    write_outputs(run::run(w, hw, run_options(o)), o);
    return kOk;
  }
  if (config::is_system_config(o.hw))
    throw InputError(o.hw, "system", "a system config runs multi-device pipelines (--ir PIPELINE.json); give one device's "
                                     "config for '" + o.ir + "' (e.g. the config named in system.devices)");
  // Validate everything before simulating.
  const ir::Graph& graph = *loaded.graph;
  if (graph.format == "tvm_mlf" && !o.quiet)  // the executor's own plan: entries sharing a storage id share memory
    std::cout << "memory footprint (TVM storage_id plan): " << frontends::tvm_memory_footprint_bytes(o.ir, o.module)
              << " B\n";
  const run::Hardware hw = run::Hardware::load(o.hw, o.sets);
  // An ARK model runs as itself (ARK's default plan), exactly as `sim --model` runs it.
  if (hw.device == "gpu" && graph.format == "ark_model") return run_ark_model(o.ir, o);
  // The GPU plan's options change nothing on an NPU: refuse them rather than ignore them.
  if (hw.device != "gpu")
    for (const auto& [given, option] : {std::make_pair(o.gpu_plan != "library", "--gpu-plan"),
                                        std::make_pair(o.launch != "graph", "--launch"),
                                        std::make_pair(o.fusion != "on", "--fusion"), std::make_pair(o.tf32, "--tf32"),
                                        std::make_pair(!o.row_kernels.empty(), "--row-kernels")})
      if (given)
        throw InputError("sim", option, "applies to GPU configs (device: gpu) only; " + o.hw + " describes an NPU");
  run::Workload w;
  w.graph = &graph;
  // More workloads at once on disjoint cores (docs/multicore.md#multi-tenancy).
  if (!o.tenant_cores.empty() && o.tenants.empty())
    throw InputError("sim", "--tenant-cores", "gives the cores of workloads run at once: add them with --tenant FILE");
  std::vector<ir::Graph> tenants;
  tenants.reserve(o.tenants.size());
  for (const auto& t : o.tenants) {
    run::WorkloadSpec ts;
    ts.path = t;
    tenants.push_back(std::move(*run::load_workload(ts, run::WorkloadKind::Device).graph));
  }
  for (const auto& t : tenants) w.tenants.push_back(&t);
  w.tenant_cores = o.tenant_cores;
  write_outputs(run::run(w, hw, run_options(o)), o);
  return kOk;
}

int run_report_fields() {
  std::cout << report::layer_fields_markdown() << "\n"
            << "Run-level fields: `totals` of the JSON report and the result columns of sweeps\n"
            << "(`sim/report/report.cpp: run_fields`):\n\n"
            << report::run_fields_markdown() << "\n"
            << "### GPU library-plan reports\n\n"
            << "`sim --ir X --hw GPU` (docs/gpu_library.md#reports): `totals` and the result columns of GPU sweeps\n"
            << "(`sim/report/gpu_library_report.cpp: library_fields`):\n\n"
            << report::fields_markdown(report::library_fields(), true) << "\n"
            << "Each kernel, a row of `layers` and of `--csv` (`library_kernel_fields`):\n\n"
            << report::fields_markdown(report::library_kernel_fields()) << "\n"
            << "### System reports\n\n"
            << "`sim --ir PIPELINE --hw SYSTEM` (docs/system.md#report): `totals` and the result columns of system\n"
            << "sweeps (`sim/report/system_report.cpp: system_fields`):\n\n"
            << report::system_fields_markdown() << "\n"
            << "Each supertask, a row of `supertasks` and of `--csv` (`supertask_fields`):\n\n"
            << report::supertask_fields_markdown();
  return kOk;
}

int run_config(bool markdown, const std::string& hw, const std::vector<std::string>& sets) {
  if (markdown) {
    std::cout << config::schema_markdown() << "\nSystem keys (the `system:` section of a system file, docs/system.md#config; also "
              << "`--set` and sweep axes on a system config; the reader checks ranges, choices and combinations):\n\n"
              << config::system_keys_markdown();
    return kOk;
  }
  // A system: the system keys its file (or --set) gives, then each distinct device config
  // resolved, as every point of a system sweep would see them.
  if (!hw.empty() && config::is_system_config(hw)) {
    const config::SystemConfig sys = config::SystemConfig::load(hw, sets);
    for (const auto& [k, v] : sys.values) std::cout << k << " = " << v << "\n";
    std::map<std::string, std::vector<std::string>> by_config;  // config as written -> device names
    for (const auto& d : sys.devices) by_config[d.source].push_back(d.name);
    for (const auto& [source, names] : by_config) {
      const auto& dev = *std::find_if(sys.devices.begin(), sys.devices.end(), [&](const auto& d) { return d.source == source; });
      std::cout << "\n# " << source << ": " << names.front() << (names.size() > 1 ? " ... " + names.back() : "") << " ("
                << names.size() << (names.size() > 1 ? " devices)\n" : " device)\n");
      for (const auto& [k, v] : dev.hw.resolved()) std::cout << k << " = " << v << "\n";
    }
    return kOk;
  }
  const config::HwConfig cfg = hw.empty() ? config::HwConfig::defaults(sets) : config::HwConfig::load(hw, sets);
  for (const auto& [k, v] : cfg.resolved()) std::cout << k << " = " << v << "\n";
  return kOk;
}

}  // namespace npusim::cli
