// The network-on-chip of a multi-core NPU (docs/multicore.md#noc): the cores and the DRAM
// channels' memory controllers are nodes; a crossbar gives every node one injection and one
// ejection link, a 2-D mesh adds the router-to-router links of X-then-Y routes. Every link is a
// first-come-first-served RateServer. SystemC-free: a unit asks when a transfer that may start
// at `now` has crossed and waits until then, so concurrent transfers share links and contention
// comes out of the simulation. Timing (cut-through at transfer granularity): a transfer between
// one core and several peers (the DRAM controllers it interleaves over, or the cores whose L2
// holds its input) books the core's own links for all its bytes (each of its injection ports
// an equal share) and each peer's route (its
// link, and the mesh links between the routers) for the peer's share; each booking starts when
// all its links are free and lasts ceil(bytes / link_bytes_per_cycle). The transfer is done when
// the last booking is, plus hops x hop_latency_cycles of the farthest peer (hops = 1 on a
// crossbar, |dx| + |dy| + 1 routers on a mesh).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/kernel/rate_server.h"
#include "sim/config/hw_config.h"

namespace npusim::models {

enum class NocTopology { Crossbar, Mesh };

struct NocParams {
  NocTopology topology = NocTopology::Crossbar;
  double link_bytes_per_cycle = 64;  // npu.noc.link_gbps at the clock; one link, one direction
  int64_t hop_latency_cycles = 2;    // npu.noc.hop_latency_ns at the clock, per router hop
  int64_t mesh_cols = 0;             // routers per mesh row (0: ceil(sqrt(cores)))
  int64_t injection_ports = 1;       // links from each core into the NoC (and back)

  // The npu.cores and npu.noc.* keys: the one place their defaults and ranges are written.
  static const std::vector<config::ParamDecl>& params();
  static NocParams read(const config::HwConfig& c);
};

// In the header: sim/config assembles the schema from it without linking the units.
inline const std::vector<config::ParamDecl>& NocParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"npu.cores", T::Int, "1", "cores",
       "cores on the chip, each its own PE array, vector processor, L2 scratchpad, weight buffer and DMA as npu.* "
       "declares them, joined by the NoC to the shared DRAM (docs/multicore.md)", {}, {1, 1024, false, false}},
      {"npu.noc.topology", T::String, "crossbar", "",
       "on-chip network between the cores and the DRAM channels' controllers (cores > 1)", {"crossbar", "mesh"}, r::none, config::bind_choice(&NocParams::topology, {{"crossbar", NocTopology::Crossbar}, {"mesh", NocTopology::Mesh}})},
      {"npu.noc.link_gbps", T::Double, "256", "GB/s", "one NoC link, one direction (cores > 1)", {}, r::rate},
      {"npu.noc.hop_latency_ns", T::Double, "2", "ns", "per router hop (cores > 1)", {}, r::delay},
      {"npu.noc.mesh_cols", T::Int, "0", "routers", "mesh: routers per row (0: ceil(sqrt(cores)))", {}, {0, 1024, false, false}, config::bind(&NocParams::mesh_cols)},
      {"npu.noc.injection_ports", T::Int, "1", "links",
       "links between each core and its router, each way; a transfer spreads over them (cores > 1)", {},
       {1, 64, false, false}, config::bind(&NocParams::injection_ports)},
  };
  return decls;
}

// Where a core's remote input lives: one core, or (core < 0) equal shares from the cores
// [first, first + count) but the reader (count 0: every core of the chip).
struct RemoteSource {
  int core = -1;
  int first = 0, count = 0;
};

struct NocLinkStats {
  std::string name;   // "core0.inject", "mc1.eject", "r(0,0)->r(1,0)"
  int64_t bytes = 0;
  double busy_cycles = 0;
};

class Noc {
 public:
  // cores: the compute nodes; memory_ports: DRAM channels' controllers.
  Noc(int cores, int memory_ports, const NocParams& p);
  // A DMA transfer between core `core` and DRAM, interleaved over the memory controllers as the
  // DRAM interleaves it (min(bursts, ports) equal parts, each transfer starting at the
  // controller after the previous one's last); returns the cycle its last part has crossed.
  // write: core to memory.
  int64_t dram_transfer(int core, int64_t now, int64_t bytes, int64_t burst_bytes, bool write);
  // Bytes a core reads from other cores' scratchpads, held as `src` says; returns the cycle the
  // last byte has arrived.
  int64_t core_transfer(const RemoteSource& src, int dst, int64_t now, int64_t bytes);
  // Routers a transfer between two nodes (cores 0..cores-1, then controllers) passes: 1 on a
  // crossbar, the Manhattan distance + 1 on a mesh.
  int hops(int src_node, int dst_node) const;
  std::vector<NocLinkStats> link_stats() const;
  int64_t transfers() const { return m_transfers; }
  int64_t wait_cycles() const { return m_wait; }  // cycles transfers waited for busy links

 private:
  // Mesh: the router-to-router links from one node's router to another's (X, then Y).
  std::vector<int> route(int src_node, int dst_node) const;
  // Books `bytes` on every link of `links` from when all are free; returns when they are done.
  int64_t book(const std::vector<int>& links, int64_t now, int64_t bytes);
  int64_t fan(int node, bool node_sends, const std::vector<std::pair<int, int64_t>>& peers, int64_t now);
  struct Link {
    std::string name;
    RateServer server;
    int64_t bytes = 0;
  };
  int router_of(int node) const;  // mesh: the router a node attaches to
  int m_cores, m_ports;
  NocParams m_p;
  int64_t m_cols = 1, m_rows = 1;
  std::vector<Link> m_links;
  // Link indices: per core and port, inject then eject; per controller, inject then eject;
  // mesh: per router, its east, west, south, north output links (-1: none).
  int link_index(int node, int port, bool eject) const;
  std::vector<int> m_mesh_out;  // router * 4 + direction
  int64_t m_transfers = 0, m_wait = 0;
  int m_next_mc = 0;             // the controller the next DRAM transfer starts at
};

}  // namespace npusim::models
