// Builds the SystemC model of one GPU per plan (all ranks of a run in one simulation, linked
// by the fabric of gpu.link.*), runs it to completion and returns what each GPU did.
// SystemC elaborates once per process: call simulate_gpu at most once.
#pragma once
#include <string>
#include <vector>

#include "models/gpu/gpu_timing.h"
#include "sim/ir/gpu_program.h"
#include "sim/mapping/gpu_library.h"
#include "sim/mapping/gpu_stats.h"

namespace npusim::engine {

// plans: one per rank 0..WorldSize-1, in rank order (the caller has validated them against
// the device and paired their sends and receives). A plan whose waits are never satisfied
// (a Recv with no Send, ...) is an InputError naming what the stuck warps wait for.
// params: the run's GpuParams, read once (GpuParams::read).
mapping::GpuSimResult simulate_gpu(const std::vector<gpu::Program>& plans, const models::GpuParams& params);

// Single-kernel plans (sim/mapping/gpu_library.h), each simulated once on one GPU: chained with a
// barrier between kernels, each with its own L2 pass (it finds the L2 cold, as a kernel measured
// alone does). Per plan: the time from its first task to its last, as gpu-calibrate's time of
// the same plan less its launch; its HBM bytes; the term that decided most of its tasks' time.
std::vector<mapping::KernelSim> simulate_kernels(const std::vector<const gpu::Program*>& kernels, const models::GpuParams& params);

// A library plan run (docs/gpu_library.md): each distinct kernel (by signature) with
// every candidate simulated once (simulate_kernels, one SystemC run), the fastest candidate
// kept, the kernels strung together by mapping::launch_timeline in the plan's launch mode.
struct LibraryRun {
  mapping::LibraryPlan plan;
  std::vector<size_t> chosen;               // per kernel: its candidate that runs
  std::vector<mapping::KernelSim> sims;     // per kernel: what that candidate measured
  mapping::Timeline timeline;
  int distinct = 0;                         // distinct kernels simulated
};
LibraryRun simulate_library(mapping::LibraryPlan plan, const models::GpuParams& params);

}  // namespace npusim::engine
