// SystemC pieces the GPUs of one simulation share: the clock conversion, sync_gpu barriers,
// channel semaphores (signal/wait between ranks), the scoreboard of packet writes
// (models/kernel/scoreboard.h), and the links between GPUs (models/interconnect/network.h). Waiting is event-driven: a thread wakes when what it waits for
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
#include "models/interconnect/network.h"
#include "models/gpu/sm_program.h"
#include "models/kernel/clock.h"
#include "models/kernel/scoreboard.h"

namespace npusim::models {

// One emitted sync_gpu: every warp of every processor in its range arrives, then all leave
// barrier_cycles after the last arrival.
struct BarrierState {
  int expected = 0;
  int arrived = 0;
  bool released = false;
  double release = 0;
  int last_pg = -1;
  sc_core::sc_event event;

  void arrive(const Clock& clk, double barrier_cycles, int from_pg) {
    if (!arrive_only(clk, barrier_cycles, from_pg))
      while (!released) sc_core::wait(event);
    clk.wait_until(release);
  }
  // The arrival alone (for an SC_METHOD): true when it was the last, which releases the barrier.
  // Waiting is the caller's: for `event`, then until `release`.
  bool arrive_only(const Clock& clk, double barrier_cycles, int from_pg) {
    if (++arrived < expected) return false;
    released = true;
    release = clk.now() + barrier_cycles;
    last_pg = from_pg;
    event.notify(sc_core::sc_time(barrier_cycles * clk.period_ps(), sc_core::SC_PS));
    return true;
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
  void wait(int src, int dst, const std::string& chan, const Clock& clk) {
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

inline NetworkParams link_params(const GpuParams& p) {
  NetworkParams n;
  n.topology = Topology::Switch;
  n.bytes_per_ns = p.link_bytes_per_cycle;  // the GPU model's time unit is its cycle
  n.pair_bytes_per_ns = p.link_peer_bytes_per_cycle;
  n.latency_ns = p.link_latency_cycles;
  return n;
}

// Everything the ranks of one run share.
struct GpuSystem {
  Clock clock;  // cycles of clock_mhz <-> SystemC time
  Semaphores semaphores;
  // Packet writes that readers on other ranks spin on: one scoreboard job per writer task
  // (packet_tasks, from PacketDeps::packet_source_tasks), done when its remote writes land.
  Scoreboard packets;
  // The ranks' links: the system network's switch (models/interconnect/network.h), each port
  // gpu.link.bandwidth_gbps and each pair gpu.link.peer_bandwidth_gbps, in cycles.
  struct Links {
    Network net;
    double latency_cycles;
    std::map<int, double> out_bytes;
    // When the data written at `now` has landed at dst. A rank outside the run (one plan of a
    // multi-rank model simulated alone) is only the latency away.
    double transfer(int src, int dst, double now, double bytes) {
      if (src < 0 || dst < 0 || src >= net.devices() || dst >= net.devices()) return now + latency_cycles;
      out_bytes[src] += bytes;
      return net.transfer(src, dst, now, bytes);
    }
    double latency() const { return latency_cycles; }
    double bytes_out(int rank) const {
      auto it = out_bytes.find(rank);
      return it == out_bytes.end() ? 0 : it->second;
    }
  } links;
  std::map<std::pair<int, int>, double> proxy_done;  // (src, dst): when the last proxy put lands
  GpuSystem(int ranks, const GpuParams& p, double period_ps, const std::vector<TaskKey>& packet_tasks)
      : clock(Clock::from_ps(period_ps)),
        packets(packet_tasks.size(), clock),
        links{Network(ranks, link_params(p)), p.link_latency_cycles, {}} {
    for (size_t i = 0; i < packet_tasks.size(); ++i) m_packet_ids.emplace(packet_tasks[i], static_cast<int>(i));
  }
  // The scoreboard job of a packet writer task; -1 when no reader waits for it.
  int packet_job(const TaskKey& k) const {
    auto it = m_packet_ids.find(k);
    return it == m_packet_ids.end() ? -1 : it->second;
  }

 private:
  std::map<TaskKey, int> m_packet_ids;
};

}  // namespace npusim::models
