// The format-neutral GPU program structs: names, ranges, slots, tensor geometry and costs.
#include <gtest/gtest.h>

#include "sim/ir/gpu_program.h"

namespace npusim::gpu {
namespace {

TEST(GpuProgram, OpTypeNamesRoundTrip) {
  int n = 0;
  for (int i = 0; i < kNumOpTypes; ++i, ++n) {
    auto t = static_cast<OpType>(i);
    EXPECT_EQ(parse_op_type(op_type_name(t)), t) << op_type_name(t);
  }
  EXPECT_EQ(n, 33);  // 28 of May 2024 + 5 of main
  EXPECT_EQ(parse_op_type("RecvReduceSendPacket"), OpType::RecvReduceSendPacket);
  EXPECT_EQ(parse_op_type("matmul"), std::nullopt);  // case matters, as in ARK's registry
  EXPECT_EQ(op_class(OpType::Rope), OpClass::Elementwise);
  EXPECT_EQ(op_class(OpType::Reshape), OpClass::Virtual);
}

TEST(GpuProgram, DataTypes) {
  EXPECT_EQ(data_type_bytes(DataType::BF16), 2);
  EXPECT_EQ(data_type_bytes(DataType::UINT32), 4);
  EXPECT_EQ(data_type_bytes(DataType::BYTE), 1);
  EXPECT_EQ(parse_data_type("UINT8"), DataType::UINT8);
  EXPECT_EQ(parse_data_type("fp16"), std::nullopt);
}

TEST(GpuProgram, RangeWithStep) {
  Range r{2, 11, 3};  // 2, 5, 8
  EXPECT_EQ(r.size(), 3);
  EXPECT_EQ(r.last(), 8);
  EXPECT_TRUE(r.contains(5));
  EXPECT_FALSE(r.contains(6));
  EXPECT_FALSE(r.contains(11));
  EXPECT_EQ(r.str(), "[2,11,3]");
  EXPECT_EQ((Range{0, 0, 1}).size(), 0);
  EXPECT_EQ((Range{0, 108, 1}).str(), "[0,108]");
}

TEST(GpuProgram, SlotsAreLimitedByWarpsAndSram) {
  ResourceGroup rg;
  rg.warp_range = {0, 8, 1};
  rg.sram_range = {0, 49344, 1};
  TaskInfo t;
  t.num_warps = 4;
  t.sram_bytes = 24672;
  EXPECT_EQ(num_slots(rg, t), 2);  // min(8/4, 49344/24672)
  t.sram_bytes = 24673;
  EXPECT_EQ(num_slots(rg, t), 1);  // SRAM-bound: 49344/24673 = 1
  t.sram_bytes = 0;
  t.num_warps = 1;
  EXPECT_EQ(num_slots(rg, t), 8);  // no SRAM needed: warps only
  rg.warp_range = {0, 8, 2};       // 4 warps: 0, 2, 4, 6
  t.num_warps = 8;
  EXPECT_EQ(num_slots(rg, t), 0);
}

TEST(GpuProgram, TensorGeometry) {
  Tensor t;
  t.dtype = DataType::FP16;
  t.shape = {1, 512, 2688};
  t.strides = {1, 512, 11008};
  t.offsets = {0, 1, 8320};
  EXPECT_EQ(t.bytes(), 512 * 2688 * 2);
  EXPECT_EQ(t.buffer_bytes(), 512 * 11008 * 2);
  EXPECT_EQ(t.byte_offset(), (1 * 11008 + 8320) * 2);  // row 1, column 8320
  t.buffer_rank = 3;
  EXPECT_TRUE(t.is_remote(0));
  EXPECT_FALSE(t.is_remote(3));
}

TEST(GpuProgram, VirtualOpsCostNothing) {
  Op op;
  op.type = OpType::Reshape;
  Tensor t;
  t.shape = {4, 4};
  t.strides = {4, 4};
  t.offsets = {0, 0};
  op.read_tensors = {t};
  op.write_tensors = {t};
  EXPECT_EQ(op_cost(op, 0).bytes_read, 0);
  op.type = OpType::Relu;  // 16 FP16 elements: 16 ops, 32 bytes each way
  OpCost c = op_cost(op, 0);
  EXPECT_EQ(c.flops, 16);
  EXPECT_EQ(c.bytes_read, 32);
  EXPECT_EQ(c.bytes_written, 32);
  op.config.present = true;
  op.config.num_tasks = 3;  // ceil(16/3) = 6, ceil(32/3) = 11
  EXPECT_EQ(op_task_cost(op, 0).flops, 6);
  EXPECT_EQ(op_task_cost(op, 0).bytes_read, 11);
}

}  // namespace
}  // namespace npusim::gpu
