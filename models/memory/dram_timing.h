// DRAM timing: pure formulas, no SystemC. See docs/timing.md#dram.
// Contract of every DRAM model (models/memory/dram.h): a transfer of B bytes split into S
// contiguous segments occupies the shared data bus for service_cycles(B, S) and its data arrives
// latency_cycles after its service ends. Transfers are served in arrival order (FCFS), so
// concurrent DMA channels contend for bandwidth.
#pragma once
#include <cstdint>
#include <vector>

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

// A transfer's bursts interleave over min(bursts, channels) channels, each serving
// bytes_per_cycle / channels: the service cycles on each channel it uses, largest first.
std::vector<int64_t> dram_channel_service_cycles(const DramParams& p, int64_t bytes, int64_t segments);
// Occupancy of one transfer when its channels are free: the largest channel share. With one
// channel, or a transfer of at least `channels` bursts, this is the whole-bus time.
int64_t dram_service_cycles(const DramParams& p, int64_t bytes, int64_t segments);

}  // namespace npusim::models
