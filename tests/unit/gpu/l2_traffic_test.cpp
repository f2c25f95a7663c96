// The L2 residency model (models/gpu/l2_timing.h), the per-op HBM traffic of a plan, and the
// cross-rank packet dependencies (sim/mapping/gpu_traffic.h).
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_traffic.h"
#include "tests/unit/gpu/gpu_test_util.h"

using namespace npusim;
using models::ByteRegion;

TEST(GpuL2, MissesThenHitsAndEvictsTheOldest) {
  models::L2Residency l2(100);
  auto a = l2.read({0, 0, 60});
  EXPECT_EQ(a.miss_bytes, 60);
  a = l2.read({0, 0, 60});
  EXPECT_EQ(a.hit_bytes, 60);
  EXPECT_EQ(a.miss_bytes, 0);
  // A 60-byte write of buffer 1 needs room: 20 clean bytes of buffer 0 go, no write-back.
  a = l2.write({1, 0, 60});
  EXPECT_EQ(a.writeback_bytes, 0);
  EXPECT_EQ(l2.resident_bytes(), 100);
  // Buffer 0 again: 40 bytes hit, 20 miss; making room evicts 20 dirty bytes of buffer 1.
  a = l2.read({0, 0, 60});
  EXPECT_EQ(a.hit_bytes, 40);
  EXPECT_EQ(a.miss_bytes, 20);
  EXPECT_EQ(a.writeback_bytes, 20);
  EXPECT_EQ(l2.dirty_bytes(), 40);
}

TEST(GpuL2, TouchMakesResidentBytesRecentAndFetchesNothing) {
  models::L2Residency l2(100);
  l2.read({0, 0, 40});
  l2.write({0, 40, 80});
  l2.touch({0, 0, 40});   // [0,40) is now more recent than the dirty [40,80)
  l2.touch({0, 200, 260});  // not resident: stays out
  EXPECT_EQ(l2.resident_bytes(), 80);
  // 40 more bytes evict 20 of the oldest: the dirty ones, written back; [0,40) stays.
  auto a = l2.read({0, 100, 140});
  EXPECT_EQ(a.writeback_bytes, 20);
  EXPECT_EQ(l2.read({0, 0, 40}).hit_bytes, 40);
}

TEST(GpuL2, OverwritingInPlaceCostsNoWriteBackButStreamingDoes) {
  models::L2Residency l2(100);
  l2.write({2, 0, 50});
  auto a = l2.write({2, 0, 50});  // the old version is simply replaced
  EXPECT_EQ(a.hit_bytes, 50);
  EXPECT_EQ(a.writeback_bytes, 0);
  // Reading 300 bytes streams through: all miss, and the 50 dirty bytes are written back.
  a = l2.read({3, 0, 300});
  EXPECT_EQ(a.miss_bytes, 300);
  EXPECT_EQ(a.writeback_bytes, 50);
  EXPECT_EQ(l2.resident_bytes(), 100);
  EXPECT_EQ(l2.dirty_bytes(), 0);
  // A write larger than the cache: what does not stay goes straight to HBM.
  a = l2.write({4, 0, 250});
  EXPECT_EQ(a.writeback_bytes, 150);
}

TEST(GpuL2, DirtyBytesAreCountedPerWriter) {
  models::L2Residency l2(100);
  l2.write({1, 0, 30}, 7);
  l2.write({2, 0, 40}, 3);
  l2.write({1, 10, 20}, 3);  // writer 3 overwrites 10 bytes of writer 7's
  l2.read({5, 0, 20});
  const auto by = l2.dirty_by_writer();
  ASSERT_EQ(by.size(), 2u);
  EXPECT_EQ(by[0], std::make_pair(int64_t{3}, int64_t{50}));
  EXPECT_EQ(by[1], std::make_pair(int64_t{7}, int64_t{20}));
  EXPECT_EQ(l2.dirty_bytes(), 70);
}

// What an op writes reaches HBM once even when it fits the L2: kernels writing 8-50 MB pay for
// their writes at HBM speed on the H100 (the held-out row-wise kernels, docs/gpu.md).
TEST(GpuTraffic, WritesStillInL2AtTheEndAreChargedToTheirWriter) {
  mapping::RowKernelSpec s;
  s.rows = 64, s.cols = 1024, s.dtype = gpu::DataType::BF16;  // 128 KiB in, 128 KiB out
  s.row_inputs = 1, s.row_outputs = 1, s.row_stats = 1;
  const gpu::Program p = mapping::single_rowwise_plan(s, 132);
  const auto t = mapping::plan_hbm_traffic(p, {50LL << 20});
  EXPECT_DOUBLE_EQ(t[0][0].hbm_read_bytes, 64.0 * 1024 * 2);
  EXPECT_DOUBLE_EQ(t[0][0].hbm_write_bytes, 64.0 * 1024 * 2 + 64 * 4);  // Y and the fp32 row statistics
}

TEST(GpuTraffic, TensorRegionSpansFirstToLastElement) {
  gpu::Tensor t;  // [1,512,2688] view at column 8320 of a [1,512,11008] fp16 buffer
  t.shape = {1, 512, 2688};
  t.strides = {1, 512, 11008};
  t.offsets = {0, 0, 8320};
  const ByteRegion r = mapping::tensor_region(t);
  EXPECT_EQ(r.begin, 8320 * 2);
  EXPECT_EQ(r.end, (511 * 11008 + 8320 + 2687 + 1) * 2);
}

TEST(GpuTraffic, TutorialMatmulReadsItsWeightsFromHbmAndSigmoidHitsL2) {
  const gpu::Program p = frontends::read_ark_plan(test::ark_file("tutorial/plan_2_split_k.json"));
  const auto t = mapping::plan_hbm_traffic(p, {40LL << 20});
  // T0 Matmul: input [1,512,4096] (4 row panels of 1 MiB) x weight [11008,4096] (43 column
  // panels of 2 MiB) in 128x256 tiles, 172 tiles on 108 processors: two waves. Wave 1 (tile
  // rows 0-2) fetches A panels 0-2 and every B panel; wave 2 (rows 2-3) reads B again after
  // about 86 MiB of other reads, of which the 40 MiB L2 keeps at most (40 / 86)^2 = 22%; A panel
  // 2 is read again after as much.
  const double a_panel = 128 * 4096 * 2, b = 11008.0 * 4096 * 2;
  EXPECT_GT(t[0][0].hbm_read_bytes, 4 * a_panel + b + 0.78 * b);
  EXPECT_LE(t[0][0].hbm_read_bytes, 5 * a_panel + 2 * b);
  // T1 Sigmoid reads the Matmul's 11 MiB output, still in the 40 MiB L2.
  EXPECT_DOUBLE_EQ(t[1][0].hbm_read_bytes, 0);
  // T3 Matmul streams its 90 MB weight through the L2: the dirty outputs of T0-T2 are written back.
  EXPECT_GT(t[3][0].hbm_write_bytes, 0);
}

TEST(GpuTraffic, PacketReadersWaitForTheRemoteWritesTheyRead) {
  std::vector<gpu::Program> plans;
  for (int r = 0; r < 8; ++r)
    plans.push_back(frontends::read_ark_plan(test::ark_file("allreduce-packet/plan_gpu" + std::to_string(r) + ".json")));
  std::vector<const gpu::Program*> by_rank;
  for (const auto& p : plans) by_rank.push_back(&p);
  const mapping::CommPlan comm(by_rank);
  // Rank 0's buffer 1 is a descriptor of rank 1's buffer (Rank 1, RecvTags [-1,t]).
  const auto phys = comm.resolve(0, 1);
  ASSERT_TRUE(phys.has_value());
  EXPECT_EQ(phys->rank, 1);
  EXPECT_TRUE(plans[1].find_buffer(phys->id)->is_local(1));
  // T7 (RecvReduceSendPacket, index 7) reduces the packets the 7 peers' SendPackets wrote.
  const auto src = comm.packet_sources(0, 7, 0, 0);
  std::set<int> ranks;
  for (const auto& k : src) {
    ranks.insert(std::get<0>(k));
    EXPECT_EQ(gpu::op_type_name(plans[std::get<0>(k)].task_infos[std::get<1>(k)].ops[std::get<2>(k)].type),
              std::string("SendPacket"));
  }
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3, 4, 5, 6, 7}));
  // T8 (RecvPacket from rank 1) waits for rank 1's reduced packets only.
  const auto one = comm.packet_sources(0, 8, 0, 0);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(std::get<0>(one[0]), 1);
  EXPECT_EQ(gpu::op_type_name(plans[1].task_infos[std::get<1>(one[0])].ops[0].type), std::string("RecvReduceSendPacket"));
  EXPECT_TRUE(comm.is_packet_source(1, 0, 0));
  EXPECT_FALSE(comm.is_packet_source(0, 8, 0));  // RecvPacket writes only locally
}
