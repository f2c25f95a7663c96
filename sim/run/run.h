// The one way anything simulates a workload (docs/reports.md#one-run): the CLI, sweeps, regress,
// compare-trace, `sim llm`'s passes and the Python API (through the CLI) call run(). It
// dispatches on the hardware's device - an NPU config (map, simulate, report), a GPU config (the
// library plan, or ARK's DefaultPlanner with --gpu-plan ark) or a system config (a pipeline over
// the system's devices) - and returns one RunRecord, whose writers every caller shares: the
// console table, the JSON report, CSV, the Chrome trace and a sweep row's metrics.
// SystemC elaborates once per process: one run() per process (fork with run::run_forked).
#pragma once
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/config/system_config.h"
#include "sim/mapping/gpu_library.h"
#include "sim/mapping/gpu_stats.h"
#include "sim/run/workload.h"

namespace npusim::report { struct LibraryReport; }

namespace npusim::run {

struct NpuRun;
struct SystemRun;

// The hardware a run is on: a device config (device npu or gpu) or a system config.
struct Hardware {
  std::string device;  // "npu", "gpu" or "system"
  std::optional<config::HwConfig> hw;        // npu, gpu
  std::optional<config::SystemConfig> system;  // system

  // A YAML file or a shipped config's name, with --set overrides (a system's: system.* keys and
  // its devices' keys); InputError as the config readers give it.
  static Hardware load(const std::string& spec, const std::vector<std::string>& overrides = {});
  static Hardware of(const config::HwConfig& cfg);
  static Hardware of(const config::SystemConfig& cfg);
};

struct RunOptions {
  mapping::LibraryOptions library;  // GPU library plan: as `sim --ir` by default (fusion on, graph launch)
  bool ark_plan = false;            // GPU: the workload lowered to ARK ops under ARK's DefaultPlanner
  int64_t max_program_bytes = int64_t{8} << 30;  // NPU: --max-memory
};

// One run's results. Each device keeps its own report (its fields differ: docs/reports.md), and
// the writers below dispatch on it, so no caller does.
class RunRecord {
 public:
  RunRecord();
  ~RunRecord();
  RunRecord(RunRecord&&) noexcept;
  RunRecord& operator=(RunRecord&&) noexcept;

  const std::string& device() const { return m_device; }
  std::string table() const;                // the console table
  std::string json_text() const;            // the --report file (JSON, indented, with its newline)
  std::string csv_text() const;             // the --csv file
  std::string trace_text() const;           // the --trace file (Chrome / Perfetto JSON)
  nlohmann::ordered_json sweep_metrics() const;  // a sweep row: the device's columns and "layers"

  // The device's own report, for callers that need more than the writers (null on another device).
  const NpuRun* npu() const;
  const report::LibraryReport* gpu_library() const;
  const mapping::GpuSimResult* gpu_sim() const;  // ARK plans: what the GPU model measured
  const SystemRun* system() const;

  struct Impl;  // the device's report and what it was built from (run.cpp)

 private:
  friend RunRecord run(const Workload&, const Hardware&, const RunOptions&);
  std::string m_device;
  std::unique_ptr<Impl> m_impl;
};

// InputError when the workload does not fit the hardware's kind (a pipeline on one device's
// config, a graph on a system) or cannot run on it.
RunRecord run(const Workload& w, const Hardware& hw, const RunOptions& o = {});

}  // namespace npusim::run
