// Every NPU unit's params, built once per run from the hardware description and handed (const
// ref) to the mapper, the engine's units and the report, so no key is parsed twice.
#pragma once
#include "models/interconnect/noc.h"
#include "models/memory/dram_timing.h"
#include "models/npu/buffer_params.h"
#include "models/npu/dma_timing.h"
#include "models/npu/energy_params.h"
#include "models/npu/pe_array_timing.h"
#include "models/npu/vector_processor_timing.h"
#include "sim/config/hw_config.h"
#include "sim/mapping/mapper_params.h"

namespace npusim::mapping {

struct NpuParams {
  double clock_mhz = 1000;
  models::PeArrayParams pe;
  models::VpParams vp;
  models::BufferParams buffers;
  models::DmaParams dma;
  models::DramParams dram;
  HostParams host;
  MapperParams mapper;
  models::EnergyParams energy;
  int cores = 1;           // npu.cores: each its own PE array, VP, L2, weight buffer and DMA
  models::NocParams noc;   // between the cores and the DRAM controllers (cores > 1)
  // Not a hardware key: the memory the mapped program and its timings may take (`sim
  // --max-memory`); the mapper refuses a workload beyond it before building the rest.
  int64_t max_program_bytes = int64_t{8} << 30;

  static NpuParams read(const config::HwConfig& c);
};

}  // namespace npusim::mapping
