// DMA timing: pure formulas, no SystemC. See docs/timing.md#dma.
// A transfer = setup (descriptor) + data movement, where data moves at the slower of the DMA
// channel's own rate and the DRAM's service (arbitrated in models/memory/dram.h).
#pragma once
#include <cstdint>

#include "sim/config/hw_config.h"

namespace npusim::models {

struct DmaParams {
  int64_t channels = 2;
  int64_t setup_cycles = 21;
  double bytes_per_cycle = 64;  // one channel's peak rate

  static DmaParams read(const config::HwConfig& c);
};

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
