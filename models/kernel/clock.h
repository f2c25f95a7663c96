// Cycles of the configured clock <-> SystemC time. One conversion for every unit of every
// device (NPU units count whole cycles; GPU SMs and links fractional ones).
#pragma once
#include <systemc>

#include <cstdint>

namespace npusim::models {

class Clock {
 public:
  explicit Clock(sc_core::sc_time period) : m_period(period), m_period_ps(period.to_seconds() * 1e12) {}
  // A period in (fractional) picoseconds, kept exact for fractional-cycle waits: 1830 MHz is
  // 546.45 ps, below SystemC's 1 ps resolution.
  static Clock from_ps(double period_ps) {
    Clock c(sc_core::sc_time(period_ps, sc_core::SC_PS));
    c.m_period_ps = period_ps;
    return c;
  }

  // Whole cycles elapsed (rounded), and a span of whole cycles.
  int64_t now_cycles() const { return static_cast<int64_t>(sc_core::sc_time_stamp() / m_period + 0.5); }
  sc_core::sc_time cycles(int64_t n) const { return m_period * static_cast<double>(n); }
  // Fractional cycles, for models that share rates in fractions of a cycle.
  double now() const { return sc_core::sc_time_stamp().to_double() / m_period_ps; }
  void wait_cycles(double d) const {
    if (d > 0) sc_core::wait(sc_core::sc_time(d * m_period_ps, sc_core::SC_PS));
  }
  void wait_until(double cycle) const { wait_cycles(cycle - now()); }
  double period_ps() const { return m_period_ps; }
  sc_core::sc_time period() const { return m_period; }

 private:
  sc_core::sc_time m_period;
  double m_period_ps;
};

}  // namespace npusim::models
