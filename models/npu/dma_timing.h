// DMA timing: pure formulas, no SystemC. See docs/timing.md#dma.
// A transfer = setup (descriptor) + data movement, where data moves at the slower of the DMA
// channel's own rate and the DRAM's service (arbitrated in models/memory/dram.h).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/config/hw_config.h"

namespace npusim::models {

struct DmaParams {
  int64_t channels = 2;
  int64_t burst_bytes = 64;             // the DRAM model serves whole bursts (DramParams gets it)
  int64_t setup_cycles = 21;
  double segment_overhead_cycles = 0;   // per contiguous segment, charged by the DRAM model too
  double bytes_per_cycle = 64;          // one channel's peak rate

  // The npu.dma.* keys: the one place their defaults and ranges are written, each bound to its
  // field above (config::bind).
  static const std::vector<config::ParamDecl>& params();
  static DmaParams read(const config::HwConfig& c) {  // reads only the keys of params()
    DmaParams p;
    config::read_bound(p, c, params());
    return p;
  }
};

// In the header: sim/config assembles the schema from it without linking the units.
inline const std::vector<config::ParamDecl>& DmaParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      // Each DMA channel is a SystemC thread with its own stack: 2^20 of them exhaust the memory
      // maps of a process (a crash, found by tests/malformed extreme_npu_dma_channels_max).
      {"npu.dma.channels", T::Int, "2", "channels", "independent DMA engines (queues)", {}, {1, 1024, false, false}, config::bind(&DmaParams::channels)},
      {"npu.dma.burst_bytes", T::Int, "64", "B", "DRAM burst; transfers are rounded up to whole bursts", {}, r::count, config::bind(&DmaParams::burst_bytes)},
      {"npu.dma.setup_cycles", T::Int, "21", "cycles", "per transfer: descriptor (ld*_cfg) before data moves", {}, r::delay, config::bind(&DmaParams::setup_cycles)},
      {"npu.dma.segment_overhead_cycles", T::Double, "0", "cycles",
       "per contiguous segment (e.g. one weight row per output channel)", {}, r::delay, config::bind(&DmaParams::segment_overhead_cycles)},
      {"npu.dma.bytes_per_cycle", T::Double, "64", "B/cycle", "peak rate of one DMA channel", {}, r::rate, config::bind(&DmaParams::bytes_per_cycle)},
  };
  return decls;
}

// L2ToWeightBuffer: a matmul operand produced on chip (attention's K and V) moved from L2 into
// the weight buffer: the L2 port and the channel, no DRAM.
enum class DmaKind { LoadWeights, LoadActivations, StoreActivations, L2ToWeightBuffer };
const char* dma_kind_name(DmaKind k);

struct DmaTransfer {
  DmaKind kind = DmaKind::LoadWeights;
  int64_t bytes = 0;
  int64_t segments = 1;  // contiguous pieces (e.g. one per output channel of a weight block)
};

// Cycles the channel itself needs to move the bytes (without DRAM contention).
int64_t dma_channel_cycles(const DmaParams& p, const DmaTransfer& t);

}  // namespace npusim::models
