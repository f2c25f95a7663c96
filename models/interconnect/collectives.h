// Collectives as their send/receive steps (docs/system.md#collectives), and their closed-form
// times on an idle network. SystemC-free: the system engine plays the steps over the Network.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/interconnect/network.h"

namespace npusim::models {

enum class CollectiveAlgo { Ring, Tree, Direct, Pairwise };
// Inline: the config reader (sim/config) parses algorithm names without linking the models.
inline const char* algo_name(CollectiveAlgo a) {
  switch (a) {
    case CollectiveAlgo::Ring: return "ring";
    case CollectiveAlgo::Tree: return "tree";
    case CollectiveAlgo::Direct: return "direct";
    case CollectiveAlgo::Pairwise: return "pairwise";
  }
  return "?";
}
inline std::optional<CollectiveAlgo> parse_algo(const std::string& s) {
  for (auto a : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::Direct, CollectiveAlgo::Pairwise})
    if (s == algo_name(a)) return a;
  return std::nullopt;
}

// One transfer of a step: `bytes` from member `src` to member `dst` (positions in the group).
struct Transfer {
  int src = 0, dst = 0;
  double bytes = 0;
};
// A step: its transfers run concurrently; the next step starts when all have landed (each
// member forwards what it received, as ring and tree algorithms do).
using Step = std::vector<Transfer>;

// kind: "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
// "gather", "send" (send/recv: one transfer member 0 -> 1). size: S as the formulas use it
// (all_reduce / reduce_scatter / reduce / all_to_all: the per-device buffer; all_gather /
// gather: the gathered result, n x each part; broadcast: the buffer). root: broadcast source
// or reduce / gather destination (a member position).
std::vector<Step> collective_steps(const std::string& kind, CollectiveAlgo algo, int n, double size, int root = 0);

// Plays one step over the network from t0_ns: dev maps member positions to network devices.
// Returns when its last transfer has landed (the next step starts then).
double play_step(Network& net, const Step& step, const std::vector<int>& dev, double t0_ns);

// The closed-form time on an idle network of links of `bytes_per_ns` with `alpha_ns` per
// transfer (fully connected or switch, one hop):
//   ring all_reduce            2(n-1)/n * S/B + 2(n-1) alpha
//   ring all_gather / reduce_scatter   (n-1)/n * S/B + (n-1) alpha
//   tree all_reduce            2 ceil(log2 n) (S/B + alpha)
//   direct all_reduce          2 (n-1)/n * S/B + 2 alpha   (a switch port carries (n-1) parts)
//   pairwise all_to_all        (n-1)/n * S/B + (n-1) alpha
//   send                       S/B + alpha
double collective_time_ns(const std::string& kind, CollectiveAlgo algo, int n, double size, double bytes_per_ns,
                          double alpha_ns);

}  // namespace npusim::models
