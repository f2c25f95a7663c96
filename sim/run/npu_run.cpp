// One graph on an NPU (sim/run/npu_run.h).
#include "sim/run/npu_run.h"

#include "sim/mapping/mapper.h"

namespace npusim::run {

namespace {

// Each unit's busy cycles as its own model counted them, over the NPU's run (DMA: over all its
// channels); L2 and DRAM with the bytes they moved.
std::vector<report::UnitUse> unit_uses(const engine::SimResult& s) {
  const double end = static_cast<double>(std::max<int64_t>(1, s.end_cycle));
  auto use = [&](const char* name, int64_t busy, double capacity, int64_t bytes) {
    return report::UnitUse{name, busy, static_cast<double>(busy) / (end * capacity), bytes};
  };
  return {use("pe_array", s.pe_busy_cycles, 1, -1),
          use("vector", s.vp_busy_cycles, 1, -1),
          use("dma", s.dma_busy_cycles, std::max(1, s.dma_channels), -1),
          use("l2", s.l2_busy_cycles, 1, s.l2_bytes),
          use("dram", s.dram_busy_cycles, 1, s.dram_bytes_read + s.dram_bytes_written)};
}

}  // namespace

NpuRun simulate_npu_workload(const ir::Graph& g, const config::HwConfig& hw, const mapping::NpuParams& params) {
  NpuRun r;
  r.prog = mapping::map_graph(g, hw, params);
  r.sim = engine::simulate_npu(r.prog, params);
  r.report = report::build_report(g.name, r.prog, r.sim.timings, hw, params);
  r.report.units = unit_uses(r.sim);
  return r;
}

}  // namespace npusim::run
