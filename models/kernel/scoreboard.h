// Completion tracking shared by all units of one simulation: a command may start once every
// command it depends on has finished. Also records each command's start/end time. The NPU's
// units track their commands with it, the GPU model its packet writes (models/gpu/gpu_sync.h).
#pragma once
#include <systemc>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "models/kernel/clock.h"

namespace npusim::models {

// What the units measured for one job (command): when it ran and what the shared resources
// served it. Reports are written from these records (sim/report), not from the mapper's plan.
struct JobRecord {
  int64_t start_cycle = -1;
  int64_t end_cycle = -1;
  int channel = 0;               // queue/track within the unit
  int64_t dram_bytes = 0;        // bytes the DRAM model served for it
  int64_t l2_bytes = 0;          // bytes it moved through the L2 port
  int64_t port_wait_cycles = 0;  // cycles beyond its own latency spent waiting for the L2 port
  int64_t dram_wait_cycles = 0;  // cycles beyond its channel's own rate spent waiting for DRAM
  int64_t noc_bytes = 0;         // multi-core chips: bytes it moved over the NoC
  int64_t noc_wait_cycles = 0;   // cycles beyond its other limits spent on the NoC
};

class Scoreboard {
 public:
  Scoreboard(size_t n, sc_core::sc_time period) : Scoreboard(n, Clock(period)) {}
  // With a clock of fractional period (Clock::from_ps: the GPU's 546.45 ps).
  Scoreboard(size_t n, const Clock& clock) : m_done(n, false), m_ready(n, 0), m_records(n), m_clock(clock) {
    m_events.reserve(n);
    for (size_t i = 0; i < n; ++i) m_events.emplace_back(std::make_unique<sc_core::sc_event>());
  }
  // Blocks the calling SC_THREAD until all deps are done.
  void wait_all(const std::vector<int>& deps) {
    for (int d : deps)
      while (!m_done[d]) sc_core::wait(*m_events[d]);
  }
  void start(int id, int channel) {
    m_records[id].start_cycle = now_cycles();
    m_records[id].channel = channel;
  }
  void finish(int id) {
    m_records[id].end_cycle = now_cycles();
    m_ready[id] = m_clock.now();
    m_done[id] = true;
    m_events[id]->notify(sc_core::SC_ZERO_TIME);
  }
  // A job whose result becomes visible later than now, at ready_cycle (fractional cycles): a
  // remote write that lands after the link latency. Waiters resume then.
  void finish_at(int id, double ready_cycle) {
    m_records[id].end_cycle = static_cast<int64_t>(ready_cycle + 0.5);
    m_ready[id] = ready_cycle;
    m_done[id] = true;
    m_events[id]->notify(sc_core::SC_ZERO_TIME);
  }
  // Blocks the calling SC_THREAD until job `id` is done and its result visible.
  void wait_ready(int id) {
    while (!m_done[id]) sc_core::wait(*m_events[id]);
    m_clock.wait_until(m_ready[id]);
  }
  int64_t now_cycles() const { return m_clock.now_cycles(); }
  sc_core::sc_time cycles(int64_t n) const { return m_clock.cycles(n); }
  const Clock& clock() const { return m_clock; }
  const std::vector<JobRecord>& records() const { return m_records; }
  JobRecord& record(int id) { return m_records[static_cast<size_t>(id)]; }
  bool all_done() const {
    for (bool b : m_done)
      if (!b) return false;
    return true;
  }

 private:
  std::vector<bool> m_done;
  std::vector<double> m_ready;  // when each finished job's result is visible (fractional cycles)
  std::vector<std::unique_ptr<sc_core::sc_event>> m_events;
  std::vector<JobRecord> m_records;
  Clock m_clock;
};

// A unit's work item: the command id, what it must wait for, and the unit-specific payload.
template <typename Payload>
struct Job {
  int id = 0;
  std::vector<int> deps;
  Payload payload;
};

}  // namespace npusim::models
