// The three committed example pipelines (examples/pipelines, scripts/make_pipelines.py): read,
// validated, collectives and lowered fx graphs as computed by hand.
#include <gtest/gtest.h>

#include <map>

#include "tests/unit/pipeline/pipeline_test_util.h"

namespace npusim::frontends::pipeline {
namespace {

using test::example_pipeline;
using test::op_names;

std::map<std::string, int> kinds(const ir::System& s) {
  std::map<std::string, int> r;
  for (const auto& t : s.supertasks) r[t.kind_name]++;
  return r;
}

int64_t total_macs(const ir::ComputeTask& c) {
  int64_t m = 0;
  for (const auto& l : c.graph.layers) m += l.macs();
  return m;
}

TEST(PipelineExamples, TensorParallelMlp) {
  const ir::System s = read_pipeline(example_pipeline("tp2_mlp.json"));
  EXPECT_EQ(s.name, "tp2_mlp");
  EXPECT_EQ(s.version, "0.1.0");
  EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[1].spec, "npu:1:*");
  EXPECT_EQ(s.devices[1].kind, "npu");
  EXPECT_EQ(s.devices[1].index, 1);
  EXPECT_EQ(s.devices[1].group, "npu:1");
  EXPECT_EQ(s.devices[1].pe_count, 0);  // "*": the whole device
  EXPECT_EQ(kinds(s), (std::map<std::string, int>{{"input", 1}, {"fx", 4}, {"all_reduce", 2}, {"output", 1}}));

  // Compute: mm [32,64]x[64,128], gelu, mm [32,128]x[128,64] per device; MACs 2 x 262144.
  const ir::SuperTask& up = s.supertasks[static_cast<size_t>(s.find_supertask("1"))];
  ASSERT_TRUE(up.compute);
  EXPECT_FALSE(up.compute->estimated) << up.compute->estimate_reason;
  EXPECT_EQ(up.compute->blob, "mlp_up_down");
  EXPECT_EQ(up.compute->payload_pointer, "/blobs/mlp_up_down");
  EXPECT_EQ(op_names(up.compute->graph), (std::vector<std::string>{"matmul", "gelu", "matmul"}));
  EXPECT_EQ(up.compute->macs, 524288);
  EXPECT_EQ(total_macs(*up.compute), 32 * 64 * 128 + 32 * 128 * 64);
  EXPECT_EQ(up.compute->flops, 2 * 524288 + 32 * 128);  // GEMMs + one per gelu output
  EXPECT_EQ(up.compute->bytes, (32 * 64 + 64 * 128 + 128 * 64 + 32 * 64) * 2);
  // Inputs keep the pipeline's names; constants take their role from their use.
  const ir::Graph& g = up.compute->graph;
  EXPECT_EQ(g.tensors[static_cast<size_t>(g.layers[0].inputs[0])].name, "x_0");
  EXPECT_EQ(g.tensors[static_cast<size_t>(g.layers[0].inputs[1])].role, ir::TensorRole::Weight);
  EXPECT_EQ(g.tensors[static_cast<size_t>(g.layers[2].outputs[0])].name, "partial_0");
  EXPECT_EQ(g.tensors[static_cast<size_t>(g.layers[2].outputs[0])].role, ir::TensorRole::GraphOutput);
  EXPECT_EQ(g.layers[0].pointer, "/blobs/mlp_up_down/nodes/0");

  // The bias add: inline data on device 0, the blob on device 1.
  for (const char* id : {"5", "6"}) {
    const ir::SuperTask& b = s.supertasks[static_cast<size_t>(s.find_supertask(id))];
    EXPECT_EQ(op_names(b.compute->graph), (std::vector<std::string>{"element_wise_add"})) << id;
  }
  EXPECT_EQ(s.supertasks[static_cast<size_t>(s.find_supertask("5"))].compute->payload_pointer, "/supertasks/5/data");

  // all_reduce of [32,64] bf16 = 4096 bytes per device over both devices.
  for (const char* id : {"3", "4"}) {
    const ir::SuperTask& a = s.supertasks[static_cast<size_t>(s.find_supertask(id))];
    ASSERT_TRUE(a.comm);
    EXPECT_EQ(a.comm->kind, ir::CollectiveKind::AllReduce);
    EXPECT_EQ(a.comm->group, "all_reduce_0");
    EXPECT_EQ(a.comm->bytes, 32 * 64 * 2);
    EXPECT_EQ(a.comm->reduce_op, "sum");
    EXPECT_EQ(a.comm->devices, (std::vector<std::string>{"0", "1"}));
    EXPECT_EQ(a.comm->size(), 2);
  }
  // Constants: stored shapes from the safetensors file.
  const ir::SystemTensor& w1 = s.tensors[static_cast<size_t>(s.find_tensor("w1_1"))];
  EXPECT_TRUE(w1.constant);
  ASSERT_TRUE(w1.param.stored_shape);
  EXPECT_EQ(*w1.param.stored_shape, (ir::Shape{64, 256}));
  EXPECT_EQ(w1.param.stored_dtype, "BF16");
  EXPECT_EQ(w1.param.placements[1], (std::pair<int64_t, int64_t>{128, 256}));
  // Order: input first, output last, the all_reduce members together.
  ASSERT_EQ(s.order.size(), s.supertasks.size());
  EXPECT_EQ(s.supertasks[static_cast<size_t>(s.order.front())].kind, ir::SuperTaskKind::Input);
  EXPECT_EQ(s.supertasks[static_cast<size_t>(s.order.back())].kind, ir::SuperTaskKind::Output);
  EXPECT_EQ(s.supertasks_on(0).size(), 3u);
  EXPECT_EQ(s.metadata.input_slices.size(), 2u);
}

TEST(PipelineExamples, PipelineParallelTransformer) {
  const ir::System s = read_pipeline(example_pipeline("pp4_transformer.json"));
  ASSERT_EQ(s.devices.size(), 4u);
  EXPECT_EQ(kinds(s), (std::map<std::string, int>{{"input", 1}, {"fx", 4}, {"send", 3}, {"recv", 3}, {"output", 1}}));
  // One transformer block per device, S=16, D=32, 2 heads of 16, MLP 64.
  const std::vector<std::string> block{
      "layer_norm", "dense", "dense", "dense", "reshape", "transpose", "reshape", "transpose", "reshape", "transpose",
      "batch_matmul", "element_wise_div", "softmax", "batch_matmul", "transpose", "reshape", "reshape", "dense", "element_wise_add",
      "layer_norm", "dense", "gelu", "dense", "element_wise_add"};
  int stages = 0;
  for (const auto& t : s.supertasks) {
    if (!t.compute) continue;
    ++stages;
    EXPECT_FALSE(t.compute->estimated) << t.compute->estimate_reason;
    EXPECT_EQ(op_names(t.compute->graph), block) << t.id;
    // q, k, v, o: 4 x 16*32*32; scores and context: 2 x 2*16*16*16; MLP: 2 x 16*32*64.
    EXPECT_EQ(t.compute->macs, 4 * 16 * 32 * 32 + 2 * (2 * 16 * 16 * 16) + 2 * (16 * 32 * 64)) << t.id;
    EXPECT_EQ(t.compute->macs, 147456);
    EXPECT_EQ(t.compute->num_opaque, 0);
  }
  EXPECT_EQ(stages, 4);
  // native_layer_norm's mean and rstd are not read: no extra op. The softmax is over the last axis.
  const ir::Graph& g = s.supertasks[static_cast<size_t>(s.find_supertask("1"))].compute->graph;
  EXPECT_EQ(g.layers[12].axes, (std::vector<int64_t>{2}));
  EXPECT_EQ(g.layers[5].perm, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(g.layers[7].perm, (std::vector<int64_t>{1, 2, 0}));
  // send / recv pairs of [16,32] bf16 = 1024 bytes, each recv after its send.
  int pairs = 0;
  for (size_t i = 0; i < s.supertasks.size(); ++i) {
    const auto& t = s.supertasks[i];
    if (!t.comm || t.comm->kind != ir::CollectiveKind::Send) continue;
    ++pairs;
    EXPECT_EQ(t.comm->bytes, 16 * 32 * 2);
    ASSERT_GE(t.comm->peer, 0);
    const auto& r = s.supertasks[static_cast<size_t>(t.comm->peer)];
    EXPECT_EQ(r.comm->kind, ir::CollectiveKind::Recv);
    EXPECT_EQ(r.comm->peer, static_cast<int>(i));
    EXPECT_NE(r.device, t.device);
    const auto pos = [&](int x) { return std::find(s.order.begin(), s.order.end(), x) - s.order.begin(); };
    EXPECT_LT(pos(static_cast<int>(i)), pos(t.comm->peer));
  }
  EXPECT_EQ(pairs, 3);
  // Stage order follows the pipeline.
  std::vector<std::string> compute_order;
  for (int i : s.order)
    if (s.supertasks[static_cast<size_t>(i)].compute) compute_order.push_back(s.supertasks[static_cast<size_t>(i)].device);
  EXPECT_EQ(compute_order, (std::vector<std::string>{"0", "1", "2", "3"}));
}

TEST(PipelineExamples, AllGatherReduceScatterLayer) {
  const ir::System s = read_pipeline(example_pipeline("ag_rs8_layer.json"));
  ASSERT_EQ(s.devices.size(), 8u);
  // The spec's older forms: devices {kind, idx}, values {path, format, ...}, kind "FX".
  EXPECT_EQ(s.devices[3].id, "npu3");
  EXPECT_EQ(s.devices[3].spec, "npu:3");
  EXPECT_EQ(kinds(s), (std::map<std::string, int>{{"input", 1}, {"FX", 8}, {"all_gather", 8}, {"reduce_scatter", 8}, {"output", 1}}));
  for (const auto& t : s.supertasks) {
    if (t.compute) {
      EXPECT_FALSE(t.compute->estimated) << t.compute->estimate_reason;
      EXPECT_EQ(op_names(t.compute->graph), (std::vector<std::string>{"dense", "gelu", "dense"}));
      EXPECT_EQ(t.compute->macs, 64 * 64 * 32 + 64 * 32 * 64);
    }
    if (!t.comm) continue;
    EXPECT_EQ(t.comm->size(), 8);
    if (t.comm->kind == ir::CollectiveKind::AllGather) {
      EXPECT_EQ(t.comm->dim, 0);
      EXPECT_EQ(t.comm->bytes, 8 * 64 * 2);  // each device's [8,64] shard; S = 8 x that
    } else {
      EXPECT_EQ(t.comm->kind, ir::CollectiveKind::ReduceScatter);
      EXPECT_EQ(t.comm->reduce_op, "sum");
      EXPECT_EQ(t.comm->bytes, 64 * 64 * 2);  // the whole [64,64] partial sum
    }
  }
  const ir::SystemTensor& w2 = s.tensors[static_cast<size_t>(s.find_tensor("w2_7"))];
  EXPECT_EQ(*w2.param.stored_shape, (ir::Shape{64, 256}));
  EXPECT_EQ(w2.param.format, "safetensors");
  // The members of a group are consecutive in the order, by device_idx.
  const auto& m = s.supertasks[static_cast<size_t>(s.find_supertask("gather_0"))].comm->members;
  auto it = std::find(s.order.begin(), s.order.end(), m[0]);
  ASSERT_NE(it, s.order.end());
  EXPECT_TRUE(std::equal(m.begin(), m.end(), it));
}

TEST(PipelineExamples, SniffedByContent) {
  for (const char* f : {"tp2_mlp.json", "pp4_transformer.json", "ag_rs8_layer.json"})
    EXPECT_TRUE(sniff_pipeline_file(example_pipeline(f))) << f;
  EXPECT_FALSE(sniff_pipeline_text("{\"supertasks\": []}"));
  EXPECT_FALSE(sniff_pipeline_text("{\"Nodes\": []}"));
  EXPECT_FALSE(sniff_pipeline_text("not json \"supertasks\""));
}

}  // namespace
}  // namespace npusim::frontends::pipeline
