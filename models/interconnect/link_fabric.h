// Device-to-device links (models/interconnect): GPU ranks of ARK plans today. SystemC-free:
// callers wait until the cycle a transfer returns.
#pragma once
#include <algorithm>
#include <deque>
#include <map>

#include "models/kernel/rate_server.h"

namespace npusim::models {

// GPU-to-GPU links: each transfer occupies the source's egress, the destination's ingress and
// the pair's own link (NVSwitch: pair = port rate; a full mesh: one link per pair), and its
// data lands latency cycles after the slowest of them is done.
class LinkFabric {
 public:
  // port: one device's egress (= ingress) rate, all links together; peer: one device to one
  // peer; both in bytes per cycle; latency in cycles.
  LinkFabric(int devices, double port_bytes_per_cycle, double peer_bytes_per_cycle, double latency_cycles)
      : m_latency(latency_cycles) {
    for (int i = 0; i < devices; ++i) {
      m_egress.emplace_back(port_bytes_per_cycle);
      m_ingress.emplace_back(port_bytes_per_cycle);
      m_pair.emplace_back();
      for (int j = 0; j < devices; ++j) m_pair.back().emplace_back(peer_bytes_per_cycle);
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

}  // namespace npusim::models
