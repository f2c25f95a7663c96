// Mapping: buffers are never over-filled, spills and K chunks appear when they must, and
// dependencies always point backwards.
#include "sim/mapping/mapper.h"
#include "sim/mapping/tiling.h"
#include "tests/unit/mapping/mapping_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/ir/error.h"

using namespace npusim;
using namespace npusim::mapping;
using namespace npusim::mapping::test;

namespace {


// input1 -> a (3x3, 64->64) -> b (1x1, 64->256) -> output1, at 56x56.
ir::Graph two_convs(int64_t n) {
  ir::Graph g;
  g.name = "two_convs";
  g.layers = {conv(0, "a", "input1", "b", n, 64, 64, 56, 3), conv(1, "b", "a", "output1", n, 64, 256, 56, 1)};
  return g;
}

void expect_backward_deps(const Program& p) {
  for (const auto& c : p.commands)
    for (int d : c.deps) {
      EXPECT_LT(d, c.id);
      EXPECT_GE(d, 0);
    }
}

}  // namespace

// The slices an op larger than L2 streams in: elements, channels of a global pool, normalized
// rows; none for PE-array ops and windowed pools.
// The bound rule IR runs and compiled programs share (docs/timing.md#per-layer-cycles-and-bound).
TEST(Mapper, ALayersBoundIsTheLargestOfPeVpAndStall) {
  EXPECT_STREQ(bound_name(layer_bound(100, 20, 30)), "compute");
  EXPECT_STREQ(bound_name(layer_bound(10, 20, 5)), "vector");
  EXPECT_STREQ(bound_name(layer_bound(10, 20, 21)), "memory");
  EXPECT_STREQ(bound_name(layer_bound(10, 20, 20)), "vector");  // a tie is not a stall
}

TEST(Tiling, StreamRowsAreTheOpsIndependentSlices) {
  ir::Layer relu;
  relu.op = ir::OpKind::Relu;
  relu.input_shapes = {{4, 1000}};
  relu.output_shapes = {{4, 1000}};
  EXPECT_EQ(mapping::stream_rows(relu), 4000);
  ir::Layer gap;
  gap.op = ir::OpKind::GlobalAvgPool2d;
  gap.input_shapes = {{2, 2048, 32, 32}};
  gap.output_shapes = {{2, 2048, 1, 1}};
  EXPECT_EQ(mapping::stream_rows(gap), 2 * 2048);
  ir::Layer sm;
  sm.op = ir::OpKind::Softmax;
  sm.input_shapes = {{8, 16, 128}};
  sm.output_shapes = {{8, 16, 128}};
  EXPECT_EQ(mapping::stream_rows(sm), 8 * 16);
  ir::Layer pool = gap;
  pool.op = ir::OpKind::MaxPool2d;
  pool.output_shapes = {{2, 2048, 16, 16}};
  EXPECT_EQ(mapping::stream_rows(pool), 0);
  ir::Layer mm;
  mm.op = ir::OpKind::MatMul;
  mm.input_shapes = {{64, 64}, {64, 64}};
  mm.output_shapes = {{64, 64}};
  EXPECT_EQ(mapping::stream_rows(mm), 0);
}

TEST(Mapper, SmallNetworkKeepsIntermediateInL2) {
  const auto cfg = config::HwConfig::defaults();
  const auto p = map_graph(two_convs(1), cfg);
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_TRUE(p.layers[0].input_from_dram);   // graph input
  EXPECT_FALSE(p.layers[0].output_to_dram);   // 200 KiB stays on chip
  EXPECT_FALSE(p.layers[1].input_from_dram);
  EXPECT_TRUE(p.layers[1].output_to_dram);    // graph output
  expect_backward_deps(p);
  // MACs are conserved by the tiling: sum over PE tiles = layer MACs.
  int64_t macs[2] = {0, 0};
  for (const auto& c : p.commands)
    if (c.unit == Unit::PeArray) macs[c.layer] += c.pe.macs();
  EXPECT_EQ(macs[0], 1LL * 64 * 64 * 9 * 56 * 56);
  EXPECT_EQ(macs[1], 1LL * 64 * 256 * 56 * 56);
}

TEST(Mapper, ActivationsNeverExceedL2AndSpillWhenTheyMust) {
  // 256 KiB of L2 with half for weights: a 56x56x256 int8 map (784 KiB) cannot stay.
  const auto cfg = config::HwConfig::defaults({"npu.l2.size_kib=256"});
  const auto p = map_graph(two_convs(4), cfg);
  const int64_t act_budget = 128 * 1024;
  for (const auto& l : p.layers) EXPECT_LE(l.l2_act_bytes, act_budget) << l.name;
  EXPECT_TRUE(p.layers[0].output_to_dram);
  EXPECT_TRUE(p.layers[1].input_from_dram);
  EXPECT_GT(p.layers[0].row_tiles, 1);
  // Every streamed tile (load + its output), double-buffered, fits the budget.
  for (const auto& c : p.commands) {
    if (c.unit == Unit::Dma && c.dma.kind != models::DmaKind::LoadWeights) {
      EXPECT_LE(2 * c.dma.bytes, act_budget);
    }
  }
  expect_backward_deps(p);
}

TEST(Mapper, WeightsLargerThanTheWeightStoreAreChunkedAlongK) {
  // 64 KiB weight buffer + 0 L2 share: b's 16 KiB fits, a's 36 KiB exceeds half (32 KiB).
  const auto cfg = config::HwConfig::defaults({"npu.weight_buffer.size_kib=64", "npu.l2.weight_share=0"});
  const auto p = map_graph(two_convs(1), cfg);
  EXPECT_GT(p.layers[0].k_chunks, 1);
  EXPECT_EQ(p.layers[1].k_chunks, 1);
  int64_t wbytes = 0;
  for (const auto& c : p.commands)
    if (c.unit == Unit::Dma && c.dma.kind == models::DmaKind::LoadWeights && c.layer == 0) {
      EXPECT_LE(c.dma.bytes, 32 * 1024);
      wbytes += c.dma.bytes;
    }
  EXPECT_EQ(wbytes, 64 * 64 * 9);  // every weight loaded exactly once
}

TEST(Mapper, WeightPrefetchWaitsForTheLayerNBack) {
  ir::Graph g;
  g.layers = {conv(0, "a", "input1", "b", 1, 64, 64, 14, 1), conv(1, "b", "a", "c", 1, 64, 64, 14, 1),
              conv(2, "c", "b", "output1", 1, 64, 64, 14, 1)};
  const auto p = map_graph(g, config::HwConfig::defaults({"mapping.weight_prefetch_layers=2"}));
  // Weights of layer c (index 2) depend on the last command of layer a (index 0).
  int last_a = -1;
  for (const auto& c : p.commands)
    if (c.layer == 0) last_a = c.id;
  bool found = false;
  for (const auto& c : p.commands)
    if (c.layer == 2 && c.unit == Unit::Dma && c.dma.kind == models::DmaKind::LoadWeights) {
      EXPECT_NE(std::find(c.deps.begin(), c.deps.end(), last_a), c.deps.end());
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST(Mapper, CpuLayersGoToTheHost) {
  ir::Graph g = two_convs(1);
  g.layers[1].next = {"r"};
  ir::Layer r;
  r.index = 2;
  r.name = "r";
  r.op = ir::OpKind::Reshape;
  r.device = ir::Device::Cpu;
  r.input_dtypes = r.output_dtypes = {ir::DType::Int8};
  r.input_shapes = {{1, 256, 56, 56}};
  r.output_shapes = {{1, 256 * 56 * 56}};
  r.previous = {"b"};
  r.next = {"output1"};
  g.layers.push_back(r);
  const auto p = map_graph(g, config::HwConfig::defaults());
  EXPECT_TRUE(p.layers[2].on_host);
  EXPECT_TRUE(p.layers[1].output_to_dram);  // the host reads DRAM
  int host = 0;
  for (const auto& c : p.commands) host += c.unit == Unit::Host;
  EXPECT_EQ(host, 1);
}

TEST(Mapper, TooSmallL2IsAnInputError) {
  const auto cfg = config::HwConfig::defaults({"npu.l2.size_kib=1"});
  EXPECT_THROW(map_graph(two_convs(1), cfg), InputError);
}

TEST(Mapper, BatchThatDoesNotFitRunsDepthFirstOnGroupsOfImages) {
  // 8 images of 56x56: a's output is 8 x 200 KiB = 1.6 MiB, b's 6.3 MiB; the activation share
  // is 4 MiB, so the run {a, b} goes in groups and a's output never leaves L2.
  const auto cfg = config::HwConfig::defaults();
  const auto p = map_graph(two_convs(8), cfg);
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_GT(p.layers[0].batch_groups, 1);
  EXPECT_EQ(p.layers[0].batch_groups, p.layers[1].batch_groups);
  EXPECT_FALSE(p.layers[0].output_to_dram);
  for (const auto& l : p.layers) EXPECT_LE(l.l2_act_bytes, 4 * 1024 * 1024) << l.name;
  // Weights load once per layer; every MAC is still done once.
  int weight_loads = 0;
  int64_t macs = 0;
  for (const auto& c : p.commands) {
    if (c.unit == Unit::Dma && c.dma.kind == models::DmaKind::LoadWeights) weight_loads++;
    if (c.unit == Unit::PeArray) macs += c.pe.macs();
  }
  EXPECT_EQ(weight_loads, 2);
  EXPECT_EQ(macs, 8LL * 56 * 56 * (64 * 64 * 9 + 64 * 256));
  EXPECT_EQ(p.layers[0].macs + p.layers[1].macs, macs);
  expect_backward_deps(p);
}

namespace {
// a, b (3x3, 64 ch, 56x56) then c (3x3 stride 2 -> 28x28), d (28x28) at batch 4. Per image live:
// a 200,704 B, b 401,408 (a and b), c 250,880, d 100,352.
ir::Graph two_stage_convs() {
  ir::Graph g;
  g.layers = {conv(0, "a", "input1", "b", 4, 64, 64, 56, 3), conv(1, "b", "a", "c", 4, 64, 64, 56, 3),
              conv(2, "c", "b", "d", 4, 64, 64, 28, 3), conv(3, "d", "c", "output1", 4, 64, 64, 28, 3)};
  g.layers[2].input_shapes[0] = {4, 64, 56, 56};
  g.layers[2].stride = {2, 2};
  return g;
}
}  // namespace

TEST(Mapper, PerStageGroupsLeaveARunsOutputInL2WhenItFits) {
  // L2 2 MiB, groups sized against half of it (1 MiB): stage {a, b} takes 2 images (b: 1 MiB /
  // 401,408 = 2.6), stage {c, d} 4 (c: 4.2): two runs. b's output for all 4 images (802,816 B)
  // beside a group's peak (2 x 401,408) fits the 2 MiB the runs have (no staged weights), so it
  // stays in L2: the only DRAM traffic is the graph input and output.
  const auto cfg = config::HwConfig::defaults(
      {"npu.l2.size_kib=2048", "mapping.batch_groups_per_stage=true", "mapping.batch_group_fill=0.5"});
  const auto p = map_graph(two_stage_convs(), cfg);
  ASSERT_EQ(p.layers.size(), 4u);
  EXPECT_EQ(p.layers[0].batch_groups, 2);
  EXPECT_EQ(p.layers[1].batch_groups, 2);
  EXPECT_EQ(p.layers[2].batch_groups, 1);
  EXPECT_FALSE(p.layers[1].output_to_dram);
  EXPECT_FALSE(p.layers[2].input_from_dram);
  for (const auto& c : p.commands) {
    if (c.unit != Unit::Dma) continue;
    if (c.dma.kind == models::DmaKind::LoadActivations) {
      EXPECT_EQ(c.layer, 0) << c.label;
    }
    if (c.dma.kind == models::DmaKind::StoreActivations) {
      EXPECT_EQ(c.layer, 3) << c.label;
    }
  }
  expect_backward_deps(p);
  // The same runs when b's output cannot stay (L2 1.5 MiB, groups against 2/3 of it: 1 MiB):
  // each group stores its part and c loads it back.
  const auto q = map_graph(two_stage_convs(), config::HwConfig::defaults({"npu.l2.size_kib=1536",
                                                                         "mapping.batch_groups_per_stage=true",
                                                                         "mapping.batch_group_fill=0.6667"}));
  EXPECT_EQ(q.layers[1].batch_groups, 2);
  EXPECT_TRUE(q.layers[1].output_to_dram);
  EXPECT_TRUE(q.layers[2].input_from_dram);
  expect_backward_deps(q);
}

TEST(Mapper, ActivationLoadsStartTheSetNumberOfLayersAhead) {
  // c reads the graph input again: its load waits for the compute of the layer 1 or 2
  // positions earlier.
  ir::Graph g;
  g.layers = {conv(0, "a", "input1", "b", 1, 64, 64, 14, 1), conv(1, "b", "a", "output1", 1, 64, 64, 14, 1),
              conv(2, "c", "input1", "output1", 1, 64, 64, 14, 1)};
  for (int ahead : {1, 2}) {
    const auto p = map_graph(g, config::HwConfig::defaults({"mapping.serialize_layers=true",
                                                            "mapping.activation_prefetch_layers=" + std::to_string(ahead)}));
    int last[2] = {-1, -1};  // last PE command of a and b
    for (const auto& c : p.commands)
      if (c.layer < 2 && c.unit == Unit::PeArray) last[c.layer] = c.id;
    bool found = false;
    for (const auto& c : p.commands)
      if (c.layer == 2 && c.unit == Unit::Dma && c.dma.kind == models::DmaKind::LoadActivations) {
        found = true;
        const auto has = [&](int id) { return std::find(c.deps.begin(), c.deps.end(), id) != c.deps.end(); };
        EXPECT_EQ(has(last[1]), ahead == 1) << ahead;  // the previous layer (b)
        EXPECT_EQ(has(last[0]), ahead == 2) << ahead;  // two back (a)
      }
    EXPECT_TRUE(found);
    expect_backward_deps(p);
  }
}

TEST(Mapper, ImagesTheVectorProcessorTakesSideBySideMoveOneImagesBytes) {
  // A max pool of 4 images of 64 x 8 x 8 int8 (4096 B in, 1024 B out per image).
  ir::Graph g;
  ir::Layer l;
  l.name = "pool";
  l.op = ir::OpKind::MaxPool2d;
  l.input_dtypes = l.output_dtypes = {ir::DType::Int8};
  l.input_shapes = {{4, 64, 8, 8}};
  l.output_shapes = {{4, 64, 4, 4}};
  l.kernel = l.stride = {2, 2};
  l.pool = {2, 2};
  l.previous = {"input1"};
  l.next = {"output1"};
  g.layers = {l};
  auto vp_bytes = [&](int images) {
    const auto p = map_graph(g, config::HwConfig::defaults({"npu.vector.parallel_images=" + std::to_string(images)}));
    int64_t b = 0;
    for (const auto& c : p.commands)
      if (c.unit == Unit::Vector) b += c.vp.l2_bytes;
    return b;
  };
  EXPECT_EQ(vp_bytes(1), 4 * (4096 + 1024));
  EXPECT_EQ(vp_bytes(4), 4096 + 1024);  // one image's tile
  EXPECT_EQ(vp_bytes(2), 2 * (4096 + 1024));
}

TEST(Mapper, SerializedLayersWaitForThePreviousComputeNotItsStores) {
  // a's output is a graph output (stored to DRAM); b (reading the graph input) waits for a's PE
  // work only, so the store drains behind b (the Gemini trace: a group's last sta_mov overlaps
  // the next group's first instructions).
  ir::Graph g = two_convs(1);
  g.layers[0].next = {"output1"};
  g.layers[1].previous[0] = "input1";
  g.layers[1].input_shapes[0] = g.layers[0].input_shapes[0];
  g.layers[1].input_shapes[1] = {256, 64, 1, 1};
  const auto p = map_graph(g, config::HwConfig::defaults({"mapping.serialize_layers=true"}));
  int a_pe = -1, a_store = -1;
  for (const auto& c : p.commands) {
    if (c.layer != 0) continue;
    if (c.unit == Unit::PeArray) a_pe = c.id;
    if (c.unit == Unit::Dma && c.dma.kind == models::DmaKind::StoreActivations) a_store = c.id;
  }
  ASSERT_GE(a_pe, 0);
  ASSERT_GE(a_store, 0);
  bool found = false;
  for (const auto& c : p.commands)
    if (c.layer == 1 && c.unit == Unit::PeArray) {
      found = true;
      EXPECT_NE(std::find(c.deps.begin(), c.deps.end(), a_pe), c.deps.end());
      EXPECT_EQ(std::find(c.deps.begin(), c.deps.end(), a_store), c.deps.end());
    }
  EXPECT_TRUE(found);
}
