// One workload graph simulated on one device's own model (docs/system.md, docs/llm.md): the GPU
// library plan (or ARK's DefaultPlanner) on a GPU config, the NPU mapping and engine otherwise.
// Each call runs SystemC, which elaborates once per process: callers fork a child per call
// (run::run_forked) and pass the result back as text (to_text / from_text).
#pragma once
#include <map>
#include <string>

#include "sim/config/hw_config.h"
#include "sim/ir/graph.h"
#include "sim/mapping/gpu_library.h"

namespace npusim::run {

struct DeviceRunOptions {
  mapping::LibraryOptions library;  // GPU library plan options
  bool ark_plan = false;            // GPU: ARK's DefaultPlanner instead of the library plan
};

struct DeviceRun {
  double ns = 0;            // the graph's time
  double memory_bytes = 0;  // its DRAM / HBM traffic (0: not known)
  double memory_rate = 0;   // the device's memory bytes per ns
  // GPU library plan: kernel time by kernel class ("gemm", "attention", "rowwise"...), ns.
  std::map<std::string, double> by_class_ns;

  std::string to_text() const;
  static DeviceRun from_text(const std::string& text);
};

DeviceRun simulate_on_device(const ir::Graph& g, const config::HwConfig& hw, const DeviceRunOptions& o);

}  // namespace npusim::run
