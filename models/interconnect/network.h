// The links between the devices of a system (docs/system.md#links): a topology of
// first-come-first-served links, each a RateServer. SystemC-free: the caller asks when a
// transfer that starts at `now` has landed and waits until then, so concurrent transfers (of
// one collective or of several) share the links and contention comes out of the simulation.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "models/kernel/rate_server.h"

namespace npusim::models {

enum class Topology { FullyConnected, Ring, Switch };
const char* topology_name(Topology t);

struct NetworkParams {
  Topology topology = Topology::FullyConnected;
  double bytes_per_ns = 64;  // one link, one direction (switch: one device's port), as the transport achieves it
  double latency_ns = 1000;  // per hop (switch: device to device)
  // Switch only: each ordered pair's own limit besides the two ports (0: none), as GPU links
  // where one peer cannot take a port's whole rate (gpu.link.peer_bandwidth_gbps).
  double pair_bytes_per_ns = 0;
  // Several nodes (docs/system.md#nodes): devices [k*per_node, (k+1)*per_node) form node k and
  // `topology` joins them; devices of different nodes talk through their own NIC into a
  // non-blocking network (one port per device and direction). 0: one node.
  int devices_per_node = 0;
  double nic_bytes_per_ns = 50;
  double nic_latency_ns = 5000;
};

class Network {
 public:
  Network(int devices, const NetworkParams& p);
  // A transfer of `bytes` from src to dst that may start at `now_ns`: the time its last byte
  // has landed at dst. Ring: along the shorter direction, hop by hop (store and forward).
  // hop_latency_ns >= 0 replaces the configured latency (a collective protocol's own).
  double transfer(int src, int dst, double now_ns, double bytes, double hop_latency_ns = -1);
  // Switch topologies only: bytes a device sends into the switch (its egress port) or the
  // switch delivers to it (its ingress port), as in-switch reduction (NVLS) does; returns when
  // the port is done (no latency added).
  double to_switch(int dev, double now_ns, double bytes);
  double from_switch(int dev, double now_ns, double bytes);
  int devices() const { return m_n; }
  // Device memory (docs/system.md#contention): a device whose memory rate is set has its
  // DRAM / HBM loaded by the transfers it sends (read) and receives (written) while they cross
  // its port; memory_load says how many bytes per ns they draw at time t. Queries on one device
  // must come at non-decreasing t (what ended before is forgotten).
  void set_memory_rate(int dev, double bytes_per_ns);
  double memory_rate(int dev) const;
  double memory_load(int dev, double t);
  // Other traffic on a device's memory (compute of a slot sharing its chip): `rate` bytes per ns
  // over [start_ns, end_ns).
  void add_memory_load(int dev, double start_ns, double end_ns, double rate) {
    if (memory_rate(dev) > 0 && end_ns > start_ns && rate > 0) m_loads[static_cast<size_t>(dev)].push_back({start_ns, end_ns, rate});
  }
  int node_of(int dev) const { return m_p.devices_per_node > 0 ? dev / m_p.devices_per_node : 0; }
  int nodes() const;
  // Links as (from, to) pairs with what they carried and how long they were busy; to = -1 for
  // a switch port, -2 for a NIC.
  struct LinkStats {
    int from = 0, to = 0;
    double bytes = 0, busy_ns = 0;
  };
  std::vector<LinkStats> link_stats() const;
  const NetworkParams& params() const { return m_p; }
  // The devices a transfer from src to dst crosses inside one node, src first, dst last.
  std::vector<int> route(int src, int dst) const;

 private:
  RateServer& link(int from, int to);  // the directed link (switch: from's egress port)
  // A transfer of `bytes` served until `end` at `rate` loads dev's memory over that span.
  void load(int dev, double end, double bytes, double rate);
  struct Load {
    double start, end, rate;
  };
  std::vector<double> m_mem_rate;
  std::vector<std::deque<Load>> m_loads;
  int local(int dev) const { return m_p.devices_per_node > 0 ? dev % m_p.devices_per_node : dev; }
  int m_n, m_k;  // devices; devices per node
  NetworkParams m_p;
  std::deque<RateServer> m_links;    // per node: k*k directed links (only neighbours used on a ring)
  std::deque<RateServer> m_ingress;  // switch: each device's ingress port
  std::deque<RateServer> m_nic_out, m_nic_in;  // several nodes: each device's NIC
};

}  // namespace npusim::models
