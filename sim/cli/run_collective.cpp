// `sim collective KIND --hw SYSTEM` (docs/system.md#collective-command): the command line of
// run::collective() (sim/run/collective_run.h), printed as nccl-tests' *_perf print it.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "sim/cli/commands.h"
#include "sim/run/collective_run.h"

namespace npusim::cli {

namespace {

struct CollectiveCliOptions : run::CollectiveOptions {
  std::string hw, json;
};

int run_collective_cmd(const CollectiveCliOptions& o) {
  const run::CollectiveRecord r = run::collective(o.hw, o);
  std::fputs(r.table().c_str(), stdout);
  if (!o.json.empty()) write_output(o.json, r.json().dump(1) + "\n");
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
