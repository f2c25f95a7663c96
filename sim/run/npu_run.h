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

struct NpuRun {
  mapping::Program prog;
  engine::SimResult sim;
  report::RunReport report;  // with the units' own statistics (RunReport::units)
};

// params: the run's (read once from hw; --max-memory sets max_program_bytes).
NpuRun simulate_npu_workload(const ir::Graph& g, const config::HwConfig& hw, const mapping::NpuParams& params);

}  // namespace npusim::run
