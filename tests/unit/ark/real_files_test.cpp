// All 30 real ARK files load, with the counts and derived values read off them by hand.
#include <gtest/gtest.h>

#include "tests/unit/ark/ark_test_util.h"

namespace npusim::frontends {
namespace {

using test::ark_example;

struct PlanCounts {
  const char* file;
  size_t task_infos, ops, tensor_ids, buffers, processor_groups;
};

// Counted with /usr/bin/python3 over the JSON (distinct tensor and buffer ids over all ops).
const PlanCounts kPlans[] = {
    {"tutorial/default_plan.json", 6, 6, 16, 10, 6},
    {"tutorial/plan.json", 8, 8, 23, 9, 8},
    {"tutorial/plan_1_larger_tile.json", 6, 6, 16, 10, 6},
    {"tutorial/plan_2_split_k.json", 8, 8, 23, 11, 8},
    {"tutorial/plan_3_overwrite.json", 8, 8, 23, 9, 8},
    {"tutorial_v2/default_plan.json", 6, 6, 16, 10, 6},
    {"tutorial_v2/plan.json", 8, 8, 23, 9, 8},
    {"tutorial_v2/plan_1_larger_tile.json", 6, 6, 16, 10, 6},
    {"tutorial_v2/plan_2_split_k.json", 8, 8, 23, 11, 8},
    {"tutorial_v2/plan_3_overwrite.json", 8, 8, 23, 9, 8},
    {"llama/plan_llama2_7b_b1_s2048.json", 17, 38, 87, 46, 16},
    {"llama/plan_llama_layer_gpu0.json", 58, 58, 133, 67, 58},
    {"allreduce-packet/plan_gpu0.json", 15, 15, 60, 30, 1},
    {"allreduce-packet/plan_gpu1.json", 15, 15, 60, 30, 1},
    {"allreduce-packet/plan_gpu2.json", 15, 15, 60, 30, 1},
    {"allreduce-packet/plan_gpu3.json", 15, 15, 60, 30, 1},
    {"allreduce-packet/plan_gpu4.json", 15, 15, 60, 30, 1},
    {"allreduce-packet/plan_gpu5.json", 15, 15, 60, 30, 1},
    {"allreduce-packet/plan_gpu6.json", 15, 15, 60, 30, 1},
    {"allreduce-packet/plan_gpu7.json", 15, 15, 60, 30, 1},
    {"allreduce-sm/plan_gpu0.json", 17, 17, 51, 23, 4},
    {"allreduce-sm/plan_gpu1.json", 17, 17, 51, 23, 4},
    {"allreduce-sm/plan_gpu2.json", 17, 17, 51, 23, 4},
    {"allreduce-sm/plan_gpu3.json", 17, 17, 51, 23, 4},
    {"allreduce-sm/plan_gpu4.json", 17, 17, 51, 23, 4},
    {"allreduce-sm/plan_gpu5.json", 17, 17, 51, 23, 4},
    {"allreduce-sm/plan_gpu6.json", 17, 17, 51, 23, 4},
    {"allreduce-sm/plan_gpu7.json", 17, 17, 51, 23, 4},
};

class ArkRealPlan : public ::testing::TestWithParam<PlanCounts> {};

TEST_P(ArkRealPlan, LoadsWithCounts) {
  const PlanCounts& c = GetParam();
  gpu::Program p = read_ark_plan(ark_example(c.file));
  EXPECT_EQ(p.source, ark_example(c.file));
  EXPECT_EQ(p.task_infos.size(), c.task_infos);
  EXPECT_EQ(p.num_ops(), c.ops);
  EXPECT_EQ(p.num_tensor_ids(), c.tensor_ids);
  EXPECT_EQ(p.buffers.size(), c.buffers);
  EXPECT_EQ(p.processor_groups.size(), c.processor_groups);
  // Every task group found its TaskInfo and got at least one slot (checked by the reader).
  for (const auto& pg : p.processor_groups)
    for (const auto& rg : pg.resource_groups)
      for (const auto& tg : rg.task_groups) EXPECT_GT(gpu::num_slots(rg, *p.find_task(tg.task_id)), 0);
}

INSTANTIATE_TEST_SUITE_P(AllPlans, ArkRealPlan, ::testing::ValuesIn(kPlans));

TEST(ArkRealModel, MayVersionHasOpsArrays) {
  gpu::Model m = read_ark_model(ark_example("tutorial/model.json"));
  ASSERT_EQ(m.nodes.size(), 3u);
  EXPECT_EQ(m.num_ops(), 6u);  // 3 + 1 + 2
  EXPECT_EQ(m.num_tensor_ids(), 16u);
  EXPECT_EQ(m.buffers.size(), 10u);
  EXPECT_EQ(m.nodes[0].ops.size(), 3u);
  EXPECT_EQ(m.nodes[0].ops[2].pointer, "/Nodes/0/Ops/2");
  EXPECT_EQ(m.nodes[2].producer_ids, (std::vector<int64_t>{1, 0}));
  // The May-2024 Matmul carries ShapeMNK and StridesACDB; they agree with the tensors.
  const gpu::Op& mm = m.nodes[0].ops[0];
  ASSERT_TRUE(mm.matmul);
  EXPECT_TRUE(mm.matmul->shape_from_args);
  EXPECT_EQ(mm.matmul->m, 512);
  EXPECT_EQ(mm.matmul->n, 11008);
  EXPECT_EQ(mm.matmul->k, 4096);
  EXPECT_EQ(mm.matmul->strides_acdb, (std::array<int64_t, 4>{4096, 11008, 11008, 4096}));
  EXPECT_FALSE(mm.config.present);
}

TEST(ArkRealModel, LaterVersionHasOneOpPerNode) {
  gpu::Model m = read_ark_model(ark_example("tutorial_v2/model.json"));
  ASSERT_EQ(m.nodes.size(), 6u);
  EXPECT_EQ(m.num_ops(), 6u);
  EXPECT_EQ(m.num_tensor_ids(), 16u);
  for (const gpu::Node& n : m.nodes) EXPECT_EQ(n.ops.size(), 1u);
  EXPECT_EQ(m.nodes[1].ops[0].pointer, "/Nodes/1/Op");
  EXPECT_EQ(m.nodes[5].ops[0].type, gpu::OpType::Matmul);
  // Derived from the tensors: [1,512,11008] x [4096,11008]^T.
  ASSERT_TRUE(m.nodes[5].ops[0].matmul);
  EXPECT_FALSE(m.nodes[5].ops[0].matmul->shape_from_args);
  EXPECT_EQ(m.nodes[5].ops[0].matmul->k, 11008);
  EXPECT_EQ(m.nodes[2].producer_ids, (std::vector<int64_t>{0, 1}));
}

TEST(ArkRealPlanDetails, SplitKMatmulDerivedFromTensors) {
  gpu::Program p = read_ark_plan(ark_example("tutorial/plan_2_split_k.json"));
  EXPECT_EQ(p.num_processors, 108);
  EXPECT_EQ(p.num_warps_per_processor, 8);
  EXPECT_EQ(p.architecture, "");
  const gpu::TaskInfo& t = p.task_infos[5];
  EXPECT_EQ(t.num_tasks, 64);
  const gpu::Op& op = t.ops[0];
  ASSERT_TRUE(op.matmul);
  // A = [1,512,8320] view of a [1,512,11008] buffer; B = [4096,8320] of [4096,11008], transposed.
  EXPECT_EQ(op.matmul->m, 512);
  EXPECT_EQ(op.matmul->n, 4096);
  EXPECT_EQ(op.matmul->k, 8320);
  EXPECT_EQ(op.matmul->batch, 1);
  EXPECT_FALSE(op.matmul->transpose_input);
  EXPECT_TRUE(op.matmul->transpose_other);
  EXPECT_EQ(op.matmul->strides_acdb, (std::array<int64_t, 4>{11008, 4096, 4096, 11008}));
  ASSERT_TRUE(op.config.tile_shape_mnk);
  EXPECT_EQ(*op.config.tile_shape_mnk, (std::array<int64_t, 3>{128, 256, 64}));
  // 2*512*4096*8320; reads 512*8320*2 + 4096*8320*2 bytes; writes 512*4096*2.
  EXPECT_EQ(op.cost.flops, 34896609280);
  EXPECT_EQ(op.cost.bytes_read, 8519680 + 68157440);
  EXPECT_EQ(op.cost.bytes_written, 4194304);
  // One 128x256 tile with the whole K: 2*128*256*8320 flops, (128+256)*8320*2 bytes in.
  EXPECT_EQ(op.task_cost.flops, 545259520);
  EXPECT_EQ(op.task_cost.bytes_read, 6389760);
  EXPECT_EQ(op.task_cost.bytes_written, 65536);
  // The second half of K reads at column offset 8320: 8320 * 2 bytes into the buffer.
  EXPECT_EQ(p.task_infos[6].ops[0].read_tensors[0].byte_offset(), 16640);
  // Split-K: two matmuls on disjoint processor ranges.
  EXPECT_EQ(p.processor_groups[5].processor_range.str(), "[0,64]");
  EXPECT_EQ(p.processor_groups[6].processor_range.str(), "[64,108]");
}

TEST(ArkRealPlanDetails, ElementwiseTaskCostIsAnEvenShare) {
  gpu::Program p = read_ark_plan(ark_example("tutorial/default_plan.json"));
  const gpu::Op& sig = p.task_infos[1].ops[0];
  EXPECT_EQ(sig.type, gpu::OpType::Sigmoid);
  EXPECT_EQ(sig.config.tile, (gpu::Dims{1, 64}));
  // 512*11008 = 5636096 FP16 elements in 88064 tiles of 64.
  EXPECT_EQ(sig.cost.flops, 5636096);
  EXPECT_EQ(sig.cost.bytes_read, 11272192);
  EXPECT_EQ(sig.task_cost.flops, 64);
  EXPECT_EQ(sig.task_cost.bytes_read, 128);
  EXPECT_EQ(sig.task_cost.bytes_written, 128);
  EXPECT_EQ(p.task_infos[1].task_cost.flops, 64);
}

TEST(ArkRealPlanDetails, LlamaFusedTasksFactorAndSlots) {
  gpu::Program p = read_ark_plan(ark_example("llama/plan_llama2_7b_b1_s2048.json"));
  EXPECT_EQ(p.architecture, "ROCM_942");
  EXPECT_EQ(p.num_processors, 304);
  const gpu::TaskInfo* t = p.find_task(15);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->ops.size(), 2u);
  // Attention scores: [1,32,2048,128] x [1,32,2048,128]^T -> 32 batches of 2048x2048, K=128.
  ASSERT_TRUE(t->ops[0].matmul);
  EXPECT_EQ(t->ops[0].matmul->batch, 32);
  EXPECT_EQ(t->ops[0].matmul->m, 2048);
  EXPECT_EQ(t->ops[0].matmul->n, 2048);
  EXPECT_EQ(t->ops[0].matmul->k, 128);
  // ScalarMul as ARK's code writes it: "Factor", not the doc's "Value".
  EXPECT_EQ(t->ops[1].type, gpu::OpType::ScalarMul);
  ASSERT_TRUE(t->ops[1].scalar);
  EXPECT_DOUBLE_EQ(*t->ops[1].scalar, 0.0883883461356163);
  EXPECT_EQ(t->ops[1].arg("Value"), nullptr);
  // PG 6 runs task 15 (4 warps, 24672 B) on WarpRange [0,8], SramRange [0,49344]: 2 slots.
  const gpu::ResourceGroup& rg = p.processor_groups[6].resource_groups[0];
  EXPECT_EQ(rg.task_groups[0].task_id, 15);
  EXPECT_EQ(rg.task_groups[0].granularity, 2);
  EXPECT_EQ(gpu::num_slots(rg, *t), 2);
  // Reduce args and config.
  const gpu::TaskInfo* t0 = p.find_task(0);
  EXPECT_EQ(t0->ops[2].type, gpu::OpType::ReduceMean);
  EXPECT_EQ(t0->ops[2].arg_int("Axis"), 2);
  EXPECT_EQ(t0->ops[2].arg_bool("KeepDim"), true);
  EXPECT_EQ(t0->ops[2].config.impl_type, "WarpWise");
  // Rope's tile is 3-D.
  EXPECT_EQ(p.find_task(7)->ops[1].config.tile, (gpu::Dims{256, 1, 128}));
}

TEST(ArkRealPlanDetails, AllReduceBuffersTagsAndRemoteTraffic) {
  gpu::Program pk = read_ark_plan(ark_example("allreduce-packet/plan_gpu1.json"));
  EXPECT_EQ(pk.rank, 1);
  EXPECT_EQ(pk.world_size, 8);
  const gpu::Buffer* b = pk.find_buffer(1);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->rank, 0);
  EXPECT_FALSE(b->is_local(1));
  ASSERT_EQ(b->recv_tags.size(), 1u);
  EXPECT_EQ(b->recv_tags[0].remote_rank, -1);
  EXPECT_EQ(b->recv_tags[0].tag, -2147483648LL);
  const gpu::Op& rrs = pk.task_infos[7].ops[0];
  EXPECT_EQ(rrs.type, gpu::OpType::RecvReduceSendPacket);
  EXPECT_EQ(rrs.arg_int("NPeers"), 7);
  EXPECT_EQ(rrs.arg("NPeers")->type, gpu::ArgType::UInt32);
  EXPECT_EQ(rrs.config.packet_type, "mscclpp::LL8Packet");
  // Outputs: 1024 FP16 elements, one add per element and peer.
  EXPECT_EQ(rrs.cost.flops, 1024 * 7);

  gpu::Program sm = read_ark_plan(ark_example("allreduce-sm/plan_gpu1.json"));
  const gpu::Op& send = sm.task_infos[0].ops[0];
  EXPECT_EQ(send.type, gpu::OpType::Send);
  EXPECT_EQ(send.config.channel_type, "Sm");
  EXPECT_EQ(send.config.signal, false);
  // Writes 1048576 FP16 into a buffer of rank 0; 256 tasks share it.
  EXPECT_EQ(send.cost.remote_bytes_written, 2097152);
  EXPECT_EQ(send.cost.remote_bytes_read, 0);
  EXPECT_EQ(send.task_cost.remote_bytes_written, 8192);
  EXPECT_EQ(sm.task_infos[9].ops[0].config.wait, false);
}

}  // namespace
}  // namespace npusim::frontends
