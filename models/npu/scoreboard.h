// Completion tracking shared by all units of one simulation: a command may start once every
// command it depends on has finished. Also records each command's start/end time.
#pragma once
#include <systemc>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace npusim::models {

struct JobRecord {
  int64_t start_cycle = -1;
  int64_t end_cycle = -1;
  int channel = 0;  // queue/track within the unit
};

class Scoreboard {
 public:
  Scoreboard(size_t n, sc_core::sc_time period) : m_done(n, false), m_records(n), m_period(period) {
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
    m_done[id] = true;
    m_events[id]->notify(sc_core::SC_ZERO_TIME);
  }
  int64_t now_cycles() const {
    return static_cast<int64_t>(sc_core::sc_time_stamp() / m_period + 0.5);
  }
  sc_core::sc_time cycles(int64_t n) const { return m_period * static_cast<double>(n); }
  const std::vector<JobRecord>& records() const { return m_records; }
  bool all_done() const {
    for (bool b : m_done)
      if (!b) return false;
    return true;
  }

 private:
  std::vector<bool> m_done;
  std::vector<std::unique_ptr<sc_core::sc_event>> m_events;
  std::vector<JobRecord> m_records;
  sc_core::sc_time m_period;
};

// A resource served first come, first served at a fixed rate (the DRAM bus, the L2 port):
// booking `service` cycles starts no earlier than now or the end of the previous booking.
class BandwidthServer {
 public:
  // Returns the cycle at which the booking ends.
  int64_t book(int64_t now, int64_t service) {
    const int64_t start = std::max(now, m_free_cycle);
    m_free_cycle = start + service;
    m_busy_cycles += service;
    return m_free_cycle;
  }
  int64_t busy_cycles() const { return m_busy_cycles; }

 private:
  int64_t m_free_cycle = 0;
  int64_t m_busy_cycles = 0;
};

// A unit's work item: the command id, what it must wait for, and the unit-specific payload.
template <typename Payload>
struct Job {
  int id = 0;
  std::vector<int> deps;
  Payload payload;
};

}  // namespace npusim::models
