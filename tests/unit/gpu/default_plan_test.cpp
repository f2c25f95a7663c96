// ARK's default plan from a model (sim/mapping/gpu_default_plan.h) and the plan writer
// (report::plan_to_json) read back by the ARK reader.
#include <gtest/gtest.h>

#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_schedule.h"
#include "sim/report/gpu_report.h"
#include "tests/unit/gpu/gpu_test_util.h"

using namespace npusim;

namespace {

// The parts of two plans that decide how they run.
void expect_same_execution(const gpu::Program& a, const gpu::Program& b) {
  EXPECT_EQ(a.num_processors, b.num_processors);
  EXPECT_EQ(a.num_warps_per_processor, b.num_warps_per_processor);
  ASSERT_EQ(a.task_infos.size(), b.task_infos.size());
  for (size_t i = 0; i < a.task_infos.size(); ++i) {
    const gpu::TaskInfo &x = a.task_infos[i], &y = b.task_infos[i];
    EXPECT_EQ(x.num_warps, y.num_warps) << "TaskInfo " << i;
    EXPECT_EQ(x.sram_bytes, y.sram_bytes) << "TaskInfo " << i;
    EXPECT_EQ(x.num_tasks, y.num_tasks) << "TaskInfo " << i;
    ASSERT_EQ(x.ops.size(), y.ops.size());
    for (size_t o = 0; o < x.ops.size(); ++o) {
      EXPECT_EQ(x.ops[o].type, y.ops[o].type);
      EXPECT_EQ(x.ops[o].config.tile, y.ops[o].config.tile) << "TaskInfo " << i;
      EXPECT_EQ(x.ops[o].config.tile_shape_mnk, y.ops[o].config.tile_shape_mnk) << "TaskInfo " << i;
      EXPECT_EQ(x.ops[o].task_cost.flops, y.ops[o].task_cost.flops);
      EXPECT_EQ(x.ops[o].task_cost.bytes_read, y.ops[o].task_cost.bytes_read);
    }
  }
  ASSERT_EQ(a.processor_groups.size(), b.processor_groups.size());
  for (size_t i = 0; i < a.processor_groups.size(); ++i) {
    const auto &x = a.processor_groups[i], &y = b.processor_groups[i];
    EXPECT_EQ(x.processor_range.str(), y.processor_range.str()) << "PG " << i;
    ASSERT_EQ(x.resource_groups.size(), y.resource_groups.size());
    for (size_t r = 0; r < x.resource_groups.size(); ++r) {
      const auto &p = x.resource_groups[r], &q = y.resource_groups[r];
      EXPECT_EQ(p.warp_range.str(), q.warp_range.str());
      EXPECT_EQ(p.sram_range.str(), q.sram_range.str());
      ASSERT_EQ(p.task_groups.size(), q.task_groups.size());
      for (size_t t = 0; t < p.task_groups.size(); ++t) {
        EXPECT_EQ(p.task_groups[t].task_id, q.task_groups[t].task_id);
        EXPECT_EQ(p.task_groups[t].task_range.str(), q.task_groups[t].task_range.str());
        EXPECT_EQ(p.task_groups[t].granularity, q.task_groups[t].granularity);
      }
    }
  }
}

}  // namespace

TEST(GpuDefaultPlan, TutorialModelGivesArksDefaultPlan) {
  // ARK's own DefaultPlanner output for this model on an A100 is tutorial/default_plan.json.
  for (const char* dir : {"tutorial", "tutorial_v2"}) {
    const gpu::Model m = frontends::read_ark_model(test::ark_file(std::string(dir) + "/model.json"));
    const gpu::Program mine = mapping::default_plan(m, 108, "CUDA_80");
    const gpu::Program arks = frontends::read_ark_plan(test::ark_file(std::string(dir) + "/default_plan.json"));
    SCOPED_TRACE(dir);
    expect_same_execution(mine, arks);
  }
}

TEST(GpuDefaultPlan, ElementwiseTilesFollowTheLongerDimAndRocmMatmulDefaults) {
  gpu::Op add;
  add.type = gpu::OpType::Add;
  gpu::Tensor tall;
  tall.shape = {4, 1000, 10};  // H > W: tile [64,1], 4 * ceil(1000/64) * 10 tasks
  add.result_tensors = {tall};
  gpu::OpConfig c = mapping::default_op_config(add, "CUDA_80");
  EXPECT_EQ(c.tile, (gpu::Dims{64, 1}));
  EXPECT_EQ(c.num_tasks, 4 * 16 * 10);
  EXPECT_EQ(c.num_warps, 1);

  gpu::Op mm;
  mm.type = gpu::OpType::Matmul;
  gpu::MatmulShape s;
  s.m = 1024, s.n = 512, s.k = 256;  // M > N: 256 x 128 tiles
  mm.matmul = s;
  gpu::Tensor out;
  out.shape = {1024, 512};
  mm.result_tensors = {out};
  c = mapping::default_op_config(mm, "ROCM_942");
  EXPECT_EQ(c.num_warps, 4);
  EXPECT_EQ(c.sram_bytes, 24672);
  EXPECT_EQ(c.tile_shape_mnk, (std::array<int64_t, 3>{256, 128, 32}));
  EXPECT_EQ(c.num_tasks, 4 * 4);
}

TEST(GpuPlanWriter, WrittenPlansReadBackUnchanged) {
  const gpu::Model m = frontends::read_ark_model(test::ark_file("tutorial/model.json"));
  const gpu::Program def = mapping::default_plan(m, 108, "CUDA_80");
  const gpu::Program back = frontends::parse_ark_plan(report::plan_to_json(def), "written.json");
  expect_same_execution(def, back);
  EXPECT_EQ(back.architecture, "CUDA_80");
  // A hand-written multi-op plan with two task groups in one resource group.
  const gpu::Program llama = frontends::read_ark_plan(test::ark_file("llama/plan_llama2_7b_b1_s2048.json"));
  const gpu::Program again = frontends::parse_ark_plan(report::plan_to_json(llama), "written.json");
  expect_same_execution(llama, again);
  EXPECT_EQ(again.num_tensor_ids(), llama.num_tensor_ids());
  EXPECT_EQ(again.buffers.size(), llama.buffers.size());
}

TEST(GpuPlanWriter, SingleMatmulPlanForCalibration) {
  mapping::MatmulPlanSpec s;
  s.m = 512, s.n = 4096, s.k = 4096;
  s.tm = s.tn = 128, s.tk = 64, s.warps = 4, s.sram_bytes = 98304;
  const gpu::Program p = mapping::single_matmul_plan(s, 132, 232320);
  // 4 x 32 = 128 tiles on 128 processors; two 4-warp slots fit 2 x 96 KiB of 227 KiB.
  EXPECT_EQ(p.num_processors, 128);
  EXPECT_EQ(gpu::num_slots(p.processor_groups[0].resource_groups[0], p.task_infos[0]), 2);
  EXPECT_EQ(p.task_infos[0].ops[0].cost.flops, 2LL * 512 * 4096 * 4096);
  // It is a valid plan file too.
  const gpu::Program back = frontends::parse_ark_plan(report::plan_to_json(p), "m.json");
  expect_same_execution(p, back);
}
