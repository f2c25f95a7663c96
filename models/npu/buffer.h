// The global (L2) buffer's port: DMA fills, PE array reads/writes and VP reads/writes share
// npu.l2.bytes_per_cycle, served first come first served (docs/timing.md#l2-buffer-port). Capacity is a
// mapping constraint (sim/mapping), not a runtime one.
#pragma once
#include <systemc>

#include <algorithm>
#include <cmath>

#include "models/kernel/rate_server.h"
#include "models/kernel/scoreboard.h"

namespace npusim::models {

struct BufferStats {
  int64_t bytes = 0;
  int64_t busy_cycles = 0;
};

class L2Buffer : public sc_core::sc_module {
 public:
  L2Buffer(sc_core::sc_module_name name, double bytes_per_cycle, Scoreboard& sb)
      : sc_module(name), m_bytes_per_cycle(bytes_per_cycle), m_sb(sb) {}
  // Books `bytes` of port time starting no earlier than now; returns the cycle it ends.
  int64_t reserve(int64_t bytes) {
    const auto service = static_cast<int64_t>(std::ceil(bytes / m_bytes_per_cycle));
    m_stats.bytes += bytes;
    m_stats.busy_cycles += service;
    return m_port.book(m_sb.now_cycles(), service);
  }
  const BufferStats& stats() const { return m_stats; }

 private:
  double m_bytes_per_cycle;
  Scoreboard& m_sb;
  RateServer m_port;
  BufferStats m_stats;
};

}  // namespace npusim::models
