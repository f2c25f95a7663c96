// Link timing of a system's network (docs/system.md#links).
#include "models/interconnect/network.h"

#include <algorithm>
#include <cstdlib>

#include "sim/ir/error.h"

namespace npusim::models {

const char* topology_name(Topology t) {
  switch (t) {
    case Topology::FullyConnected: return "fully_connected";
    case Topology::Ring: return "ring";
    case Topology::Switch: return "switch";
  }
  return "?";
}

Network::Network(int devices, const NetworkParams& p) : m_n(devices), m_p(p) {
  for (int i = 0; i < devices * devices; ++i) m_links.emplace_back(p.bytes_per_ns);
  for (int i = 0; i < devices; ++i) m_ingress.emplace_back(p.bytes_per_ns);
}

RateServer& Network::link(int from, int to) { return m_links[static_cast<size_t>(from * m_n + to)]; }

std::vector<int> Network::route(int src, int dst) const {
  std::vector<int> r{src};
  if (m_p.topology != Topology::Ring || src == dst) {
    if (src != dst) r.push_back(dst);
    return r;
  }
  const int fwd = ((dst - src) % m_n + m_n) % m_n;
  const int step = fwd <= m_n - fwd ? 1 : -1;  // the shorter way round (ties: forward)
  for (int d = src; d != dst;) {
    d = ((d + step) % m_n + m_n) % m_n;
    r.push_back(d);
  }
  return r;
}

double Network::transfer(int src, int dst, double now_ns, double bytes) {
  if (src < 0 || dst < 0 || src >= m_n || dst >= m_n) throw InternalError("network transfer between unknown devices");
  if (src == dst) return now_ns;
  if (m_p.topology == Topology::Switch) {
    // Through the switch: the sender's egress port and the receiver's ingress port.
    const double out = link(src, src).reserve(now_ns, bytes);
    const double in = m_ingress[static_cast<size_t>(dst)].reserve(now_ns, bytes);
    return std::max(out, in) + m_p.latency_ns;
  }
  const std::vector<int> hops = route(src, dst);
  double t = now_ns;
  for (size_t h = 0; h + 1 < hops.size(); ++h) t = link(hops[h], hops[h + 1]).reserve(t, bytes) + m_p.latency_ns;
  return t;
}

std::vector<Network::LinkStats> Network::link_stats() const {
  std::vector<LinkStats> r;
  for (int i = 0; i < m_n; ++i)
    for (int j = 0; j < m_n; ++j) {
      const RateServer& s = m_links[static_cast<size_t>(i * m_n + j)];
      if (s.total() <= 0) continue;
      r.push_back({i, m_p.topology == Topology::Switch ? -1 : j, s.total(), s.busy_cycles()});
    }
  return r;
}

}  // namespace npusim::models
