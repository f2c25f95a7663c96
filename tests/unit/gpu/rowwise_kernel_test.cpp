// Row-wise kernels for `sim gpu-calibrate --ops` (docs/gpu.md#memory-bound-kernels): the
// occupancy of one-program-per-row kernels and the plan that stands in for them, on hand-computed
// cases.
#include <gtest/gtest.h>

#include <string>

#include "models/gpu/gpu_timing.h"
#include "sim/ir/error.h"
#include "sim/mapping/gpu_default_plan.h"
#include "tests/unit/gpu/gpu_test_util.h"

using namespace npusim;

TEST(GpuRowwise, ProgramsPerSmByWarpsAndRegisters) {
  const models::GpuParams p = test::round_gpu_params();  // 64 warps per SM, 64 Ki registers
  // 16 warps holding 96 values each: 32 + 96 = 128 registers x 512 threads = all 64 Ki.
  EXPECT_EQ(models::rowwise_programs_per_sm(p, 16, 96), 1);
  // 4 warps holding 8 values: 40 registers x 128 threads = 5120; 65536 / 5120 = 12 (warps allow 16).
  EXPECT_EQ(models::rowwise_programs_per_sm(p, 4, 8), 12);
  // 1 warp, nothing held: 32 registers x 32 threads = 1024 -> 64, as many as the warps allow.
  EXPECT_EQ(models::rowwise_programs_per_sm(p, 1, 0), 64);
  // Registers past 255 spill (not modelled): capped at 255, and never fewer than one program.
  EXPECT_EQ(models::rowwise_programs_per_sm(p, 32, 1000), 1);
  models::GpuParams half = p;
  half.max_warps_per_sm = 32;
  EXPECT_EQ(models::rowwise_programs_per_sm(half, 1, 0), 32);
}

TEST(GpuRowwise, PlanHasAProgramPerRowReadingAndWritingEachTensorOnce) {
  mapping::RowKernelSpec s;
  s.name = "layer_norm";
  s.rows = 300, s.cols = 1000, s.dtype = gpu::DataType::BF16;
  s.row_inputs = 2, s.col_vectors = 1, s.row_outputs = 1, s.row_stats = 2;
  s.flops_per_element = 7;
  s.warps = 8, s.programs_per_sm = 3;
  const gpu::Program p = mapping::single_rowwise_plan(s, 132);
  ASSERT_EQ(p.task_infos.size(), 1u);
  const gpu::Op& op = p.task_infos[0].ops[0];
  EXPECT_EQ(op.name, "layer_norm");
  EXPECT_EQ(op.config.num_tasks, 300);
  EXPECT_EQ(op.read_tensors.size(), 3u);
  EXPECT_EQ(op.write_tensors.size(), 3u);
  // Whole op: two 300x1000 bf16 inputs and a 1000-long weight; a 300x1000 output and two
  // 300-long fp32 statistics; 7 flops per element.
  EXPECT_EQ(op.cost.bytes_read, 2 * 300 * 1000 * 2 + 1000 * 2);
  EXPECT_EQ(op.cost.bytes_written, 300 * 1000 * 2 + 2 * 300 * 4);
  EXPECT_EQ(op.cost.flops, 7 * 300 * 1000);
  // One program: its rows of every tensor (the weight split evenly, as ARK splits any tensor).
  EXPECT_EQ(op.task_cost.flops, 7 * 1000);
  EXPECT_EQ(op.task_cost.bytes_written, 1000 * 2 + 2 * 4);
  // 300 programs on 132 SMs, 3 at once on each: 24 warps per processor.
  EXPECT_EQ(p.num_processors, 132);
  EXPECT_EQ(p.num_warps_per_processor, 24);
  EXPECT_EQ(gpu::num_slots(p.processor_groups[0].resource_groups[0], p.task_infos[0]), 3);
  // A row reduction writes no row, one value per row: accepted; writing nothing at all is not.
  mapping::RowKernelSpec reduce = s;
  reduce.row_outputs = 0, reduce.row_stats = 1;
  EXPECT_EQ(mapping::single_rowwise_plan(reduce, 132).task_infos[0].ops[0].cost.bytes_written, 300 * 4);
  mapping::RowKernelSpec none = s;
  none.row_outputs = 0, none.row_stats = 0;
  EXPECT_THROW(mapping::single_rowwise_plan(none, 132), InternalError);
}

// A looped kernel over fp16 rows of 4096: 32 warps, 2 blocks an SM, 2 passes of 4 steps, one
// input and one output row, 4 flops an element.
namespace {
mapping::RowKernelSpec looped_spec(const std::string& name, int64_t rows) {
  mapping::RowKernelSpec s;
  s.name = name;
  s.rows = rows, s.cols = 4096, s.dtype = gpu::DataType::FP16;
  s.row_inputs = 1, s.row_outputs = 1;
  s.flops_per_element = 4;
  s.warps = 32, s.programs_per_sm = 2;
  s.loop_passes = 2, s.loop_iters = 4;
  return s;
}
}  // namespace

// docs/gpu_library.md#looped-row-kernels: each step of a pass waits one load round trip (HBM on
// the first pass when the row misses, the L2 after), plus the block reductions and the arithmetic.
TEST(GpuRowwise, ALoopedRowKernelWaitsOneRoundTripPerStep) {
  const models::GpuParams p = test::round_gpu_params();  // HBM 1000, L2 200, overhead 100, 256 flop/cycle
  mapping::RowKernelSpec s = looped_spec("rms_norm", 10);
  s.col_vectors = 1;
  s.reduce_steps = 10, s.reduce_exchanges = 1;
  const gpu::Program plan = mapping::single_rowwise_plan(s, 132);
  const gpu::Op& op = plan.task_infos[0].ops[0];
  EXPECT_EQ(op.config.row_loop_passes, 2);
  EXPECT_EQ(op.config.row_reduce_exchanges, 1);
  EXPECT_EQ(op.config.row_reread_bytes, 4096 * 2);  // the second pass reads the row again
  const double local = static_cast<double>(op.task_cost.bytes_read + op.task_cost.bytes_written);
  // Row from HBM: 100 + 4 x 1000 + 4 x 200 + 10 x 30 + 1 x 60 + 4 x 4096 / 256 = 5324 cycles.
  const models::TaskDemand cold = models::task_demand(p, op, 0, 32, 0, local);
  EXPECT_DOUBLE_EQ(cold.own_cycles, 100 + 4000 + 800 + 360 + 64);
  EXPECT_DOUBLE_EQ(cold.l2_bytes, local + 4096 * 2);
  EXPECT_DOUBLE_EQ(cold.hbm_bytes, local);
  // Row already in the L2: the first pass waits 200 a step too.
  const models::TaskDemand warm = models::task_demand(p, op, 0, 32, 0, 0);
  EXPECT_DOUBLE_EQ(warm.own_cycles, 100 + 800 + 800 + 360 + 64);
  EXPECT_DOUBLE_EQ(warm.hbm_bytes, 0);
  // A costlier exchange between warps adds its difference once per exchange.
  models::GpuParams slow = p;
  slow.block_exchange_cycles = 460;
  EXPECT_DOUBLE_EQ(models::task_demand(slow, op, 0, 32, 0, local).own_cycles, cold.own_cycles + 400);
  mapping::RowKernelSpec bad = s;
  bad.loop_passes = -1;
  EXPECT_THROW(mapping::single_rowwise_plan(bad, 132), InternalError);
}

// docs/gpu_library.md#looped-row-kernels: a later pass finds the row in the L2 only as far as the
// rows in flight (what they read and write) fit there; the rest waits on HBM and moves again.
TEST(GpuRowwise, ALoopedRowKernelReReadsFromHbmWhatTheL2CannotHold) {
  models::GpuParams p = test::round_gpu_params();  // HBM 1000, L2 200, overhead 100, 256 flop/cycle
  mapping::RowKernelSpec s = looped_spec("layer_norm", 10000);
  s.reduce_steps = 12;
  const gpu::Program plan = mapping::single_rowwise_plan(s, 132);
  const gpu::Op& op = plan.task_infos[0].ops[0];
  // 132 x 2 rows in flight, each reading and writing 4096 x 2 bytes.
  EXPECT_DOUBLE_EQ(op.config.row_resident_bytes, 264.0 * 2 * 8192);
  const double local = static_cast<double>(op.task_cost.bytes_read + op.task_cost.bytes_written);
  // An L2 of a quarter of that keeps a quarter of the re-reads: 3/4 miss. Second pass: 4 steps of
  // 200 + 0.75 x (1000 - 200) = 800 cycles; 100 + 4 x 1000 + 4 x 800 + 12 x 30 + 64 = 7724.
  p.l2_bytes = 264 * 2 * 8192 / 4;
  const models::TaskDemand small = models::task_demand(p, op, 0, 32, 0, local);
  EXPECT_DOUBLE_EQ(small.own_cycles, 100 + 4000 + 3200 + 360 + 64);
  EXPECT_DOUBLE_EQ(small.hbm_bytes, local + 0.75 * 8192);
  EXPECT_DOUBLE_EQ(small.l2_bytes, local + 8192);
  // An L2 that holds them all: every re-read hits, as before.
  p.l2_bytes = 264 * 2 * 8192;
  const models::TaskDemand fits = models::task_demand(p, op, 0, 32, 0, local);
  EXPECT_DOUBLE_EQ(fits.own_cycles, 100 + 4000 + 800 + 360 + 64);
  EXPECT_DOUBLE_EQ(fits.hbm_bytes, local);
  // Fewer rows than slots: only the rows there are count.
  mapping::RowKernelSpec few = s;
  few.rows = 10;
  EXPECT_DOUBLE_EQ(mapping::single_rowwise_plan(few, 132).task_infos[0].ops[0].config.row_resident_bytes,
                   10.0 * 2 * 8192);
}
