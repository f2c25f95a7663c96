// Collectives as their send/receive steps (docs/system.md#collectives), the plan a collective
// library picks for one (algorithm, protocol, channels), and its closed-form time on an idle
// network. SystemC-free: the system engine plays the steps over the Network.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/interconnect/network.h"

namespace npusim::models {

enum class CollectiveAlgo { Ring, Tree, Direct, Pairwise, Nvls };
enum class Protocol { LL, LL128, Simple };
// Inline: the config reader (sim/config) parses names without linking the models.
inline const char* algo_name(CollectiveAlgo a) {
  switch (a) {
    case CollectiveAlgo::Ring: return "ring";
    case CollectiveAlgo::Tree: return "tree";
    case CollectiveAlgo::Direct: return "direct";
    case CollectiveAlgo::Pairwise: return "pairwise";
    case CollectiveAlgo::Nvls: return "nvls";
  }
  return "?";
}
inline std::optional<CollectiveAlgo> parse_algo(const std::string& s) {
  for (auto a : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::Direct, CollectiveAlgo::Pairwise, CollectiveAlgo::Nvls})
    if (s == algo_name(a)) return a;
  return std::nullopt;
}
inline const char* protocol_name(Protocol p) {
  return p == Protocol::LL ? "ll" : p == Protocol::LL128 ? "ll128" : "simple";
}
inline std::optional<Protocol> parse_protocol(const std::string& s) {
  for (auto p : {Protocol::LL, Protocol::LL128, Protocol::Simple})
    if (s == protocol_name(p)) return p;
  return std::nullopt;
}

// The cost constants of NCCL's tuner for one GPU generation (NVIDIA/nccl src/graph/tuning.cc,
// ncclTunerConstantsDefaults; docs/system.md#nccl). Latencies in microseconds, bandwidths in
// GB/s; [0] tree, [1] ring; protocols LL, LL128, Simple.
struct CollectiveTuning {
  std::string generation = "hopper";  // volta | ampere | hopper | blackwell
  double base_us[2][3]{};     // once per collective
  double step_us[2][3]{};     // per step inside a node (NVLink)
  double net_step_us[2][3]{}; // per step between nodes
  double nvls_us = 25, nvls_net_us = 18;
  double nvls_efficiency = 0;  // share of the port rate in-switch reduction reaches (0: none)
  bool ll128 = true;           // LL128 among the tuner's protocols (RCCL enables it on gfx90a only)
  bool tree_simple_in_node = true;  // tree with Simple inside one node (RCCL skips it on gfx94x)
  double ll_max_gbps[3]{};     // LL bus bandwidth cap by node count 1, 2, >2
  double ring_ll128_ch_gbps = 0, tree_ch_gbps[3]{}, tree_ll128_ch_gbps[3]{};
  double net_overhead_us = 1;  // per inter-node step (x3 with Simple): NCCL's NET_OVERHEAD on x86
  int channels = 16;           // rings / trees the library runs side by side
  // Pipeline fill (docs/system.md#pipeline-fill): the first fill bytes of a collective cross its two
  // stages (reduce, then broadcast) without overlap. Fitted on public nccl-tests logs
  // (configs/calibration/nccl_fill_fit.py), per system; ring also applies to tree.
  double ring_fill_bytes = 0, nvls_fill_bytes = 0;
  std::optional<Protocol> protocol;  // forced; empty: the tuner picks
  // RCCL (cdna3) costs bandwidth its own way inside one node (ROCm/rccl src/graph/tuning.cc under
  // HIP): the bus bandwidth x the tuning model's bwRatio, a tree's x treeCorrectionFactor by
  // log2(bytes / 64); none of NCCL's caps (llMaxBws, per-channel maxima). Across nodes its size
  // corrections steer the choice rather than cost it: NCCL's shape stands there.
  bool rccl = false;
  double rccl_bw_ratio[2][3]{};  // one node: [tree | ring][protocol]
  double rccl_tree_correction[3][27]{};
  static std::optional<CollectiveTuning> nccl(const std::string& generation);
};

// One transfer of a step: `bytes` from member `src` to member `dst` (positions in the group).
// ToSwitch / FromSwitch: into / out of the switch at member src (in-switch reduction).
enum class Port { Link, ToSwitch, FromSwitch };
struct Transfer {
  int src = 0, dst = 0;
  double bytes = 0;
  Port port = Port::Link;
};
// A step: its transfers run concurrently; the next step starts when all have landed (each
// member forwards what it received, as ring and tree algorithms do). latency_ns: per transfer
// inside a node (-1: the network's), net_latency_ns: between nodes (-1: the NIC's).
struct Step {
  std::vector<Transfer> transfers;
  double latency_ns = -1, net_latency_ns = -1;
  int hops = 1;  // latencies per transfer: a pipelined chain pays its length once
};

// How one collective runs: algorithm, protocol, channels, and its costs.
struct CollectivePlan {
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  std::optional<Protocol> protocol;  // empty: the plain model (link bandwidth and latency only)
  int channels = 1;         // channels in use (a multi-node ring: rotated rings)
  double base_ns = 0;       // once, before the first step (latency and pipeline fill)
  double fill_ns = 0;       // of which the pipeline's fill
  double step_ns = -1, net_step_ns = -1;  // per step (-1: the network's link / NIC latency)
  double bw_factor = 1;     // share of the link bandwidth the algorithm and protocol reach
  double time_ns = 0;       // on an idle network
};

// The plain plan: `algo` at the links' bandwidth and latency (systems without a library model).
CollectivePlan plain_plan(CollectiveAlgo algo);
// The plan NCCL's tuner would pick (or the forced algorithm / protocol): the candidate with the
// least idle-network time. nullopt when `forced` cannot run this collective here (e.g. nvls
// without in-switch reduction); `why` says why.
std::optional<CollectivePlan> tuned_plan(const std::string& kind, int n, double size, const NetworkParams& net,
                                         const CollectiveTuning& t, std::optional<CollectiveAlgo> forced,
                                         std::string* why = nullptr);

// kind: "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
// "gather", "send" (send/recv: one transfer member 0 -> 1). size: S as the formulas use it
// (all_reduce / reduce_scatter / reduce / all_to_all: the per-device buffer; all_gather /
// gather: the gathered result, n x each part; broadcast: the buffer). root: broadcast source
// or reduce / gather destination (a member position). per_node: members per node when the
// members span nodes (0: one node). Transfer bytes are wire bytes (payload / bw_factor).
std::vector<Step> collective_steps(const std::string& kind, const CollectivePlan& plan, int n, double size, int root = 0,
                                   int per_node = 0);
std::vector<Step> collective_steps(const std::string& kind, CollectiveAlgo algo, int n, double size, int root = 0);

// Plays one step over the network from t0_ns: dev maps member positions to network devices.
// Returns when its last transfer has landed (the next step starts then).
double play_step(Network& net, const Step& step, const std::vector<int>& dev, double t0_ns);
// A whole collective from t0_ns: launch and base latency, then its steps.
double play_collective(Network& net, const std::string& kind, const CollectivePlan& plan, const std::vector<int>& dev,
                       double size, int root, double t0_ns);

// The closed-form time on an idle network of links of `bytes_per_ns` with `alpha_ns` per
// transfer (fully connected or switch, one hop), plain plan:
//   ring all_reduce            2(n-1)/n * S/B + 2(n-1) alpha
//   ring all_gather / reduce_scatter   (n-1)/n * S/B + (n-1) alpha
//   tree all_reduce            2 (S/B + (n-1) alpha)       (a pipelined chain, as NCCL's tree in a node)
//   direct all_reduce          2 (n-1)/n * S/B + 2 alpha   (a switch port carries (n-1) parts)
//   nvls all_reduce            (1 + 1/n) * S/B + alpha     (switch ports; the switch reduces)
//   pairwise all_to_all        (n-1)/n * S/B + (n-1) alpha
//   send                       S/B + alpha
double collective_time_ns(const std::string& kind, CollectiveAlgo algo, int n, double size, double bytes_per_ns,
                          double alpha_ns);

}  // namespace npusim::models
