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

Network::Network(int devices, const NetworkParams& p)
    : m_n(devices), m_k(p.devices_per_node > 0 ? std::min(p.devices_per_node, devices) : devices), m_p(p) {
  const int nodes = (devices + m_k - 1) / std::max(1, m_k);
  for (int i = 0; i < nodes * m_k * m_k; ++i) {
    const bool pair = p.topology == Topology::Switch && p.pair_bytes_per_ns > 0 && (i % (m_k * m_k)) / m_k != i % m_k;
    m_links.emplace_back(pair ? p.pair_bytes_per_ns : p.bytes_per_ns);
  }
  for (int i = 0; i < devices; ++i) m_ingress.emplace_back(p.bytes_per_ns);
  if (p.devices_per_node > 0)
    for (int i = 0; i < devices; ++i) m_nic_out.emplace_back(p.nic_bytes_per_ns), m_nic_in.emplace_back(p.nic_bytes_per_ns);
}

void Network::set_memory_rate(int dev, double bytes_per_ns) {
  if (m_mem_rate.empty()) m_mem_rate.assign(static_cast<size_t>(m_n), 0), m_loads.resize(static_cast<size_t>(m_n));
  m_mem_rate[static_cast<size_t>(dev)] = bytes_per_ns;
}

double Network::memory_rate(int dev) const { return m_mem_rate.empty() ? 0 : m_mem_rate[static_cast<size_t>(dev)]; }

void Network::load(int dev, double end, double bytes, double rate) {
  if (memory_rate(dev) <= 0 || bytes <= 0) return;
  m_loads[static_cast<size_t>(dev)].push_back({end - bytes / rate, end, rate});
}

double Network::memory_load(int dev, double t) {
  if (memory_rate(dev) <= 0) return 0;
  auto& q = m_loads[static_cast<size_t>(dev)];
  // Loads are queued by when their transfer was issued; drop the ones over before t.
  q.erase(std::remove_if(q.begin(), q.end(), [t](const Load& l) { return l.end <= t; }), q.end());
  double r = 0;
  for (const Load& l : q)
    if (l.start <= t) r += l.rate;
  return r;
}

int Network::nodes() const { return (m_n + m_k - 1) / std::max(1, m_k); }

RateServer& Network::link(int from, int to) {
  return m_links[static_cast<size_t>(node_of(from) * m_k * m_k + local(from) * m_k + local(to))];
}

std::vector<int> Network::route(int src, int dst) const {
  std::vector<int> r{src};
  if (m_p.topology != Topology::Ring || src == dst || node_of(src) != node_of(dst)) {
    if (src != dst) r.push_back(dst);
    return r;
  }
  const int base = node_of(src) * m_k, a = local(src), b = local(dst);
  const int k = std::min(m_k, m_n - base);  // devices in this node
  const int fwd = ((b - a) % k + k) % k;
  const int step = fwd <= k - fwd ? 1 : -1;  // the shorter way round (ties: forward)
  for (int d = a; d != b;) {
    d = ((d + step) % k + k) % k;
    r.push_back(base + d);
  }
  return r;
}

double Network::transfer(int src, int dst, double now_ns, double bytes, double hop_latency_ns) {
  if (src < 0 || dst < 0 || src >= m_n || dst >= m_n) throw InternalError("network transfer between unknown devices");
  if (src == dst) return now_ns;
  if (node_of(src) != node_of(dst)) {
    // Between nodes: the sender's NIC and the receiver's NIC at once, then the network's latency.
    const double out = m_nic_out[static_cast<size_t>(src)].reserve(now_ns, bytes);
    const double in = m_nic_in[static_cast<size_t>(dst)].reserve(now_ns, bytes);
    load(src, out, bytes, m_p.nic_bytes_per_ns), load(dst, in, bytes, m_p.nic_bytes_per_ns);
    return std::max(out, in) + (hop_latency_ns >= 0 ? hop_latency_ns : m_p.nic_latency_ns);
  }
  const double lat = hop_latency_ns >= 0 ? hop_latency_ns : m_p.latency_ns;
  if (m_p.topology == Topology::Switch) {
    // Through the switch: the sender's egress port and the receiver's ingress port.
    const double out = link(src, src).reserve(now_ns, bytes);
    const double in = m_ingress[static_cast<size_t>(dst)].reserve(now_ns, bytes);
    const double pair = m_p.pair_bytes_per_ns > 0 ? link(src, dst).reserve(now_ns, bytes) : now_ns;
    load(src, out, bytes, m_p.bytes_per_ns), load(dst, in, bytes, m_p.bytes_per_ns);
    return std::max({out, in, pair}) + lat;
  }
  const std::vector<int> hops = route(src, dst);
  double t = now_ns;
  for (size_t h = 0; h + 1 < hops.size(); ++h) {
    t = link(hops[h], hops[h + 1]).reserve(t, bytes);
    if (h == 0) load(src, t, bytes, m_p.bytes_per_ns);
    if (h + 2 == hops.size()) load(dst, t, bytes, m_p.bytes_per_ns);
    t += lat;
  }
  return t;
}

double Network::to_switch(int dev, double now_ns, double bytes) {
  if (m_p.topology != Topology::Switch) throw InternalError("in-switch reduction on a network without a switch");
  const double end = link(dev, dev).reserve(now_ns, bytes);
  load(dev, end, bytes, m_p.bytes_per_ns);
  return end;
}

double Network::from_switch(int dev, double now_ns, double bytes) {
  if (m_p.topology != Topology::Switch) throw InternalError("in-switch reduction on a network without a switch");
  const double end = m_ingress[static_cast<size_t>(dev)].reserve(now_ns, bytes);
  load(dev, end, bytes, m_p.bytes_per_ns);
  return end;
}

std::vector<Network::LinkStats> Network::link_stats() const {
  std::vector<LinkStats> r;
  const int nodes = this->nodes();
  for (int nd = 0; nd < nodes; ++nd)
    for (int i = 0; i < m_k; ++i)
      for (int j = 0; j < m_k; ++j) {
        const RateServer& s = m_links[static_cast<size_t>(nd * m_k * m_k + i * m_k + j)];
        if (s.total() <= 0 || (m_p.topology == Topology::Switch && i != j)) continue;  // pair limits: not links
        r.push_back({nd * m_k + i, m_p.topology == Topology::Switch ? -1 : nd * m_k + j, s.total(), s.busy_cycles()});
      }
  for (size_t d = 0; d < m_nic_out.size(); ++d)
    if (m_nic_out[d].total() > 0) r.push_back({static_cast<int>(d), -2, m_nic_out[d].total(), m_nic_out[d].busy_cycles()});
  return r;
}

}  // namespace npusim::models
