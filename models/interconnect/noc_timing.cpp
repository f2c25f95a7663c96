// The on-chip network's links and routes (models/interconnect/noc.h, docs/multicore.md#noc).
#include "models/interconnect/noc.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace npusim::models {

NocParams NocParams::read(const config::HwConfig& c) {
  NocParams p;
  config::read_bound(p, c, params());  // topology, mesh_cols, injection_ports
  // In the core clock's units: not a plain scale.
  p.link_bytes_per_cycle = c.get_double("npu.noc.link_gbps") / c.clock_ghz();
  p.hop_latency_cycles = static_cast<int64_t>(std::llround(c.get_double("npu.noc.hop_latency_ns") * c.clock_ghz()));
  return p;
}

namespace {
enum Dir { East, West, South, North };
const char* dir_name(int d) { return d == East ? "E" : d == West ? "W" : d == South ? "S" : "N"; }
}  // namespace

Noc::Noc(int cores, int memory_ports, const NocParams& p)
    : m_cores(std::max(1, cores)), m_ports(std::max(1, memory_ports)), m_p(p) {
  const int64_t inj = std::max<int64_t>(1, p.injection_ports);
  for (int c = 0; c < m_cores; ++c)
    for (int64_t k = 0; k < inj; ++k)
      for (const char* what : {"inject", "eject"})
        m_links.push_back({"core" + std::to_string(c) + (inj > 1 ? "." + std::to_string(k) : "") + "." + what,
                           RateServer(p.link_bytes_per_cycle), 0});
  for (int m = 0; m < m_ports; ++m)
    for (const char* what : {"inject", "eject"})
      m_links.push_back({"mc" + std::to_string(m) + "." + what, RateServer(p.link_bytes_per_cycle), 0});
  if (p.topology == NocTopology::Mesh) {
    m_cols = p.mesh_cols > 0 ? p.mesh_cols : static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(m_cores))));
    m_rows = (m_cores + m_cols - 1) / m_cols;
    m_mesh_out.assign(static_cast<size_t>(m_cols * m_rows * 4), -1);
    for (int64_t r = 0; r < m_rows; ++r)
      for (int64_t c = 0; c < m_cols; ++c)
        for (int d = 0; d < 4; ++d) {
          const int64_t nr = r + (d == South) - (d == North), nc = c + (d == East) - (d == West);
          if (nr < 0 || nr >= m_rows || nc < 0 || nc >= m_cols) continue;
          m_mesh_out[static_cast<size_t>((r * m_cols + c) * 4 + d)] = static_cast<int>(m_links.size());
          m_links.push_back({"r(" + std::to_string(r) + "," + std::to_string(c) + ")." + dir_name(d),
                             RateServer(p.link_bytes_per_cycle), 0});
        }
  }
}

int Noc::link_index(int node, int port, bool eject) const {
  const int64_t inj = std::max<int64_t>(1, m_p.injection_ports);
  if (node < m_cores) return static_cast<int>((node * inj + port) * 2 + (eject ? 1 : 0));
  return static_cast<int>(m_cores * inj * 2 + (node - m_cores) * 2 + (eject ? 1 : 0));
}

// Cores fill the mesh row by row; controller m sits at the west (even m) or east (odd m) edge
// of row (m / 2) mod rows, as memory controllers line a die's edges.
int Noc::router_of(int node) const {
  if (node < m_cores) return node;
  const int m = node - m_cores;
  const int64_t row = (m / 2) % m_rows;
  return static_cast<int>(row * m_cols + (m % 2 == 0 ? 0 : m_cols - 1));
}

int Noc::hops(int src_node, int dst_node) const {
  if (m_p.topology == NocTopology::Crossbar) return 1;
  const int a = router_of(src_node), b = router_of(dst_node);
  return static_cast<int>(std::abs(a / m_cols - b / m_cols) + std::abs(a % m_cols - b % m_cols)) + 1;
}

std::vector<int> Noc::route(int src_node, int dst_node) const {
  std::vector<int> links;
  if (m_p.topology != NocTopology::Mesh) return links;
  int64_t r = router_of(src_node) / m_cols, c = router_of(src_node) % m_cols;  // X first, then Y
  const int64_t tr = router_of(dst_node) / m_cols, tc = router_of(dst_node) % m_cols;
  while (c != tc) {
    const int d = tc > c ? East : West;
    links.push_back(m_mesh_out[static_cast<size_t>((r * m_cols + c) * 4 + d)]);
    c += d == East ? 1 : -1;
  }
  while (r != tr) {
    const int d = tr > r ? South : North;
    links.push_back(m_mesh_out[static_cast<size_t>((r * m_cols + c) * 4 + d)]);
    r += d == South ? 1 : -1;
  }
  return links;
}

int64_t Noc::book(const std::vector<int>& links, int64_t now, int64_t bytes) {
  if (bytes <= 0 || links.empty()) return now;
  int64_t start = now;
  for (int l : links) start = std::max(start, static_cast<int64_t>(std::ceil(m_links[static_cast<size_t>(l)].server.free_at())));
  const auto service = static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / m_p.link_bytes_per_cycle));
  for (int l : links) {
    m_links[static_cast<size_t>(l)].server.book(start, service);
    m_links[static_cast<size_t>(l)].bytes += bytes;
  }
  m_wait += start - now;
  return start + service;
}

// The node at one end sends or receives the whole transfer through its own links (a core's
// injection ports, equal shares); the other end is several nodes, each with its share over its
// own route. Both ends stream at once (cut-through), so the transfer is done when the slower end
// is, plus the routers' latency.
int64_t Noc::fan(int node, bool node_sends, const std::vector<std::pair<int, int64_t>>& peers, int64_t now) {
  int64_t total = 0;
  for (const auto& pr : peers) total += pr.second;
  if (total <= 0) return now;
  m_transfers++;
  const int64_t ports = node < m_cores ? std::max<int64_t>(1, m_p.injection_ports) : 1;
  int64_t done = now;
  for (int64_t k = 0; k < ports; ++k)
    done = std::max(done, book({link_index(node, static_cast<int>(k), !node_sends)}, now, total / ports + (k < total % ports ? 1 : 0)));
  int max_hops = 0;
  for (const auto& [peer, bytes] : peers) {
    const int64_t peer_ports = peer < m_cores ? std::max<int64_t>(1, m_p.injection_ports) : 1;
    for (int64_t k = 0; k < peer_ports; ++k) {  // a core peer spreads its share over its ports too
      std::vector<int> links{link_index(peer, static_cast<int>(k), node_sends)};
      for (int l : node_sends ? route(node, peer) : route(peer, node)) links.push_back(l);
      done = std::max(done, book(links, now, bytes / peer_ports + (k < bytes % peer_ports ? 1 : 0)));
    }
    max_hops = std::max(max_hops, hops(node, peer));
  }
  return done + max_hops * m_p.hop_latency_cycles;
}

int64_t Noc::dram_transfer(int core, int64_t now, int64_t bytes, int64_t burst_bytes, bool write) {
  if (bytes <= 0) return now;
  const int64_t burst = std::max<int64_t>(1, burst_bytes);
  const int64_t parts = std::min<int64_t>((bytes + burst - 1) / burst, m_ports);
  std::vector<std::pair<int, int64_t>> peers;
  for (int64_t i = 0; i < parts; ++i)
    peers.emplace_back(m_cores + static_cast<int>((m_next_mc + i) % m_ports), bytes / parts + (i < bytes % parts ? 1 : 0));
  m_next_mc = static_cast<int>((m_next_mc + parts) % m_ports);  // interleaving goes on where it stopped
  return fan(core, write, peers, now);
}

int64_t Noc::core_transfer(const RemoteSource& src, int dst, int64_t now, int64_t bytes) {
  if (bytes <= 0 || m_cores < 2 || src.core == dst) return now;
  std::vector<std::pair<int, int64_t>> peers;
  if (src.core >= 0) {
    peers.emplace_back(src.core, bytes);
  } else {
    const int first = src.count > 0 ? src.first : 0, last = src.count > 0 ? std::min(m_cores, src.first + src.count) : m_cores;
    const int64_t others = (last - first) - (dst >= first && dst < last ? 1 : 0);
    if (others <= 0) return now;
    int k = 0;
    for (int c = first; c < last; ++c)
      if (c != dst) peers.emplace_back(c, bytes / others + (k++ < bytes % others ? 1 : 0));
  }
  return fan(dst, false, peers, now);
}

std::vector<NocLinkStats> Noc::link_stats() const {
  std::vector<NocLinkStats> r;
  for (const auto& l : m_links) r.push_back({l.name, l.bytes, l.server.busy_cycles()});
  return r;
}

}  // namespace npusim::models
