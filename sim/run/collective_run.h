// One collective over a system's network at a range of sizes (docs/system.md#collective-command),
// as a library call: what `sim collective` and Python's npusim.collective run. Each size is played
// on an idle network (models/interconnect) with the plan the system's library model picks
// (engine::collective_plan): time, algorithm and bus bandwidth as nccl-tests' *_perf print them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace npusim::run {

struct CollectiveOptions {
  std::string kind;  // all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, gather, send
  int ranks = 0, per_node = 0;  // members: the first `ranks` devices (0: all), `per_node` of each node in turn
  std::vector<double> sizes;    // bytes; empty: min_bytes .. max_bytes by factor
  double min_bytes = 0, max_bytes = 0, factor = 2;
  double host_us = 0;  // one thread launching for every rank (nccl-tests -g N): an iteration's floor
  std::string algo, protocol;  // forced (auto: the model's choice)
  std::vector<std::string> sets;  // system.* keys and device keys (SystemConfig::load)
};

struct CollectiveRow {
  double size_bytes = 0, time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  std::string plan;  // algorithm[/protocol]
  int channels = 0;
};

struct CollectiveRecord {
  std::string kind, system_name, system_source, model, generation;  // model: nccl or plain
  int ranks = 0;
  std::vector<int> devices;
  double host_us = 0;
  std::vector<CollectiveRow> rows;
  nlohmann::json json() const;  // `sim collective --json`
  std::string table() const;    // what `sim collective` prints
};

// InputError naming the option or file on bad input.
CollectiveRecord collective(const std::string& hw, const CollectiveOptions& o);

}  // namespace npusim::run
