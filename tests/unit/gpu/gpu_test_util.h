// Helpers of the GPU unit tests: real ARK example paths and tiny hand-built plans.
#pragma once
#include <string>

#include "frontends/ark/ark_reader.h"
#include "sim/ir/gpu_program.h"

namespace npusim::test {

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
