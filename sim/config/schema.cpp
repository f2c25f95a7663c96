// Assembles the schema of every hardware parameter from the units' declarations, each next to
// its params struct (docs/config.md is generated from the result by `sim config --markdown`).
// The declarations are header-only so this library needs none of the units' code: it includes
// their declarations, not their formulas. Only the top-level keys are declared here.
#include "sim/config/hw_config.h"

#include "models/gpu/gpu_power.h"
#include "models/gpu/gpu_timing.h"
#include "models/interconnect/noc.h"
#include "models/memory/dram_timing.h"
#include "models/npu/buffer_params.h"
#include "models/npu/dma_timing.h"
#include "models/npu/energy_params.h"
#include "models/npu/isa_timing.h"
#include "models/npu/pe_array_timing.h"
#include "models/npu/vector_processor_timing.h"
#include "sim/mapping/mapper_params.h"

namespace npusim::config {

const std::vector<ParamDecl>& top_level_params() {
  using T = ParamType;
  static const std::vector<ParamDecl> decls = {
      {"name", T::String, "npu", "", "name of this hardware description (shown in reports)", {}, range::none},
      {"clock_mhz", T::Double, "1000", "MHz", "core clock; all unit cycles are in this clock", {}, range::clock},
      {"device", T::String, "npu", "", "the device model that runs a workload: npu (npu.* keys) or gpu (gpu.* keys)",
       {"npu", "gpu"}, range::none},
  };
  return decls;
}

// In documentation order: the NPU's units from the PE array out to DRAM and the host, then the
// GPU (whose keys do not matter for an NPU run, and the other way round).
const std::vector<const std::vector<ParamDecl>*>& unit_param_lists() {
  static const std::vector<const std::vector<ParamDecl>*> lists = {
      &top_level_params(),
      &models::PeArrayParams::params(),
      &models::VpParams::params(),
      &models::BufferParams::params(),
      &models::DmaParams::params(),
      &models::IsaParams::params(),
      &models::NocParams::params(),
      &mapping::MapperParams::params(),
      &models::DramParams::params(),
      &mapping::HostParams::params(),
      &models::EnergyParams::params(),
      &models::GpuParams::params(),
      &models::GpuPowerParams::params(),
  };
  return lists;
}

const std::vector<ParamDecl>& schema() {
  static const std::vector<ParamDecl> s = [] {
    std::vector<ParamDecl> all;
    for (const auto* list : unit_param_lists()) all.insert(all.end(), list->begin(), list->end());
    return all;
  }();
  return s;
}

const ParamDecl* find_param(const std::string& path) {
  for (const auto& p : schema())
    if (p.path == path) return &p;
  return nullptr;
}

}  // namespace npusim::config
