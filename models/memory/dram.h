// DRAM model: channel buses of bandwidth / channels, each served first come, first
// served. Timing in models/memory/dram_timing.h; contract there. Contention between DMA
// channels emerges from the shared bus (a RateServer, models/kernel).
#pragma once
#include <systemc>

#include <algorithm>
#include <vector>

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
      : sc_module(name), m_params(p), m_sb(sb), m_channels(static_cast<size_t>(std::max<int64_t>(1, p.channels))) {}
  // Called from a DMA thread: blocks until the transfer's data has arrived; returns the bytes
  // served.
  int64_t transfer(int64_t bytes, int64_t segments, bool write) {
    const int64_t now = m_sb.now_cycles();
    // Its bursts go to the channels that are free first (ties: lowest index); it is done when
    // the last of them is.
    const std::vector<int64_t> shares = dram_channel_service_cycles(m_params, bytes, segments);
    std::vector<size_t> order(m_channels.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return m_channels[a].free_at() < m_channels[b].free_at(); });
    int64_t done = now;
    for (size_t i = 0; i < shares.size(); ++i) done = std::max(done, m_channels[order[i]].book(now, shares[i]));
    m_stats.busy_cycles += shares.empty() ? 0 : shares.front();
    m_stats.transfers++;
    (write ? m_stats.bytes_written : m_stats.bytes_read) += bytes;
    sc_core::wait(m_sb.cycles(done - now + m_params.latency_cycles));
    return bytes;
  }
  const DramStats& stats() const { return m_stats; }
  std::vector<double> channel_busy_cycles() const {  // each channel's bus, for the balance between them
    std::vector<double> r;
    for (const auto& c : m_channels) r.push_back(c.busy_cycles());
    return r;
  }

 private:
  DramParams m_params;
  Scoreboard& m_sb;
  std::vector<RateServer> m_channels;  // one bus per channel
  DramStats m_stats;
};

}  // namespace npusim::models
