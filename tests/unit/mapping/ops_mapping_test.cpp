// Mapping of the workload IR's non-CNN operations onto the NPU (docs/mapping.md#matmuls-on-the-pe-array,
// docs/timing.md#vector-ops-of-the-workload-ir): matmuls on the PE array as 1x1 convolutions, vector ops as
// passes, data movement through L2, opaque ops by roofline. Expected values computed by hand.
#include <gtest/gtest.h>

#include <numeric>

#include "models/npu/vector_processor_timing.h"
#include "sim/config/hw_config.h"
#include "sim/ir/graph.h"
#include "sim/mapping/mapper.h"
#include "tests/unit/mapping/mapping_test_util.h"

using namespace npusim;
using namespace npusim::mapping;
using namespace npusim::mapping::test;

namespace {

// A tiny builder: tensors by id, one op at a time, then derive_edges + validate.
struct G {
  ir::Graph g;
  int tensor(const std::string& name, ir::Shape s, ir::TensorRole role, ir::DType t = ir::DType::Float16) {
    ir::Tensor x;
    x.name = name;
    x.shape = std::move(s);
    x.role = role;
    x.dtype = t;
    return g.add_tensor(x);
  }
  ir::Layer& op(const std::string& name, ir::OpKind k, std::vector<int> in, std::vector<int> out) {
    ir::Layer l;
    l.index = static_cast<int>(g.layers.size());
    l.name = name;
    l.op = k;
    l.inputs = std::move(in);
    l.outputs = std::move(out);
    l.pointer = "/" + name;
    g.layers.push_back(l);
    return g.layers.back();
  }
  ir::Graph done() {
    g.source = "test";
    g.name = "test";
    ir::derive_edges(g);
    ir::validate(g);
    return g;
  }
};


std::vector<const Command*> of(const Program& p, int layer, Unit u) {
  std::vector<const Command*> r;
  for (const auto& c : p.commands)
    if (c.layer == layer && c.unit == u) r.push_back(&c);
  return r;
}

TEST(OpsMapping, MatmulWithWeightRunsOnThePeArrayWithEveryMac) {
  G b;
  const int x = b.tensor("input1", {2, 128, 64}, ir::TensorRole::GraphInput);
  const int w = b.tensor("constant_w", {64, 96}, ir::TensorRole::Weight);
  const int y = b.tensor("y", {2, 128, 96}, ir::TensorRole::GraphOutput);
  b.op("mm", ir::OpKind::MatMul, {x, w}, {y});
  const ir::Graph g = b.done();
  EXPECT_EQ(g.layers[0].macs(), 2 * 128 * 64 * 96);
  const Program p = map_graph(g, config::HwConfig::defaults());
  EXPECT_EQ(pe_macs(p, 0), 2 * 128 * 64 * 96);
  ASSERT_EQ(p.layers.size(), 1u);
  EXPECT_EQ(p.layers[0].op, "matmul");
  EXPECT_EQ(p.layers[0].macs, 2 * 128 * 64 * 96);
  EXPECT_EQ(p.layers[0].weight_bytes, 64 * 96 * 2);
  int64_t weight_dma = 0;
  for (const Command* c : of(p, 0, Unit::Dma))
    if (c->dma.kind == models::DmaKind::LoadWeights) weight_dma += c->dma.bytes;
  EXPECT_EQ(weight_dma, 64 * 96 * 2);
}

TEST(OpsMapping, AttentionOperandProducedOnChipMovesFromL2ToTheWeightBuffer) {
  // scores = q x relu(k)^T: the second operand is an activation that stays in L2.
  G b;
  const int q = b.tensor("input1", {1, 2, 16, 8}, ir::TensorRole::GraphInput);
  const int k = b.tensor("input2", {1, 2, 16, 8}, ir::TensorRole::GraphInput);
  const int kr = b.tensor("k_relu", {1, 2, 16, 8}, ir::TensorRole::Activation);
  const int s = b.tensor("scores", {1, 2, 16, 16}, ir::TensorRole::GraphOutput);
  b.op("relu", ir::OpKind::Relu, {k}, {kr});
  b.op("qk", ir::OpKind::BatchMatMul, {q, kr}, {s}).transpose_b = true;
  const ir::Graph g = b.done();
  EXPECT_FALSE(g.layers[1].weight_is_parameter);
  const Program p = map_graph(g, config::HwConfig::defaults());
  EXPECT_EQ(pe_macs(p, 1), 2 * 16 * 16 * 8);
  EXPECT_EQ(p.layers[1].macs, 2 * 16 * 16 * 8);
  const auto dma = of(p, 1, Unit::Dma);
  const Command* load = nullptr;
  for (const Command* c : dma)
    if (c->dma.kind == models::DmaKind::L2ToWeightBuffer) load = c;
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->dma.bytes, 2 * 16 * 8 * 2);
  // It waits for the relu that produced the operand.
  const int relu_last = of(p, 0, Unit::Vector).back()->id;
  EXPECT_NE(std::find(load->deps.begin(), load->deps.end(), relu_last), load->deps.end());
  // Each head is its own group of the PE pass.
  EXPECT_EQ(of(p, 1, Unit::PeArray).front()->pe.groups, 2);
}

TEST(OpsMapping, SoftmaxIsFourPassesAndItsPerRowPassTouchesOneValuePerRow) {
  G b;
  const int x = b.tensor("input1", {4, 64}, ir::TensorRole::GraphInput);
  const int y = b.tensor("y", {4, 64}, ir::TensorRole::GraphOutput);
  b.op("sm", ir::OpKind::Softmax, {x}, {y}).axes = {-1};
  const Program p = map_graph(b.done(), config::HwConfig::defaults());
  const auto vp = of(p, 0, Unit::Vector);
  ASSERT_EQ(vp.size(), 4u);
  // Pass 1: pre_cal + compare_group over 4 rows of 64 fp16 = 4 x ceil(64*2/32) = 16 vectors.
  ASSERT_EQ(vp[0]->vp.stages.size(), 2u);
  EXPECT_EQ(vp[0]->vp.stages[1].kind, "compare_group");
  EXPECT_EQ(vp[0]->vp.stages[1].channels, 64);
  EXPECT_EQ(vp[0]->vp.stages[1].pixels, 4);
  // Pass 3: one reciprocal per row.
  ASSERT_EQ(vp[2]->vp.stages.size(), 1u);
  EXPECT_EQ(vp[2]->vp.stages[0].kind, "lut_group");
  EXPECT_EQ(vp[2]->vp.stages[0].channels, 4);
  EXPECT_EQ(vp[2]->vp.stages[0].pixels, 1);
  // Passes run in order.
  for (size_t i = 1; i < vp.size(); ++i) EXPECT_EQ(vp[i]->deps, std::vector<int>{vp[i - 1]->id});
  // By hand, default VP (32 lanes; 1 vector/cycle, latency 6; lut_group 0.5 vector/cycle,
  // latency 8): pass 1 = 16 + 6 + 6 = 28 cycles; pass 2 (sub, lut, acc) = 16/0.5 + 6 + 8 + 6 = 52.
  const models::VpParams vpp = models::VpParams::read(config::HwConfig::defaults());
  EXPECT_EQ(models::vp_command_cycles(vpp, vp[0]->vp), 28);
  EXPECT_EQ(models::vp_command_cycles(vpp, vp[1]->vp), 52);
  // Pass 3: ceil(4*2/32) = 1 vector at 0.5/cycle = 2, + latency 8 = 10.
  EXPECT_EQ(models::vp_command_cycles(vpp, vp[2]->vp), 10);
}

TEST(OpsMapping, EveryVectorOpHasPassesWhoseStagesHaveConfigKeys) {
  const models::VpParams vpp = models::VpParams::read(config::HwConfig::defaults());
  for (int i = 0; i < ir::kNumOpKinds; ++i) {
    const auto k = static_cast<ir::OpKind>(i);
    const auto cls = ir::op_class(k);
    const auto passes = models::vp_op_passes(k);
    if (cls == ir::OpClass::Elementwise || cls == ir::OpClass::Normalization || cls == ir::OpClass::Reduction ||
        cls == ir::OpClass::Quantization || cls == ir::OpClass::Window) {
      EXPECT_FALSE(passes.empty()) << ir::op_name(k);
    }
    if (cls == ir::OpClass::DataMovement || cls == ir::OpClass::Gemm || cls == ir::OpClass::Opaque) {
      EXPECT_TRUE(passes.empty()) << ir::op_name(k);
    }
    for (const auto& p : passes)
      for (const auto& s : p.stages) EXPECT_NO_THROW(vpp.stage(s)) << ir::op_name(k) << " " << s;
  }
}

TEST(OpsMapping, OpaqueOpIsARooflineOfItsFlopsAndBytes) {
  G b;
  const int x = b.tensor("input1", {1, 1024}, ir::TensorRole::GraphInput);
  const int y = b.tensor("y", {1, 1024}, ir::TensorRole::GraphOutput);
  ir::Layer& l = b.op("blob", ir::OpKind::Opaque, {x}, {y});
  // Default NPU: 64x64 PEs at 0.5 fp16 MAC/PE/cycle = 2048 MAC/cycle = 4096 flop/cycle.
  l.opaque_flops = 4096 * 1000;
  l.opaque_bytes = 1 << 20;
  const Program p = map_graph(b.done(), config::HwConfig::defaults());
  const auto vp = of(p, 0, Unit::Vector);
  ASSERT_EQ(vp.size(), 2u);  // compute, then the join of compute and bytes
  EXPECT_EQ(vp[0]->vp.fixed_cycles, 1000);
  int64_t loaded = 0;
  for (const Command* c : of(p, 0, Unit::Dma))
    if (c->dma.kind == models::DmaKind::LoadActivations) loaded += c->dma.bytes;
  EXPECT_GE(loaded, int64_t{1} << 20);
  EXPECT_EQ(vp[1]->deps.size(), 2u);
}

TEST(OpsMapping, DataMovementOpsMoveTheirBytesThroughL2) {
  G b;
  const int x = b.tensor("input1", {1, 8, 16, 4}, ir::TensorRole::GraphInput);
  const int y = b.tensor("y", {1, 16, 8, 4}, ir::TensorRole::GraphOutput);
  b.op("tr", ir::OpKind::Transpose, {x}, {y}).perm = {0, 2, 1, 3};
  const Program p = map_graph(b.done(), config::HwConfig::defaults());
  int64_t l2 = 0;
  for (const Command* c : of(p, 0, Unit::Vector)) {
    EXPECT_TRUE(c->vp.stages.empty());
    l2 += c->vp.l2_bytes;
  }
  EXPECT_EQ(l2, 2 * 8 * 16 * 4 * 2);  // read and written once
}

TEST(OpsMapping, GatherLoadsOnlyTheLookedUpRows) {
  G b;
  const int table = b.tensor("constant_table", {50000, 64}, ir::TensorRole::Weight);
  const int ids = b.tensor("input1", {2, 8}, ir::TensorRole::GraphInput, ir::DType::Int32);
  const int y = b.tensor("y", {2, 8, 64}, ir::TensorRole::GraphOutput);
  b.op("emb", ir::OpKind::Gather, {table, ids}, {y});
  const ir::Graph g = b.done();
  EXPECT_EQ(g.batch(), 2);
  const Program p = map_graph(g, config::HwConfig::defaults());
  int64_t rows = 0;
  for (const Command* c : of(p, 0, Unit::Dma))
    if (c->label.find("gather") != std::string::npos) rows += c->dma.bytes;
  EXPECT_EQ(rows, 2 * 8 * 64 * 2);  // 16 rows of 64 fp16, not the 6.4 MB table
}

}  // namespace
