// GPU timing formulas (models/gpu/gpu_timing.h) on hand-computed cases, and the configs.
#include <gtest/gtest.h>

#include "models/gpu/gpu_timing.h"
#include "sim/ir/error.h"
#include "tests/unit/gpu/gpu_test_util.h"

using namespace npusim;

namespace {


}  // namespace

TEST(GpuTiming, MatmulTileOfTheArkDefaultConfig) {
  const models::GpuParams p = test::round_gpu_params();
  models::MatmulTile t;  // 128 x 256 x 64, fp16, K = 4096
  t.k = 4096;
  const models::MatmulTiming m = models::matmul_timing(p, t, 8, 147456);
  // Two warpgroups (wgmma reads operands once per warpgroup) in a 1 x 2 grid read
  // 128*64*2 + 256*64*1 = 32768 halves = 64 KiB per K step: 512 cycles.
  EXPECT_EQ(m.warps_m, 1);
  EXPECT_EQ(m.warps_n, 2);
  EXPECT_DOUBLE_EQ(m.smem_step, 512);
  // As warp-level MMA every warp reads its slices: the 2 x 4 warp grid reads 128*64*4 +
  // 256*64*2 = 65536 halves = 128 KiB: 1024 cycles.
  models::MatmulTile sync = t;
  sync.warp_mma = true;
  const models::MatmulTiming ms = models::matmul_timing(p, sync, 8, 147456);
  EXPECT_EQ(ms.warps_m, 2);
  EXPECT_EQ(ms.warps_n, 4);
  EXPECT_DOUBLE_EQ(ms.smem_step, 1024);
  // 2*128*256*64 flop / (4096 * 0.5) = 2048 cycles per step: math-bound.
  EXPECT_DOUBLE_EQ(m.math_step, 2048);
  // A+B slices: 384*64*2 = 48 KiB through the 64 B/cycle port: 768; 147456 B of SRAM = 3
  // stages, two in flight hide 2 x 100 cycles of the 200-cycle L2 latency (no misses).
  EXPECT_EQ(m.stage_bytes, 49152);
  EXPECT_EQ(m.stages, 3);
  EXPECT_DOUBLE_EQ(m.load_step, 768);
  EXPECT_DOUBLE_EQ(m.latency_step, 100);
  EXPECT_EQ(m.limiter, models::Limiter::Math);
  EXPECT_DOUBLE_EQ(m.step, 2048 + 20);
  // 100 + 200 + 64 steps * 2068 + 128*256*2/64 = 300 + 132352 + 1024.
  EXPECT_EQ(m.k_steps, 64);
  EXPECT_DOUBLE_EQ(m.own_cycles, 133676);
  EXPECT_DOUBLE_EQ(m.sm_math_cycles, 131072);
  EXPECT_DOUBLE_EQ(m.sm_smem_cycles, 64 * 512);
  EXPECT_DOUBLE_EQ(m.l2_bytes, 64.0 * 49152 + 65536);
  // Two warps get half the SM's math rate: 4096 cycles per step.
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 2, 147456).own_cycles, 300 + 64 * 4116 + 1024);
}

TEST(GpuTiming, SmallTilesAreSharedMemoryOrLatencyBound) {
  const models::GpuParams p = test::round_gpu_params();
  models::MatmulTile t;
  t.tm = t.tn = t.tk = 64;
  t.m_valid = t.n_valid = 64;
  t.k = 640;
  // 4 warps as 2 x 2: math 2*64^3 / (4096*0.5) = 256 cycles per step; shared memory
  // (64*64*2 + 64*64*2) halves = 32 KiB / 128 = 256; port 16 KiB / 64 = 256. SRAM for one
  // stage only (2 assumed): one stage in flight hides no more than one step of latency.
  models::MatmulTiming m = models::matmul_timing(p, t, 4, 16384, 1.0);
  EXPECT_EQ(m.stages, 2);
  EXPECT_DOUBLE_EQ(m.load_step, 256);
  // Every load misses: the 1000-cycle HBM latency is exposed on each step.
  EXPECT_DOUBLE_EQ(m.load_latency, 1000);
  EXPECT_DOUBLE_EQ(m.latency_step, 1000);
  EXPECT_EQ(m.limiter, models::Limiter::Latency);
  EXPECT_DOUBLE_EQ(m.own_cycles, 100 + 1000 + 10 * 1020 + 64.0 * 64 * 2 / 64);
  // Every load hits L2: 200 cycles hide behind the 256-cycle math step.
  m = models::matmul_timing(p, t, 4, 16384, 0.0);
  EXPECT_DOUBLE_EQ(m.latency_step, 200);
  EXPECT_EQ(m.limiter, models::Limiter::Math);
  EXPECT_DOUBLE_EQ(m.own_cycles, 100 + 200 + 10 * 276 + 128);
}

TEST(GpuTiming, EdgeTilesOfAMatmulHaveFewerValidRows) {
  gpu::Op op;
  op.type = gpu::OpType::Matmul;
  gpu::MatmulShape s;
  s.m = 300, s.n = 600, s.k = 64;
  op.matmul = s;
  op.config.present = true;
  op.config.tile_shape_mnk = std::array<int64_t, 3>{128, 256, 64};
  // 3 x 3 tiles, row-major: task 8 = last row, last column: 300-256 = 44 rows, 600-512 = 88 cols.
  const models::MatmulTile t = models::matmul_tile(op, 8);
  EXPECT_EQ(t.m_valid, 44);
  EXPECT_EQ(t.n_valid, 88);
  EXPECT_EQ(models::matmul_tile(op, 4).m_valid, 128);
}

TEST(GpuTiming, ElementwiseTaskFromBytesAndArithmetic) {
  const models::GpuParams p = test::round_gpu_params();
  gpu::Op op;
  op.type = gpu::OpType::Sigmoid;
  gpu::Tensor x;
  x.shape = x.strides = {1, 4096};
  x.offsets = {0, 0};
  op.read_tensors = {x};
  op.write_tensors = {x};
  op.config.present = true;
  op.config.num_tasks = 4;
  op.config.num_warps = 1;
  op.task_cost = gpu::op_task_cost(op, 0);  // 2048 B read + 2048 B written, 1024 flops per task
  const models::TaskDemand d = models::task_demand(p, op, 0, 1, 0, 1000.0);
  // Math: 1024 * 4 / 256 = 16 SM cycles; one warp of four schedulers: 64 on its own.
  EXPECT_DOUBLE_EQ(d.sm_math_cycles, 16);
  // Memory: one warp keeps 2048 B in flight per 1000 cycles: 4096 / 2.048 + 1000 = 3000.
  EXPECT_DOUBLE_EQ(d.own_cycles, 100 + 3000);
  EXPECT_EQ(d.own_limiter, models::Limiter::Latency);
  EXPECT_DOUBLE_EQ(d.l2_bytes, 4096);
  EXPECT_DOUBLE_EQ(d.hbm_bytes, 1000);  // what the L2 pass says reaches HBM
  // Eight warps: 8 * 2048 / 1000 = 16.4 B/cycle: 4096 / 16.384 + 1000 = 1250.
  EXPECT_DOUBLE_EQ(models::task_demand(p, op, 0, 8, 0, 0).own_cycles, 100 + 1250);
}

TEST(GpuTiming, SendOverProxyIsAsynchronousAndOverSmMovesLinkBytes) {
  const models::GpuParams p = test::round_gpu_params();
  gpu::Op op;
  op.type = gpu::OpType::Send;
  gpu::Tensor in, out;
  in.shape = in.strides = out.shape = out.strides = {1024};
  in.offsets = out.offsets = {0};
  out.buffer_rank = 3;
  op.read_tensors = {in};
  op.write_tensors = {out};
  op.config.present = true;
  op.config.num_tasks = 1;
  op.task_cost = gpu::op_task_cost(op, 0);
  models::TaskDemand d = models::task_demand(p, op, 0, 1, 0, 0);  // ChannelType absent: Proxy
  EXPECT_DOUBLE_EQ(d.proxy_put_bytes, 2048);
  EXPECT_TRUE(d.link_bytes.empty());
  EXPECT_DOUBLE_EQ(d.own_cycles, 100);
  op.config.channel_type = "Sm";
  d = models::task_demand(p, op, 0, 1, 0, 0);
  ASSERT_EQ(d.link_bytes.size(), 1u);
  EXPECT_EQ(d.link_bytes[0].first, 3);
  EXPECT_DOUBLE_EQ(d.link_bytes[0].second, 2048);
  EXPECT_DOUBLE_EQ(d.l2_bytes, 2048);  // the local read
}

TEST(GpuTiming, RateServerServesInArrivalOrder) {
  models::RateServer s(10);  // 10 bytes per cycle
  EXPECT_DOUBLE_EQ(s.reserve(0, 100), 10);
  EXPECT_DOUBLE_EQ(s.reserve(5, 100), 20);  // queued behind the first
  EXPECT_DOUBLE_EQ(s.reserve(30, 50), 35);  // idle in between
  EXPECT_DOUBLE_EQ(s.busy_cycles(), 25);
  EXPECT_DOUBLE_EQ(s.total(), 250);
}

TEST(GpuConfigs, VendorPeaksBecomePerSmRatesPerCycle) {
  // H100: 989.4 TFLOPS / (132 SMs * 1.83 GHz) = 4096 flop/cycle/SM; HBM 3350 GB/s * 0.9 / 1.83 GHz.
  const auto h = models::GpuParams::read(config::HwConfig::load(test::repo_file("configs/gpu_h100.yaml")));
  EXPECT_EQ(h.num_sms, 132);
  EXPECT_NEAR(h.tensor_fpc_fp16, 4096, 1);
  EXPECT_NEAR(h.hbm_bytes_per_cycle, 3350e9 * 0.9 / 1.83e9, 1e-6);
  EXPECT_EQ(h.smem_per_block_bytes, 227 * 1024);
  // A100: 312 TFLOPS / (108 * 1.41 GHz) = 2049; MI300X: 1307.4 / (304 * 2.1 GHz) = 2048.
  const auto a = models::GpuParams::read(config::HwConfig::load(test::repo_file("configs/gpu_a100.yaml")));
  EXPECT_EQ(a.num_sms, 108);
  EXPECT_NEAR(a.tensor_fpc_fp16, 2048, 2);
  const auto m = models::GpuParams::read(config::HwConfig::load(test::repo_file("configs/gpu_mi300x.yaml")));
  EXPECT_EQ(m.num_sms, 304);
  EXPECT_EQ(m.warp_size, 64);
  EXPECT_NEAR(m.tensor_fpc_fp16, 2048, 1);
  EXPECT_EQ(m.arch, "ROCM_942");
}

TEST(GpuConfigs, NonPositiveRatesAreInputErrors) {
  try {
    models::GpuParams::read(config::HwConfig::defaults({"gpu.num_sms=0"}));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "gpu.num_sms");
  }
  EXPECT_THROW(models::GpuParams::read(config::HwConfig::defaults({"gpu.hbm.efficiency=1.5"})), InputError);
  EXPECT_THROW(models::GpuParams::read(config::HwConfig::defaults({"gpu.smem_per_block_kib=300"})), InputError);
}
