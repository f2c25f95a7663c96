// Simple DRAM model (memory.dram.model: simple): one shared data bus served first come, first
// served. Timing in models/memory/dram_timing.h; contract there. Contention between DMA
// channels emerges from the shared bus (a RateServer, models/kernel).
#pragma once
#include <systemc>

#include "models/memory/dram_timing.h"
#include "models/kernel/rate_server.h"
#include "models/kernel/scoreboard.h"

namespace npusim::models {

struct DramStats {
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t busy_cycles = 0;
  int64_t transfers = 0;
};

class Dram : public sc_core::sc_module {
 public:
  Dram(sc_core::sc_module_name name, const DramParams& p, Scoreboard& sb)
      : sc_module(name), m_params(p), m_sb(sb) {}
  // Called from a DMA thread: blocks until the transfer's data has arrived.
  void transfer(int64_t bytes, int64_t segments, bool write) {
    const int64_t now = m_sb.now_cycles();
    const int64_t service = dram_service_cycles(m_params, bytes, segments);
    const int64_t done = m_bus.book(now, service);
    m_stats.busy_cycles += service;
    m_stats.transfers++;
    (write ? m_stats.bytes_written : m_stats.bytes_read) += bytes;
    sc_core::wait(m_sb.cycles(done - now + m_params.latency_cycles));
  }
  const DramStats& stats() const { return m_stats; }

 private:
  DramParams m_params;
  Scoreboard& m_sb;
  RateServer m_bus;
  DramStats m_stats;
};

}  // namespace npusim::models
