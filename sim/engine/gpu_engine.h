// Builds the SystemC model of one GPU per plan (all ranks of a run in one simulation, linked
// by the fabric of gpu.link.*), runs it to completion and returns what each GPU did.
// SystemC elaborates once per process: call simulate_gpu at most once.
#pragma once
#include <vector>

#include "models/gpu/gpu_timing.h"
#include "sim/ir/gpu_program.h"
#include "sim/mapping/gpu_stats.h"

namespace npusim::engine {

// plans: one per rank 0..WorldSize-1, in rank order (the caller has validated them against
// the device and paired their sends and receives). A plan whose waits are never satisfied
// (a Recv with no Send, ...) is an InputError naming what the stuck warps wait for.
// params: the run's GpuParams, read once (GpuParams::read).
mapping::GpuSimResult simulate_gpu(const std::vector<gpu::Program>& plans, const models::GpuParams& params);

}  // namespace npusim::engine
