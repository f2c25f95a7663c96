// Each device's record built from what the mapper and the engine produced: the NPU run report
// (per-layer rows charged as a ZeBu trace is measured, docs/timing.md#per-layer-cycles-and-bound,
// and every command's span for the trace) and the GPU library plan's report. The writers
// (sim/report) read only these records. SystemC-free.
#pragma once

#include <string>
#include <vector>

#include "models/gpu/gpu_timing.h"
#include "sim/config/hw_config.h"
#include "sim/mapping/gpu_library.h"
#include "sim/mapping/npu_params.h"
#include "sim/mapping/program.h"
#include "sim/report/gpu_library_report.h"
#include "sim/report/report.h"

namespace npusim::run {

// The run-level hardware facts of a report (name, clock, PE count, L2 size, resolved config...).
// cfg gives the name, source and resolved values; p the run's params (built once per run).
void describe_hardware(report::RunReport& r, const config::HwConfig& cfg, const mapping::NpuParams& p);
void describe_hardware(report::RunReport& r, const config::HwConfig& cfg);  // reads the params itself
// noc_byte_hops: multi-core, the bytes every NoC link carried, summed (each a byte over one hop).
report::RunReport build_report(const std::string& workload, const mapping::Program& prog,
                               const std::vector<mapping::CommandTiming>& timings, const config::HwConfig& cfg,
                               const mapping::NpuParams& p, double noc_byte_hops = 0);

// chosen[i]: the candidate of kernel i that runs; sims[i]: what it measured.
report::LibraryReport build_library_report(const std::string& workload, const mapping::LibraryPlan& plan,
                                           const std::vector<size_t>& chosen, const std::vector<mapping::KernelSim>& sims,
                                           const mapping::Timeline& timeline, const config::HwConfig& cfg,
                                           const models::GpuParams& params, int distinct_kernels);

}  // namespace npusim::run
