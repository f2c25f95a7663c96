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

// Defaults: the declared ones at the default 1000 MHz clock.
struct DramParams {
  double bytes_per_cycle = 32;        // bandwidth_gbps / clock_ghz
  int64_t latency_cycles = 100;
  int64_t burst_bytes = 64;           // transfers round up to whole bursts
  double segment_overhead_cycles = 0; // per contiguous segment (row/page switch, descriptor)
  int64_t channels = 2;
  double capacity_bytes = 16.0 * (1 << 30);  // memory.dram.capacity_gib

  // The memory.dram.* keys: the one place their defaults and ranges are written.
  static const std::vector<config::ParamDecl>& params();
  // Reads the keys of params() (and clock_mhz). Bursts and segments are how the device's DMA
  // issues transfers (npu.dma.burst_bytes, npu.dma.segment_overhead_cycles): the caller
  // passes them, so this model includes no device.
  static DramParams read(const config::HwConfig& c, int64_t burst_bytes, double segment_overhead_cycles);
};

// In the header: sim/config assembles the schema from it without linking the units.
inline const std::vector<config::ParamDecl>& DramParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"memory.dram.bandwidth_gbps", T::Double, "32", "GB/s", "sustained bandwidth (1 GB = 1e9 B)", {}, r::rate},
      {"memory.dram.latency_ns", T::Double, "100", "ns", "first-byte latency of a transfer", {}, r::delay},
      {"memory.dram.channels", T::Int, "2", "channels", "channels; a transfer is interleaved over all of them", {}, r::count},
      {"memory.dram.capacity_gib", T::Double, "16", "GiB", "device memory: weights, activations and the KV cache of `sim llm` must fit (docs/llm.md)",
       {}, r::rate},
  };
  return decls;
}

// A transfer's bursts interleave over min(bursts, channels) channels, each serving
// bytes_per_cycle / channels: the service cycles on each channel it uses, largest first.
std::vector<int64_t> dram_channel_service_cycles(const DramParams& p, int64_t bytes, int64_t segments);
// Occupancy of one transfer when its channels are free: the largest channel share. With one
// channel, or a transfer of at least `channels` bursts, this is the whole-bus time.
int64_t dram_service_cycles(const DramParams& p, int64_t bytes, int64_t segments);

}  // namespace npusim::models
