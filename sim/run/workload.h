// What a run simulates (sim/run/run.h): one device's workload graph, or a multi-device pipeline.
// Header-only and SystemC-free, so sweeps and regress can name a workload without the engine.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace npusim::ir { struct Graph; struct System; }
namespace npusim::gpu { struct Program; }

namespace npusim::run {

// A serving run (`sim llm`, docs/llm.md) of a zoo model with its serving options (name -> value
// text, llm::serving_options()): a sweep's `llm:` workload.
struct ServingWorkload {
  std::string model;
  std::vector<std::pair<std::string, std::string>> options;
};

// Exactly one is set; the caller keeps it alive for as long as the run's record is used.
struct Workload {
  const ir::Graph* graph = nullptr;    // on an NPU or GPU config
  const ir::System* system = nullptr;  // on a system config
  // ARK plans, one per rank (`sim --plan`, `--model`, gpu-calibrate's kernels), on a GPU config,
  // reported under plans_name. Run as given: a plan file is checked against the device where it
  // is read (frontends::validate_against_device); calibration kernels pack several blocks per SM.
  const std::vector<gpu::Program>* plans = nullptr;
  std::string plans_name;
  const ServingWorkload* serving = nullptr;  // with a device or system config (not run::run's: the CLI's `sim llm`)
  // Multi-tenancy on a multi-core NPU (docs/multicore.md#multi-tenancy): more graphs that run at
  // the same time as `graph`, each on its own cores (`sim --tenant`); tenant_cores: the cores of
  // each, `graph` first (empty: the chip's cores shared equally).
  std::vector<const ir::Graph*> tenants;
  std::vector<int> tenant_cores;
};

}  // namespace npusim::run
