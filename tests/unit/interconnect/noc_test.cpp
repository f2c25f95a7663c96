// The on-chip network (models/interconnect/noc.h, docs/multicore.md#noc): transfers on an idle
// NoC take their hand-computed time, and transfers that share a link wait for it.
#include <gtest/gtest.h>

#include "models/interconnect/noc.h"

using namespace npusim::models;

namespace {

NocParams params(NocTopology t, double bytes_per_cycle, int64_t hop_latency, int64_t mesh_cols = 0, int64_t ports = 1) {
  NocParams p;
  p.topology = t;
  p.link_bytes_per_cycle = bytes_per_cycle;
  p.hop_latency_cycles = hop_latency;
  p.mesh_cols = mesh_cols;
  p.injection_ports = ports;
  return p;
}

TEST(Noc, ADramReadOnAnIdleCrossbarTakesTheCoreLinkTimePlusOneHop) {
  // 2 cores, 2 controllers, 16 B/cycle links, 2 cycles a hop. 1,024 B in 64-B bursts interleave
  // over both controllers (512 B each, 32 cycles on each controller's link); the core's own link
  // carries all 1,024 B: 64 cycles. Done at 64 + 1 hop x 2 = 66.
  Noc noc(2, 2, params(NocTopology::Crossbar, 16, 2));
  EXPECT_EQ(noc.dram_transfer(0, 0, 1024, 64, false), 66);
  // The other core's read at the same time uses its own link and the controllers' links, busy
  // until 32 (first transfer) then 32 more: done at max(64, 64) + 2.
  EXPECT_EQ(noc.dram_transfer(1, 0, 1024, 64, false), 66);
  EXPECT_EQ(noc.wait_cycles(), 2 * 32);  // each of its two parts waited 32 cycles for a controller link
}

TEST(Noc, OneControllerIsSharedFirstComeFirstServed) {
  // One controller: each 1,024-B read needs 64 cycles of its link; the second waits 64.
  Noc noc(2, 1, params(NocTopology::Crossbar, 16, 2));
  EXPECT_EQ(noc.dram_transfer(0, 0, 1024, 64, false), 66);
  EXPECT_EQ(noc.dram_transfer(1, 0, 1024, 64, false), 64 + 64 + 2);
  // A write goes the other way: the controller's eject link, idle so far.
  EXPECT_EQ(noc.dram_transfer(0, 0, 160, 64, true), 10 + 2);
}

TEST(Noc, MeshRoutesCountTheirHopsAndShareRouterLinks) {
  // 4 cores on a 2 x 2 mesh: core c at router (c / 2, c % 2); controller 0 at the west edge of
  // row 0 (router 0), controller 1 at the east edge of row 0 (router 1).
  Noc noc(4, 2, params(NocTopology::Mesh, 10, 3, 2));
  EXPECT_EQ(noc.hops(0, 4), 1);  // core 0 and controller 0 share router (0, 0)
  EXPECT_EQ(noc.hops(3, 4), 3);  // (1, 1) -> (0, 0): 2 router links + 1
  EXPECT_EQ(noc.hops(2, 5), 3);  // (1, 0) -> (0, 1)
  EXPECT_EQ(noc.hops(1, 2), 3);
  // Core 3 reads 200 B from controller 0 alone (one burst of 256 B): the route 4 -> 3 is
  // controller inject, (0,0) east, (0,1) south, core 3 eject: 20 cycles, + 3 hops x 3.
  EXPECT_EQ(noc.dram_transfer(3, 0, 200, 256, false), 20 + 9);
  // Core 2 reads from controller 1 at once: its route (0,1) west, (0,0) south shares no link
  // with the first (X first, then Y).
  EXPECT_EQ(noc.dram_transfer(2, 0, 200, 256, false), 20 + 9);
  // Core 1 then reads from controller 0 ((0,0) east again): that link is busy until 20.
  EXPECT_EQ(noc.dram_transfer(1, 0, 200, 256, false), 20 + 20 + 2 * 3);
}

TEST(Noc, ACoreReadsRemoteDataFromEveryOtherCoreInShares) {
  // 300 B spread over cores 1 and 2 toward core 0: core 0's eject link carries 300 B (30
  // cycles at 10 B/cycle), each sender 150 B (15 cycles); + 1 hop x 4.
  Noc noc(3, 1, params(NocTopology::Crossbar, 10, 4));
  EXPECT_EQ(noc.core_transfer({-1}, 0, 100, 300), 100 + 30 + 4);
  // From one named core: its link and the receiver's, 50 B = 5 cycles each. Core 2's link is
  // busy with the first transfer until 115; core 0's eject link until 130.
  EXPECT_EQ(noc.core_transfer({2}, 1, 100, 50), 115 + 5 + 4);
  EXPECT_EQ(noc.core_transfer({1}, 0, 100, 50), 130 + 5 + 4);
  // Data already on the core, or a one-core chip, crosses nothing.
  EXPECT_EQ(noc.core_transfer({0}, 0, 7, 1000), 7);
  // Shares from a group of cores only (a tenant's): cores 1-2 of 4 toward core 1 = all from 2.
  Noc four(4, 1, params(NocTopology::Crossbar, 10, 4));
  EXPECT_EQ(four.core_transfer({-1, 1, 2}, 1, 0, 100), 10 + 4);
  // Core 0 reads 50 B from each of 1 and 2; core 2's link is busy until 10: 10 + 5, + 1 hop.
  EXPECT_EQ(four.core_transfer({-1, 1, 2}, 0, 0, 100), 10 + 5 + 4);
  Noc one(1, 1, params(NocTopology::Crossbar, 10, 4));
  EXPECT_EQ(one.core_transfer({-1}, 0, 7, 1000), 7);
}

TEST(Noc, ATransferSpreadsOverItsCoresInjectionPorts) {
  // Two ports per core: a 1,024-B read takes 512 B on each (32 cycles at 16 B/cycle); the
  // 4 controllers' links carry 256 B each (16 cycles). Done at 32.
  Noc noc(1, 4, params(NocTopology::Crossbar, 16, 0, 0, 2));
  EXPECT_EQ(noc.dram_transfer(0, 0, 1024, 256, false), 32);
  // A second read at once: the ports are busy until 32, the controllers until 16.
  EXPECT_EQ(noc.dram_transfer(0, 0, 1024, 256, false), 64);
  // Between two cores both ends spread over their ports: 400 B, 2 ports of 10 B/cycle at
  // each end: 20 cycles, + 1 hop x 3.
  Noc pair(2, 1, params(NocTopology::Crossbar, 10, 3, 0, 2));
  EXPECT_EQ(pair.core_transfer({1}, 0, 0, 400), 20 + 3);
  Noc single(1, 4, params(NocTopology::Crossbar, 16, 0, 0, 1));
  EXPECT_EQ(single.dram_transfer(0, 0, 1024, 256, false), 64);
  EXPECT_EQ(single.dram_transfer(0, 0, 1024, 256, false), 128);
}

TEST(Noc, LinkStatisticsCountBytesAndBusyCycles) {
  Noc noc(2, 2, params(NocTopology::Crossbar, 16, 2));
  noc.dram_transfer(0, 0, 1024, 64, false);
  int64_t core0_eject = -1, mc_inject = 0;
  for (const auto& l : noc.link_stats()) {
    if (l.name == "core0.eject") {
      core0_eject = l.bytes;
      EXPECT_DOUBLE_EQ(l.busy_cycles, 64);
    }
    if (l.name.rfind("mc", 0) == 0 && l.name.find("inject") != std::string::npos) mc_inject += l.bytes;
  }
  EXPECT_EQ(core0_eject, 1024);
  EXPECT_EQ(mc_inject, 1024);
  EXPECT_EQ(noc.transfers(), 1);
}

}  // namespace
