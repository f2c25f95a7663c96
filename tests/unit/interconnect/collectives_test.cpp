// Collectives: their send/receive steps played over an idle network take exactly their
// closed-form time (docs/system.md#collectives); contention appears when links are shared.
#include <gtest/gtest.h>

#include <numeric>

#include "models/interconnect/collectives.h"

using namespace npusim::models;

namespace {

double play(Network& net, const std::string& kind, CollectiveAlgo a, int n, double size, double t0 = 0) {
  std::vector<int> dev(static_cast<size_t>(n));
  std::iota(dev.begin(), dev.end(), 0);
  double t = t0;
  for (const Step& s : collective_steps(kind, a, n, size)) t = play_step(net, s, dev, t);
  return t;
}

NetworkParams params(Topology t, double gbps = 100, double latency_ns = 500) {
  NetworkParams p;
  p.topology = t;
  p.bytes_per_ns = gbps;  // 1 GB/s = 1 byte/ns
  p.latency_ns = latency_ns;
  return p;
}

struct Case {
  std::string kind;
  CollectiveAlgo algo;
  Topology topo;
};

TEST(Collectives, StepsOnAnIdleNetworkTakeTheClosedFormTime) {
  const double S = 64e6;  // 64 MB
  for (const Case& c : std::vector<Case>{{"all_reduce", CollectiveAlgo::Ring, Topology::FullyConnected},
                                         {"all_reduce", CollectiveAlgo::Ring, Topology::Ring},
                                         {"all_reduce", CollectiveAlgo::Ring, Topology::Switch},
                                         {"all_reduce", CollectiveAlgo::Tree, Topology::FullyConnected},
                                         {"all_reduce", CollectiveAlgo::Direct, Topology::Switch},
                                         {"all_reduce", CollectiveAlgo::Nvls, Topology::Switch},
                                         {"all_gather", CollectiveAlgo::Ring, Topology::Ring},
                                         {"reduce_scatter", CollectiveAlgo::Ring, Topology::FullyConnected},
                                         {"all_to_all", CollectiveAlgo::Pairwise, Topology::Switch}}) {
    for (int n : {2, 4, 8}) {
      Network net(n, params(c.topo));
      const double sim = play(net, c.kind, c.algo, n, S);
      const double formula = collective_time_ns(c.kind, c.algo, n, S, 100, 500);
      EXPECT_NEAR(sim, formula, 1e-6 * formula) << c.kind << " " << algo_name(c.algo) << " on " << topology_name(c.topo) << ", n=" << n;
    }
  }
}

TEST(Collectives, RingAllReduceByHand) {
  // 8 devices, 80 MB, 100 GB/s links, 1 us latency: 2*7/8 * 80e6/100 + 2*7*1000 ns = 1,414,000 ns.
  Network net(8, params(Topology::FullyConnected, 100, 1000));
  EXPECT_DOUBLE_EQ(play(net, "all_reduce", CollectiveAlgo::Ring, 8, 80e6), 1414000.0);
  EXPECT_DOUBLE_EQ(collective_time_ns("all_reduce", CollectiveAlgo::Ring, 8, 80e6, 100, 1000), 1414000.0);
}

TEST(Collectives, TwoConcurrentCollectivesOnOneRingContend) {
  Network net(4, params(Topology::Ring));
  const double alone = collective_time_ns("all_reduce", CollectiveAlgo::Ring, 4, 32e6, 100, 500);
  // Two all-reduces over the same 4 devices starting together share every link, step by step.
  std::vector<int> dev{0, 1, 2, 3};
  const auto steps = collective_steps("all_reduce", CollectiveAlgo::Ring, 4, 32e6);
  double a = 0, b = 0;
  for (const Step& s : steps) {
    a = play_step(net, s, dev, a);
    b = play_step(net, s, dev, b);
  }
  // Links serve transfers in the order they are issued (FCFS), so the two interleave: neither
  // is faster than alone, and the pair needs about twice the link time.
  EXPECT_GE(a, alone);
  EXPECT_GE(b, alone);
  EXPECT_GT(std::max(a, b), alone * 1.5);
}

TEST(Collectives, RingRoutesTheShorterWay) {
  Network net(8, params(Topology::Ring));
  EXPECT_EQ(net.route(0, 2), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(net.route(0, 7), (std::vector<int>{0, 7}));
  EXPECT_EQ(net.route(5, 1), (std::vector<int>{5, 6, 7, 0, 1}));
  // Two hops cost two latencies and two serializations (store and forward).
  EXPECT_DOUBLE_EQ(net.transfer(0, 2, 0, 1e6), 2 * (1e6 / 100 + 500));
}

TEST(Collectives, SendIsOneTransfer) {
  Network net(2, params(Topology::FullyConnected));
  EXPECT_DOUBLE_EQ(play(net, "send", CollectiveAlgo::Ring, 2, 1e6), 1e6 / 100 + 500);
}

// ---- the library model: NCCL's tuner (docs/system.md#nccl) ----

CollectiveTuning hopper() { return *CollectiveTuning::nccl("hopper"); }

// An HGX H100 node as configs/system_8x_h100.yaml has it: 450 GB/s x 0.824 through a switch.
NetworkParams h100_node() { return params(Topology::Switch, 450 * 0.824, 2000); }

double play_plan(const NetworkParams& np, int devices, const std::string& kind, const CollectivePlan& p, int n, double size) {
  Network net(devices, np);
  std::vector<int> dev(static_cast<size_t>(n));
  std::iota(dev.begin(), dev.end(), 0);
  return play_collective(net, kind, p, dev, size, 0, 0);
}

TEST(NcclModel, ConstantsAreNcclsForEachGeneration) {
  const CollectiveTuning h = hopper();
  EXPECT_DOUBLE_EQ(h.base_us[1][0], 6.6);   // ring LL
  EXPECT_DOUBLE_EQ(h.step_us[1][2], 3.4);   // ring Simple over NVLink
  EXPECT_DOUBLE_EQ(h.ll_max_gbps[0], 141);  // Hopper, one node
  EXPECT_DOUBLE_EQ(h.nvls_efficiency, 0.85);
  EXPECT_DOUBLE_EQ(CollectiveTuning::nccl("ampere")->nvls_efficiency, 0);
  EXPECT_DOUBLE_EQ(CollectiveTuning::nccl("ampere")->ll_max_gbps[0], 87.7);
  EXPECT_DOUBLE_EQ(CollectiveTuning::nccl("cdna3")->base_us[1][2], 17);  // RCCL
  EXPECT_FALSE(CollectiveTuning::nccl("kepler"));
}

TEST(NcclModel, SmallAllReduceRunsRingLLOnOneChannelByHand) {
  // 1 KiB over 8 H100s: ring LL. Latency 6.6 + 14 x 0.6 = 15.0 us. LL bus bandwidth
  // min(141, 370.8 / 2) = 141 GB/s over 16 channels, but 1 KiB < 512 threads x 8 B x 8 ranks,
  // so one channel: 141 / 16 GB/s; 2 x 7/8 x 1024 B at that rate = 203.4 ns.
  const auto p = tuned_plan("all_reduce", 8, 1024, h100_node(), hopper(), std::nullopt);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->algo, CollectiveAlgo::Ring);
  EXPECT_EQ(*p->protocol, Protocol::LL);
  EXPECT_EQ(p->channels, 1);
  const double expect = 15000 + 2 * 7.0 / 8 * 1024 / (141.0 / 16);
  EXPECT_NEAR(p->time_ns, expect, 1e-6 * expect);
  EXPECT_NEAR(play_plan(h100_node(), 8, "all_reduce", *p, 8, 1024), expect, 1e-6 * expect);
}

TEST(NcclModel, LargeAllReduceOnAnNvlsSwitchReducesInTheSwitchByHand) {
  // 256 MiB: NVLS. Each GPU sends (1 + 1/8) S into the switch and receives as much, at
  // 0.85 x 370.8 GB/s, after NVLS's 25 us.
  const double S = 256.0 * (1 << 20);
  const auto p = tuned_plan("all_reduce", 8, S, h100_node(), hopper(), std::nullopt);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->algo, CollectiveAlgo::Nvls);
  const double expect = 25000 + 1.125 * S / (0.85 * 450 * 0.824);
  EXPECT_NEAR(p->time_ns, expect, 1e-6 * expect);
  EXPECT_NEAR(play_plan(h100_node(), 8, "all_reduce", *p, 8, S), expect, 1e-6 * expect);
  // Without in-switch reduction it is a ring with the Simple protocol at the full port rate.
  CollectiveTuning no_nvls = hopper();
  no_nvls.nvls_efficiency = 0;
  const auto r = tuned_plan("all_reduce", 8, S, h100_node(), no_nvls, std::nullopt);
  EXPECT_EQ(r->algo, CollectiveAlgo::Ring);
  EXPECT_EQ(*r->protocol, Protocol::Simple);
  const double ring = 1000 * (8.4 + 14 * 3.4) + 2 * 7.0 / 8 * S / (450 * 0.824);
  EXPECT_NEAR(r->time_ns, ring, 1e-6 * ring);
  EXPECT_GT(r->time_ns, p->time_ns);
  // Forcing nvls where the switch cannot reduce is refused, with the reason.
  std::string why;
  EXPECT_FALSE(tuned_plan("all_reduce", 8, S, h100_node(), no_nvls, CollectiveAlgo::Nvls, &why));
  EXPECT_NE(why.find("switch"), std::string::npos);
}

TEST(NcclModel, ThePipelineFillDelaysTheFirstBytesByHand) {
  // NVLS with a 16 MiB fill: the first 16 MiB cross both halves without overlap, as if moved
  // twice; a 4 MiB all_reduce (smaller than the fill) moves all of itself twice.
  CollectiveTuning t = hopper();
  t.nvls_fill_bytes = 16.0 * (1 << 20);
  const double rate = 0.85 * 450 * 0.824;
  for (double mib : {4.0, 64.0}) {
    const double S = mib * (1 << 20);
    const auto p = tuned_plan("all_reduce", 8, S, h100_node(), t, CollectiveAlgo::Nvls);
    ASSERT_TRUE(p);
    const double fill = 1.125 * std::min(S, t.nvls_fill_bytes) / rate;
    EXPECT_NEAR(p->fill_ns, fill, 1e-9 * fill);
    const double expect = 25000 + fill + 1.125 * S / rate;
    EXPECT_NEAR(p->time_ns, expect, 1e-6 * expect);
    EXPECT_NEAR(play_plan(h100_node(), 8, "all_reduce", *p, 8, S), expect, 1e-6 * expect);
  }
  // The fill is idle time: the switch ports carry only the collective's own bytes.
  Network net(8, h100_node());
  const auto p = tuned_plan("all_reduce", 8, 64.0 * (1 << 20), h100_node(), t, CollectiveAlgo::Nvls);
  play_collective(net, "all_reduce", *p, {0, 1, 2, 3, 4, 5, 6, 7}, 64.0 * (1 << 20), 0, 0);
  EXPECT_NEAR(net.link_stats()[0].bytes, 1.125 * 64.0 * (1 << 20) / 0.85, 1.0);
}

TEST(NcclModel, EveryPlanPlayedOnAnIdleNetworkTakesItsClosedFormTime) {
  NetworkParams mesh = params(Topology::FullyConnected, 48, 2000);
  NetworkParams two_nodes = h100_node();
  two_nodes.devices_per_node = 4;
  two_nodes.nic_bytes_per_ns = 45;
  for (const std::string kind : {"all_reduce", "all_gather", "reduce_scatter"})
    for (const NetworkParams& np : {h100_node(), mesh, two_nodes})
      for (double S : {4096.0, 1e6, 64e6, 1e9})
        for (auto algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::Nvls, CollectiveAlgo::Direct})
          for (auto proto : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
            CollectiveTuning t = hopper();
            t.protocol = proto;
            t.ring_fill_bytes = 8e6, t.nvls_fill_bytes = 16e6;
            const auto p = tuned_plan(kind, 8, S, np, t, algo);
            if (!p) continue;  // not this kind, protocol or network
            const double sim = play_plan(np, 8, kind, *p, 8, S);
            EXPECT_NEAR(sim, p->time_ns, 1e-6 * p->time_ns)
                << kind << " " << algo_name(algo) << "/" << protocol_name(proto) << " S=" << S << " per node " << np.devices_per_node;
          }
}

TEST(NcclModel, TwoNodeRingLeavesEachNodeThroughEveryNicByHand) {
  // 2 nodes x 2 devices; links 100 GB/s, NICs 10 GB/s. Two rotated rings, each carrying half of
  // every part; each leaves a node through a different device's NIC. One step: a device sends
  // part/2 over NVLink (100) and part/2 over its NIC (10): the NIC's 0.05 part ns per byte rules.
  NetworkParams np = params(Topology::Switch, 100, 0);
  np.devices_per_node = 2;
  np.nic_bytes_per_ns = 10;
  CollectiveTuning t = hopper();
  t.protocol = Protocol::Simple;
  const double S = 4e8;  // large: every channel in use, Simple at factor 1
  const auto p = tuned_plan("all_reduce", 4, S, np, t, CollectiveAlgo::Ring);
  ASSERT_TRUE(p);
  const double part = S / 4;
  // latency: base 8.4 + (6 - 2) intra steps x max(3.4, 3 x 1 us) + 2 inter steps x 14 us, x 1.4 (plateau)
  const double lat = 1000 * 1.4 * (8.4 + 4 * 3.4 + 2 * 14.0);
  const double expect = lat + 6 * (part / 2) / 10;
  EXPECT_NEAR(p->time_ns, expect, 1e-6 * expect);
  Network net(4, np);
  EXPECT_NEAR(play_collective(net, "all_reduce", *p, {0, 1, 2, 3}, S, 0, 0), expect, 1e-6 * expect);
  // Both NICs of node 0 carried the same bytes: the rings rotate.
  double nic0 = 0, nic1 = 0;
  for (const auto& l : net.link_stats())
    if (l.to == -2) (l.from == 0 ? nic0 : l.from == 1 ? nic1 : nic0) += l.from < 2 ? l.bytes : 0;
  EXPECT_GT(nic0, 0);
  EXPECT_DOUBLE_EQ(nic0, nic1);
}

TEST(NcclModel, AFullMeshUsesAllPairsForLargeMessages) {
  // 8 devices, one 48 GB/s link per pair: a ring uses 1 of each device's 7 links, all-pairs all 7.
  const auto p = tuned_plan("all_reduce", 8, 1e9, params(Topology::FullyConnected, 48, 2000), *CollectiveTuning::nccl("cdna3"),
                            std::nullopt);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->algo, CollectiveAlgo::Direct);
  EXPECT_LT(p->time_ns, 2 * 7.0 / 8 * 1e9 / 48);  // faster than any ring could be
}

// RCCL on MI300X (gfx942): LL128 is not among its default protocols and tree with Simple is not a
// candidate inside a node, so the tuner picks from LL and Simple; its table gives LL128 no
// bandwidth, so a forced LL128 has no plan.
TEST(NcclModel, RcclOnMi300xPicksLlOrSimple) {
  const CollectiveTuning t = *CollectiveTuning::nccl("cdna3");
  EXPECT_FALSE(t.ll128);
  for (const double size : {1024.0, 1048576.0, 8388608.0, 67108864.0, 1e9}) {
    const auto p = tuned_plan("all_reduce", 8, size, params(Topology::FullyConnected, 48, 2000), t, std::nullopt);
    ASSERT_TRUE(p) << size;
    EXPECT_NE(p->protocol, Protocol::LL128) << size;
    EXPECT_FALSE(p->algo == CollectiveAlgo::Tree && p->protocol == Protocol::Simple) << size;
  }
  CollectiveTuning forced = t;
  forced.protocol = Protocol::LL128;
  std::string why;
  EXPECT_FALSE(tuned_plan("all_reduce", 8, 8388608.0, params(Topology::FullyConnected, 48, 2000), forced, std::nullopt, &why));
  EXPECT_NE(why.find("no bandwidth"), std::string::npos) << why;
  // NCCL keeps LL128 on Hopper.
  EXPECT_TRUE(CollectiveTuning::nccl("hopper")->ll128);
}

// RCCL's tuner on 8 x MI300X (tuning_model_5, docs/system.md#rccl-on-mi300x), by hand: 48 GB/s a
// link, 7 links a device; its rings over every link move what all-pairs moves.
TEST(NcclModel, RcclCostsAllReduceWithItsOwnTable) {
  const CollectiveTuning t = *CollectiveTuning::nccl("cdna3");
  const NetworkParams mesh = params(Topology::FullyConnected, 48, 2000);
  // 8 MiB: Simple, bwRatio 1: latency 17 + 14 x 2.1 = 46.4 us; 2 x (8 MiB / 8) / 48 GB/s = 43,690.7 ns.
  const auto big = tuned_plan("all_reduce", 8, 8388608.0, mesh, t, std::nullopt);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->algo, CollectiveAlgo::Direct);
  EXPECT_EQ(big->protocol, Protocol::Simple);
  EXPECT_NEAR(big->time_ns, 46400 + 2 * 1048576 / 48.0, 1e-6);
  // 64 KiB: LL at bwRatio 0.08: 12 + 14 x 0.8 = 23.2 us + 2 x 8192 / (48 x 0.08) ns = 27,466.7 ns.
  // Tree LL (correction 1.0 at log2(1024) = 10): 12 + 2 x 7 x 0.9 = 24.6 us + 2 x 65536 /
  // (48 x 0.06 x 7) = 31,101.6 ns: the ring wins.
  const auto small = tuned_plan("all_reduce", 8, 65536.0, mesh, t, std::nullopt);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->algo, CollectiveAlgo::Direct);
  EXPECT_EQ(small->protocol, Protocol::LL);
  EXPECT_NEAR(small->time_ns, 23200 + 2 * 8192 / (48 * 0.08), 1e-6);
  const auto tree = tuned_plan("all_reduce", 8, 65536.0, mesh, t, CollectiveAlgo::Tree);
  ASSERT_TRUE(tree);
  EXPECT_EQ(tree->protocol, Protocol::LL);
  EXPECT_NEAR(tree->time_ns, 24600 + 2 * 65536 / (48 * 0.06 * 7), 1e-6);
  // all_gather of 8 MiB (the gathered result): 7 steps, 17 + 7 x 2.1 = 31.7 us + (8 MiB / 8) / 48.
  const auto ag = tuned_plan("all_gather", 8, 8388608.0, mesh, t, std::nullopt);
  ASSERT_TRUE(ag);
  EXPECT_NEAR(ag->time_ns, 31700 + 1048576 / 48.0, 1e-6);
  // Across nodes RCCL's size corrections only steer its choice: the links' costs (NCCL's shape,
  // with RCCL's latencies) stand for the time. Two nodes of 8: the same plan as without RCCL's
  // bandwidth table, and inside one node not.
  NetworkParams two = mesh;
  two.devices_per_node = 8;
  two.nic_bytes_per_ns = 50;
  CollectiveTuning shaped = t;
  shaped.rccl = false;
  for (const double size : {1024.0, 1048576.0, 67108864.0}) {
    const auto a = tuned_plan("all_reduce", 16, size, two, t, std::nullopt);
    const auto b = tuned_plan("all_reduce", 16, size, two, shaped, std::nullopt);
    ASSERT_TRUE(a && b) << size;
    EXPECT_EQ(a->algo, b->algo) << size;
    EXPECT_DOUBLE_EQ(a->time_ns, b->time_ns) << size;
  }
  EXPECT_NE(tuned_plan("all_reduce", 8, 65536.0, mesh, shaped, std::nullopt)->time_ns, small->time_ns);
}

}  // namespace
