// Per-layer statistics of one run and their writers: console table, JSON, CSV, Chrome trace.
// Every writer reads the same field list, so headers and values cannot drift. Output is
// deterministic: same inputs, byte-identical files.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/report/fields.h"

namespace npusim::report {

struct LayerRow {
  int layer_index = 0;
  std::string name, op, device;
  int64_t start_cycle = 0, end_cycle = 0;
  int64_t cycles = 0;          // NPU time charged to this layer (compute frontier, docs/timing.md#per-layer-cycles-and-bound)
  double time_us = 0;          // cycles at the configured clock
  double share = 0;            // of the NPU total
  int64_t pe_busy_cycles = 0, vp_busy_cycles = 0, dma_busy_cycles = 0, stall_cycles = 0;
  int64_t macs = 0;
  double pe_utilization = 0;   // macs / (cycles * peak MAC/cycle)
  int64_t dram_read_bytes = 0, dram_write_bytes = 0;  // served by the DRAM model
  int64_t l2_bytes = 0;          // moved through the L2 port (counted by the L2 model)
  int64_t port_wait_cycles = 0;  // unit time spent waiting for the L2 port
  int64_t dram_wait_cycles = 0;  // DMA time spent waiting for DRAM beyond the channel's rate
  int row_tiles = 1, k_chunks = 1, batch_groups = 1;
  std::string bound;           // compute / memory / vector / host
  double energy_uj = 0;
};

// One unit's use over a run, from its model's own statistics (models/npu/units.h UnitStats,
// models/npu/buffer.h BufferStats, models/memory/dram.h DramStats).
struct UnitUse {
  std::string unit;          // pe_array, vector, dma, l2, dram
  int64_t busy_cycles = 0;   // summed over its channels
  double utilization = 0;    // busy / (npu_cycles x channels)
  int64_t bytes = -1;        // moved (L2 port, DRAM); -1: not a memory
};

// A multi-core chip's use of its cores, NoC and DRAM channels (docs/multicore.md#reports);
// absent (cores == 1) on a one-core NPU.
struct CoreUse {
  int core = 0;
  int64_t pe_busy_cycles = 0, vp_busy_cycles = 0, dma_busy_cycles = 0, l2_bytes = 0;
  double pe_utilization = 0;  // PE busy / npu_cycles
  double vp_utilization = 0;  // VP busy / npu_cycles
};
struct LinkUse {
  std::string link;
  int64_t bytes = 0;
  double busy_cycles = 0, utilization = 0;  // of npu_cycles
};
struct CoreSpan {
  int core = 0;
  int64_t start_cycle = 0, end_cycle = 0;  // the layer's first and last PE / VP work on this core
};
struct LayerCores {
  std::string name, split;  // split: rows, channels or one (one core)
  int cores = 1;
  int64_t noc_bytes = 0, noc_wait_cycles = 0;
  std::vector<CoreSpan> spans;  // by core, the cores it computed on
};
struct TenantUse {  // one workload of a multi-tenant run (docs/multicore.md#multi-tenancy)
  std::string workload;
  int first_core = 0, cores = 0;
  int64_t start_cycle = 0, end_cycle = 0, macs = 0;
};
struct MulticoreUse {
  int cores = 1;
  std::string noc_topology;
  std::vector<CoreUse> per_core;
  std::vector<LinkUse> noc_links;
  int64_t noc_transfers = 0, noc_wait_cycles = 0;
  std::vector<double> dram_channel_utilization;  // each channel's bus busy / npu_cycles
  std::vector<LayerCores> layers;                // NPU layers, in execution order
  std::vector<TenantUse> tenants;                // several workloads at once (sim --tenant)
};

// One command of the run on its unit (the trace's rows): what ran, where and when.
struct CommandSpan {
  std::string label, unit, layer;  // unit: pe_array, vector, dma or host
  int core = 0, channel = 0;       // channel: a DMA command's queue
  int64_t start_cycle = 0, end_cycle = 0;
  int64_t bytes = 0;  // dma: bytes moved
  int64_t macs = 0;   // pe_array: multiply-accumulates
};

// Energy of a run by unit, in uJ (docs/energy.md).
struct EnergyUse {
  double pe_array_uj = 0, vector_uj = 0, sram_uj = 0, dram_uj = 0, static_uj = 0;
  double dma_uj = 0, noc_uj = 0;
};

struct RunReport {
  std::string workload, hw_name, hw_source;
  double clock_mhz = 0;
  double peak_macs_per_cycle = 0;   // for the first layer's dtype
  double dram_bytes_per_cycle = 0;
  std::vector<LayerRow> layers;     // NPU layers then host layers, each in execution order
  int64_t npu_cycles = 0;           // end of the last NPU layer
  int64_t host_cycles = 0;          // sum of host (cpu) layers, reported separately
  int64_t total_macs = 0;
  int64_t dram_read_bytes = 0, dram_write_bytes = 0;
  double pe_utilization = 0;
  double energy_uj = 0;             // every layer's: the sum of energy's parts
  bool energy_modelled = false;     // some energy.* cost is set (else energy is not reported in sweeps)
  EnergyUse energy;                 // by unit (docs/energy.md)
  int batch = 1;                    // inferences in the run (the workload's batch): inferences_per_j
  int64_t pe_count = 0;             // PE array rows x cols x cores
  int64_t l2_size_bytes = 0;        // every core's L2
  std::vector<std::pair<std::string, std::string>> config;  // resolved hardware parameters
  std::vector<UnitUse> units;       // filled by run::simulate_npu_workload (empty: not simulated here)
  MulticoreUse multicore;           // cores > 1: filled by run::simulate_npu_workload
  std::vector<CommandSpan> commands;  // every command but joins, in program order (the trace)
};

// energy_uj over the run's NPU and host time, in W.
double average_power_w(const RunReport& r);

// The bound with the most layer cycles (compute, memory, vector, host; ties to the earlier).
std::string dominant_bound(const RunReport& r);

// One field of a layer row: its name in JSON and CSV, unit, meaning and value. Every writer
// (JSON, CSV, sweep rows, docs/reports.md) reads this one table.
using LayerField = Field<LayerRow>;
const std::vector<LayerField>& layer_fields();
// The Markdown table of layer fields (docs/reports.md).
std::string layer_fields_markdown();

// One run-level figure: JSON report `totals` and/or a sweep result column (docs/reports.md).
// Both outputs read this one table.
using RunField = Field<RunReport>;  // kInTotals: JSON totals; kInSweep: a sweep column, in this order
const std::vector<RunField>& run_fields();
// A sweep row's metrics (computed in the worker): the kInSweep fields, in order, and "layers":
// [{name, op, cycles, bound}] (docs/sweeps.md#results).
nlohmann::ordered_json sweep_metrics(const RunReport& r);
// The Markdown tables of layer and run fields (docs/reports.md).
std::string run_fields_markdown();

std::string format_table(const RunReport& r);
std::string format_multicore(const RunReport& r);          // the table's lines on cores, NoC, DRAM channels
nlohmann::json multicore_json(const MulticoreUse& m);      // the report's "multicore" object
nlohmann::json to_json(const RunReport& r);
std::string to_csv(const RunReport& r);
// Chrome trace event format: one track per unit (PE array, vector, each DMA channel, host) plus
// a track of layer spans; opens in ui.perfetto.dev.
nlohmann::json chrome_trace(const RunReport& r);

}  // namespace npusim::report
