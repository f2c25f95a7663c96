// One SystemC run for a whole multi-device system (docs/system.md): every device runs its
// compute supertasks in the pipeline's order, each as soon as its inputs are ready and the
// device is free; every collective plays its send/receive steps over the shared network
// (models/interconnect), so concurrent collectives contend for links. Compute times come in
// precomputed (each device's own model, run per distinct supertask: sim/cli/run_system.cpp).
#pragma once
#include <string>
#include <vector>

#include "models/interconnect/collectives.h"
#include "models/interconnect/network.h"
#include "models/interconnect/system_stats.h"
#include "sim/config/system_config.h"
#include "sim/ir/system.h"

namespace npusim::engine {

// What the run measured (models/interconnect/system_stats.h), under the engine's names.
using models::DeviceTiming;
using models::SuperTaskTiming;
using models::SystemSimResult;

// How a collective of `kind` over n members of `size` bytes runs on this system: NCCL's tuner
// (system.collectives.model: nccl, with any forced algorithm or protocol) or the plain plan.
// InputError naming the system file when a forced algorithm cannot run this collective.
models::CollectivePlan collective_plan(const config::SystemConfig& cfg, const std::string& kind, int n, double size);
// "ring/simple" (a library plan) or "ring" (plain).
std::string plan_name(const models::CollectivePlan& p);

// slot_device[i]: the system device (or host lane: devices.size() + lane) of pipeline device
// slot i; compute_ns[t]: the compute time of supertask t (0 for others).
// compute_bytes[t]: its DRAM / HBM bytes, memory_rate[d]: device d's memory bytes per ns (both
// optional): a compute supertask then shares its device's memory with the collectives' transfers
// (docs/system.md#contention).
// slot_on_cores[i]: slot i runs on some cores of a multi-core chip (docs/multicore.md#pipeline-slots):
// the slots of one device then run side by side, drawing on its memory together.
SystemSimResult simulate_system(const ir::System& sys, const config::SystemConfig& cfg,
                                const std::vector<int>& slot_device, int host_lanes,
                                const std::vector<double>& compute_ns, const std::vector<double>& compute_bytes = {},
                                const std::vector<double>& memory_rate = {}, const std::vector<bool>& slot_on_cores = {});

}  // namespace npusim::engine
