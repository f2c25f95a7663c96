#include "sim/run/collective_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/interconnect/collectives.h"
#include "sim/config/system_config.h"
#include "sim/engine/system_engine.h"
#include "sim/ir/error.h"

namespace npusim::run {

namespace {

// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): what a ring moves per byte.
double bus_factor(const std::string& kind, int n) {
  if (kind == "all_reduce") return 2.0 * (n - 1) / n;
  if (kind == "all_gather" || kind == "reduce_scatter" || kind == "all_to_all") return 1.0 * (n - 1) / n;
  return 1;
}

// Members: the first `ranks` devices, or `per_node` devices of each node in turn.
std::vector<int> members(const config::SystemConfig& cfg, int ranks, int per_node) {
  const int total = static_cast<int>(cfg.devices.size());
  const int k = cfg.network.devices_per_node > 0 ? cfg.network.devices_per_node : total;
  if (ranks == 0) ranks = per_node > 0 ? per_node * (total / k) : total;
  if (per_node == 0) per_node = std::min(ranks, k);
  if (per_node > k)
    throw InputError("sim collective", "--per-node", std::to_string(per_node) + " ranks per node, but " + cfg.source + " has " +
                                                           std::to_string(k) + " devices per node");
  std::vector<int> m;
  for (int node = 0; static_cast<int>(m.size()) < ranks; ++node) {
    if (node * k >= total)
      throw InputError("sim collective", "--ranks", std::to_string(ranks) + " ranks at " + std::to_string(per_node) +
                                                        " per node need more than the " + std::to_string(total) + " devices of " + cfg.source);
    for (int i = 0; i < per_node && static_cast<int>(m.size()) < ranks; ++i) m.push_back(node * k + i);
  }
  return m;
}

}  // namespace

CollectiveRecord collective(const std::string& hw, const CollectiveOptions& o) {
  const std::vector<std::string> kinds = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "gather", "send"};
  if (std::find(kinds.begin(), kinds.end(), o.kind) == kinds.end())
    throw InputError("sim collective", o.kind, "not a collective; one of: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, send");
  if (!config::is_system_config(hw))
    throw InputError(hw, "system", "not a system description (a YAML file with a `system:` section, docs/system.md)");
  config::SystemConfig cfg = config::SystemConfig::load(hw, o.sets);
  if (!o.algo.empty() && o.algo != "auto") {
    auto a = models::parse_algo(o.algo);
    if (!a) throw InputError("sim collective", "--algo", "'" + o.algo + "' is not one of: auto, ring, tree, direct, pairwise, nvls");
    cfg.algorithms[o.kind] = *a;
  } else if (o.algo == "auto") {
    cfg.algorithms.erase(o.kind);
  }
  if (!o.protocol.empty()) {
    if (!cfg.library) throw InputError("sim collective", "--protocol", cfg.source + " has no library model (system.collectives.model: nccl)");
    cfg.library->protocol = o.protocol == "auto" ? std::nullopt : models::parse_protocol(o.protocol);
    if (o.protocol != "auto" && !cfg.library->protocol)
      throw InputError("sim collective", "--protocol", "'" + o.protocol + "' is not one of: auto, ll, ll128, simple");
  }
  const std::vector<int> dev = members(cfg, o.ranks, o.per_node);
  const int n = static_cast<int>(dev.size());
  if (o.kind == "send" ? n != 2 : n < 2)
    throw InputError("sim collective", "--ranks", o.kind + (o.kind == "send" ? " needs exactly 2 ranks" : " needs at least 2 ranks"));
  std::vector<double> sizes = o.sizes;
  if (sizes.empty()) {
    if (!(o.min_bytes > 0) || !(o.max_bytes >= o.min_bytes) || !(o.factor > 1))
      throw InputError("sim collective", "-b/-e/-f", "give --sizes, or -b MIN -e MAX (bytes, 0 < MIN <= MAX) and -f FACTOR > 1");
    for (double s = o.min_bytes; s <= o.max_bytes * (1 + 1e-12) && sizes.size() < 100000; s *= o.factor) sizes.push_back(std::round(s));
  }
  for (double s : sizes)
    if (!(s > 0) || s > 1e15) throw InputError("sim collective", "--sizes", "every size must be in (0, 1e15] bytes");

  CollectiveRecord r;
  r.kind = o.kind;
  r.system_name = cfg.name;
  r.system_source = cfg.source;
  r.model = cfg.library ? "nccl" : "plain";
  r.generation = cfg.library ? cfg.library->generation : "";
  r.ranks = n;
  r.devices = dev;
  r.host_us = o.host_us;
  for (double s : sizes) {
    const models::CollectivePlan plan = engine::collective_plan(cfg, o.kind, n, s);
    models::Network net(static_cast<int>(cfg.devices.size()), cfg.network);
    // Back to back, an iteration takes the longer of the host's launches and the collective.
    const double t = std::max(1000 * o.host_us, models::play_collective(net, o.kind, plan, dev, s, 0, 0));
    const double algbw = s / t;  // bytes per ns = GB/s
    r.rows.push_back({s, t / 1000, algbw, algbw * bus_factor(o.kind, n), engine::plan_name(plan), plan.channels});
  }
  return r;
}

nlohmann::json CollectiveRecord::json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const CollectiveRow& x : this->rows)
    rows.push_back({{"size_bytes", x.size_bytes}, {"time_us", x.time_us}, {"algbw_gbps", x.algbw_gbps}, {"busbw_gbps", x.busbw_gbps},
                    {"plan", x.plan}, {"channels", x.channels}});
  return {{"collective", kind}, {"system", {{"name", system_name}, {"source", system_source}}}, {"ranks", ranks},
          {"devices", devices}, {"model", model}, {"host_us", host_us}, {"rows", rows}};
}

std::string CollectiveRecord::table() const {
  std::string out;
  char b[512];
  std::snprintf(b, sizeof b, "# %s over %d ranks of %s (%s)\n", kind.c_str(), ranks, system_name.c_str(),
                model == "nccl" ? ("nccl model, " + generation).c_str() : "plain model");
  out += b;
  std::snprintf(b, sizeof b, "# %14s  %12s  %10s  %10s  %s\n", "size (B)", "time (us)", "algbw GB/s", "busbw GB/s", "plan");
  out += b;
  for (const CollectiveRow& x : rows) {
    std::snprintf(b, sizeof b, "  %14.0f  %12.3f  %10.2f  %10.2f  %s\n", x.size_bytes, x.time_us, x.algbw_gbps, x.busbw_gbps, x.plan.c_str());
    out += b;
  }
  return out;
}

}  // namespace npusim::run
