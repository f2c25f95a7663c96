// Timing formulas of a DMA channel (docs/timing.md#dma).
#include "models/npu/dma_timing.h"

#include <cmath>

namespace npusim::models {

const char* dma_kind_name(DmaKind k) {
  switch (k) {
    case DmaKind::LoadWeights: return "load_weights";
    case DmaKind::LoadActivations: return "load_act";
    case DmaKind::StoreActivations: return "store_act";
    case DmaKind::L2ToWeightBuffer: return "l2_to_weights";
  }
  return "?";
}

int64_t dma_channel_cycles(const DmaParams& p, const DmaTransfer& t) {
  return static_cast<int64_t>(std::ceil(t.bytes / p.bytes_per_cycle));
}

}  // namespace npusim::models
