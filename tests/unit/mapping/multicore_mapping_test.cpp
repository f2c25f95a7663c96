// Mapping onto several cores (docs/multicore.md#mapping): a layer's rows or output channels are
// spread over the cores, work and bytes are conserved, each core's commands chain only among
// themselves, and consumers wait for every core through one join.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sim/ir/error.h"
#include "sim/mapping/mapper.h"
#include "sim/mapping/npu_params.h"
#include "tests/unit/mapping/mapping_test_util.h"

using namespace npusim;
using namespace npusim::mapping;
using namespace npusim::mapping::test;

namespace {


// a: a big map and small weights (3x3, 64 -> 64 at 56x56: 196 KiB in, 36 KiB of weights);
// b: a small map and big weights (3x3, 512 -> 512 at 7x7: 24.5 KiB in, 2.25 MiB of weights).
ir::Graph two_kinds() {
  ir::Graph g;
  g.name = "two_kinds";
  g.layers = {conv(0, "a", "input1", "output1", 1, 64, 64, 56, 3), conv(1, "b", "input2", "output2", 1, 512, 512, 7, 3)};
  return g;
}


}  // namespace

TEST(MulticoreMapping, OneCoreHasNoSplitNoJoinAndEveryCommandOnCoreZero) {
  const auto p = map_graph(two_kinds(), config::HwConfig::defaults());
  for (const auto& l : p.layers) {
    EXPECT_EQ(l.cores, 1);
    EXPECT_EQ(l.split, "");
  }
  for (const auto& c : p.commands) {
    EXPECT_EQ(c.core, 0);
    EXPECT_NE(c.unit, Unit::Sync);
    EXPECT_EQ(c.remote_bytes, 0);
  }
}

TEST(MulticoreMapping, AutoSplitsRowsOfBigMapsAndChannelsOfBigWeights) {
  // Rows copy the weights to every core: 3 x 36 KiB more for a, 3 x 2.25 MiB for b. Channels
  // make every core read the whole input: 3 x 196 KiB for a, 3 x 24.5 KiB for b.
  const auto p = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4"}));
  ASSERT_EQ(p.layers.size(), 2u);
  EXPECT_EQ(p.layers[0].split, "rows");
  EXPECT_EQ(p.layers[1].split, "channels");
  EXPECT_EQ(p.layers[0].cores, 4);
  EXPECT_EQ(p.layers[1].cores, 4);
  // The policy can be forced either way.
  const auto rows = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=rows"}));
  EXPECT_EQ(rows.layers[1].split, "rows");
  const auto channels = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=channels"}));
  EXPECT_EQ(channels.layers[0].split, "channels");
}

TEST(MulticoreMapping, WorkIsConservedAndSpreadOverEveryCore) {
  for (const char* split : {"rows", "channels", "auto"}) {
    const auto p = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", std::string("mapping.multicore=") + split}));
    for (int layer = 0; layer < 2; ++layer) {
      EXPECT_EQ(pe_macs(p, layer), p.layers[static_cast<size_t>(layer)].macs) << split;
      std::map<int, int64_t> per_core;
      for (const auto& c : p.commands)
        if (c.unit == Unit::PeArray && c.layer == layer) per_core[c.core] += c.pe.macs();
      ASSERT_EQ(per_core.size(), 4u) << split << " layer " << layer;
      // Balanced within one tile's work.
      int64_t lo = INT64_MAX, hi = 0;
      for (const auto& [core, m] : per_core) lo = std::min(lo, m), hi = std::max(hi, m);
      EXPECT_LE(hi - lo, hi / 2) << split << " layer " << layer;
    }
  }
}

TEST(MulticoreMapping, RowsCopyWeightsToEveryCoreAndChannelsDivideThem) {
  auto weight_bytes = [](const Program& p, int layer, std::set<int>& cores) {
    int64_t b = 0;
    for (const auto& c : p.commands)
      if (c.unit == Unit::Dma && c.layer == layer && c.dma.kind == models::DmaKind::LoadWeights) b += c.dma.bytes, cores.insert(c.core);
    return b;
  };
  std::set<int> cores_rows, cores_channels;
  const auto rows = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=rows"}));
  const auto channels = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=channels"}));
  EXPECT_EQ(weight_bytes(rows, 1, cores_rows), 4 * 512 * 512 * 9);
  EXPECT_EQ(weight_bytes(channels, 1, cores_channels), 512 * 512 * 9);
  EXPECT_EQ(cores_rows.size(), 4u);
  EXPECT_EQ(cores_channels.size(), 4u);
}

TEST(MulticoreMapping, CoresChainOnlyTheirOwnTilesAndConsumersWaitForAJoin) {
  // a -> b: b's input is a's output, kept on chip.
  ir::Graph g;
  g.name = "chain";
  g.layers = {conv(0, "a", "input1", "b", 1, 64, 64, 56, 3), conv(1, "b", "a", "output1", 1, 64, 64, 56, 3)};
  const auto p = map_graph(g, config::HwConfig::defaults({"npu.cores=4"}));
  std::map<int, const Command*> by_id;
  for (const auto& c : p.commands) by_id[c.id] = &c;
  for (const auto& c : p.commands) {
    for (int d : c.deps) EXPECT_LT(d, c.id);
    if (c.unit == Unit::Sync) continue;
    // A command waits on other cores' commands only through a join or a weight/input load
    // that every core's tiles share (none here: rows copy the weights per core).
    for (int d : c.deps) {
      if (by_id[d]->unit != Unit::Sync) {
        EXPECT_EQ(by_id[d]->core, c.core) << c.label << " <- " << by_id[d]->label;
      }
    }
  }
  int joins = 0;
  for (const auto& c : p.commands)
    if (c.unit == Unit::Sync) {
      ++joins;
      std::set<int> cores;
      for (int d : c.deps) cores.insert(by_id[d]->core);
      EXPECT_EQ(cores.size(), 4u) << c.label;
    }
  EXPECT_GE(joins, 2);
  // Both split the same rows: b reads a's rows on the core that made them (no remote bytes).
  for (const auto& c : p.commands) {
    if (c.layer == 1 && c.unit == Unit::PeArray) {
      EXPECT_EQ(c.remote_bytes, 0);
    }
  }
  // Split b over channels instead: every core reads all of a's rows, 3/4 from other cores.
  const auto q = map_graph(g, config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=channels"}));
  int64_t remote = 0, in = 0;
  for (const auto& c : q.commands)
    if (c.layer == 1 && c.unit == Unit::PeArray) remote += c.remote_bytes, in += c.pe.in_bytes;
  EXPECT_NEAR(static_cast<double>(remote), 0.75 * static_cast<double>(in), 0.01 * static_cast<double>(in));
}

TEST(MulticoreMapping, ALayerWithFewerRowsThanCoresUsesFewerCores) {
  // A 1-row dense layer (m = 1): rows cannot be split; channels can.
  ir::Layer fc;
  fc.index = 0;
  fc.name = "fc";
  fc.op = ir::OpKind::Conv2d;
  fc.input_dtypes = {ir::DType::Int8, ir::DType::Int8};
  fc.output_dtypes = {ir::DType::Int8};
  fc.input_shapes = {{1, 2048, 1, 1}, {3, 2048, 1, 1}};
  fc.output_shapes = {{1, 3, 1, 1}};
  fc.kernel = {1, 1};
  fc.previous = {"input1", "constant_fc"};
  fc.next = {"output1"};
  ir::Graph g;
  g.name = "fc";
  g.layers = {fc};
  const auto p = map_graph(g, config::HwConfig::defaults({"npu.cores=8"}));
  EXPECT_EQ(p.layers[0].split, "channels");
  EXPECT_EQ(p.layers[0].cores, 3);  // one output channel per core
  EXPECT_EQ(pe_macs(p, 0), 3 * 2048);
}

TEST(MulticoreMapping, LayerMappingRunsEachLayerWholeOnOneCoreInTurn) {
  const auto p = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=layer"}));
  std::map<int, std::set<int>> cores_of_layer;
  for (const auto& c : p.commands) {
    EXPECT_NE(c.unit, Unit::Sync);
    cores_of_layer[c.layer].insert(c.core);
  }
  ASSERT_EQ(cores_of_layer.size(), 2u);
  EXPECT_EQ(cores_of_layer[0], std::set<int>{0});
  EXPECT_EQ(cores_of_layer[1], std::set<int>{1});
  EXPECT_EQ(p.layers[0].split, "one");
  EXPECT_EQ(pe_macs(p, 1), p.layers[1].macs);
}

TEST(MulticoreMapping, PerLayerExceptionsOverrideTheChipsSplit) {
  // Every layer whole on one core but a, whose rows go over all four (a compiler's own choice).
  const auto p = map_graph(two_kinds(), config::HwConfig::defaults(
                                            {"npu.cores=4", "mapping.multicore=layer", "mapping.multicore_layers=a=rows"}));
  EXPECT_EQ(p.layers[0].split, "rows");
  EXPECT_EQ(p.layers[0].cores, 4);
  EXPECT_EQ(p.layers[1].split, "one");
  EXPECT_EQ(pe_macs(p, 0), p.layers[0].macs);
  // A prefix with * names every layer it starts; later entries win.
  const auto q = map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", "mapping.multicore_layers=*=channels,b=layer"}));
  EXPECT_EQ(q.layers[0].split, "channels");
  EXPECT_EQ(q.layers[1].split, "one");
}

TEST(MulticoreMapping, PerLayerExceptionsThatNameNoLayerOrNoSplitAreRefused) {
  for (const char* bad : {"mapping.multicore_layers=c=rows", "mapping.multicore_layers=a=diagonal",
                          "mapping.multicore_layers=a", "mapping.multicore_layers=a=rows,"}) {
    try {
      map_graph(two_kinds(), config::HwConfig::defaults({"npu.cores=4", bad}));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("mapping.multicore_layers"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(map_graph(two_kinds(), config::HwConfig::defaults(
                                          {"npu.cores=4", "mapping.multicore=pipeline", "mapping.multicore_layers=a=rows"})),
               InputError);
}

TEST(MulticoreMapping, FusedCoresAreOneCoreWithEveryCoresResources) {
  // 8 cores of 128 x 64: the smaller side doubled three times -> 256 x 256; 3 cores: rows x 3.
  const auto p = NpuParams::read(config::HwConfig::defaults(
      {"npu.cores=8", "mapping.multicore=fused", "npu.pe_array.rows=128", "npu.pe_array.cols=64", "npu.l2.size_kib=1024",
       "npu.dma.channels=1", "npu.vector.lanes=64"}));
  EXPECT_EQ(p.cores, 1);
  EXPECT_EQ(p.pe.rows, 256);
  EXPECT_EQ(p.pe.cols, 256);
  EXPECT_EQ(p.buffers.l2_bytes, 8 * 1024 * 1024);
  EXPECT_EQ(p.dma.channels, 8);
  EXPECT_EQ(p.vp.lanes, 512);
  EXPECT_EQ(p.mapper.cores, 1);
  const auto three = NpuParams::read(config::HwConfig::defaults({"npu.cores=3", "mapping.multicore=fused"}));
  EXPECT_EQ(three.pe.rows, 3 * 64);
  EXPECT_EQ(three.pe.cols, 64);
}

TEST(MulticoreMapping, PipelineStagesAreConsecutiveLayersAndImagesStreamThroughThem) {
  // Four equal 3x3 convolutions (64 -> 64 at 28x28) on 8 images, 4 cores: stage k = conv k on
  // core k; images go through in groups of mapping.pipeline_images (2: 4 groups).
  ir::Graph g;
  g.name = "chain4";
  for (int i = 0; i < 4; ++i)
    g.layers.push_back(conv(i, "c" + std::to_string(i), i == 0 ? "input1" : "c" + std::to_string(i - 1),
                            i == 3 ? "output1" : "c" + std::to_string(i + 1), 8, 64, 64, 28, 3));
  const auto p = map_graph(g, config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=pipeline", "mapping.pipeline_images=2"}));
  ASSERT_EQ(p.layers.size(), 4u);
  for (size_t l = 0; l < 4; ++l) {
    EXPECT_EQ(p.layers[l].batch_groups, 4) << l;
    EXPECT_EQ(p.layers[l].split, "one");
  }
  for (const auto& c : p.commands) EXPECT_EQ(c.core, c.layer) << c.label;
  for (int l = 0; l < 4; ++l) EXPECT_EQ(pe_macs(p, l), p.layers[static_cast<size_t>(l)].macs);
  // A stage whose weights do not fit its core's weight storage is refused naming the key.
  try {
    map_graph(g, config::HwConfig::defaults({"npu.cores=4", "mapping.multicore=pipeline", "npu.weight_buffer.size_kib=16",
                                              "npu.l2.weight_share=0"}));
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("mapping.multicore"), std::string::npos) << e.what();
  }
}
