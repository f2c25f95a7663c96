// Report of a workload run as the library plan (docs/gpu_library.md): one row per kernel
// (the IR ops it covers, its class, tile or schedule, start, time, achieved TFLOPS, HBM bytes,
// bound), the time per kernel class, and totals; writers for the console table, JSON, CSV and a
// Chrome trace (one track of kernels). Same inputs, byte-identical files.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "models/gpu/gpu_timing.h"
#include "sim/config/hw_config.h"
#include "sim/report/fields.h"

namespace npusim::report {

struct LibraryKernelRow {
  int index = 0;
  std::string name, kernel_class, ir_ops, shape, schedule, dtype, bound;
  double start_us = 0, time_us = 0, share = 0;
  double macs = 0, flops = 0, tflops = 0, hbm_bytes = 0, min_bytes = 0;
  double bound_share = 0;
  int candidates = 1;
  double power_w = 0, energy_uj = 0;  // board power while it runs (docs/energy.md#gpus); 0: not modelled
};

struct LibraryReport {
  std::string workload, hw_name, hw_source;
  std::string launch, fusion;  // "graph" / "eager"; "on" / "off"
  std::string row_kernels;     // "one-pass" / "looped"
  double clock_mhz = 0;
  int num_sms = 0;
  double total_us = 0;     // launch of the first kernel to the end of the last
  double kernel_us = 0;    // the kernels' own time, summed
  double launch_us = 0;    // the rest: launches, gaps, host-bound waits
  double macs = 0, flops = 0, hbm_bytes = 0;
  double workload_macs = 0;     // the IR ops' MACs (Layer::macs), as every device reports them
  bool power_modelled = false;  // gpu.power.tdp_w is set
  double energy_uj = 0;         // the kernels' energy and idle power over the gaps between them
  int batch = 1;                // inferences in the run: inferences_per_j
  int kernels = 0, distinct_kernels = 0;
  std::vector<LibraryKernelRow> rows;
  std::vector<std::pair<std::string, double>> time_by_class;  // kernel class -> us, largest first
  std::vector<std::string> free_ops;
  std::vector<std::pair<std::string, std::string>> config;  // resolved gpu.* parameters
};

// The run-level fields (docs/reports.md#gpu-library-plan-reports): the JSON report's totals
// (kInTotals) and the columns of a GPU sweep row (kInSweep), in table order.
using LibraryField = Field<LibraryReport, nlohmann::ordered_json>;
const std::vector<LibraryField>& library_fields();
// One kernel row's fields: the JSON report's "layers" and the CSV, in this order.
using KernelField = Field<LibraryKernelRow, nlohmann::ordered_json>;
const std::vector<KernelField>& library_kernel_fields();
// A sweep row's metrics: the kInSweep fields and "layers": [{name, class, time_us, bound}].
nlohmann::ordered_json library_sweep_metrics(const LibraryReport& r);

std::string format_library_table(const LibraryReport& r);
nlohmann::ordered_json library_to_json(const LibraryReport& r);
std::string library_to_csv(const LibraryReport& r);
nlohmann::ordered_json library_chrome_trace(const LibraryReport& r);

}  // namespace npusim::report
