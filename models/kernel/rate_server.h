// A resource served first come, first served at a fixed rate: the DRAM bus, the L2 port, HBM,
// an SM's math pipes, a link. Work arriving at `now` starts when the previous work is done.
// SystemC-free: units call it from their threads and wait until the cycle it returns, so
// concurrent users share the rate and contention comes out of the simulation.
#pragma once
#include <algorithm>
#include <cstdint>

namespace npusim::models {

class RateServer {
 public:
  explicit RateServer(double per_cycle = 1) : m_rate(per_cycle) {}
  // `amount` units of work at the server's rate; returns the (fractional) cycle it ends.
  double reserve(double now, double amount) {
    if (amount <= 0) return now;
    const double start = std::max(now, m_free);
    const double t = amount / m_rate;
    m_free = start + t;
    m_busy += t;
    m_total += amount;
    return m_free;
  }
  // Work whose service time is already known in whole cycles; returns the cycle it ends.
  int64_t book(int64_t now, int64_t service_cycles) {
    const int64_t start = std::max(now, static_cast<int64_t>(m_free));
    m_free = static_cast<double>(start + service_cycles);
    m_busy += static_cast<double>(service_cycles);
    return start + service_cycles;
  }
  double busy_cycles() const { return m_busy; }
  double free_at() const { return m_free; }  // when the work booked so far ends
  double total() const { return m_total; }

 private:
  double m_rate;
  double m_free = 0, m_busy = 0, m_total = 0;
};

}  // namespace npusim::models
