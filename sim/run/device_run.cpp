// One graph on one device (sim/run/device_run.h).
#include "sim/run/device_run.h"

#include <cstdio>
#include <sstream>

#include "sim/engine/gpu_engine.h"
#include "sim/engine/npu_engine.h"
#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_lower.h"
#include "sim/mapping/mapper.h"
#include "sim/report/report.h"
#include "sim/run/npu_run.h"

namespace npusim::run {

std::string DeviceRun::to_text() const {
  char b[128];
  std::snprintf(b, sizeof b, "%.6f %.1f %.9g", ns, memory_bytes, memory_rate);
  std::string s = b;
  for (const auto& [k, v] : by_class_ns) {
    std::snprintf(b, sizeof b, " %s=%.6f", k.c_str(), v);
    s += b;
  }
  return s;
}

DeviceRun DeviceRun::from_text(const std::string& text) {
  DeviceRun r;
  std::istringstream in(text);
  in >> r.ns >> r.memory_bytes >> r.memory_rate;
  for (std::string kv; in >> kv;) {
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) r.by_class_ns[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
  }
  return r;
}

DeviceRun simulate_on_device(const ir::Graph& g, const config::HwConfig& hw, const DeviceRunOptions& o) {
  DeviceRun r;
  if (hw.get_string("device") == "gpu") {  // the library plan, or ARK's DefaultPlanner
    const models::GpuParams params = models::GpuParams::read(hw);
    mapping::require_gpu_dtypes(g, params, hw.source());
    r.memory_rate = params.hbm_bytes_per_cycle * params.cycles_per_ns();
    if (o.ark_plan) {
      const mapping::ArkLowering low = mapping::lower_workload(g);
      const mapping::GpuSimResult sim = engine::simulate_gpu({mapping::default_plan(low.model, params.num_sms, params.arch)}, params);
      r.ns = sim.end_cycles / sim.clock_mhz * 1000.0;
      return r;
    }
    const engine::LibraryRun run = engine::simulate_library(mapping::library_plan(g, params, o.library), params);
    r.ns = run.timeline.total_us * 1000.0;
    for (size_t i = 0; i < run.sims.size(); ++i) {
      r.memory_bytes += run.sims[i].hbm_bytes;
      r.by_class_ns[mapping::kernel_class_name(run.plan.kernels[i].cls)] += run.sims[i].span_us * 1000.0;
    }
    return r;
  }
  const mapping::NpuParams params = mapping::NpuParams::read(hw);
  const report::RunReport rep = simulate_npu_workload(g, hw, params).report;
  r.ns = (rep.npu_cycles + rep.host_cycles) / params.clock_mhz * 1000.0;
  r.memory_bytes = static_cast<double>(rep.dram_read_bytes + rep.dram_write_bytes);
  r.memory_rate = params.dram.bytes_per_cycle * params.clock_mhz / 1000.0;
  return r;
}

}  // namespace npusim::run
