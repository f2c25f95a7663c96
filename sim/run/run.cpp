// One run on any device (sim/run/run.h).
#include "sim/run/run.h"

#include "frontends/ark/ark_reader.h"
#include "sim/engine/gpu_engine.h"
#include "sim/ir/error.h"
#include "sim/ir/gpu_program.h"
#include "sim/ir/graph.h"
#include "sim/ir/system.h"
#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_lower.h"
#include "sim/report/gpu_library_report.h"
#include "sim/report/gpu_report.h"
#include "sim/report/report.h"
#include "sim/report/system_report.h"
#include "sim/run/npu_run.h"
#include "sim/run/record_build.h"
#include "sim/run/system_run.h"

namespace npusim::run {

Hardware Hardware::load(const std::string& spec, const std::vector<std::string>& overrides) {
  Hardware h;
  if (config::is_system_config(spec)) {
    h.device = "system";
    h.system = config::SystemConfig::load(spec, overrides);
    return h;
  }
  return of(config::HwConfig::load(spec, overrides));
}

Hardware Hardware::of(const config::HwConfig& cfg) {
  Hardware h;
  h.device = cfg.get_string("device");
  h.hw = cfg;
  return h;
}

Hardware Hardware::of(const config::SystemConfig& cfg) {
  Hardware h;
  h.device = "system";
  h.system = cfg;
  return h;
}

// Exactly one part is set, by device (and, on a GPU, by plan).
struct RunRecord::Impl {
  std::unique_ptr<NpuRun> npu;
  std::unique_ptr<report::LibraryReport> library;
  // ARK plans: the plans that ran (owned when lowered from a graph), what they measured, the report.
  std::vector<gpu::Program> own_plans;
  const std::vector<gpu::Program>* plans = nullptr;
  std::unique_ptr<mapping::GpuSimResult> gpu_sim;
  std::unique_ptr<report::GpuReport> gpu;
  std::unique_ptr<SystemRun> system;
  std::unique_ptr<report::SystemReport> system_report;
};

RunRecord::RunRecord() : m_impl(std::make_unique<Impl>()) {}
RunRecord::~RunRecord() = default;
RunRecord::RunRecord(RunRecord&&) noexcept = default;
RunRecord& RunRecord::operator=(RunRecord&&) noexcept = default;

const NpuRun* RunRecord::npu() const { return m_impl->npu.get(); }
const report::LibraryReport* RunRecord::gpu_library() const { return m_impl->library.get(); }
const mapping::GpuSimResult* RunRecord::gpu_sim() const { return m_impl->gpu_sim.get(); }
const SystemRun* RunRecord::system() const { return m_impl->system.get(); }

std::string RunRecord::table() const {
  const Impl& i = *m_impl;
  if (i.npu) return report::format_table(i.npu->report);
  if (i.library) return report::format_library_table(*i.library);
  if (i.gpu) return report::format_gpu_table(*i.gpu);
  return report::format_system_table(*i.system_report);
}

std::string RunRecord::json_text() const {
  const Impl& i = *m_impl;
  if (i.npu) return report::to_json(i.npu->report).dump(2) + "\n";
  if (i.library) return report::library_to_json(*i.library).dump(2) + "\n";
  if (i.gpu) return report::gpu_to_json(*i.gpu).dump(2) + "\n";
  return report::system_to_json(*i.system_report).dump(2) + "\n";
}

std::string RunRecord::csv_text() const {
  const Impl& i = *m_impl;
  if (i.npu) return report::to_csv(i.npu->report);
  if (i.library) return report::library_to_csv(*i.library);
  if (i.gpu) return report::gpu_to_csv(*i.gpu);
  return report::system_to_csv(*i.system_report);
}

std::string RunRecord::trace_text() const {
  const Impl& i = *m_impl;
  if (i.npu) return report::chrome_trace(i.npu->report).dump() + "\n";
  if (i.library) return report::library_chrome_trace(*i.library).dump() + "\n";
  if (i.gpu) return report::gpu_chrome_trace(*i.gpu, *i.plans, *i.gpu_sim).dump() + "\n";
  return report::system_chrome_trace(*i.system_report).dump() + "\n";
}

nlohmann::ordered_json RunRecord::sweep_metrics() const {
  const Impl& i = *m_impl;
  if (i.npu) return report::sweep_metrics(i.npu->report);
  if (i.library) return report::library_sweep_metrics(*i.library);
  if (i.system_report) return report::system_sweep_metrics(*i.system_report);
  throw InputError("sweep", "--gpu-plan", "a sweep runs a GPU workload as library kernels, not ARK plans");
}

namespace {

void run_npu(RunRecord::Impl& out, const ir::Graph& g, const config::HwConfig& cfg, const RunOptions& o) {
  mapping::NpuParams params = mapping::NpuParams::read(cfg);
  params.max_program_bytes = o.max_program_bytes;
  out.npu = std::make_unique<NpuRun>(simulate_npu_workload(g, cfg, params));
}

void run_plans(RunRecord::Impl& out, const std::vector<gpu::Program>& plans, const config::HwConfig& cfg,
               const models::GpuParams& params, const std::string& name,
               const std::map<std::string, std::string>* ir_ops = nullptr) {
  out.plans = &plans;
  out.gpu_sim = std::make_unique<mapping::GpuSimResult>(engine::simulate_gpu(plans, params));
  out.gpu = std::make_unique<report::GpuReport>(report::build_gpu_report(name, plans, *out.gpu_sim, cfg, params, ir_ops));
}

void run_gpu_graph(RunRecord::Impl& out, const ir::Graph& g, const config::HwConfig& cfg, const RunOptions& o) {
  const models::GpuParams params = models::GpuParams::read(cfg);
  mapping::require_gpu_dtypes(g, params, cfg.source());
  if (o.ark_plan) {  // lowered to ARK ops (docs/gpu_ark.md), planned like `sim --model`
    const mapping::ArkLowering low = mapping::lower_workload(g);
    out.own_plans = {mapping::default_plan(low.model, params.num_sms, params.arch)};
    // A workload too big for the device's shared memory or warps is the user's to know (exit 2).
    frontends::validate_against_device(out.own_plans[0], params.num_sms, params.max_warps_per_block,
                                       params.smem_per_block_bytes);
    run_plans(out, out.own_plans, cfg, params, g.source + " (lowered to ARK ops, default plan)", &low.ir_op);
    return;
  }
  const engine::LibraryRun r = engine::simulate_library(mapping::library_plan(g, params, o.library), params);
  out.library = std::make_unique<report::LibraryReport>(
      run::build_library_report(g.source, r.plan, r.chosen, r.sims, r.timeline, cfg, params, r.distinct));
  out.library->batch = g.batch();
  for (const ir::Layer& l : g.layers) out.library->workload_macs += static_cast<double>(l.macs());
}

void run_system(RunRecord::Impl& out, const ir::System& sys, const config::SystemConfig& cfg, const RunOptions& o) {
  DeviceRunOptions ro;
  ro.library = o.library;
  ro.ark_plan = o.ark_plan;
  out.system = std::make_unique<SystemRun>(simulate_pipeline(sys, cfg, ro));
  const SystemRun& run = *out.system;
  auto rep = std::make_unique<report::SystemReport>();
  rep->workload = sys.name.empty() ? sys.source : sys.name;
  rep->hw_name = cfg.name;
  rep->hw_source = cfg.source;
  rep->sys = &sys;
  rep->sim = &run.sim;
  rep->estimated = run.estimated;
  rep->energy_uj = run.energy_uj;
  rep->link_energy_uj = run.link_energy_uj;
  for (const ir::SuperTask& t : sys.supertasks)  // the system's devices named per supertask
    rep->lane_of_task.push_back(
        t.device_index < 0 ? "" : run.sim.devices[static_cast<size_t>(run.slot_device[static_cast<size_t>(t.device_index)])].name);
  out.system_report = std::move(rep);
}

}  // namespace

RunRecord run(const Workload& w, const Hardware& hw, const RunOptions& o) {
  if (!w.graph + !w.system + !w.plans != 2) throw InternalError("run: give exactly one of a graph, a pipeline or plans");
  RunRecord rec;
  rec.m_device = hw.device;
  RunRecord::Impl& out = *rec.m_impl;
  if (hw.device == "system") {
    if (!w.system)
      throw InputError(hw.system->source, "system",
                       "a system config runs multi-device pipelines (docs/system.md); give one device's config for a "
                       "single-device workload (e.g. the config named in system.devices)");
    run_system(out, *w.system, *hw.system, o);
    return rec;
  }
  const config::HwConfig& cfg = *hw.hw;
  if (!w.tenants.empty() && (hw.device != "npu" || !w.graph))
    throw InputError(cfg.source(), "device", "several workloads at once (--tenant) run on a multi-core NPU (npu.cores > 1)");
  if (w.system)
    throw InputError(cfg.source(), "", "a pipeline runs on a system: give a YAML with a `system:` section "
                                       "(docs/system.md), e.g. configs/system_2x_npu.yaml");
  if (hw.device == "gpu") {
    if (w.plans) {
      const models::GpuParams params = models::GpuParams::read(cfg);
      run_plans(out, *w.plans, cfg, params, w.plans_name);
    } else {
      run_gpu_graph(out, *w.graph, cfg, o);
    }
    return rec;
  }
  if (w.plans) throw InputError(cfg.source(), "device", "is " + hw.device + ": ARK plans run on a GPU config (device: gpu)");
  if (!w.tenants.empty()) {  // several workloads on disjoint cores (docs/multicore.md#multi-tenancy)
    mapping::NpuParams params = mapping::NpuParams::read(cfg);
    params.max_program_bytes = o.max_program_bytes;
    if (params.cores < 2)
      throw InputError(cfg.source(), "npu.cores", "several workloads at once (--tenant) need a chip of several cores (npu.cores = " +
                                                      std::to_string(params.cores) + ")");
    std::vector<const ir::Graph*> graphs{w.graph};
    graphs.insert(graphs.end(), w.tenants.begin(), w.tenants.end());
    out.npu = std::make_unique<NpuRun>(simulate_npu_tenants(graphs, cfg, params, w.tenant_cores));
    return rec;
  }
  run_npu(out, *w.graph, cfg, o);
  return rec;
}

}  // namespace npusim::run
