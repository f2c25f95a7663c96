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
#include "models/interconnect/link_fabric.h"
#include "models/kernel/clock.h"

namespace npusim::models {

// Cycles of clock_mhz <-> SystemC time: the shared clock conversion (models/kernel/clock.h).
using GpuClock = Clock;

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
      event.notify(sc_core::sc_time(barrier_cycles * clk.period_ps(), sc_core::SC_PS));
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

// Everything the ranks of one run share.
struct GpuSystem {
  GpuClock clock;
  Semaphores semaphores;
  Completions completions;
  LinkFabric links;
  std::map<std::pair<int, int>, double> proxy_done;  // (src, dst): when the last proxy put lands
  GpuSystem(int ranks, const GpuParams& p, double period_ps)
      : clock(Clock::from_ps(period_ps)),
        links(ranks, p.link_bytes_per_cycle, p.link_peer_bytes_per_cycle, p.link_latency_cycles) {}
};

}  // namespace npusim::models
