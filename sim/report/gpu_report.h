// Reports of a GPU run (docs/gpu.md#reports): per processor group (time, share, SM occupancy,
// achieved TFLOPS, bytes, bound, critical path) and per op, per rank; writers for the console
// table, JSON, CSV and a Chrome trace (one track per SM, or per group of SMs when a GPU has
// more than 32). Output is deterministic: same inputs, byte-identical files.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "models/gpu/gpu_timing.h"
#include "sim/config/hw_config.h"
#include "sim/ir/gpu_program.h"
#include "models/gpu/sm_stats.h"

namespace npusim::report {

struct GpuPgRow {
  int index = 0;
  std::string processors;  // "[0,108)"
  std::string ops;         // "T5 Matmul"; lowered workloads: "T5 Matmul Conv_0 (conv2d)"
  int64_t tasks = 0;
  double start_us = 0, end_us = 0, time_us = 0;
  double share = 0;        // of the rank's kernel time
  double occupancy = 0;    // its processors' busy time within [start, end) / (processors x time)
  double tflops = 0;       // achieved
  double flops = 0, hbm_bytes = 0, l2_bytes = 0, link_bytes = 0;
  std::string bound;       // math, smem, latency, port, l2, hbm, link, sync
  bool critical = false;   // on the chain of groups that decides the end time
};

struct GpuOpRow {
  int64_t task_info = 0;
  int op_index = 0;
  std::string name, type;
  std::string ir_op;       // kind of the workload-IR op it was lowered from ("conv2d"); "" for ARK files
  int64_t tasks = 0;
  double slot_us = 0;      // task time summed over slots
  double flops = 0, hbm_bytes = 0, l2_bytes = 0, link_bytes = 0;
  std::string bound;
};

struct GpuRankReport {
  int rank = 0;
  std::string plan;
  double end_us = 0;       // from the launch
  double kernel_us = 0;    // end - launch overhead
  double flops = 0, hbm_bytes = 0, l2_bytes = 0, link_out_bytes = 0;
  double hbm_utilization = 0;   // hbm busy / kernel time
  double sm_occupancy = 0;      // mean over all SMs of the GPU: busy / kernel time
  std::vector<double> sm_busy_us;  // per processor of the plan
  std::vector<GpuPgRow> pgs;
  std::vector<GpuOpRow> ops;
};

struct GpuReport {
  std::string workload, hw_name, hw_source;
  double clock_mhz = 0;
  int num_sms = 0;
  double launch_us = 0;
  double total_us = 0;     // the slowest rank, launch included
  std::vector<GpuRankReport> ranks;
  std::vector<std::pair<std::string, std::string>> config;  // resolved gpu.* parameters
};

// ir_ops: for a workload lowered from the IR (sim/mapping/gpu_lower.h), ARK op name -> kind
// of the IR op it came from; the rows then name their IR op and its kind.
GpuReport build_gpu_report(const std::string& workload, const std::vector<gpu::Program>& plans,
                           const models::GpuSimResult& sim, const config::HwConfig& cfg, const models::GpuParams& params,
                           const std::map<std::string, std::string>* ir_ops = nullptr);

std::string format_gpu_table(const GpuReport& r);
nlohmann::ordered_json gpu_to_json(const GpuReport& r);
std::string gpu_to_csv(const GpuReport& r);
// Chrome trace event format (ui.perfetto.dev): a process per rank, a track per SM (or per
// group of ceil(n/32) SMs when n > 32) with one span per task group and barrier, and a track
// of processor-group spans.
nlohmann::ordered_json gpu_chrome_trace(const GpuReport& r, const std::vector<gpu::Program>& plans,
                                        const models::GpuSimResult& sim);

// A plan as an ARK plan file (specs/plan_file.md, the layout of ARK main): what
// `--write-plan` writes; frontends::read_ark_plan reads it back.
nlohmann::ordered_json plan_to_json(const gpu::Program& p);

}  // namespace npusim::report
