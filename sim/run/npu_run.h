// One workload graph on an NPU config, mapped, simulated and reported: the only place that runs
// map_graph -> simulate_npu -> build_report (the CLI, sweeps, regress, compare-trace and the
// system's NPU devices call it). SystemC elaborates once per process: one call per process.
#pragma once
#include "sim/config/hw_config.h"
#include "sim/engine/npu_engine.h"
#include "sim/ir/graph.h"
#include "sim/mapping/npu_params.h"
#include "sim/mapping/program.h"
#include "sim/report/report.h"

namespace npusim::run {

// One workload of a multi-tenant run: its cores and its layers in the merged program.
struct TenantSlot {
  std::string workload;
  int first_core = 0, cores = 0;
  int first_layer = 0, end_layer = 0;  // [first, end) of NpuRun::prog.layers
};

struct NpuRun {
  std::vector<TenantSlot> tenants;  // multi-tenant runs only
  mapping::Program prog;
  engine::SimResult sim;
  report::RunReport report;  // with the units' own statistics (RunReport::units)
};

// params: the run's (read once from hw; --max-memory sets max_program_bytes).
NpuRun simulate_npu_workload(const ir::Graph& g, const config::HwConfig& hw, const mapping::NpuParams& params);

// Some of a multi-core chip's cores on their own (a pipeline slot, a tenant): the chip's config
// with npu.cores = cores (a mesh no wider than them).
config::HwConfig sub_chip(const config::HwConfig& hw, int64_t cores);

// Several graphs at once on disjoint cores of one multi-core chip (docs/multicore.md#multi-tenancy):
// graph i is mapped on cores[i] cores of its own (the chip's config with npu.cores = cores[i]),
// after the cores of the graphs before it; they share the NoC and DRAM. Its layers are named
// "t<i>.<layer>". cores empty: the chip's cores divided equally. InputError naming `--tenant-cores`
// when the cores do not fit the chip.
NpuRun simulate_npu_tenants(const std::vector<const ir::Graph*>& graphs, const config::HwConfig& hw,
                            const mapping::NpuParams& params, std::vector<int> cores);

}  // namespace npusim::run
