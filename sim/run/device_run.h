// One workload graph simulated on one device's own model (docs/system.md, docs/llm.md): the GPU
// library plan (or ARK's DefaultPlanner) on a GPU config, the NPU mapping and engine otherwise.
// Each call runs SystemC, which elaborates once per process: callers fork a child per call
// (run::run_forked) and pass the result back as a RunSummary (JSON).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/ir/graph.h"
#include "sim/mapping/gpu_library.h"

namespace npusim::run {

struct DeviceRunOptions {
  mapping::LibraryOptions library;  // GPU library plan options
  bool ark_plan = false;            // GPU: ARK's DefaultPlanner instead of the library plan
};

// What a forked worker sends back (run::run_forked): one simulated run's summary, to and from
// JSON, for every caller that simulates in children (system runs, serving passes, gpu-calibrate).
struct RunSummary {
  double ns = 0;            // the run's time
  double memory_bytes = 0;  // its DRAM / HBM traffic (0: not known)
  double memory_rate = 0;   // the device's memory bytes per ns
  // GPU library plan: kernel time by kernel class ("gemm", "attention", "rowwise"...), ns;
  // NPU: layer time by class.
  std::map<std::string, double> by_class_ns;
  std::vector<double> stage_ns;  // a pipeline pass on a system: the time each stage holds it
  double energy_uj = -1;         // the run's energy (docs/energy.md); < 0: not modelled
  std::string bound;             // one GPU kernel (gpu-calibrate): the limiter that decided most
  double bound_share = 0;        // ... and its share of the kernel's time

  // Times travel at 1e-6 ns, bytes at 0.1 B, rates at 9 digits, shares at 1e-6 (the workers'
  // earlier text format), so results are the same whether a run was forked or not.
  std::string to_json() const;
  static RunSummary from_json(const std::string& text);
};

RunSummary simulate_on_device(const ir::Graph& g, const config::HwConfig& hw, const DeviceRunOptions& o);

// The device's power with nothing to run (docs/energy.md): a GPU's gpu.power.idle_w, an NPU's
// energy.static_w.
double idle_power_w(const config::HwConfig& hw);

}  // namespace npusim::run
