// DRAM timing: pure formulas, no SystemC. See docs/timing.md#dram.
// Contract of every DRAM model (models/memory/dram.h): a transfer of B bytes split into S
// contiguous segments occupies the shared data bus for service_cycles(B, S) and its data arrives
// latency_cycles after its service ends. Transfers are served in arrival order (FCFS), so
// concurrent DMA channels contend for bandwidth.
#pragma once
#include <cstdint>

#include "sim/config/hw_config.h"

namespace npusim::models {

struct DramParams {
  double bytes_per_cycle = 32;        // bandwidth_gbps / clock_ghz
  int64_t latency_cycles = 100;
  int64_t burst_bytes = 64;           // transfers round up to whole bursts
  double segment_overhead_cycles = 0; // per contiguous segment (row/page switch, descriptor)
  int64_t channels = 1;

  static DramParams read(const config::HwConfig& c);
};

// Bus occupancy of one transfer.
int64_t dram_service_cycles(const DramParams& p, int64_t bytes, int64_t segments);

}  // namespace npusim::models
