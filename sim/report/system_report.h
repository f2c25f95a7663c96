// Outputs of a multi-device run (docs/system.md#report): per supertask, per device (busy /
// waiting on communication / idle), per link (bytes, utilisation), the critical path; console
// table, JSON, CSV and a Chrome trace with one process per device and one track per link.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/config/system_config.h"
#include "models/interconnect/system_stats.h"
#include "sim/ir/system.h"

namespace npusim::report {

struct SystemReport {
  std::string workload, hw_name, hw_source;
  const ir::System* sys = nullptr;
  const models::SystemSimResult* sim = nullptr;
  std::vector<std::string> lane_of_task;  // device name per supertask ("" for input / output)
  std::vector<int> estimated;             // supertasks whose compute time is an estimate
  double energy_uj = -1;                  // the used devices' energy (docs/energy.md#systems); < 0: not modelled
  double link_energy_uj = -1;             // of it, the links' and NICs' (< 0: not costed)
};

std::string format_system_table(const SystemReport& r);
nlohmann::json system_to_json(const SystemReport& r);
std::string system_to_csv(const SystemReport& r);
nlohmann::json system_chrome_trace(const SystemReport& r);

// A system sweep's row (docs/sweeps.md#systems): the columns, in order, and one run's values
// with its supertasks as "layers" (name, op = kind, device, time_us).
const std::vector<std::string>& system_sweep_fields();
nlohmann::ordered_json system_sweep_metrics(const SystemReport& r);
// The Markdown tables of the run-level fields (totals, sweeps) and of a supertask row (JSON
// "supertasks" and the CSV): docs/reports.md#system-reports.
std::string system_fields_markdown();
std::string supertask_fields_markdown();

}  // namespace npusim::report
