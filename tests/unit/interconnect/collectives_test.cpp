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

}  // namespace
