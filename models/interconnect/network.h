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
  double bytes_per_ns = 64;  // one link, one direction (switch: one device's port)
  double latency_ns = 1000;  // per hop (switch: device to device)
};

class Network {
 public:
  Network(int devices, const NetworkParams& p);
  // A transfer of `bytes` from src to dst that may start at `now_ns`: the time its last byte
  // has landed at dst. Ring: along the shorter direction, hop by hop (store and forward).
  double transfer(int src, int dst, double now_ns, double bytes);
  int devices() const { return m_n; }
  // Links as (from, to) pairs with what they carried and how long they were busy.
  struct LinkStats {
    int from = 0, to = 0;
    double bytes = 0, busy_ns = 0;
  };
  std::vector<LinkStats> link_stats() const;
  const NetworkParams& params() const { return m_p; }
  // The devices a transfer from src to dst crosses, src first, dst last.
  std::vector<int> route(int src, int dst) const;

 private:
  RateServer& link(int from, int to);  // the directed link (switch: from's egress port)
  int m_n;
  NetworkParams m_p;
  std::deque<RateServer> m_links;  // n*n directed links (only neighbours used on a ring)
  std::deque<RateServer> m_ingress;  // switch: each device's ingress port
};

}  // namespace npusim::models
