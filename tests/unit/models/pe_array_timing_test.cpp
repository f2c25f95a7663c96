// PE array formulas on hand-computed cases (docs/timing.md#pe-array).
#include "models/npu/pe_array_timing.h"

#include <gtest/gtest.h>

using namespace npusim;
using namespace npusim::models;

namespace {
// A 4x4 int8 array with no setup or per-fold overhead; rates chosen so each term is visible.
PeArrayParams make_params() {
  PeArrayParams p;
  p.rows = 4;
  p.cols = 4;
  p.macs_per_pe_cycle_int8 = 1;
  p.macs_per_pe_cycle_fp16 = 0.5;
  p.fold_overhead_cycles = 0;
  p.tile_setup_cycles = 0;
  p.act_read_bytes_per_cycle = 64;
  p.weight_read_bytes_per_cycle = 32;
  p.out_write_bytes_per_cycle = 32;
  return p;
}
PeTile one_by_one(int64_t k, int64_t c, int64_t pixels) {
  PeTile t;
  t.k = k;
  t.c = c;
  t.pixels = pixels;
  t.in_bytes = c * pixels;
  t.out_bytes = k * pixels;
  t.weight_bytes = k * c;
  return t;
}
}  // namespace

TEST(PeArrayTiming, OneByOneConvTileOnFourByFourArrayIsStreamPlusFillDrain) {
  // K=4, C=4 fits one fold. 16 pixels stream in 16 cycles; fill+drain = rows+cols-2 = 6.
  const auto t = pe_tile_timing(make_params(), one_by_one(4, 4, 16));
  EXPECT_EQ(t.folds, 1);
  EXPECT_EQ(t.compute_cycles, 22);
  EXPECT_EQ(t.act_cycles, 1);  // 64 B at 64 B/cycle, one K fold
  EXPECT_EQ(t.out_cycles, 2);  // 64 B at 32 B/cycle
  EXPECT_EQ(t.total_cycles, 22);
}

TEST(PeArrayTiming, OneMoreOutputChannelThanRowsDoublesTheStreaming) {
  // K=4 is one K block (boundary); K=5 needs ceil(5/4)=2 blocks of 16 cycles, one fill (6).
  EXPECT_EQ(pe_tile_timing(make_params(), one_by_one(4, 4, 16)).compute_cycles, 22);
  EXPECT_EQ(pe_tile_timing(make_params(), one_by_one(5, 4, 16)).compute_cycles, 38);
  // Input is re-read once per K fold: 2 * 64 B / 64 B/cycle.
  EXPECT_EQ(pe_tile_timing(make_params(), one_by_one(5, 4, 16)).act_cycles, 2);
}

TEST(PeArrayTiming, ReductionIsPackedOntoTheColumns) {
  // C=1, 3x3 kernel: reduction 9 spans ceil(9/4)=3 column folds; packed, 16 pixels x 9 / 4
  // columns stream in 36 cycles, plus one fill of 6.
  PeTile t = one_by_one(4, 1, 16);
  t.r = t.s = 3;
  t.weight_bytes = 36;
  EXPECT_EQ(pe_tile_timing(make_params(), t).folds, 3);
  EXPECT_EQ(pe_tile_timing(make_params(), t).compute_cycles, 36 + 6);
}

TEST(PeArrayTiming, WithoutWindowPackingEachWindowPositionIsItsOwnPass) {
  // C=1, 3x3 kernel, unpacked: each of the 9 positions folds its 1 channel onto the 4 columns
  // alone (C padded to 4): 9 folds, each streaming all 16 pixels = 144 cycles, plus one fill.
  PeArrayParams p = make_params();
  p.window_packing = false;
  PeTile t = one_by_one(4, 1, 16);
  t.r = t.s = 3;
  t.weight_bytes = 36;
  EXPECT_EQ(pe_tile_timing(p, t).folds, 9);
  EXPECT_EQ(pe_tile_timing(p, t).compute_cycles, 9 * 16 + 6);
  // A 1x1 convolution has one position: the same either way when C fills whole folds.
  EXPECT_EQ(pe_tile_timing(p, one_by_one(5, 8, 16)).compute_cycles, pe_tile_timing(make_params(), one_by_one(5, 8, 16)).compute_cycles);
  // C=6 over 4 columns: 2 folds per position, 18 in all: 18 x 16 + 6.
  t.c = 6;
  EXPECT_EQ(pe_tile_timing(p, t).compute_cycles, 18 * 16 + 6);
}

TEST(PeArrayTiming, ChannelsArePaddedToTheAlignment) {
  // C=3 on 4 columns: unpadded 16 x 3 / 4 = 12 cycles; padded to 4 channels 16 cycles.
  PeArrayParams p = make_params();
  EXPECT_EQ(pe_tile_timing(p, one_by_one(4, 3, 16)).compute_cycles, 12 + 6);
  p.channel_align = 4;
  EXPECT_EQ(pe_tile_timing(p, one_by_one(4, 3, 16)).compute_cycles, 16 + 6);
}

TEST(PeArrayTiming, FoldOverheadIsPaidPerFold) {
  PeArrayParams p = make_params();
  p.fold_overhead_cycles = 5;
  // K=5, C=4: 2 K blocks x 1 column fold = 2 folds.
  EXPECT_EQ(pe_tile_timing(p, one_by_one(5, 4, 16)).compute_cycles, 38 + 2 * 5);
}

TEST(PeArrayTiming, HalfRateFp16DoublesStreaming) {
  PeTile t = one_by_one(4, 4, 16);
  t.dtype = ir::DType::Float16;
  EXPECT_EQ(pe_tile_timing(make_params(), t).compute_cycles, 32 + 6);
}

TEST(PeArrayTiming, SinglePixelFoldIsBoundByItsWeightLoad) {
  // Dense layer at batch 1: one pixel, but the fold's 16 weight bytes at 1 B/cycle take 16.
  PeArrayParams p = make_params();
  p.weight_read_bytes_per_cycle = 1;
  EXPECT_EQ(pe_tile_timing(p, one_by_one(4, 4, 1)).compute_cycles, 16 + 6);
}

TEST(PeArrayTiming, OutputWriteBandwidthCanBound) {
  PeArrayParams p = make_params();
  p.out_write_bytes_per_cycle = 1;  // 64 output bytes take 64 cycles > 22 compute
  p.tile_setup_cycles = 10;
  EXPECT_EQ(pe_tile_timing(p, one_by_one(4, 4, 16)).total_cycles, 10 + 64);
}

TEST(PeArrayTiming, GroupedConvRunsEachGroupAsItsOwnPass) {
  // Depthwise 3x3 on 8 channels: 8 groups of K=1, C=1, reduction 9 -> 3 folds each; each
  // group streams 16 x 9 / 4 = 36 cycles (its 9 weight bytes load in 1), one fill of 6.
  PeTile t;
  t.k = 1;
  t.c = 1;
  t.r = t.s = 3;
  t.groups = 8;
  t.pixels = 16;
  t.weight_bytes = 72;
  const auto r = pe_tile_timing(make_params(), t);
  EXPECT_EQ(r.folds, 24);
  EXPECT_EQ(r.compute_cycles, 8 * 36 + 6);
}

TEST(PeArrayTiming, OutputStationaryStreamsTheReduction) {
  PeArrayParams p = make_params();
  p.dataflow = Dataflow::OutputStationary;
  PeTile t = one_by_one(4, 1, 16);
  t.r = t.s = 3;
  // 16 pixels over 4 rows = 4 folds, K=4 over 4 cols = 1; each fold streams the reduction 9,
  // one fill of 6.
  EXPECT_EQ(pe_tile_timing(p, t).compute_cycles, 4 * 9 + 6);
}

TEST(PeArrayTiming, PeGroupsSplitTheAxisThatLeavesFewestGroupsIdle) {
  // 8x8 array in 2 groups of 4 reduction lanes (docs/timing.md#pe-array). 1x1 conv, K=8 (one
  // K block), C=8 (2 lane units), output 1 image x 3 rows x 3 columns, no setup.
  PeArrayParams p = make_params();
  p.rows = p.cols = 8;
  p.pe_groups = 2;
  PeTile t = one_by_one(8, 8, 9);
  t.n = 1, t.h = 3, t.w = 3;
  // Ungrouped stream: 9 px x 8 / 8 cols = 9 cycles. Splits: N 2*1/1 = 2, H and W 2*2/3 = 4/3,
  // K blocks 2*1/1 = 2, C units ceil(2/2) x 1 x 1 = 1 step >= c_split_min_cycles 1: 2*1/2 = 1.
  EXPECT_DOUBLE_EQ(pe_group_split_factor(p, t), 1.0);
  EXPECT_EQ(pe_tile_timing(p, t).compute_cycles, 9 + 14);  // + fill 8+8-2
  // A C split needing 2 steps per group is not allowed: the best is H (or W), 4/3.
  p.c_split_min_cycles = 2;
  EXPECT_DOUBLE_EQ(pe_group_split_factor(p, t), 4.0 / 3.0);
  EXPECT_EQ(pe_tile_timing(p, t).compute_cycles, 12 + 14);  // ceil(9 x 4/3) = 12
  // A 3x3 kernel gives each group 1 x 9 steps: the C split is back (lossless).
  t.r = t.s = 3;
  t.weight_bytes = 8 * 8 * 9;
  EXPECT_DOUBLE_EQ(pe_group_split_factor(p, t), 1.0);
  // 16 output channels = 2 K blocks split evenly over the 2 groups, even without the C split.
  t = one_by_one(16, 8, 9);
  t.n = 1, t.h = 3, t.w = 3;
  EXPECT_DOUBLE_EQ(pe_group_split_factor(p, t), 1.0);
  // pe_groups 1 (the default) leaves the timing as it was.
  p.pe_groups = 1;
  t = one_by_one(8, 8, 9);
  EXPECT_DOUBLE_EQ(pe_group_split_factor(p, t), 1.0);
  EXPECT_EQ(pe_tile_timing(p, t).compute_cycles, 9 + 14);
}

TEST(PeArrayTiming, PeGroupsOnTheGeminiArrayCostAnEighthOfA28RowSplit) {
  // Gemini (configs/gemini_zebu.yaml): 64x64 in 8 groups of 8 lanes, C padded to 8, C split
  // only with >= 9 steps per group. ResNet-50 Conv_33: K=128, C=512, 1 x 28 x 28 output. C
  // units 64 -> 8 steps per group < 9: no C split; K: 2 blocks -> 8*1/2 = 4; N: 8; H, W:
  // 8*4/28 = 8/7. Stream 2 blocks x ceil(784 x 512/64 x 8/7) = 2 x 7168 (trace: 14336 + 502).
  PeArrayParams p;
  p.channel_align = 8;
  p.pe_groups = 8;
  p.c_split_min_cycles = 9;
  p.tile_setup_cycles = 0;
  p.out_write_bytes_per_cycle = 1e9;
  PeTile t = one_by_one(128, 512, 784);
  t.n = 1, t.h = 28, t.w = 28;
  EXPECT_DOUBLE_EQ(pe_group_split_factor(p, t), 8.0 / 7.0);
  EXPECT_EQ(pe_tile_timing(p, t).compute_cycles, 2 * 7168 + 126);
  // Conv_29 (K=512, C=128): 8 K blocks, one per group: no loss.
  t = one_by_one(512, 128, 784);
  t.n = 1, t.h = 28, t.w = 28;
  EXPECT_DOUBLE_EQ(pe_group_split_factor(p, t), 1.0);
}

TEST(PeArrayTiming, NeverFasterThanPeakRate) {
  const PeArrayParams p = make_params();
  for (int64_t k : {1, 3, 4, 17, 64})
    for (int64_t c : {1, 4, 9, 100})
      for (int64_t px : {1, 7, 16, 1000}) {
        const auto t = one_by_one(k, c, px);
        EXPECT_GE(pe_tile_timing(p, t).total_cycles * p.peak_macs_per_cycle(ir::DType::Int8), t.macs());
      }
}

// 8-bit floats: one-byte operands on the int8 datapath; their names as the IR and ONNX write them.
TEST(PeArrayTiming, Fp8TakesTheInt8RateAndKeepsItsName) {
  const PeArrayParams p = make_params();
  EXPECT_EQ(p.macs_per_pe_cycle(ir::DType::Float8E4M3), p.macs_per_pe_cycle(ir::DType::Int8));
  EXPECT_EQ(p.macs_per_pe_cycle(ir::DType::Float8E5M2), p.macs_per_pe_cycle(ir::DType::Int8));
  EXPECT_EQ(ir::parse_dtype("fp8"), ir::DType::Float8E4M3);
  EXPECT_EQ(ir::parse_dtype("float8_e4m3fn"), ir::DType::Float8E4M3);
  EXPECT_EQ(ir::parse_dtype("fp8_e5m2"), ir::DType::Float8E5M2);
  EXPECT_EQ(ir::dtype_bytes(ir::DType::Float8E5M2), 1);
  EXPECT_STREQ(ir::dtype_name(ir::DType::Float8E5M2), "float8_e5m2");
  EXPECT_TRUE(ir::is_float(ir::DType::Float8E4M3));
  EXPECT_EQ(ir::parse_dtype("fp4"), std::nullopt);
}
