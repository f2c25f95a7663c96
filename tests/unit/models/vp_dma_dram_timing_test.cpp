// Vector processor, DMA and DRAM formulas on hand-computed cases (docs/timing.md).
#include <gtest/gtest.h>

#include "models/memory/dram_timing.h"
#include "models/npu/dma_timing.h"
#include "models/npu/vector_processor_timing.h"

using namespace npusim::models;

namespace {
VpParams make_vp() {
  VpParams p;
  p.lanes = 32;
  for (const char* k : {"pre_cal", "compare_group", "post_cal", "fp32_sum_sub_group", "relu_group",
                         "fp32_mul_group", "acc_tree_group"})
    p.stages[k] = {1.0, 6};
  return p;
}
}  // namespace

TEST(VectorTiming, MaxPoolStreamsItsInputThroughTheSlowestStage) {
  // 64 channels = 2 vectors per pixel; input 112x112 -> 25088 vectors; output 56x56 -> 6272.
  const auto t = vp_tile_timing(make_vp(), {{"pre_cal", 64, 12544}, {"compare_group", 64, 12544}, {"post_cal", 64, 3136}});
  EXPECT_EQ(t.stream_cycles, 25088);
  EXPECT_EQ(t.latency_cycles, 18);
  EXPECT_EQ(t.total_cycles, 25106);
  EXPECT_EQ(t.slowest_stage, "pre_cal");
}

TEST(VectorTiming, ChannelsRoundUpToWholeVectors) {
  // 33 channels need 2 vectors per pixel; 32 need 1 (boundary).
  EXPECT_EQ(vp_tile_timing(make_vp(), {{"pre_cal", 32, 100}}).stream_cycles, 100);
  EXPECT_EQ(vp_tile_timing(make_vp(), {{"pre_cal", 33, 100}}).stream_cycles, 200);
}

TEST(VectorTiming, NumberedStageKindsShareTheirFamilyParameters) {
  VpParams p = make_vp();
  p.stages["fp32_sum_sub_group"] = {0.5, 3};
  EXPECT_EQ(vp_stage_family("fp32_sum_sub_group0"), "fp32_sum_sub_group");
  EXPECT_EQ(vp_tile_timing(p, {{"fp32_sum_sub_group0", 32, 10}}).total_cycles, 20 + 3);
}

TEST(VpTiming, ImagesOfABatchGoSideBySide) {
  VpParams p;
  p.lanes = 32;
  p.stages["compare_group"] = {1, 6};
  p.parallel_images = 2;
  // 4 images x 64 channels x 100 pixels: 2 vectors x 400 positions = 800 vectors, two images at
  // a time: 400 cycles + 6 latency. One image has nothing to pair with: 200 + 6.
  EXPECT_EQ(vp_tile_timing(p, {{"compare_group", 64, 400, 1, 4}}).total_cycles, 406);
  EXPECT_EQ(vp_tile_timing(p, {{"compare_group", 64, 100, 1, 1}}).total_cycles, 206);
  p.parallel_images = 1;
  EXPECT_EQ(vp_tile_timing(p, {{"compare_group", 64, 400, 1, 4}}).total_cycles, 806);
}

TEST(VpTiming, AWorkloadOfUpToParallelImagesTakesOneImagesTime) {
  // The Gemini traces: 16 images of 512 x 7 x 7 (an add) take the time of one image.
  VpParams p;
  p.lanes = 32;
  p.stages["pre_cal"] = {1, 10};
  p.parallel_images = 64;
  // One image: 16 vectors x 49 positions = 784 cycles + 10. Sixteen: 16 x 784 / 16 = 784 + 10.
  EXPECT_EQ(vp_tile_timing(p, {{"pre_cal", 512, 49, 1, 1}}).total_cycles, 794);
  EXPECT_EQ(vp_tile_timing(p, {{"pre_cal", 512, 16 * 49, 1, 16}}).total_cycles, 794);
  // 128 images with 64 side by side: two passes of one image.
  EXPECT_EQ(vp_tile_timing(p, {{"pre_cal", 512, 128 * 49, 1, 128}}).total_cycles, 2 * 784 + 10);
}

TEST(DramTiming, TransfersRoundUpToBurstsAndPayPerSegment) {
  DramParams p;
  p.bytes_per_cycle = 16;
  p.burst_bytes = 64;
  p.segment_overhead_cycles = 2;
  p.channels = 1;
  // 1000 B -> 16 bursts = 1024 B -> 64 cycles, plus 3 segments * 2.
  EXPECT_EQ(dram_service_cycles(p, 1000, 3), 70);
  // Exactly one burst (boundary) vs one byte more.
  EXPECT_EQ(dram_service_cycles(p, 64, 0), 4);
  EXPECT_EQ(dram_service_cycles(p, 65, 0), 8);
  EXPECT_EQ(dram_service_cycles(p, 0, 5), 0);
}

TEST(DramTiming, BurstsInterleaveOverChannels) {
  DramParams p;
  p.bytes_per_cycle = 16;
  p.burst_bytes = 64;
  p.channels = 4;  // 4 B/cycle each
  // 16 bursts over 4 channels: 4 bursts = 256 B at 4 B/cycle = 64 cycles on each: the whole bus.
  EXPECT_EQ(dram_channel_service_cycles(p, 1024, 0), (std::vector<int64_t>{64, 64, 64, 64}));
  EXPECT_EQ(dram_service_cycles(p, 1024, 0), 64);
  // One burst uses one channel: 64 B at 4 B/cycle = 16 cycles (one channel's rate, not the bus's).
  EXPECT_EQ(dram_channel_service_cycles(p, 64, 0), (std::vector<int64_t>{16}));
  // 5 bursts: shares 2,1,1,1 -> 32,16,16,16; segment overhead splits over the channels used.
  p.segment_overhead_cycles = 4;
  EXPECT_EQ(dram_channel_service_cycles(p, 320, 2), (std::vector<int64_t>{34, 18, 18, 18}));
  // One channel: exactly the whole-bus formula.
  p.channels = 1;
  p.segment_overhead_cycles = 2;
  EXPECT_EQ(dram_service_cycles(p, 1000, 3), 70);
}

TEST(DmaTiming, ChannelRateIsBytesOverPeak) {
  DmaParams p;
  p.bytes_per_cycle = 64;
  EXPECT_EQ(dma_channel_cycles(p, {DmaKind::LoadActivations, 6400, 1}), 100);
  EXPECT_EQ(dma_channel_cycles(p, {DmaKind::LoadActivations, 6401, 1}), 101);
}
