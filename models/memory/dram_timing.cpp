// Timing formulas of the simple DRAM model (docs/timing.md#dram).
#include "models/memory/dram_timing.h"

#include <cmath>

namespace npusim::models {

DramParams DramParams::read(const config::HwConfig& c) {
  DramParams p;
  p.bytes_per_cycle = c.dram_bytes_per_cycle();
  p.latency_cycles = static_cast<int64_t>(std::llround(c.get_double("memory.dram.latency_ns") * c.clock_ghz()));
  p.burst_bytes = c.get_int("npu.dma.burst_bytes");
  p.segment_overhead_cycles = c.get_double("npu.dma.segment_overhead_cycles");
  p.channels = c.get_int("memory.dram.channels");
  return p;
}

int64_t dram_service_cycles(const DramParams& p, int64_t bytes, int64_t segments) {
  if (bytes <= 0) return 0;
  const int64_t bursts = (bytes + p.burst_bytes - 1) / p.burst_bytes;
  const double data = bursts * p.burst_bytes / p.bytes_per_cycle;
  return static_cast<int64_t>(std::ceil(data + segments * p.segment_overhead_cycles));
}

}  // namespace npusim::models
