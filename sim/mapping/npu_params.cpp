#include "sim/mapping/npu_params.h"

namespace npusim::mapping {

NpuParams NpuParams::read(const config::HwConfig& c) {
  NpuParams p;
  p.clock_mhz = c.get_double("clock_mhz");
  p.pe = models::PeArrayParams::read(c);
  p.vp = models::VpParams::read(c);
  p.buffers = models::BufferParams::read(c);
  p.dma = models::DmaParams::read(c);
  // The DMA issues transfers in bursts and segments; the DRAM serves them.
  p.dram = models::DramParams::read(c, p.dma.burst_bytes, p.dma.segment_overhead_cycles);
  p.host = HostParams::read(c);
  p.cores = static_cast<int>(c.get_int("npu.cores"));
  p.mapper = MapperParams::read(c, p.buffers, p.host, p.cores);
  p.energy = models::EnergyParams::read(c);
  p.noc = models::NocParams::read(c);
  return p;
}

}  // namespace npusim::mapping
