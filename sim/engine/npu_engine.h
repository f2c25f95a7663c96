// Builds the SystemC top for an NPU program, runs it to completion and returns when each
// command ran. SystemC elaborates once per process: call simulate_npu at most once.
#pragma once
#include <vector>

#include "models/interconnect/noc.h"

#include "sim/mapping/npu_params.h"
#include "sim/mapping/program.h"

namespace npusim::engine {

// One core's units, as their models counted (multi-core chips: docs/multicore.md#reports).
struct CoreResult {
  int64_t pe_busy_cycles = 0, vp_busy_cycles = 0, dma_busy_cycles = 0;  // DMA: over its channels
  int64_t l2_bytes = 0, l2_busy_cycles = 0;
};

struct SimResult {
  std::vector<mapping::CommandTiming> timings;  // by command id
  int64_t end_cycle = 0;
  int64_t dram_bytes_read = 0, dram_bytes_written = 0, dram_busy_cycles = 0;
  int64_t l2_bytes = 0, l2_busy_cycles = 0;
  int64_t pe_busy_cycles = 0, vp_busy_cycles = 0, dma_busy_cycles = 0, host_busy_cycles = 0;
  int dma_channels = 1;  // per core
  std::vector<CoreResult> cores;               // one per core (the totals above sum them)
  std::vector<double> dram_channel_busy_cycles;  // each DRAM channel's bus
  std::vector<models::NocLinkStats> noc_links;  // cores > 1: every NoC link
  int64_t noc_transfers = 0, noc_wait_cycles = 0;
};

// p: the run's params, the same the program was mapped with.
SimResult simulate_npu(const mapping::Program& prog, const mapping::NpuParams& p);

}  // namespace npusim::engine
