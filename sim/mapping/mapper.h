// Lowers an ir::Graph onto the NPU of a HwConfig: tiles every layer so its working set fits the
// buffers, chooses what stays in L2, and emits DMA / PE / VP / host commands with dependencies
// (double buffering and weight prefetch are expressed as dependencies, not overlap factors).
#pragma once
#include "sim/config/hw_config.h"
#include "sim/ir/graph.h"
#include "sim/mapping/mapper_params.h"
#include "sim/mapping/npu_params.h"
#include "sim/mapping/program.h"

namespace npusim::mapping {

// p: the run's params, built once (NpuParams::read); c names the hardware file in errors.
Program map_graph(const ir::Graph& g, const config::HwConfig& c, const NpuParams& p);
// Reads the params itself: for tests and callers that map without simulating.
Program map_graph(const ir::Graph& g, const config::HwConfig& c);

}  // namespace npusim::mapping
