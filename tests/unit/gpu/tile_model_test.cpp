// The GEMM tile model (docs/gpu.md#matmul-the-tile-model) on small hand-computed cases: the K loop (BK and
// pipeline stages), occupancy from shared memory and registers, wave quantisation, the epilogue
// store, and the L2 hits that the tile order and the tiles running at once decide.
#include <gtest/gtest.h>

#include "models/gpu/gpu_timing.h"
#include "tests/unit/gpu/gpu_test_util.h"
#include "models/gpu/l2_timing.h"
#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_schedule.h"
#include "sim/mapping/gpu_traffic.h"

using namespace npusim;

namespace {


models::MatmulTile tile(int64_t tm, int64_t tn, int64_t tk, int64_t k) {
  models::MatmulTile t;
  t.tm = tm, t.tn = tn, t.tk = tk, t.k = k;
  t.m_valid = tm, t.n_valid = tn;
  return t;
}

int64_t stage(const models::MatmulTile& t) { return (t.tm + t.tn) * t.tk * 2; }

}  // namespace

TEST(GpuTileModel, Bk32PaysTwiceTheIterationsOfBk64) {
  const models::GpuParams p = test::round_gpu_params();
  // 128x128 on 4 warps (2x2 grid), K = 4096, 3 stages each, every load an L2 hit.
  const models::MatmulTile t64 = tile(128, 128, 64, 4096), t32 = tile(128, 128, 32, 4096);
  const models::MatmulTiming a = models::matmul_timing(p, t64, 4, 3 * stage(t64));
  const models::MatmulTiming b = models::matmul_timing(p, t32, 4, 3 * stage(t32));
  // BK 64: math 2*128*128*64 / 2048 = 1024, smem 32768*2/128 = 512, port 32 KiB/64 = 512,
  // latency 200/2 = 100: step 1024 + 20, 64 steps; epilogue 128*128*2/64 = 512.
  EXPECT_DOUBLE_EQ(a.step, 1044);
  EXPECT_DOUBLE_EQ(a.own_cycles, 300 + 64 * 1044 + 512);
  // BK 32: every term halves but the per-iteration cost does not: 128 steps of 512 + 20.
  EXPECT_DOUBLE_EQ(b.step, 532);
  EXPECT_DOUBLE_EQ(b.own_cycles, 300 + 128 * 532 + 512);
  EXPECT_DOUBLE_EQ(b.own_cycles - a.own_cycles, 64 * p.k_step_cycles);
  // Same math on the SM's pipes either way.
  EXPECT_DOUBLE_EQ(a.sm_math_cycles, b.sm_math_cycles);
}

TEST(GpuTileModel, Bk32HidesHalfTheLatencyWithTheSameStages) {
  const models::GpuParams p = test::round_gpu_params();
  // Two stages (one in flight) and every load missing to HBM: a 1000-cycle latency per step
  // to hide. BK 64's 1024-cycle math step covers it; BK 32's 512-cycle one does not.
  const models::MatmulTile t64 = tile(128, 128, 64, 4096), t32 = tile(128, 128, 32, 4096);
  const models::MatmulTiming a = models::matmul_timing(p, t64, 4, 2 * stage(t64), 1.0);
  const models::MatmulTiming b = models::matmul_timing(p, t32, 4, 2 * stage(t32), 1.0);
  EXPECT_EQ(a.limiter, models::Limiter::Math);
  EXPECT_EQ(b.limiter, models::Limiter::Latency);
  EXPECT_DOUBLE_EQ(b.step, 1000 + 20);
  EXPECT_GT(b.own_cycles, 1.9 * a.own_cycles);
  // More stages of BK 32 (4, three in flight) hide it again: 1000 / 3 < 512.
  EXPECT_EQ(models::matmul_timing(p, t32, 4, 4 * stage(t32), 1.0).limiter, models::Limiter::Math);
}

TEST(GpuTileModel, WarpsThatIssueTheCopiesCapTheBytesInFlight) {
  models::GpuParams p = test::round_gpu_params();
  // 16x64x64 fp16 on 2 warps, 6 stages, every load missing to HBM (1000 cycles): a step's
  // 10240 B. The 5 stages ahead hide 1000 / 5 = 200 cycles a step (math 128, port 160, smem 96).
  const models::MatmulTile t = tile(16, 64, 64, 4096);
  const models::MatmulTiming free = models::matmul_timing(p, t, 2, 6 * stage(t), 1.0);
  EXPECT_DOUBLE_EQ(free.latency_step, 200);
  EXPECT_DOUBLE_EQ(free.step, 200 + 20);
  // Each warp keeps 4096 B of copies in flight: 8192 B for the tile, so a step's 10240 B take
  // 1000 x 10240 / 8192 = 1250 cycles; twice the warps, half that.
  p.warp_load_bytes_in_flight = 4096;
  const models::MatmulTiming two = models::matmul_timing(p, t, 2, 6 * stage(t), 1.0);
  EXPECT_DOUBLE_EQ(two.latency_step, 1250);
  EXPECT_DOUBLE_EQ(two.step, 1250 + 20);
  EXPECT_EQ(two.limiter, models::Limiter::Latency);
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 4, 6 * stage(t), 1.0).latency_step, 625);
  // A cap above the stages' bytes changes nothing: 2 x 40960 > 5 x 10240.
  p.warp_load_bytes_in_flight = 40960;
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 2, 6 * stage(t), 1.0).step, free.step);
}

TEST(GpuTileModel, WarpLevelMmaGetsItsShareOfTheTensorRate) {
  models::GpuParams p = test::round_gpu_params();
  p.warp_mma_share = 0.5;  // Hopper: mma.sync at Ampere's per-SM rate, half of wgmma's
  // 128x128x64 on 4 warps: math 2*128*128*64 / 2048 = 1024 cycles a step as warpgroup MMA,
  // 2048 as mma.sync (then above smem 512, port 512, latency 100).
  models::MatmulTile t = tile(128, 128, 64, 4096);
  const models::MatmulTiming wg = models::matmul_timing(p, t, 4, 3 * stage(t));
  t.warp_mma = true;
  const models::MatmulTiming sync = models::matmul_timing(p, t, 4, 3 * stage(t));
  EXPECT_DOUBLE_EQ(wg.math_step, 1024);
  EXPECT_DOUBLE_EQ(sync.math_step, 2048);
  EXPECT_DOUBLE_EQ(sync.step, 2048 + 20);
  EXPECT_DOUBLE_EQ(sync.sm_math_cycles, 2 * wg.sm_math_cycles);
  // Two warps are no warpgroup: warp-level MMA whatever the flag says, and half the SM's
  // schedulers (2 of 4): 2*128*128*64 / (2048 * 0.5 * 0.5) = 4096.
  t.warp_mma = false;
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 2, 3 * stage(t)).math_step, 4096);
  // Where warp-level MMA is the only MMA (share 1, Ampere) the flag changes nothing.
  p.warp_mma_share = 1;
  t.warp_mma = true;
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 4, 3 * stage(t)).math_step, 1024);
}

TEST(GpuTileModel, AClusterReadsItsSharedSlicesFromTheL2Once) {
  const models::GpuParams p = test::round_gpu_params();
  models::MatmulTile t = tile(128, 128, 64, 4096);
  // 64 steps of 128 A rows and 128 B columns x 64 x 2 B, and the 128x128 fp16 C tile:
  // 64 * 256 * 128 + 32768 = 2129920 bytes through the port and, alone, from the L2.
  const models::MatmulTiming alone = models::matmul_timing(p, t, 4, 3 * stage(t));
  EXPECT_DOUBLE_EQ(alone.l2_bytes, 2129920);
  EXPECT_DOUBLE_EQ(alone.l2_slice_bytes, 2129920);
  // Two tiles along M share B: 64 * 128 * (128 + 64) + 32768 = 1605632 from the L2; the port
  // still carries every byte, and the tile's own time does not change.
  t.cluster_m = 2;
  const models::MatmulTiming pair = models::matmul_timing(p, t, 4, 3 * stage(t));
  EXPECT_DOUBLE_EQ(pair.l2_bytes, 2129920);
  EXPECT_DOUBLE_EQ(pair.l2_slice_bytes, 1605632);
  EXPECT_DOUBLE_EQ(pair.own_cycles, alone.own_cycles);
  // And 2 along N share A too: 64 * 128 * (64 + 64) + 32768.
  t.cluster_n = 2;
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 4, 3 * stage(t)).l2_slice_bytes, 64.0 * 128 * 128 + 32768);
}

TEST(GpuTileModel, SharedMemoryPerStageTimesStagesLimitsOccupancy) {
  models::GpuParams p = test::round_gpu_params();
  p.smem_per_sm_bytes = 228 * 1024;  // an H100 SM; each resident block also takes 1 KiB
  // 128x128x64: 32 KiB per stage. 3 stages = 96 KiB: two tiles fit (233472 / 99328 = 2.35;
  // registers: 256 KiB / (1.5 x 128 x 128 x 4 B) = 2; warps: 32 / 4 = 8).
  const models::MatmulTile t = tile(128, 128, 64, 4096);
  EXPECT_EQ(models::matmul_tiles_per_sm(p, t, 4, 3), 2);
  // 4 stages = 128 KiB: one tile only.
  EXPECT_EQ(models::matmul_tiles_per_sm(p, t, 4, 4), 1);
  // 64x64x64: 16 KiB per stage; 3 stages: 233472 / 50176 = 4.65, 4 tiles by shared memory
  // (registers allow 10, warps 8).
  const models::MatmulTile s = tile(64, 64, 64, 4096);
  EXPECT_EQ(models::matmul_tiles_per_sm(p, s, 4, 3), 4);
  EXPECT_EQ(models::matmul_tiles_per_sm(p, s, 4, 6), 2);
  // 2 stages = 32 KiB: 233472 / 33792 = 6.9, so 6; without the per-block reserve it would be 7.
  EXPECT_EQ(models::matmul_tiles_per_sm(p, s, 4, 2), 6);
  EXPECT_EQ(models::blocks_by_smem(228 * 1024, 32 * 1024), 6);
  // 8 warps each: the block's 32 warps hold 4; a 128x256 tile's accumulators alone fill the registers.
  EXPECT_EQ(models::matmul_tiles_per_sm(p, s, 8, 2), 4);
  EXPECT_EQ(models::matmul_tiles_per_sm(p, tile(128, 256, 32, 4096), 8, 2), 1);
  // Never below one (a plan that does not fit is refused elsewhere).
  p.smem_per_sm_bytes = 1024;
  EXPECT_EQ(models::matmul_tiles_per_sm(p, t, 4, 3), 1);
}

TEST(GpuTileModel, WaveQuantisationOverSms) {
  EXPECT_EQ(models::matmul_waves(132, 132, 1), 1);
  EXPECT_EQ(models::matmul_waves(133, 132, 1), 2);  // one tile more: a second wave
  EXPECT_EQ(models::matmul_waves(264, 132, 2), 1);
  EXPECT_EQ(models::matmul_waves(265, 132, 2), 2);
  // The schedule the SMs play agrees: 133 tiles on 132 processors, one slot each: processor
  // 0 runs tiles 0 and 132 one after the other, the others one tile.
  mapping::MatmulPlanSpec s;
  s.m = 133 * 128, s.n = 256, s.k = 64;
  s.slots = 1;
  const gpu::Program plan = mapping::single_matmul_plan(s, 132, 227 * 1024);
  const mapping::GpuSchedule sched = mapping::build_schedule(plan);
  ASSERT_EQ(sched.programs.size(), 132u);
  EXPECT_EQ(sched.programs[0][0].slot_tasks[0], (std::vector<int64_t>{0, 132}));
  EXPECT_EQ(sched.programs[1][0].slot_tasks[0], (std::vector<int64_t>{1}));
}

TEST(GpuTileModel, EpilogueStoresTheValidOutputThroughTheSmPort) {
  const models::GpuParams p = test::round_gpu_params();
  models::MatmulTile t = tile(128, 128, 64, 64);
  const double fp16 = models::matmul_timing(p, t, 4, 3 * stage(t)).epilogue;
  EXPECT_DOUBLE_EQ(fp16, 128.0 * 128 * 2 / 64);
  t.out_type = gpu::DataType::FP32;  // twice the bytes to store
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 4, 3 * stage(t)).epilogue, 2 * fp16);
  t.m_valid = 8;  // an edge tile stores only its valid rows
  EXPECT_DOUBLE_EQ(models::matmul_timing(p, t, 4, 3 * stage(t)).epilogue, 8.0 * 128 * 4 / 64);
}

TEST(GpuTileModel, TilesRunningAtOnceShareTheirPanelsInL2) {
  // C[512,512] = A[512,256] x B[256,512] in 128x128 tiles: a 4 x 4 grid; each A row panel and
  // B column panel is 128 x 256 x 2 B = 64 KiB, read in 4 K chunks of 16 KiB.
  mapping::MatmulPlanSpec s;
  s.m = s.n = 512, s.k = 256;
  s.tm = s.tn = 128, s.tk = 64, s.warps = 4, s.sram_bytes = 0, s.slots = 1;
  const double panel = 64 * 1024;
  auto misses = [&](int sms, int64_t l2) {
    return mapping::plan_hbm_traffic(mapping::single_matmul_plan(s, sms, 1 << 20), {l2})[0][0].hbm_read_bytes;
  };
  // All 16 tiles at once read each chunk together: each panel fetched once, whatever the L2 size.
  EXPECT_DOUBLE_EQ(misses(16, 1 << 20), 8 * panel);
  EXPECT_DOUBLE_EQ(misses(16, 64 * 1024), 8 * panel);
  // Four at a time (one tile row per wave): the next wave reads a B chunk again after at most
  // the other 19 chunks of its 5 panels (304 KiB); a 1 MiB L2 keeps them: A 4 + B 4 panels.
  EXPECT_DOUBLE_EQ(misses(4, 1 << 20), 8 * panel);
  // A 64 KiB L2 keeps at most (64 / 288)^2 < 5% of a chunk read again: B is fetched by every wave.
  EXPECT_GT(misses(4, 64 * 1024), 4 * panel + 4 * 3.8 * panel);
}

TEST(GpuTileModel, AChunkReadAgainHitsWithTheSquareOfTheL2OverTheBytesReadSince) {
  EXPECT_DOUBLE_EQ(models::l2_reuse_hit_share(100, 100), 1);
  EXPECT_DOUBLE_EQ(models::l2_reuse_hit_share(50, 100), 1);
  EXPECT_DOUBLE_EQ(models::l2_reuse_hit_share(200, 100), 0.25);
  EXPECT_DOUBLE_EQ(models::l2_reuse_hit_share(1000, 100), 0.01);
  // One column of 4 tiles (C[512,128], K = 256) on one SM, one after the other: tile w reads its
  // own A panel and B's one panel, chunk c at w + (c + 0.5) / 4. Between two reads of a B chunk
  // come the other 3 chunks of B and 4 chunks of A (the rest of A_w, then A_w+1 up to chunk c,
  // read before B at the same time): 7 x 16 KiB = 112 KiB.
  mapping::MatmulPlanSpec s;
  s.m = 512, s.n = 128, s.k = 256;
  s.tm = s.tn = 128, s.tk = 64, s.warps = 4, s.sram_bytes = 0, s.slots = 1;
  const double panel = 64 * 1024;
  auto misses = [&](int64_t l2, int partitions) {
    return mapping::plan_hbm_traffic(mapping::single_matmul_plan(s, 1, 1 << 20), {l2, partitions})[0][0].hbm_read_bytes;
  };
  EXPECT_DOUBLE_EQ(misses(112 * 1024, 1), 5 * panel);  // B stays: 4 A panels + B once
  // 56 KiB: each of the 3 later reads of B hits (56 / 112)^2 = 1/4 of it.
  EXPECT_DOUBLE_EQ(misses(56 * 1024, 1), 5 * panel + 3 * 0.75 * panel);
  // Two partitions of 112 KiB: a panel every SM reads finds 56 KiB.
  EXPECT_DOUBLE_EQ(misses(112 * 1024, 2), 5 * panel + 3 * 0.75 * panel);
}

TEST(GpuTileModel, TheSlotsOfAnSmStartInStepThenDriftApart) {
  // 4 SMs x 2 slots: wave 0 (tiles 0-7) starts at 0; slot 1's tiles start half a tile later once
  // the drift (2 waves) is complete, a quarter in wave 1.
  EXPECT_DOUBLE_EQ(models::tile_start(7, 4, 2, 2), 0);
  EXPECT_DOUBLE_EQ(models::tile_start(8, 4, 2, 2), 1);
  EXPECT_DOUBLE_EQ(models::tile_start(12, 4, 2, 2), 1.25);
  EXPECT_DOUBLE_EQ(models::tile_start(20, 4, 2, 2), 2.5);
  EXPECT_DOUBLE_EQ(models::tile_start(44, 4, 2, 2), 5.5);
  EXPECT_DOUBLE_EQ(models::tile_start(12, 4, 2, 0), 1);  // no drift: waves in step
  // The SMs' phases wander apart by 0.1 a wave: in wave 5 (tiles 40-47) SM p's slot-1 tile starts
  // a further min(1, 0.5) x p/4 / 2 later: tile 46 (SM 2) at 5 + (1 + 0.5 x 2/4) / 2 = 5.625.
  EXPECT_DOUBLE_EQ(models::tile_start(46, 4, 2, 2, 0.1), 5.625);
  EXPECT_DOUBLE_EQ(models::tile_start(44, 4, 2, 2, 0.1), 5.5);   // SM 0: no wander
  EXPECT_DOUBLE_EQ(models::tile_start(42, 4, 2, 2, 0.1), 5.125);  // slot 0, SM 2
  EXPECT_DOUBLE_EQ(models::tile_start(10, 4, 1, 2, 0.1), 2);      // one tile per SM stays in step
  // Row-major 64x64 tiles of C[2048,512] (32 x 8 tiles, K = 256; panels of 32 KiB in 4 chunks)
  // on 8 SMs x 2 slots: slot 0 runs tile row 2w, slot 1 row 2w + 1. In step, both rows of a wave
  // read each B chunk together, once. Drifted apart, row 2w + 1 reads it half a tile later, after
  // about 20 chunks (160 KiB) of other reads, which a 128 KiB L2 keeps (128 / 160)^2 = 64% of.
  mapping::MatmulPlanSpec s;
  s.m = 2048, s.n = 512, s.k = 256;
  s.tm = s.tn = 64, s.tk = 64, s.warps = 4, s.sram_bytes = 0, s.slots = 2;
  auto traffic = [&](int64_t l2, double drift) {
    return mapping::plan_hbm_traffic(mapping::single_matmul_plan(s, 8, 1 << 20), {l2, 1, drift})[0][0].hbm_read_bytes;
  };
  const double compulsory = 2.0 * (2048 * 256 + 256 * 512);
  EXPECT_DOUBLE_EQ(traffic(8 << 20, 0), compulsory);  // everything fits: each byte once
  EXPECT_DOUBLE_EQ(traffic(8 << 20, 2), compulsory);
  EXPECT_GT(traffic(128 * 1024, 2), 1.2 * traffic(128 * 1024, 0));
}

TEST(GpuTileModel, TilesOfAWaveWaitOnTheFillOfAPanelTheyShare) {
  // The 4 x 4 grid above. All 16 tiles at once: HBM moves each of the 8 panels once, but each
  // panel's 4 readers start together and all wait on its fill: 8 x 4 panels waited on, every
  // load of every tile (miss share 1 in the latency term).
  mapping::MatmulPlanSpec s;
  s.m = s.n = 512, s.k = 256;
  s.tm = s.tn = 128, s.tk = 64, s.warps = 4, s.sram_bytes = 0, s.slots = 1;
  const double panel = 64 * 1024;
  auto traffic = [&](int sms) {
    return mapping::plan_hbm_traffic(mapping::single_matmul_plan(s, sms, 1 << 20), {1 << 20})[0][0];
  };
  const mapping::OpTraffic all = traffic(16);
  EXPECT_DOUBLE_EQ(all.hbm_read_bytes, 8 * panel);
  EXPECT_DOUBLE_EQ(all.wait_read_bytes, 32 * panel);
  // Four at a time, one tile row per wave, a 1 MiB L2 that keeps everything: wave 1 waits on
  // its A panel 4 times and on 4 B panels once each; waves 2-4 hit B and wait on their A panel
  // 4 times each: 8 + 3 x 4 = 20 panels waited on, of 32 loaded.
  const mapping::OpTraffic rows = traffic(4);
  EXPECT_DOUBLE_EQ(rows.hbm_read_bytes, 8 * panel);
  EXPECT_DOUBLE_EQ(rows.wait_read_bytes, 20 * panel);
  EXPECT_DOUBLE_EQ(rows.wait_bytes(), 20 * panel + rows.hbm_write_bytes);
}

TEST(GpuTileModel, GroupedTileOrderWalksGroupRowsColumnByColumn) {
  // 3 x 2 tiles, groups of 2 rows: (0,0) (1,0) (0,1) (1,1), then the last row alone (2,0) (2,1).
  const std::vector<std::pair<int64_t, int64_t>> grouped{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}};
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(models::matmul_tile_index(i, 3, 2, 2), grouped[i]) << i;
    EXPECT_EQ(models::matmul_tile_index(i, 3, 2, 1), std::make_pair(i / 2, i % 2)) << i;  // row-major
  }
}

TEST(GpuTileModel, GroupedOrderReadsFewerPanelsPerWaveWhenBExceedsTheL2) {
  // The 4 x 4 grid of TilesRunningAtOnceShareTheirPanelsInL2 with 4 tiles at a time and a 64 KiB
  // L2. Row-major: each wave is one tile row, 1 A + 4 B panels, B read again by every wave
  // (> 19 panels). Groups of 2 rows: a wave is a 2 x 2 block of 2 A + 2 B panels; 4 waves x 4
  // panels at most (16), and at least each panel once (8).
  mapping::MatmulPlanSpec s;
  s.m = s.n = 512, s.k = 256;
  s.tm = s.tn = 128, s.tk = 64, s.warps = 4, s.sram_bytes = 0, s.slots = 1;
  const double panel = 64 * 1024;
  auto misses = [&](int64_t group) {
    s.group_m = group;
    return mapping::plan_hbm_traffic(mapping::single_matmul_plan(s, 4, 1 << 20), {64 * 1024})[0][0].hbm_read_bytes;
  };
  EXPECT_GT(misses(1), 19 * panel);
  EXPECT_LE(misses(2), 16 * panel);
  EXPECT_GE(misses(2), 8 * panel);
}

TEST(GpuTileModel, SplitKPlansPartialProductsThenTheirSum) {
  // C[256,512] = A[256,1024] x B[1024,512] in 128x128 tiles split in 2: 2 x 4 tiles x 2 parts of
  // K = 512 each, writing 2 fp32 partials of 256 x 512; then 256 row programs sum them into C.
  mapping::MatmulPlanSpec s;
  s.m = 256, s.n = 512, s.k = 1024;
  s.tm = s.tn = 128, s.tk = 64, s.warps = 4, s.stages = 3, s.sram_bytes = 3 * 256 * 64 * 2, s.slots = 1;
  s.split_k = 2;
  const gpu::Program p = mapping::single_matmul_plan(s, 132, 227 * 1024);
  ASSERT_EQ(p.task_infos.size(), 2u);
  ASSERT_EQ(p.processor_groups.size(), 2u);
  const gpu::Op& mm = p.task_infos[0].ops[0];
  EXPECT_EQ(p.task_infos[0].num_tasks, 2 * 4 * 2);
  EXPECT_EQ(mm.matmul->k, 512);
  EXPECT_EQ(mm.matmul->batch, 2);
  EXPECT_EQ(mm.write_tensors[0].bytes(), 2 * 256 * 512 * 4);
  const gpu::Op& sum = p.task_infos[1].ops[0];
  EXPECT_EQ(p.task_infos[1].num_tasks, 256);
  EXPECT_EQ(sum.read_tensors[0].buffer_id, mm.write_tensors[0].buffer_id);  // it reads the partials
  EXPECT_EQ(sum.write_tensors[0].bytes(), 256 * 512 * 2);
  EXPECT_EQ(sum.cost.flops, 256 * 512);  // one add per element of C
  // K must split into equal parts.
  s.k = 1001;
  EXPECT_THROW(mapping::single_matmul_plan(s, 132, 227 * 1024), InternalError);
}

TEST(GpuTileModel, StreamKKeepsWholeWavesButTheLastDataParallelAndSharesTheRestByKSteps) {
  using Seg = models::MatmulSegment;
  auto same = [](const std::vector<Seg>& got, const std::vector<Seg>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].tile, want[i].tile) << i;
      EXPECT_EQ(got[i].k_begin, want[i].k_begin) << i;
      EXPECT_EQ(got[i].k_end, want[i].k_end) << i;
      EXPECT_EQ(got[i].parts, want[i].parts) << i;
    }
  };
  // 5 tiles of 4 K steps on 2 workers: tiles 0 and 1 are the data-parallel wave; the last whole
  // wave and the remainder (tiles 2-4, 12 steps) go 6 steps to each, so tile 3 has 2 parts.
  same(models::stream_k_segments(5, 4, 2, 0), {{0, 0, 4, 1}, {2, 0, 4, 1}, {3, 0, 2, 2}});
  same(models::stream_k_segments(5, 4, 2, 1), {{1, 0, 4, 1}, {3, 2, 4, 2}, {4, 0, 4, 1}});
  // Tiles that fill whole waves stay data-parallel.
  same(models::stream_k_segments(4, 4, 2, 1), {{1, 0, 4, 1}, {3, 0, 4, 1}});
  // Fewer tiles than workers: 8 steps of one tile over 3 workers, [0,2), [2,5), [5,8).
  same(models::stream_k_segments(1, 8, 3, 0), {{0, 0, 2, 3}});
  same(models::stream_k_segments(1, 8, 3, 2), {{0, 5, 8, 3}});
}

namespace {

// C[256,512] = A[256,1024] x B[1024,512] in 128x128x64 stream-K tiles, one slot per SM.
mapping::MatmulPlanSpec stream_k_spec() {
  mapping::MatmulPlanSpec s;
  s.m = 256, s.n = 512, s.k = 1024;
  s.tm = s.tn = 128, s.tk = 64, s.warps = 4, s.stages = 3, s.sram_bytes = 3 * 256 * 64 * 2, s.slots = 1;
  s.stream_k = true;
  return s;
}

}  // namespace

TEST(GpuTileModel, StreamKWorkersFetchEachChunkOnceWhenTheL2KeepsIt) {
  // The plan of StreamKWorkersShareTheMathAndPayTheFixupThroughTheirPorts: 3 workers walk 8 tiles
  // x 16 K steps; a tile split between two workers reads each chunk of its panels partly in each.
  mapping::MatmulPlanSpec s = stream_k_spec();
  const gpu::Program p = mapping::single_matmul_plan(s, 3, 227 * 1024);
  const double operands = 2.0 * (256 * 1024 + 1024 * 512);  // A and B: 1.5 MiB
  // An 8 MiB L2 keeps everything: each byte of A and B once, the first piece's read fetching
  // the whole chunk.
  EXPECT_DOUBLE_EQ(mapping::plan_hbm_traffic(p, {8 << 20})[0][0].hbm_read_bytes, operands);
  // 64 KiB keeps little of the 2 A and 4 B panels (256 KiB each) between a worker's tiles.
  EXPECT_GT(mapping::plan_hbm_traffic(p, {64 * 1024})[0][0].hbm_read_bytes, 1.5 * operands);
}

TEST(GpuTileModel, StreamKWorkersShareTheMathAndPayTheFixupThroughTheirPorts) {
  // C[256,512] = A[256,1024] x B[1024,512] in 128x128x64 tiles: 8 tiles x 16 K steps on 3
  // workers (3 SMs, one slot each). Tiles 0-2 data-parallel; tiles 3-7 (80 steps) in ranges
  // [0,26), [26,53), [53,80): tiles 4 and 6 have 2 parts each.
  mapping::MatmulPlanSpec s = stream_k_spec();
  const gpu::Program p = mapping::single_matmul_plan(s, 3, 227 * 1024);
  ASSERT_EQ(p.task_infos.size(), 1u);
  EXPECT_EQ(p.task_infos[0].num_tasks, 3);
  const gpu::Op& op = p.task_infos[0].ops[0];
  EXPECT_TRUE(op.config.stream_k);
  const models::GpuParams gp = test::round_gpu_params();
  double math = 0, port = 0, flops = 0;
  for (int64_t w = 0; w < 3; ++w) {
    const models::TaskDemand d = models::task_demand(gp, op, 0, 4, s.sram_bytes, 0, w, 0);
    math += d.sm_math_cycles, port += d.l2_bytes, flops += d.flops;
    EXPECT_DOUBLE_EQ(d.l2_slice_bytes, d.l2_bytes);  // no cluster
  }
  // Math: 8 tiles x 16 steps x 2*128*128*64 / (4096 x 0.5) = 131072 cycles, however shared.
  EXPECT_DOUBLE_EQ(math, 8 * 16 * 1024);
  // Port: the A and B slices (8 x 16 x 256*64*2), C once per tile (8 x 128*128*2), and per
  // 2-part tile one fp32 partial stored (128*128*4) and read back by the part that starts it.
  EXPECT_DOUBLE_EQ(port, 8 * 16 * 32768 + 8 * 32768 + 2 * (65536 + 65536));
  EXPECT_NEAR(flops, 2.0 * 256 * 512 * 1024, 3);
  // Never more workers than K steps.
  s.m = 128, s.n = 128, s.k = 128;
  EXPECT_EQ(mapping::single_matmul_plan(s, 3, 227 * 1024).task_infos[0].num_tasks, 2);
}
