// Timing formulas of the simple DRAM model (docs/timing.md#dram).
#include "models/memory/dram_timing.h"

#include <algorithm>
#include <cmath>

namespace npusim::models {

DramParams DramParams::read(const config::HwConfig& c, int64_t burst_bytes, double segment_overhead_cycles) {
  DramParams p;
  p.bytes_per_cycle = c.dram_bytes_per_cycle();
  p.latency_cycles = static_cast<int64_t>(std::llround(c.get_double("memory.dram.latency_ns") * c.clock_ghz()));
  p.burst_bytes = burst_bytes;
  p.segment_overhead_cycles = segment_overhead_cycles;
  p.channels = c.get_int("memory.dram.channels");
  p.capacity_bytes = c.get_double("memory.dram.capacity_gib") * (1 << 30);
  return p;
}

std::vector<int64_t> dram_channel_service_cycles(const DramParams& p, int64_t bytes, int64_t segments) {
  if (bytes <= 0) return {};
  const int64_t bursts = (bytes + p.burst_bytes - 1) / p.burst_bytes;
  const int64_t used = std::max<int64_t>(1, std::min(bursts, p.channels));
  const double channel_rate = p.bytes_per_cycle / static_cast<double>(p.channels);
  std::vector<int64_t> r;
  for (int64_t c = 0; c < used; ++c) {
    const int64_t share = bursts / used + (c < bursts % used ? 1 : 0);
    const double data = static_cast<double>(share * p.burst_bytes) / channel_rate;
    r.push_back(static_cast<int64_t>(std::ceil(data + static_cast<double>(segments) * p.segment_overhead_cycles / used)));
  }
  return r;
}

int64_t dram_service_cycles(const DramParams& p, int64_t bytes, int64_t segments) {
  const auto shares = dram_channel_service_cycles(p, bytes, segments);
  return shares.empty() ? 0 : shares.front();
}

}  // namespace npusim::models
