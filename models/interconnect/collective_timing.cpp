// Steps, plans and closed forms of the collectives (docs/system.md#collectives).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "models/interconnect/collectives.h"
#include "sim/ir/error.h"

namespace npusim::models {

namespace {

int ceil_log2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}
int floor_log2(int n) {
  int l = 0;
  while ((2 << l) <= n) ++l;
  return l;
}

// The member order of channel k: node by node, each node's members rotated by k, so that the
// channels leave every node through a different member (and its NIC).
std::vector<int> channel_order(int n, int per_node, int k) {
  std::vector<int> o(static_cast<size_t>(n));
  std::iota(o.begin(), o.end(), 0);
  if (per_node <= 0 || per_node >= n) return o;
  for (int base = 0; base < n; base += per_node) {
    const int m = std::min(per_node, n - base);
    for (int i = 0; i < m; ++i) o[static_cast<size_t>(base + i)] = base + (i + k) % m;
  }
  return o;
}
int rotations(int n, int per_node) { return per_node > 0 && per_node < n ? per_node : 1; }

// Every member sends `part` bytes to the member `shift` places further, `count` times; with
// several nodes, `rot` rotated rings each carry part / rot.
void ring_steps(std::vector<Step>& out, const CollectivePlan& p, int n, double part, int count, int per_node = 0,
                int shift = 1) {
  const int rot = rotations(n, per_node);
  for (int s = 0; s < count; ++s) {
    Step st;
    st.latency_ns = p.step_ns, st.net_latency_ns = p.net_step_ns;
    for (int k = 0; k < rot; ++k) {
      const std::vector<int> o = channel_order(n, per_node, k);
      for (int i = 0; i < n; ++i)
        st.transfers.push_back({o[static_cast<size_t>(i)], o[static_cast<size_t>((i + shift) % n)], part / rot});
    }
    out.push_back(std::move(st));
  }
}

// A pipelined chain (NCCL's tree inside a node): every link of the chain carries the whole
// buffer at once, first towards member 0 (reduce), then away from it (broadcast).
void chain_steps(std::vector<Step>& out, const CollectivePlan& p, int n, double bytes, int per_node) {
  const int rot = rotations(n, per_node);
  for (bool up : {true, false}) {
    Step st;
    st.latency_ns = p.step_ns, st.net_latency_ns = p.net_step_ns;
    st.hops = n - 1;
    for (int k = 0; k < rot; ++k) {
      const std::vector<int> o = channel_order(n, per_node, k);
      for (int i = 0; i + 1 < n; ++i) {
        const int a = o[static_cast<size_t>(i)], b = o[static_cast<size_t>(i + 1)];
        st.transfers.push_back(up ? Transfer{b, a, bytes / rot} : Transfer{a, b, bytes / rot});
      }
    }
    out.push_back(std::move(st));
  }
}

// Binomial tree rooted at `root`: level l pairs members 2^l apart (relative to the root).
void tree_steps(std::vector<Step>& out, const CollectivePlan& p, int n, double bytes, int root, bool towards_root) {
  const int levels = ceil_log2(n);
  for (int k = 0; k < levels; ++k) {
    const int l = towards_root ? k : levels - 1 - k;
    const int d = 1 << l;
    Step st;
    st.latency_ns = p.step_ns, st.net_latency_ns = p.net_step_ns;
    for (int r = 0; r + d < n; r += 2 * d) {
      const int a = (r + root) % n, b = (r + d + root) % n;
      st.transfers.push_back(towards_root ? Transfer{b, a, bytes} : Transfer{a, b, bytes});
    }
    out.push_back(std::move(st));
  }
}

void direct_step(std::vector<Step>& out, const CollectivePlan& p, int n, double part) {
  Step st;
  st.latency_ns = p.step_ns, st.net_latency_ns = p.net_step_ns;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) st.transfers.push_back({i, j, part});
  out.push_back(std::move(st));
}

// NCCL's per-thread work threshold: a collective smaller than channels x threads x threshold
// bytes runs on fewer channels (enqueue.cc, topoGetAlgoInfo).
int channels_used(const CollectiveTuning& t, CollectiveAlgo a, Protocol p, int n, double size) {
  const double threads = p == Protocol::LL128 ? 640 : 512;
  const double threshold = p == Protocol::Simple ? 64 : p == Protocol::LL && a == CollectiveAlgo::Ring ? 8.0 * n : 8;
  const double want = std::ceil(size / (threads * threshold));
  return static_cast<int>(std::clamp(want, 1.0, static_cast<double>(t.channels)));
}

// Idle-network time of the bandwidth part of a plan (everything but base_ns).
double transfer_ns(const std::string& kind, CollectiveAlgo a, int n, double size, double f, const NetworkParams& net,
                   int per_node) {
  const double B = net.bytes_per_ns * f, N = net.nic_bytes_per_ns * f;
  const bool multi = per_node > 0 && per_node < n;
  const int rot = rotations(n, per_node);
  // All-pairs: a switch port carries the n-1 parts one after another; a full mesh, one per link.
  const int direct_parts = net.topology == Topology::FullyConnected ? 1 : n - 1;
  // One step in which every member sends `part` on each of `rot` rotated channels.
  auto ring_step = [&](double part) {
    if (!multi) return part / B;
    return std::max((rot - 1) * part / rot / B, part / rot / N);
  };
  if (kind == "all_reduce") {
    if (a == CollectiveAlgo::Ring) return 2 * (n - 1) * ring_step(size / n);
    if (a == CollectiveAlgo::Tree) return 2 * (multi ? std::max((rot - 1) * size / rot / B, size / rot / N) : size / B);
    if (a == CollectiveAlgo::Nvls) return (1 + 1.0 / n) * size / B;
    if (a == CollectiveAlgo::Direct) return 2 * direct_parts * (size / n) / B;
  }
  if (kind == "all_gather" || kind == "reduce_scatter") {
    if (a == CollectiveAlgo::Direct) return direct_parts * (size / n) / B;
    return (n - 1) * ring_step(size / n);
  }
  return -1;
}

// One candidate inside one node as RCCL's tuner costs it (src/graph/tuning.cc under HIP:
// ncclTopoTuneModel and ncclTopoGetAlgoTime; docs/system.md#rccl-on-mi300x). Bus bandwidth: the
// channels' (a full mesh: every link of a device) x bwRatio, a tree's x the correction factor of
// log2(bytes / 64); algorithm bandwidth: a ring's x n / steps, a tree's x 0.5. Latency: baseLat +
// the ring's steps x the link's hwLat, or the tree's 2 x (n - 1) of them. nullopt: no bandwidth.
std::optional<CollectivePlan> rccl_candidate(const std::string& kind, CollectiveAlgo a, Protocol pr, int n, double size,
                                             const NetworkParams& net, const CollectiveTuning& t) {
  const int pi = static_cast<int>(pr), ai = a == CollectiveAlgo::Tree ? 0 : 1;
  const int log_size = std::clamp(static_cast<int>(std::floor(std::log2(std::max(1.0, size / 64)))), 0, 26);
  double ratio = t.rccl_bw_ratio[ai][pi];
  if (a == CollectiveAlgo::Tree) ratio *= t.rccl_tree_correction[pi][log_size];
  if (ratio <= 0) return std::nullopt;
  const int steps = a == CollectiveAlgo::Tree ? 2 * (n - 1) : kind == "all_reduce" ? 2 * (n - 1) : n - 1;
  const double lat_us = t.base_us[ai][pi] + steps * t.step_us[ai][pi];
  CollectivePlan p;
  p.algo = a;
  p.protocol = pr;
  p.channels = t.channels;  // RCCL's time does not scale its bandwidth by the channels a size uses
  // The share of each link's rate: the ratio over the links this plan's steps use. A tree's
  // chain uses one link of a device where RCCL's bus bandwidth counts all n - 1 of a full mesh.
  const bool mesh = net.topology == Topology::FullyConnected;
  p.bw_factor = ratio * (a == CollectiveAlgo::Tree && mesh ? n - 1 : 1);
  p.step_ns = 0, p.net_step_ns = 0;
  const double fill = a == CollectiveAlgo::Direct ? 0 : t.ring_fill_bytes;
  p.fill_ns = fill > 0 ? transfer_ns(kind, a, n, std::min(size, fill), p.bw_factor, net, 0) : 0;
  p.base_ns = 1000 * lat_us + p.fill_ns;
  p.time_ns = p.base_ns + transfer_ns(kind, a, n, size, p.bw_factor, net, 0);
  return p;
}

}  // namespace

std::optional<CollectiveTuning> CollectiveTuning::nccl(const std::string& gen) {
  // ncclTunerConstantsDefaults: baseLatencies, hwLatencies (NVLINK, NET), llMaxBws,
  // perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws; nvlsEfficiency.
  // cdna3 (MI300X): RCCL's tuning.cc: baseLat and tuning_model_5, the table every 8 x MI300X
  // xGMI mesh of its rome_models.cc selects (rome_model_79, 81 and 84: no, 8 or 16 NICs).
  const bool rccl = gen == "cdna3";
  const int g = gen == "volta" ? 0 : gen == "ampere" ? 1 : gen == "hopper" || rccl ? 2 : gen == "blackwell" ? 3 : -1;
  if (g < 0) return std::nullopt;
  CollectiveTuning t;
  t.generation = gen;
  const double base[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}}, rccl_base[2][3] = {{12, 12, 17}, {12, 12, 17}};
  const double nvl[2][3] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}}, rccl_xgmi[2][3] = {{0.9, 0, 2.3}, {0.8, 0, 2.1}};
  const double net[2][3] = {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}}, rccl_net[2][3] = {{10.5, 0, 25.0}, {9.5, 0, 320.0}};
  for (int a = 0; a < 2; ++a)
    for (int p = 0; p < 3; ++p) {
      t.base_us[a][p] = rccl ? rccl_base[a][p] : base[a][p];
      t.step_us[a][p] = rccl ? rccl_xgmi[a][p] : nvl[a][p];
      t.net_step_us[a][p] = rccl ? rccl_net[a][p] : net[a][p];
    }
  const double ll_max[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
  const double ring_ll128[4] = {20.0, 20.0, 36.7, 40.0};
  const double tree_ll128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
  const double tree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
  const double nvls_eff[4] = {0, 0, 0.85, 0.74};
  for (int i = 0; i < 3; ++i) {
    // One node: the GPU's row; several: the CPU's (Intel x86 as NCCL's first row).
    t.ll_max_gbps[i] = i == 0 ? ll_max[g][0] : ll_max[0][i];
    t.tree_ch_gbps[i] = tree[g][i];
    t.tree_ll128_ch_gbps[i] = tree_ll128[g][i];
  }
  t.ring_ll128_ch_gbps = ring_ll128[g];
  t.nvls_efficiency = rccl ? 0 : nvls_eff[g];
  // RCCL's tuning.cc: LL128 is enabled by default only on gfx90a (MI200), and tree with Simple is
  // not a candidate on gfx94x (MI300) inside one node.
  t.ll128 = !rccl;
  t.tree_simple_in_node = !rccl;
  if (rccl) {
    // tuning_model_5 for one node: bwRatio (tree, ring; LL, LL128, Simple) and the tree's
    // correction factors by log2(bytes / 64), 0 ... 26.
    t.rccl = true;
    const double ratio[2][3] = {{0.06, 0, 0.11}, {0.08, 0, 1.0}};
    const double tree_ll[27] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9,
                                1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1};
    for (int a = 0; a < 2; ++a)
      for (int p = 0; p < 3; ++p) t.rccl_bw_ratio[a][p] = ratio[a][p];
    for (int s = 0; s < 27; ++s) {
      t.rccl_tree_correction[0][s] = tree_ll[s];
      t.rccl_tree_correction[2][s] = s == 15 ? 0.7 : s == 26 ? 0.8 : s > 15 ? 1.0 : 0.1;
    }
  }
  return t;
}

CollectivePlan plain_plan(CollectiveAlgo algo) {
  CollectivePlan p;
  p.algo = algo;
  return p;
}

std::optional<CollectivePlan> tuned_plan(const std::string& kind, int n, double size, const NetworkParams& net,
                                         const CollectiveTuning& t, std::optional<CollectiveAlgo> forced, std::string* why) {
  const bool multi = net.devices_per_node > 0 && net.devices_per_node < n;
  const int per_node = multi ? net.devices_per_node : 0;
  const int nodes = multi ? (n + per_node - 1) / per_node : 1;
  const int ppn = multi ? per_node : n;
  const int idx = std::min(nodes, 3) - 1;
  const double B = net.bytes_per_ns;  // GB/s
  const bool reduces = kind == "all_reduce" || kind == "all_gather" || kind == "reduce_scatter";
  std::vector<CollectiveAlgo> algos;
  if (forced) algos = {*forced};
  else if (kind == "all_reduce") algos = {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::Nvls};
  else if (reduces) algos = {CollectiveAlgo::Ring};
  // A full mesh: one ring uses 2 of a device's n-1 links; all-pairs (direct) uses them all, as
  // MSCCL++ does. RCCL's rings on xGMI are many channels spread over every link (4 on each of an
  // MI300X's 7): they move what all-pairs moves, so all-pairs stands for them.
  const bool mesh = net.topology == Topology::FullyConnected && !multi;
  if (!forced && reduces && mesh) {
    if (t.rccl) std::replace(algos.begin(), algos.end(), CollectiveAlgo::Ring, CollectiveAlgo::Direct);
    else algos.push_back(CollectiveAlgo::Direct);
  }
  if (!forced && t.rccl) algos.erase(std::remove(algos.begin(), algos.end(), CollectiveAlgo::Nvls), algos.end());
  std::optional<CollectivePlan> best;
  for (CollectiveAlgo a : algos) {
    if (a == CollectiveAlgo::Nvls && (kind != "all_reduce" || t.nvls_efficiency <= 0 || net.topology != Topology::Switch || multi)) {
      if (why) *why = "nvls needs an all_reduce inside one node on a switch that reduces (system.link.switch_reduction and a generation with NVLS)";
      continue;
    }
    if (a == CollectiveAlgo::Direct && reduces && multi) {
      if (why) *why = "direct (all-pairs) runs inside one node";
      continue;
    }
    if (a == CollectiveAlgo::Tree && kind != "all_reduce") {
      if (why) *why = "tree runs all_reduce only (NCCL)";
      continue;
    }
    if (!reduces || a == CollectiveAlgo::Pairwise) {
      // Other kinds keep their steps at the links' rate, with the Simple protocol's costs; a
      // send (point to point) pays one step's latency, no collective base latency.
      CollectivePlan p = plain_plan(a);
      p.protocol = Protocol::Simple;
      p.base_ns = 1000 * (kind == "send" ? 0 : t.base_us[1][2]);
      p.step_ns = 1000 * t.step_us[1][2];
      p.net_step_ns = 1000 * t.net_step_us[1][2];
      return p;
    }
    for (Protocol pr : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
      if (t.protocol && pr != *t.protocol) continue;
      if (!t.protocol && pr == Protocol::LL128 && !t.ll128) continue;  // a forced protocol still runs
      if (!t.protocol && a == CollectiveAlgo::Tree && pr == Protocol::Simple && !multi && !t.tree_simple_in_node) continue;
      if (a == CollectiveAlgo::Nvls && pr != Protocol::Simple) continue;
      const int pi = static_cast<int>(pr);
      // RCCL's own costs inside one node; across nodes its size corrections mark every ring
      // below 512 MiB at a tenth of its bandwidth to steer the choice, so there the links' costs
      // (NCCL's shape) stand for the time.
      if (t.rccl && !multi) {
        if (a == CollectiveAlgo::Nvls) continue;
        auto p = rccl_candidate(kind, a, pr, n, size, net, t);
        if (!p) {
          if (why) *why = std::string("RCCL's tuning table gives ") + protocol_name(pr) + " no bandwidth on this platform";
          continue;
        }
        if (!best || p->time_ns < best->time_ns) best = p;
        continue;
      }
      double bus = B, lat_us = 0;  // bus bandwidth (GB/s), latency (us)
      if (a == CollectiveAlgo::Ring || a == CollectiveAlgo::Direct) {
        if (pr == Protocol::LL) bus = std::min(t.ll_max_gbps[idx], bus * 0.5);
        if (pr == Protocol::LL128) bus = std::min(bus * 0.92, t.channels * t.ring_ll128_ch_gbps);
        const int steps = kind == "all_reduce" ? 2 * (n - 1) : n - 1;
        const int inter = !multi ? 0 : kind == "all_reduce" ? 2 * (nodes - 1) : nodes - 1;
        double intra = t.step_us[1][pi], net_lat = t.net_step_us[1][pi];
        if (multi) intra = std::max(intra, t.net_overhead_us * (pr == Protocol::Simple ? 3 : 1));
        lat_us = t.base_us[1][pi] + (a == CollectiveAlgo::Direct ? 2 * intra : (steps - inter) * intra + inter * net_lat);
        // The ring's plateau across nodes (ncclTopoGetAlgoTime).
        if (multi && pr == Protocol::Simple && kind == "all_reduce" && size / (t.channels * n) >= 64) lat_us *= 1.4;
      } else if (a == CollectiveAlgo::Tree) {
        bus = std::min(bus * 0.92, t.channels * t.tree_ch_gbps[idx]);
        if (pr == Protocol::LL) bus = std::min(bus / 3.8, t.ll_max_gbps[idx]);
        if (pr == Protocol::LL128) bus = std::min(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), t.channels * t.tree_ll128_ch_gbps[idx]);
        lat_us = t.base_us[0][pi] + 2 * ((ppn - 1) * t.step_us[0][pi] + floor_log2(nodes) * t.net_step_us[0][pi]);
      } else {  // nvls: NCCL's latency is the switch's alone
        bus = B * t.nvls_efficiency;
        lat_us = t.nvls_us;
      }
      CollectivePlan p;
      p.algo = a;
      p.protocol = pr;
      p.channels = a == CollectiveAlgo::Nvls ? t.channels : channels_used(t, a, pr, n, size);
      p.bw_factor = bus / B * p.channels / t.channels;
      if (a == CollectiveAlgo::Nvls) p.bw_factor = bus / B;
      p.step_ns = 0, p.net_step_ns = 0;  // the latency is all in base_ns, as NCCL's model has it
      // The pipeline's fill: idle time (no link carries it), so it sits in base_ns too.
      const double fill = a == CollectiveAlgo::Nvls ? t.nvls_fill_bytes : a == CollectiveAlgo::Direct ? 0 : t.ring_fill_bytes;
      p.fill_ns = fill > 0 ? transfer_ns(kind, a, n, std::min(size, fill), p.bw_factor, net, per_node) : 0;
      p.base_ns = 1000 * lat_us + p.fill_ns;
      p.time_ns = p.base_ns + transfer_ns(kind, a, n, size, p.bw_factor, net, per_node);
      if (!best || p.time_ns < best->time_ns) best = p;
    }
  }
  if (!best && why && why->empty()) *why = "no algorithm runs " + kind;
  return best;
}

std::vector<Step> collective_steps(const std::string& kind, const CollectivePlan& p, int n, double size, int root,
                                   int per_node) {
  std::vector<Step> r;
  if (n < 2 && kind != "send") return r;
  const CollectiveAlgo algo = p.algo;
  const double w = size / p.bw_factor;  // wire bytes
  if (kind == "send") {
    Step st;
    st.latency_ns = p.step_ns, st.net_latency_ns = p.net_step_ns;
    st.transfers.push_back({0, 1, w});
    r.push_back(std::move(st));
  } else if (kind == "all_reduce") {
    if (algo == CollectiveAlgo::Ring) ring_steps(r, p, n, w / n, 2 * (n - 1), per_node);
    else if (algo == CollectiveAlgo::Tree) chain_steps(r, p, n, w, per_node);
    else if (algo == CollectiveAlgo::Nvls) {
      // Each member's buffer goes into the switch and its reduced slice (S/n) comes back; each
      // member stores its slice (S/n) and the switch multicasts every slice to all: (1 + 1/n) S
      // each way per member, both halves pipelined.
      Step st;
      st.latency_ns = p.step_ns;
      for (int i = 0; i < n; ++i) {
        st.transfers.push_back({i, i, w * (1 + 1.0 / n), Port::ToSwitch});
        st.transfers.push_back({i, i, w * (1 + 1.0 / n), Port::FromSwitch});
      }
      r.push_back(std::move(st));
    } else direct_step(r, p, n, w / n), direct_step(r, p, n, w / n);  // reduce-scatter, then all-gather
  } else if (kind == "all_gather" || kind == "reduce_scatter") {
    if (algo == CollectiveAlgo::Direct) direct_step(r, p, n, w / n);
    else ring_steps(r, p, n, w / n, n - 1, per_node);
  } else if (kind == "all_to_all") {
    if (algo == CollectiveAlgo::Direct) direct_step(r, p, n, w / n);
    else
      for (int k = 1; k < n; ++k) ring_steps(r, p, n, w / n, 1, 0, k);  // pairwise exchange
  } else if (kind == "broadcast") {
    if (algo == CollectiveAlgo::Tree) tree_steps(r, p, n, w, root, false);
    else {
      Step st;
      st.latency_ns = p.step_ns, st.net_latency_ns = p.net_step_ns;
      for (int i = 0; i < n; ++i)
        if (i != root) st.transfers.push_back({root, i, w});
      r.push_back(std::move(st));
    }
  } else if (kind == "reduce" || kind == "gather") {
    if (algo == CollectiveAlgo::Tree && kind == "reduce") tree_steps(r, p, n, w, root, true);
    else {
      Step st;
      st.latency_ns = p.step_ns, st.net_latency_ns = p.net_step_ns;
      for (int i = 0; i < n; ++i)
        if (i != root) st.transfers.push_back({i, root, kind == "gather" ? w / n : w});
      r.push_back(std::move(st));
    }
  } else {
    throw InternalError("no steps for collective " + kind);
  }
  return r;
}

std::vector<Step> collective_steps(const std::string& kind, CollectiveAlgo algo, int n, double size, int root) {
  return collective_steps(kind, plain_plan(algo), n, size, root, 0);
}

double play_step(Network& net, const Step& step, const std::vector<int>& dev, double t0_ns) {
  double end = t0_ns;
  const double lat = step.hops * (step.latency_ns >= 0 ? step.latency_ns : net.params().latency_ns);
  const double net_lat = step.hops * (step.net_latency_ns >= 0 ? step.net_latency_ns : net.params().nic_latency_ns);
  for (const Transfer& x : step.transfers) {
    const int a = dev[static_cast<size_t>(x.src)];
    if (x.port == Port::ToSwitch) end = std::max(end, net.to_switch(a, t0_ns, x.bytes) + lat);
    else if (x.port == Port::FromSwitch) end = std::max(end, net.from_switch(a, t0_ns, x.bytes) + lat);
    else {
      const int b = dev[static_cast<size_t>(x.dst)];
      end = std::max(end, net.transfer(a, b, t0_ns, x.bytes, net.node_of(a) == net.node_of(b) ? lat : net_lat));
    }
  }
  return end;
}

double play_collective(Network& net, const std::string& kind, const CollectivePlan& plan, const std::vector<int>& dev,
                       double size, int root, double t0_ns) {
  const int n = static_cast<int>(dev.size());
  // Members per node, when the members span nodes (the ring's rotations follow them).
  int per_node = 0;
  if (net.params().devices_per_node > 0 && n > 0) {
    int same = 0;
    for (int d : dev) same += net.node_of(d) == net.node_of(dev[0]);
    if (same < n) per_node = same;
  }
  double t = t0_ns + plan.base_ns;
  for (const Step& s : collective_steps(kind, plan, n, size, root, per_node)) t = play_step(net, s, dev, t);
  return t;
}

double collective_time_ns(const std::string& kind, CollectiveAlgo algo, int n, double size, double b, double alpha) {
  const double steps_ring = n - 1;
  if (kind == "send") return size / b + alpha;
  if (n < 2) return 0;
  if (kind == "all_reduce") {
    if (algo == CollectiveAlgo::Ring) return 2 * steps_ring / n * size / b + 2 * steps_ring * alpha;
    if (algo == CollectiveAlgo::Tree) return 2 * (size / b + steps_ring * alpha);
    if (algo == CollectiveAlgo::Nvls) return (1 + 1.0 / n) * size / b + alpha;
    return 2 * steps_ring / n * size / b + 2 * alpha;
  }
  if (kind == "all_gather" || kind == "reduce_scatter") {
    if (algo == CollectiveAlgo::Direct) return steps_ring / n * size / b + alpha;
    return steps_ring / n * size / b + steps_ring * alpha;
  }
  if (kind == "all_to_all") {
    if (algo == CollectiveAlgo::Direct) return steps_ring / n * size / b + alpha;
    return steps_ring / n * size / b + steps_ring * alpha;
  }
  throw InternalError("no closed form for collective " + kind);
}

}  // namespace npusim::models
