// The mapper's passes on their own, on cases computed by hand: tiling (pure functions),
// liveness and batch groups, and the weight-prefetch policy (docs/mapping.md).
#include <gtest/gtest.h>

#include "sim/mapping/prefetch.h"
#include "sim/mapping/segments.h"
#include "sim/mapping/tiling.h"

using namespace npusim;
using namespace npusim::mapping;

namespace {

ir::Layer layer(ir::OpKind op, std::vector<ir::Shape> in, std::vector<ir::Shape> out, ir::DType t = ir::DType::Float16) {
  ir::Layer l;
  l.op = op;
  l.input_shapes = std::move(in);
  l.output_shapes = std::move(out);
  l.input_dtypes.assign(l.input_shapes.size(), t);
  l.output_dtypes.assign(l.output_shapes.size(), t);
  return l;
}

TEST(Tiling, GemmViewIsA1x1ConvolutionGroupedForBatchedOperands) {
  const ir::Layer v = gemm_view(layer(ir::OpKind::MatMul, {{2, 128, 64}, {64, 96}}, {{2, 128, 96}}));
  EXPECT_EQ(v.input_shapes[0], (ir::Shape{256, 64, 1, 1}));
  EXPECT_EQ(v.input_shapes[1], (ir::Shape{96, 64, 1, 1}));
  EXPECT_EQ(v.output_shapes[0], (ir::Shape{256, 96, 1, 1}));
  EXPECT_EQ(v.groups, 1);
  ir::Layer b = layer(ir::OpKind::BatchMatMul, {{1, 2, 16, 8}, {1, 2, 16, 8}}, {{1, 2, 16, 16}});
  b.transpose_b = true;
  const ir::Layer bv = gemm_view(b);
  EXPECT_EQ(bv.input_shapes[0], (ir::Shape{1, 16, 16, 1}));   // G*K = 2*8 channels, M = 16 rows
  EXPECT_EQ(bv.input_shapes[1], (ir::Shape{32, 8, 1, 1}));    // G*N = 2*16 outputs, K = 8
  EXPECT_EQ(bv.output_shapes[0], (ir::Shape{1, 32, 16, 1}));
  EXPECT_EQ(bv.groups, 2);
}

TEST(Tiling, VectorExtentsAndRowCounts) {
  EXPECT_EQ(vp_extent({4, 64}, false), (std::pair<int64_t, int64_t>{64, 4}));
  EXPECT_EQ(vp_extent({1, 64, 8, 8}, true), (std::pair<int64_t, int64_t>{64, 64}));
  EXPECT_EQ(vp_extent({512, 1}, false), (std::pair<int64_t, int64_t>{512, 1}));  // a last dim of 1 packs
  EXPECT_EQ(row_count(layer(ir::OpKind::Conv2d, {{2, 3, 56, 56}, {64, 3, 1, 1}}, {{2, 64, 56, 56}})), 112);  // N x Ho
  EXPECT_EQ(row_count(layer(ir::OpKind::Softmax, {{4, 64}}, {{4, 64}})), 4);
  ir::Layer r = layer(ir::OpKind::ReduceSum, {{512, 4096}}, {{1, 4096}});
  r.axes = {0};
  EXPECT_EQ(row_count(r), 512);  // tiles over its input, not its one output row
  EXPECT_EQ(row_length(r), 512);
}

TEST(Tiling, AStreamedTileCarriesItsWindowHalo) {
  ir::Layer c = layer(ir::OpKind::Conv2d, {{1, 1, 56, 56}, {1, 1, 3, 3}}, {{1, 1, 56, 56}}, ir::DType::Int8);
  c.kernel = {3, 3};
  // 8 output rows of a 3x3 stride-1 conv read 7 + 3 = 10 input rows: 3136 B x 10 / 56 = 560 B.
  EXPECT_EQ(tile_stream_bytes(c, 8, 3136, 0, 56), 560);
  // Plus its share of a streamed output: 8/56 of 3136 = 448.
  EXPECT_EQ(tile_stream_bytes(c, 8, 3136, 3136, 56), 560 + 448);
}

TEST(Tiling, FewestRowTilesThatFitDoubleBuffered) {
  const ir::Layer s = layer(ir::OpKind::Softmax, {{64, 100}}, {{64, 100}});
  // 12800 B in and out stream through 20000 B: 1 tile needs 2 x 25600, 2 tiles 2 x 12800 + ...
  // 4 tiles of 16 rows: 2 x (3200 + 3200) = 12800 <= 20000.
  const auto t = plan_row_tiles(s, 0, 20000, 12800, 12800, 64);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->tiles, 4);
  EXPECT_EQ(t->out_rows_per_tile, 16);
  EXPECT_FALSE(plan_row_tiles(s, 20001, 20000, 0, 0, 64).has_value());      // resident data alone overflows
  EXPECT_EQ(plan_row_tiles(s, 0, 20000, 0, 0, 64)->tiles, 1);             // nothing streams
  EXPECT_FALSE(plan_row_tiles(s, 19990, 20000, 12800, 12800, 64).has_value());  // not even one row fits
}

TEST(Tiling, WeightChunksFitHalfTheWeightStorageInMultiplesOfPeRows) {
  // 1000 B of weights, 10 B per output channel, 600 B of storage: half = 300 B = 30 channels,
  // rounded down to 16 (the PE rows).
  EXPECT_EQ(k_chunk_size(1000, 600, 10, 100, 1, 16), 16);
  EXPECT_EQ(k_chunk_size(200, 600, 10, 20, 1, 16), 20);   // fits half: one chunk
  EXPECT_EQ(k_chunk_size(1000, 600, 10, 100, 2, 16), 100);  // grouped: never chunked
  EXPECT_EQ(k_chunk_size(1000, 100, 10, 100, 1, 16), 5);    // fewer than a row's worth: as many as fit
}

// a -> b -> c at batch 4, each output 1000 B (250 per image).
ir::Graph chain() {
  ir::Graph g;
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    ir::Layer l = layer(ir::OpKind::Conv2d, {{4, 10, 5, 5}, {10, 10, 1, 1}}, {{4, 10, 5, 5}}, ir::DType::Int8);
    l.index = i;
    l.name = names[i];
    l.previous = {i == 0 ? "input1" : names[i - 1], std::string("constant_") + names[i]};
    l.next = {i == 2 ? "output1" : names[i + 1]};
    g.layers.push_back(l);
  }
  return g;
}

TEST(Segments, LiveBytesCountOutputsStillToBeRead) {
  // a: its own output; b: its output and a's (b reads it); c: its output and b's.
  EXPECT_EQ(whole_batch_live_bytes(chain()), (std::vector<int64_t>{1000, 2000, 2000}));
}

TEST(Segments, ARunTakesTheGroupOfItsTightestLayer) {
  MapperParams p;
  p.keep_activations_on_chip = true;
  p.l2_act_bytes = 1200;  // per image: 250, 500, 500 -> groups of 4, 2, 2 images
  p.weight_buffer_bytes = 1 << 20;
  const auto segs = plan_segments(chain(), p);
  ASSERT_EQ(segs.size(), 1u);
  EXPECT_EQ(segs[0].first, 0u);
  EXPECT_EQ(segs[0].count, 3u);
  EXPECT_EQ(segs[0].group, 2);
  p.l2_act_bytes = 4000;  // everything fits the whole batch: no run
  EXPECT_TRUE(plan_segments(chain(), p).empty());
  p.l2_act_bytes = 1200;
  p.weight_buffer_bytes = 150;  // 100 B of weights each: two layers' weights do not fit together
  EXPECT_EQ(plan_segments(chain(), p).size(), 2u);
}

// a -> b (8x8) -> c -> d (4x4, c strided) at batch 4, 10 channels of int8: per image a 640 B,
// b 640, c 160, d 160. Live per image: a 640, b 1280 (a and b), c 800 (b and c), d 320.
ir::Graph two_stages() {
  ir::Graph g;
  const char* names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    const int64_t hw = i < 2 ? 8 : 4;
    ir::Layer l = layer(ir::OpKind::Conv2d, {{4, 10, i < 3 ? 8 : 4, i < 3 ? 8 : 4}, {10, 10, 1, 1}}, {{4, 10, hw, hw}},
                        ir::DType::Int8);
    l.index = i;
    l.name = names[i];
    l.previous = {i == 0 ? "input1" : names[i - 1], std::string("constant_") + names[i]};
    l.next = {i == 3 ? "output1" : names[i + 1]};
    g.layers.push_back(l);
  }
  return g;
}

TEST(Segments, PerStageGroupsArePowersOfTwoSizedAgainstTheWholeL2) {
  MapperParams p;
  p.keep_activations_on_chip = true;
  p.batch_groups_per_stage = true;
  p.batch_group_fill = 1.0;
  p.l2_bytes = 2000;      // budget 2000 B: a 2000/640 = 3 -> 2, b 1 (1280), c 2 (800), d 4 (320 x 4 <= 2000)
  p.l2_act_bytes = 1000;  // the static share: a run without staged weights may use all 2000
  p.weight_buffer_bytes = 1 << 20;
  const auto segs = plan_segments(two_stages(), p);
  // Stage {a, b} (8x8) takes b's group of 1; stage {c, d} (4x4, starting at c: only b's output
  // is live there) takes c's 2, larger: a new run.
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].first, 0u);
  EXPECT_EQ(segs[0].count, 2u);
  EXPECT_EQ(segs[0].group, 1);
  EXPECT_EQ(segs[0].act_bytes, 2000);
  EXPECT_EQ(segs[1].first, 2u);
  EXPECT_EQ(segs[1].count, 2u);
  EXPECT_EQ(segs[1].group, 2);
  // A fill of 0.5 (1000 B): b's 1280 B per image still gets 1 image, c's 800 B 1 (not 2):
  // the second stage is no larger and joins the first run.
  p.batch_group_fill = 0.5;
  const auto one = plan_segments(two_stages(), p);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].count, 4u);
  EXPECT_EQ(one[0].group, 1);
  // Budget 8000 B: every layer fits the whole batch (d 4, c 8000/800 = 10 -> 4, b 6 -> 4): one
  // whole-batch run, returned for its L2 split.
  p.batch_group_fill = 1.0;
  p.l2_bytes = 8000;
  const auto whole = plan_segments(two_stages(), p);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].group, 4);
  EXPECT_EQ(whole[0].act_bytes, 8000);
}

TEST(Segments, PerStageRunsGiveStagedWeightsTheirL2) {
  MapperParams p;
  p.keep_activations_on_chip = true;
  p.batch_groups_per_stage = true;
  p.batch_group_fill = 1.0;
  p.l2_bytes = 2000;
  p.l2_act_bytes = 500;
  p.l2_weight_bytes = 1 << 20;
  p.weight_buffer_bytes = 150;  // 100 B of weights per layer: more than half of WL0, staged in L2
  // The runs on groups hold their weights (2 x 100 B) until their last group: 2000 - 200.
  const auto segs = plan_segments(two_stages(), p);
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(segs[0].act_bytes, 1800);
  EXPECT_EQ(segs[1].act_bytes, 1800);
  EXPECT_EQ(segs[1].group, 2);  // 2 x 800 <= 1800
}

TEST(Prefetch, SmallWeightsWaitForTheLayerNEarlierLargeOnesForRoomInL2) {
  MapperParams p;
  p.weight_buffer_bytes = 1000;  // half: 500 B go straight to WL0
  p.l2_weight_bytes = 3000;
  p.weight_prefetch_layers = 2;
  p.staged_prefetch_layers = 1;
  WeightPrefetch w(p);
  bool staged = true;
  EXPECT_TRUE(w.deps(100, staged).empty());
  EXPECT_FALSE(staged);
  w.layer_done(10);
  w.layer_done(20);
  EXPECT_EQ(w.deps(100, staged), (std::vector<int>{10}));  // 2 layers earlier
  EXPECT_TRUE(w.deps(800, staged).empty());                // staged, nothing held yet
  EXPECT_TRUE(staged);
  w.set_pending("a", 800);
  w.commit_pending(30);
  // 800 held + 2500 > 3000: waits for the previous weight layer and for "a" to free its share.
  EXPECT_EQ(w.deps(2500, staged), (std::vector<int>{30, 30}));
  EXPECT_EQ(w.deps(2000, staged), (std::vector<int>{30}));  // fits beside "a": only the distance
  w.extend("a", 40);                                        // a batch-group run keeps it longer
  EXPECT_EQ(w.deps(2500, staged), (std::vector<int>{40, 40}));
}

}  // namespace
