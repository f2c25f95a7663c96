#include "sim/mapping/npu_params.h"

namespace npusim::mapping {

namespace {
// mapping.multicore: fused: the chip's cores fused into one core (RNGD's fused PEs): an array
// of every core's PEs (the smaller side doubled in turn, so 8 cores of 128 x 64 make 256 x 256;
// other counts multiply the rows), and every core's L2, weight buffer, read and write ports,
// vector lanes and DMA channels (docs/multicore.md#fused-cores).
void fuse_cores(NpuParams& p) {
  const int64_t n = p.cores;
  int64_t left = n;
  while (left > 1 && left % 2 == 0) {
    (p.pe.rows <= p.pe.cols ? p.pe.rows : p.pe.cols) *= 2;
    left /= 2;
  }
  p.pe.rows *= left;
  p.pe.act_read_bytes_per_cycle *= static_cast<double>(n);
  p.pe.weight_read_bytes_per_cycle *= static_cast<double>(n);
  p.pe.out_write_bytes_per_cycle *= static_cast<double>(n);
  p.vp.lanes *= n;
  p.buffers.l2_bytes *= n;
  p.buffers.l2_bytes_per_cycle *= static_cast<double>(n);
  p.buffers.weight_buffer_bytes *= n;
  p.dma.channels *= n;
  p.cores = 1;
}
}  // namespace

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
  if (p.cores > 1 && c.get_string("mapping.multicore") == "fused") fuse_cores(p);
  p.mapper = MapperParams::read(c, p.buffers, p.host, p.cores);
  p.energy = models::EnergyParams::read(c);
  p.noc = models::NocParams::read(c);
  return p;
}

}  // namespace npusim::mapping
