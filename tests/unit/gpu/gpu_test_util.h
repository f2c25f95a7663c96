// Helpers of the GPU unit tests: real ARK example paths and tiny hand-built plans.
#pragma once
#include <string>

#include "frontends/ark/ark_reader.h"
#include "models/gpu/gpu_timing.h"
#include "sim/ir/gpu_program.h"

namespace npusim::test {

// Round GPU numbers so expected values can be derived by hand: 2048 flop/cycle per SM at the
// mma efficiency, 128 B/cycle shared memory, a 64 B/cycle SM port, L2 hits of 200 cycles, HBM
// misses of 1000, 20 cycles per K iteration.
inline models::GpuParams round_gpu_params() {
  models::GpuParams p;
  p.sub_partitions = 4;
  p.tensor_fpc_fp16 = 4096;
  p.mma_efficiency = 0.5;
  p.smem_bytes_per_cycle = 128;
  p.sm_l2_bytes_per_cycle = 64;
  p.hbm_latency_cycles = 1000;
  p.l2_latency_cycles = 200;
  p.k_step_cycles = 20;
  p.task_overhead_cycles = 100;
  p.vector_fpc = 256;
  p.transcendental_flops = 4;
  p.bytes_in_flight_per_warp = 2048;
  p.max_warps_per_block = 32;
  p.registers_per_sm_bytes = 256 * 1024;
  return p;
}

inline std::string ark_file(const std::string& rel) {
  return std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/ark/" + rel;
}
inline std::string repo_file(const std::string& rel) { return std::string(NPUSIM_SOURCE_DIR) + "/" + rel; }

// A TaskInfo of one element-wise op (no tensors): enough for scheduling tests.
inline gpu::TaskInfo tiny_task(int64_t id, int warps, int64_t sram, int64_t num_tasks) {
  gpu::TaskInfo t;
  t.id = id;
  t.num_warps = warps;
  t.sram_bytes = sram;
  t.num_tasks = num_tasks;
  gpu::Op op;
  op.type = gpu::OpType::Add;
  op.config.present = true;
  op.config.num_warps = warps;
  op.config.sram_bytes = sram;
  op.config.num_tasks = num_tasks;
  t.ops.push_back(op);
  return t;
}

inline gpu::Range range(int64_t b, int64_t e) { return gpu::Range{b, e, 1}; }

// One processor group holding one resource group.
inline gpu::ProcessorGroup one_rg_group(gpu::Range procs, gpu::Range warps, gpu::Range sram,
                                        std::vector<gpu::TaskGroup> tgs) {
  gpu::ResourceGroup rg;
  rg.processor_range = procs;
  rg.warp_range = warps;
  rg.sram_range = sram;
  rg.task_groups = std::move(tgs);
  gpu::ProcessorGroup pg;
  pg.processor_range = procs;
  pg.resource_groups.push_back(rg);
  return pg;
}

}  // namespace npusim::test
