// SystemC pieces the GPUs of one simulation share: the clock conversion, sync_gpu barriers,
// channel semaphores (signal/wait between ranks), completion records of packet writes, and the
// link fabric between GPUs. Waiting is event-driven: a thread wakes when what it waits for
// happens, never per cycle.
#pragma once
#include <systemc>

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/gpu/gpu_timing.h"

namespace npusim::models {

// Cycles of clock_mhz <-> SystemC time (resolution 1 ps).
struct GpuClock {
  double period_ps = 1000;
  double now() const { return sc_core::sc_time_stamp().to_double() / period_ps; }
  void wait_until(double cycle) const {
    const double d = cycle - now();
    if (d > 0) sc_core::wait(sc_core::sc_time(d * period_ps, sc_core::SC_PS));
  }
  void wait_cycles(double d) const {
    if (d > 0) sc_core::wait(sc_core::sc_time(d * period_ps, sc_core::SC_PS));
  }
};

// One emitted sync_gpu: every warp of every processor in its range arrives, then all leave
// barrier_cycles after the last arrival.
struct BarrierState {
  int expected = 0;
  int arrived = 0;
  bool released = false;
  double release = 0;
  int last_pg = -1;
  sc_core::sc_event event;

  void arrive(const GpuClock& clk, double barrier_cycles, int from_pg) {
    if (++arrived >= expected) {
      released = true;
      release = clk.now() + barrier_cycles;
      last_pg = from_pg;
      event.notify(sc_core::sc_time(barrier_cycles * clk.period_ps, sc_core::SC_PS));
      clk.wait_until(release);
      return;
    }
    while (!released) sc_core::wait(event);
    clk.wait_until(release);
  }
};

// Signals between ranks, per (source rank, destination rank, channel kind). A signal posted
// at t arrives at t + latency; each wait consumes one arrived signal, in posting order.
class Semaphores {
 public:
  void signal(int src, int dst, const std::string& chan, double arrival) {
    Sem& s = get(src, dst, chan);
    s.arrivals.push_back(arrival);
    s.posted.notify(sc_core::SC_ZERO_TIME);
  }
  void wait(int src, int dst, const std::string& chan, const GpuClock& clk) {
    Sem& s = get(src, dst, chan);
    while (s.consumed >= s.arrivals.size()) sc_core::wait(s.posted);
    clk.wait_until(s.arrivals[s.consumed++]);
  }

 private:
  struct Sem {
    std::vector<double> arrivals;
    size_t consumed = 0;
    sc_core::sc_event posted;
  };
  Sem& get(int src, int dst, const std::string& chan) {
    auto key = std::make_tuple(src, dst, chan);
    auto it = m_sems.find(key);
    if (it == m_sems.end()) it = m_sems.emplace(std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple()).first;
    return it->second;
  }
  std::map<std::tuple<int, int, std::string>, Sem> m_sems;
};

// When a tracked task's remote writes have landed (packet flags a reader spins on).
class Completions {
 public:
  void done(const std::tuple<int, int, int, int64_t>& key, double arrival) {
    Rec& r = get(key);
    r.done = true;
    r.arrival = arrival;
    r.event.notify(sc_core::SC_ZERO_TIME);
  }
  void wait(const std::tuple<int, int, int, int64_t>& key, const GpuClock& clk) {
    Rec& r = get(key);
    while (!r.done) sc_core::wait(r.event);
    clk.wait_until(r.arrival);
  }

 private:
  struct Rec {
    bool done = false;
    double arrival = 0;
    sc_core::sc_event event;
  };
  Rec& get(const std::tuple<int, int, int, int64_t>& key) {
    auto it = m_recs.find(key);
    if (it == m_recs.end()) it = m_recs.emplace(std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple()).first;
    return it->second;
  }
  std::map<std::tuple<int, int, int, int64_t>, Rec> m_recs;
};

// GPU-to-GPU links: each transfer occupies the source's egress, the destination's ingress and
// the pair's own link (NVSwitch: pair = port rate; a full mesh: one link per pair), and its
// data lands latency cycles after the slowest of them is done.
class LinkFabric {
 public:
  LinkFabric(int ranks, const GpuParams& p) : m_latency(p.link_latency_cycles) {
    for (int i = 0; i < ranks; ++i) {
      m_egress.emplace_back(p.link_bytes_per_cycle);
      m_ingress.emplace_back(p.link_bytes_per_cycle);
      m_pair.emplace_back();
      for (int j = 0; j < ranks; ++j) m_pair.back().emplace_back(p.link_peer_bytes_per_cycle);
    }
  }
  // Returns the cycle the data has landed at dst.
  double transfer(int src, int dst, double now, double bytes) {
    if (src < 0 || dst < 0 || src >= static_cast<int>(m_egress.size()) || dst >= static_cast<int>(m_egress.size()))
      return now + m_latency;
    const double done = std::max({m_egress[src].reserve(now, bytes), m_ingress[dst].reserve(now, bytes),
                                  m_pair[src][dst].reserve(now, bytes)});
    m_bytes_out[src] += bytes;
    return done + m_latency;
  }
  double latency() const { return m_latency; }
  double bytes_out(int rank) const {
    auto it = m_bytes_out.find(rank);
    return it == m_bytes_out.end() ? 0 : it->second;
  }

 private:
  double m_latency;
  std::deque<RateServer> m_egress, m_ingress;
  std::deque<std::deque<RateServer>> m_pair;
  std::map<int, double> m_bytes_out;
};

// Everything the ranks of one run share.
struct GpuSystem {
  GpuClock clock;
  Semaphores semaphores;
  Completions completions;
  LinkFabric links;
  std::map<std::pair<int, int>, double> proxy_done;  // (src, dst): when the last proxy put lands
  GpuSystem(int ranks, const GpuParams& p, double period_ps) : clock{period_ps}, links(ranks, p) {}
};

}  // namespace npusim::models
