// `sim collective KIND --hw SYSTEM` (docs/system.md#collective-command): one collective over
// the system's network at a range of sizes, as nccl-tests' *_perf print it: time, algorithm
// bandwidth, bus bandwidth and the plan (algorithm/protocol) the library model picks. Each size
// is played on an idle network (models/interconnect), no SystemC needed.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "models/interconnect/collectives.h"
#include "sim/cli/commands.h"
#include "sim/config/system_config.h"
#include "sim/engine/system_engine.h"
#include "sim/ir/error.h"
#include "sim/report/format.h"

namespace npusim::cli {

namespace {

struct CollectiveCliOptions {
  std::string kind, hw;
  int ranks = 0, per_node = 0;
  std::vector<double> sizes;
  double min_bytes = 0, max_bytes = 0, factor = 2;
  double host_us = 0;  // --host-us: one thread launching for every rank (nccl-tests -g N)
  std::string algo, protocol, json;
  std::vector<std::string> sets;  // --set: system.* keys and device keys (SystemConfig::load)
};

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

int run_collective_cmd(const CollectiveCliOptions& o) {
  const std::vector<std::string> kinds = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "gather", "send"};
  if (std::find(kinds.begin(), kinds.end(), o.kind) == kinds.end())
    throw InputError("sim collective", o.kind, "not a collective; one of: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, send");
  if (!config::is_system_config(o.hw))
    throw InputError(o.hw, "system", "not a system description (a YAML file with a `system:` section, docs/system.md)");
  config::SystemConfig cfg = config::SystemConfig::load(o.hw, o.sets);
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

  nlohmann::json rows = nlohmann::json::array();
  std::printf("# %s over %d ranks of %s (%s)\n", o.kind.c_str(), n, cfg.name.c_str(), cfg.library ? ("nccl model, " + cfg.library->generation).c_str() : "plain model");
  std::printf("# %14s  %12s  %10s  %10s  %s\n", "size (B)", "time (us)", "algbw GB/s", "busbw GB/s", "plan");
  for (double s : sizes) {
    const models::CollectivePlan plan = engine::collective_plan(cfg, o.kind, n, s);
    models::Network net(static_cast<int>(cfg.devices.size()), cfg.network);
    // Back to back, an iteration takes the longer of the host's launches and the collective.
    const double t = std::max(1000 * o.host_us, models::play_collective(net, o.kind, plan, dev, s, 0, 0));
    const double algbw = s / t;  // bytes per ns = GB/s
    const double busbw = algbw * bus_factor(o.kind, n);
    std::printf("  %14.0f  %12.3f  %10.2f  %10.2f  %s\n", s, t / 1000, algbw, busbw, engine::plan_name(plan).c_str());
    rows.push_back({{"size_bytes", s}, {"time_us", t / 1000}, {"algbw_gbps", algbw}, {"busbw_gbps", busbw},
                    {"plan", engine::plan_name(plan)}, {"channels", plan.channels}});
  }
  if (!o.json.empty()) {
    nlohmann::json j = {{"collective", o.kind}, {"system", {{"name", cfg.name}, {"source", cfg.source}}}, {"ranks", n},
                        {"devices", dev}, {"model", cfg.library ? "nccl" : "plain"}, {"host_us", o.host_us}, {"rows", rows}};
    write_output(o.json, j.dump(1) + "\n");
  }
  return kOk;
}

}  // namespace

std::function<int()> add_collective_command(CLI::App& app) {
  auto o = std::make_shared<CollectiveCliOptions>();
  auto* cmd = app.add_subcommand("collective", "time one collective over a system's network at a range of sizes, as nccl-tests prints it (docs/system.md#collective-command)");
  cmd->add_option("kind", o->kind, "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather or send")->required();
  cmd->add_option("--hw", o->hw, "system description (docs/system.md)")->required();
  cmd->add_option("--ranks", o->ranks, "members (default: every device; send: 2)")->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--per-node", o->per_node, "members taken from each node in turn (default: fill nodes)")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--sizes", o->sizes, "sizes in bytes (all_reduce: each rank's buffer; all_gather: the gathered result)")->delimiter(',');
  cmd->add_option("-b,--min-bytes", o->min_bytes, "smallest size (with -e and -f)");
  cmd->add_option("-e,--max-bytes", o->max_bytes, "largest size");
  cmd->add_option("-f,--step-factor", o->factor, "size multiplier")->capture_default_str();
  cmd->add_option("--algo", o->algo, "force the algorithm: auto, ring, tree, direct, pairwise, nvls");
  cmd->add_option("--protocol", o->protocol, "force the protocol (nccl model): auto, ll, ll128, simple");
  cmd->add_option("--host-us", o->host_us, "host time per iteration when one thread launches for every rank, as "
                                           "nccl-tests -g N runs (an iteration takes at least this long; default 0: kernel time)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--json", o->json, "also write the rows as JSON");
  cmd->add_option("--set", o->sets, "override a system key (system.link.bandwidth_gbps=450) or every device's key (repeatable)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_collective_cmd(*o);
  };
}

}  // namespace npusim::cli
