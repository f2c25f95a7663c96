// Lowering of the workload IR to ARK ops (sim/mapping/gpu_lower.h): GEMM FLOPs equal twice the
// IR's MACs, the ARK compositions (softmax, norms), every op kind lowers to a model whose
// default plan fits the GPUs and reads back through ARK's plan reader, small hand-computed
// costs, and the real ResNet-50 file.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "models/gpu/gpu_timing.h"
#include "sim/config/hw_config.h"
#include "sim/ir/error.h"
#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_lower.h"
#include "sim/report/gpu_report.h"
#include "tests/unit/gpu/gpu_test_util.h"

using namespace npusim;
using ir::OpKind;

namespace {

ir::Layer layer(const std::string& name, OpKind k, std::vector<ir::Shape> ins, std::vector<ir::Shape> outs,
                ir::DType dt = ir::DType::Float16) {
  ir::Layer l;
  l.name = name;
  l.op = k;
  l.pointer = "/" + name;
  l.input_shapes = std::move(ins);
  l.output_shapes = std::move(outs);
  l.input_dtypes.assign(l.input_shapes.size(), dt);
  l.output_dtypes.assign(l.output_shapes.size(), dt);
  return l;
}

// A graph of unlinked layers (each reads fresh buffers); the shape rules must hold.
ir::Graph graph(std::vector<ir::Layer> layers) {
  ir::Graph g;
  g.source = "test.json";
  g.name = "test";
  for (size_t i = 0; i < layers.size(); ++i) {
    layers[i].index = static_cast<int>(i);
    ir::check_op(layers[i], g.source);
  }
  g.layers = std::move(layers);
  return g;
}

std::vector<const gpu::Op*> ops_of(const gpu::Model& m) {
  std::vector<const gpu::Op*> r;
  for (const gpu::Node& n : m.nodes)
    for (const gpu::Op& op : n.ops) r.push_back(&op);
  return r;
}

std::vector<gpu::OpType> types_of(const gpu::Model& m) {
  std::vector<gpu::OpType> r;
  for (const gpu::Op* op : ops_of(m)) r.push_back(op->type);
  return r;
}

const gpu::Op& only_matmul(const gpu::Model& m) {
  const gpu::Op* found = nullptr;
  for (const gpu::Op* op : ops_of(m))
    if (op->type == gpu::OpType::Matmul) {
      EXPECT_EQ(found, nullptr) << "more than one Matmul";
      found = op;
    }
  if (!found) throw std::runtime_error("no Matmul");
  return *found;
}

ir::Layer conv(const std::string& name, ir::Shape x, int64_t k, int r, int stride, int pad, int groups, int dil = 1) {
  const int64_t ho = (x[2] + 2 * pad - dil * (r - 1) - 1) / stride + 1, wo = (x[3] + 2 * pad - dil * (r - 1) - 1) / stride + 1;
  ir::Layer l = layer(name, OpKind::Conv2d, {x, {k, x[1] / groups, r, r}}, {{x[0], k, ho, wo}}, ir::DType::Int8);
  l.kernel = {r, r};
  l.stride = {stride, stride};
  l.padding = {pad, pad, pad, pad};
  l.dilation = {dil, dil};
  l.groups = groups;
  return l;
}

config::HwConfig hw(const std::string& name) { return config::HwConfig::load(test::repo_file("configs/" + name + ".yaml")); }

}  // namespace

TEST(GpuLower, IrDataTypesMapToArks) {
  EXPECT_EQ(mapping::ark_data_type(ir::DType::Float16), gpu::DataType::FP16);
  EXPECT_EQ(mapping::ark_data_type(ir::DType::BFloat16), gpu::DataType::BF16);
  EXPECT_EQ(mapping::ark_data_type(ir::DType::Float32), gpu::DataType::FP32);
  EXPECT_EQ(mapping::ark_data_type(ir::DType::Int8), gpu::DataType::INT8);
  EXPECT_EQ(mapping::ark_data_type(ir::DType::Int32), gpu::DataType::INT32);
}

TEST(GpuLower, ConvolutionsAreImplicitGemmsWithTwiceTheirMacsInFlops) {
  std::vector<ir::Layer> convs = {
      conv("c3x3", {1, 64, 56, 56}, 128, 3, 1, 1, 1),  // M = 3136, N = 128, K = 576
      conv("c1x1s2", {2, 256, 28, 28}, 512, 1, 2, 0, 1),
      conv("c7x7", {1, 3, 224, 224}, 64, 7, 2, 3, 1),
      conv("grouped", {2, 64, 28, 28}, 64, 3, 1, 1, 4),  // 4 groups of 16 -> 16 channels
      conv("depthwise", {1, 32, 14, 14}, 32, 3, 1, 1, 32),
      conv("dilated", {1, 16, 20, 20}, 32, 3, 1, 2, 1, 2),
  };
  for (const ir::Layer& l : convs) {
    const gpu::Model m = mapping::lower_to_ark(graph({l}));
    const gpu::Op& mm = only_matmul(m);
    EXPECT_EQ(mm.name, l.name);
    EXPECT_EQ(mm.cost.flops, 2 * l.macs()) << l.name;
    const ir::Shape &w = l.input_shapes[1], &y = l.output_shapes[0];
    ASSERT_TRUE(mm.matmul.has_value());
    EXPECT_EQ(mm.matmul->m, y[0] * y[2] * y[3]) << l.name;
    EXPECT_EQ(mm.matmul->n, w[0] / l.groups) << l.name;
    EXPECT_EQ(mm.matmul->k, w[1] * w[2] * w[3]) << l.name;
    EXPECT_EQ(mm.matmul->batch, l.groups) << l.name;
    EXPECT_TRUE(mm.matmul->transpose_other);  // weights [K, C/g*R*S]
    EXPECT_EQ(mm.read_tensors[0].dtype, gpu::DataType::INT8);
  }
  // Hand-computed: 2 * 3136 * 128 * 576.
  EXPECT_EQ(only_matmul(mapping::lower_to_ark(graph({convs[0]}))).cost.flops, int64_t{2} * 3136 * 128 * 576);
}

TEST(GpuLower, DenseAndMatmulsKeepTheirShapeTransposeFlagsAndBatch) {
  ir::Layer dense = layer("fc", OpKind::Dense, {{4, 2048, 1, 1}, {1000, 2048}}, {{4, 1000}});
  ir::Layer mm = layer("mm", OpKind::MatMul, {{2, 128, 64}, {256, 64}}, {{2, 128, 256}});
  mm.transpose_b = true;
  ir::Layer bmm = layer("bmm", OpKind::BatchMatMul, {{2, 8, 64, 32}, {2, 8, 64, 48}}, {{2, 8, 32, 48}});
  bmm.transpose_a = true;
  ir::Layer bcast = layer("bcast", OpKind::BatchMatMul, {{1, 16, 8}, {3, 8, 5}}, {{3, 16, 5}});
  ir::Layer wide = layer("wide", OpKind::BatchMatMul, {{2, 3, 4, 16, 8}, {2, 3, 4, 8, 5}}, {{2, 3, 4, 16, 5}});
  for (const ir::Layer& l : {dense, mm, bmm, bcast, wide}) {
    const gpu::Model m = mapping::lower_to_ark(graph({l}));  // outlives the reference below
    const gpu::Op& op = only_matmul(m);
    EXPECT_EQ(op.cost.flops, 2 * l.macs()) << l.name;
    EXPECT_EQ(op.arg_bool("TransposeInput"), l.transpose_a) << l.name;
  }
  const gpu::Model bm = mapping::lower_to_ark(graph({bmm}));
  const gpu::Op& b = only_matmul(bm);
  EXPECT_EQ(b.matmul->batch, 16);
  EXPECT_EQ(b.matmul->m, 32);
  EXPECT_EQ(b.matmul->n, 48);
  EXPECT_EQ(b.matmul->k, 64);
  EXPECT_EQ(only_matmul(mapping::lower_to_ark(graph({bcast}))).matmul->batch, 3);
  EXPECT_EQ(only_matmul(mapping::lower_to_ark(graph({wide}))).matmul->batch, 24);
  EXPECT_EQ(only_matmul(mapping::lower_to_ark(graph({dense}))).cost.flops, int64_t{2} * 4 * 1000 * 2048);
  EXPECT_EQ(only_matmul(mapping::lower_to_ark(graph({mm}))).arg_bool("TransposeOther"), true);
}

TEST(GpuLower, SoftmaxIsArksFiveOps) {
  ir::Layer sm = layer("attn/softmax", OpKind::Softmax, {{2, 4, 16, 16}}, {{2, 4, 16, 16}});
  sm.axes = {-1};
  const mapping::ArkLowering low = mapping::lower_workload(graph({sm}));
  using T = gpu::OpType;
  EXPECT_EQ(types_of(low.model), (std::vector<T>{T::ReduceMax, T::Sub, T::Exp, T::ReduceSum, T::Div}));
  const auto ops = ops_of(low.model);
  EXPECT_EQ(ops[0]->name, "attn/softmax/reduce_max");
  EXPECT_EQ(ops[4]->name, "attn/softmax/div");
  for (const gpu::Op* op : ops) EXPECT_EQ(low.ir_op.at(op->name), "softmax");
  // Over the last axis: rows of 16, a warp per row (ARK's WarpWise reduce), 128 rows.
  EXPECT_EQ(ops[0]->read_tensors[0].shape, (gpu::Dims{128, 16}));
  const gpu::OpConfig c = mapping::default_op_config(*ops[0], "CUDA_90");
  EXPECT_EQ(c.impl_type, "WarpWise");
  EXPECT_EQ(c.num_tasks, 128);
  EXPECT_EQ(ops[0]->cost.flops, 2 * 4 * 16 * 16);
  EXPECT_EQ(ops[2]->cost.flops, 2 * 4 * 16 * 16);
  // Over a middle axis: [pre, R, post] and ARK's ElementWise reduce.
  sm.axes = {1};
  const gpu::Model mid = mapping::lower_to_ark(graph({sm}));
  EXPECT_EQ(ops_of(mid)[0]->read_tensors[0].shape, (gpu::Dims{2, 4, 256}));
  EXPECT_EQ(mapping::default_op_config(*ops_of(mid)[0], "CUDA_90").impl_type, "ElementWise");
}

TEST(GpuLower, NormsAreArksCompositions) {
  using T = gpu::OpType;
  ir::Layer ln = layer("ln", OpKind::LayerNorm, {{2, 10, 64}, {64}, {64}}, {{2, 10, 64}});
  EXPECT_EQ(types_of(mapping::lower_to_ark(graph({ln}))),
            (std::vector<T>{T::ReduceMean, T::Sub, T::Mul, T::ReduceMean, T::ScalarAdd, T::Rsqrt, T::Mul, T::Mul, T::Add}));
  ir::Layer rms = layer("rms", OpKind::RmsNorm, {{2, 10, 64}, {64}}, {{2, 10, 64}});
  const gpu::Model m = mapping::lower_to_ark(graph({rms}));
  EXPECT_EQ(types_of(m), (std::vector<T>{T::Mul, T::ReduceMean, T::ScalarAdd, T::Rsqrt, T::Mul, T::Mul}));
  EXPECT_DOUBLE_EQ(*ops_of(m)[2]->arg_float("Factor"), 1e-5);
  EXPECT_EQ(ops_of(m)[1]->read_tensors[0].shape, (gpu::Dims{20, 64}));
}

TEST(GpuLower, HandComputedCosts) {
  // Element-wise add of two fp16 [1,4,8,8]: 256 flops, 1024 bytes read, 512 written.
  const gpu::Model add = mapping::lower_to_ark(
      graph({layer("add", OpKind::ElementWiseAdd, {{1, 4, 8, 8}, {1, 4, 8, 8}}, {{1, 4, 8, 8}})}));
  ASSERT_EQ(add.nodes.size(), 1u);
  const gpu::Op& a = add.nodes[0].ops[0];
  EXPECT_EQ(a.type, gpu::OpType::Add);
  EXPECT_EQ(a.cost.flops, 256);
  EXPECT_EQ(a.cost.bytes_read, 1024);
  EXPECT_EQ(a.cost.bytes_written, 512);
  // 3x3 / 2 max pool on [1,2,8,8] -> [1,2,4,4]: the window-expanded input [32, 9].
  ir::Layer mp = layer("pool", OpKind::MaxPool2d, {{1, 2, 8, 8}}, {{1, 2, 4, 4}});
  mp.pool = {3, 3};
  mp.stride = {2, 2};
  mp.padding = {1, 1, 1, 1};
  const gpu::Model pm = mapping::lower_to_ark(graph({mp}));
  const gpu::Op& p = pm.nodes[0].ops[0];
  EXPECT_EQ(p.type, gpu::OpType::ReduceMax);
  EXPECT_EQ(p.read_tensors[0].shape, (gpu::Dims{32, 9}));
  EXPECT_EQ(p.cost.flops, 288);
  EXPECT_EQ(p.cost.bytes_read, 576);
  EXPECT_EQ(p.cost.bytes_written, 64);
  // Global average pool of [1,8,7,7]: a mean over 49 per channel.
  const gpu::Model gm =
      mapping::lower_to_ark(graph({layer("gap", OpKind::GlobalAvgPool2d, {{1, 8, 7, 7}}, {{1, 8, 1, 1}})}));
  const gpu::Op& gp = gm.nodes[0].ops[0];
  EXPECT_EQ(gp.type, gpu::OpType::ReduceMean);
  EXPECT_EQ(gp.read_tensors[0].shape, (gpu::Dims{8, 49}));
  EXPECT_EQ(gp.cost.flops, 392);
  // 1x1 conv [1,16,4,4] x [32,16,1,1]: M=16, N=32, K=16 in one 128x256 tile.
  const gpu::Model cm = mapping::lower_to_ark(graph({conv("c", {1, 16, 4, 4}, 32, 1, 1, 0, 1)}));
  const gpu::Op& c = only_matmul(cm);
  EXPECT_EQ(c.cost.flops, 2 * 16 * 32 * 16);
  EXPECT_EQ(mapping::default_op_config(c, "CUDA_90").num_tasks, 1);
  // Transpose [2,3,4,5] by [0,2,3,1]: axes 2 and 3 move together -> [2,3,20] by [0,2,1].
  ir::Layer tr = layer("t", OpKind::Transpose, {{2, 3, 4, 5}}, {{2, 4, 5, 3}});
  tr.perm = {0, 2, 3, 1};
  const gpu::Model tm = mapping::lower_to_ark(graph({tr}));
  const gpu::Op& t = tm.nodes[0].ops[0];
  EXPECT_EQ(t.type, gpu::OpType::Transpose);
  EXPECT_EQ(t.read_tensors[0].shape, (gpu::Dims{2, 3, 20}));
  EXPECT_EQ(t.arg_dims("Permutation"), (gpu::Dims{0, 2, 1}));
  EXPECT_EQ(t.write_tensors[0].shape, (gpu::Dims{2, 20, 3}));
  // Quantize: a Cast moving fp16 in and int8 out.
  ir::Layer q = layer("q", OpKind::Quantize, {{1, 3, 4, 4}}, {{1, 3, 4, 4}});
  q.output_dtypes = {ir::DType::Int8};
  const gpu::Model qm = mapping::lower_to_ark(graph({q}));
  const gpu::Op& qc = qm.nodes[0].ops[0];
  EXPECT_EQ(qc.type, gpu::OpType::Cast);
  EXPECT_EQ(qc.cost.bytes_read, 96);
  EXPECT_EQ(qc.cost.bytes_written, 48);
  EXPECT_EQ(qc.cost.flops, 0);
  // Silu: Sigmoid then Mul.
  EXPECT_EQ(types_of(mapping::lower_to_ark(graph({layer("s", OpKind::Silu, {{4, 64}}, {{4, 64}})}))),
            (std::vector<gpu::OpType>{gpu::OpType::Sigmoid, gpu::OpType::Mul}));
}

TEST(GpuLower, OpaqueOpsCarryTheirFlopsAndBytes) {
  ir::Layer op = layer("custom", OpKind::Opaque, {{1, 1000}}, {{1, 1000}});
  op.opaque_flops = 1000000;
  op.opaque_bytes = 5000000;
  const gpu::Model m = mapping::lower_to_ark(graph({op}));
  ASSERT_EQ(m.nodes.size(), 1u);
  const gpu::Op& r = m.nodes[0].ops[0];
  EXPECT_EQ(r.type, gpu::OpType::ReduceSum);
  EXPECT_EQ(r.cost.flops, 1000000);
  EXPECT_EQ(r.cost.bytes_read + r.cost.bytes_written, 5000000);
  op.opaque_flops = 0;
  op.opaque_bytes = 3000;
  const gpu::Model cm = mapping::lower_to_ark(graph({op}));
  const gpu::Op& c = cm.nodes[0].ops[0];
  EXPECT_EQ(c.type, gpu::OpType::Copy);
  EXPECT_EQ(c.cost.bytes_read + c.cost.bytes_written, 3000);
}

TEST(GpuLower, FusedActivationsAndBiasesAreOpsOfTheirOwn) {
  ir::Layer l = conv("conv", {1, 8, 8, 8}, 16, 3, 1, 1, 1);
  l.input_shapes.push_back({16});
  l.input_dtypes.push_back(ir::DType::Int32);
  l.activation = "relu";
  const mapping::ArkLowering low = mapping::lower_workload(graph({l}));
  const auto ops = ops_of(low.model);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0]->name, "conv");
  EXPECT_EQ(ops[1]->name, "conv/bias");
  EXPECT_EQ(ops[1]->type, gpu::OpType::Add);
  EXPECT_EQ(ops[2]->name, "conv/relu");
  EXPECT_EQ(ops[2]->type, gpu::OpType::Relu);
  EXPECT_EQ(low.ir_op.at("conv/relu"), "conv2d");
}

TEST(GpuLower, TensorsOfTheIrBecomeSharedBuffersAndNodeLinks) {
  // input -> conv -> reshape -> dense, linked by tensor ids.
  ir::Graph g;
  g.source = "linked.json";
  auto tensor = [&](const std::string& name, ir::Shape s, ir::TensorRole role) {
    ir::Tensor t;
    t.name = name;
    t.shape = std::move(s);
    t.dtype = ir::DType::Float16;
    t.role = role;
    return g.add_tensor(t);
  };
  const int x = tensor("input1", {1, 4, 4, 4}, ir::TensorRole::GraphInput);
  const int w = tensor("w", {8, 4, 1, 1}, ir::TensorRole::Weight);
  const int y = tensor("conv", {1, 8, 4, 4}, ir::TensorRole::Activation);
  const int f = tensor("flat", {1, 128}, ir::TensorRole::Activation);
  const int fw = tensor("fw", {10, 128}, ir::TensorRole::Weight);
  const int o = tensor("output1", {1, 10}, ir::TensorRole::GraphOutput);
  ir::Layer c = conv("conv", {1, 4, 4, 4}, 8, 1, 1, 0, 1);
  c.input_dtypes = {ir::DType::Float16, ir::DType::Float16};
  c.output_dtypes = {ir::DType::Float16};
  c.inputs = {x, w};
  c.outputs = {y};
  ir::Layer r = layer("flatten", OpKind::Reshape, {{1, 8, 4, 4}}, {{1, 128}});
  r.inputs = {y};
  r.outputs = {f};
  ir::Layer d = layer("fc", OpKind::Dense, {{1, 128}, {10, 128}}, {{1, 10}});
  d.inputs = {f, fw};
  d.outputs = {o};
  g.layers = {c, r, d};
  const gpu::Model m = mapping::lower_to_ark(g);
  ASSERT_EQ(m.nodes.size(), 3u);
  const gpu::Op &mm = m.nodes[0].ops[0], &rs = m.nodes[1].ops[0], &fc = m.nodes[2].ops[0];
  EXPECT_TRUE(rs.is_virtual);
  EXPECT_TRUE(rs.write_tensors.empty());
  // The reshape is a view of the conv's output; the dense reads that buffer.
  EXPECT_EQ(rs.read_tensors[0].buffer_id, mm.write_tensors[0].buffer_id);
  EXPECT_EQ(rs.result_tensors[0].buffer_id, mm.write_tensors[0].buffer_id);
  EXPECT_EQ(fc.read_tensors[0].buffer_id, mm.write_tensors[0].buffer_id);
  EXPECT_EQ(m.nodes[1].producer_ids, (std::vector<int64_t>{0}));
  EXPECT_EQ(m.nodes[2].producer_ids, (std::vector<int64_t>{1}));
  EXPECT_EQ(m.nodes[0].consumer_ids, (std::vector<int64_t>{1}));
  // Tensor ids are unique; every buffer a tensor names is listed.
  std::set<int64_t> ids, bufs;
  for (const gpu::Op* op : ops_of(m))
    for (const auto* list : {&op->read_tensors, &op->write_tensors, &op->result_tensors})
      for (const gpu::Tensor& t : *list) {
        EXPECT_TRUE(ids.insert(t.id).second) << "tensor id " << t.id << " twice";
        bufs.insert(t.buffer_id);
      }
  for (int64_t b : bufs) EXPECT_NE(m.find_buffer(b), nullptr) << b;
  // The default plan skips the virtual reshape.
  EXPECT_EQ(mapping::default_plan(m, 132, "CUDA_90").task_infos.size(), 2u);
}

// One op of every kind, with valid shapes.
std::vector<ir::Layer> every_kind() {
  std::vector<ir::Layer> ls;
  const ir::Shape x{2, 8, 6, 6};
  auto add = [&](ir::Layer l) { ls.push_back(std::move(l)); };
  auto same = [&](OpKind k) { add(layer(std::string(ir::op_name(k)), k, {x}, {x})); };
  ir::Layer q = layer("quantize", OpKind::Quantize, {x}, {x});
  q.output_dtypes = {ir::DType::Int8};
  add(q);
  ir::Layer dq = layer("dequantize", OpKind::Dequantize, {x}, {x}, ir::DType::Int8);
  dq.output_dtypes = {ir::DType::Float16};
  add(dq);
  add(conv("conv2d", x, 16, 3, 1, 1, 2));
  add(layer("dense", OpKind::Dense, {{2, 72}, {10, 72}, {10}}, {{2, 10}}));
  for (OpKind k : {OpKind::MaxPool2d, OpKind::AvgPool2d}) {
    ir::Layer p = layer(ir::op_name(k), k, {x}, {{2, 8, 3, 3}});
    p.pool = {2, 2};
    p.stride = {2, 2};
    add(p);
  }
  add(layer("element_wise_add", OpKind::ElementWiseAdd, {x, {1, 8, 1, 1}}, {x}));
  add(layer("reshape", OpKind::Reshape, {x}, {{2, 288}}));
  add(layer("requantize", OpKind::Requantize, {x}, {x}, ir::DType::Int8));
  ir::Layer mm = layer("matmul", OpKind::MatMul, {{12, 32}, {32, 16}, {16}}, {{12, 16}});
  add(mm);
  add(layer("batch_matmul", OpKind::BatchMatMul, {{4, 12, 32}, {4, 32, 16}}, {{4, 12, 16}}));
  add(layer("global_avg_pool2d", OpKind::GlobalAvgPool2d, {x}, {{2, 8, 1, 1}}));
  add(layer("global_max_pool2d", OpKind::GlobalMaxPool2d, {x}, {{2, 8, 1, 1}}));
  for (OpKind k : {OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Maximum, OpKind::Minimum})
    add(layer(ir::op_name(k), k, {x, x}, {x}));
  for (OpKind k : {OpKind::Relu, OpKind::Relu6, OpKind::Gelu, OpKind::Silu, OpKind::Sigmoid, OpKind::Tanh, OpKind::Exp,
                   OpKind::Sqrt, OpKind::Rsqrt, OpKind::Neg, OpKind::Clip})
    same(k);
  ir::Layer sm = layer("softmax", OpKind::Softmax, {x}, {x});
  sm.axes = {1};
  add(sm);
  ir::Layer ln = layer("layer_norm", OpKind::LayerNorm, {x, {36}, {36}}, {x});
  ln.axes = {2, 3};
  add(ln);
  add(layer("rms_norm", OpKind::RmsNorm, {x, {6}}, {x}));
  for (OpKind k : {OpKind::ReduceSum, OpKind::ReduceMean, OpKind::ReduceMax}) {
    ir::Layer r = layer(ir::op_name(k), k, {x}, {{2, 1, 6, 1}});
    r.axes = {1, 3};  // not contiguous: one op per axis
    add(r);
  }
  ir::Layer tr = layer("transpose", OpKind::Transpose, {x}, {{2, 6, 6, 8}});
  tr.perm = {0, 2, 3, 1};
  add(tr);
  ir::Layer cc = layer("concat", OpKind::Concat, {x, {2, 4, 6, 6}}, {{2, 12, 6, 6}});
  cc.axes = {1};
  add(cc);
  ir::Layer sp = layer("split", OpKind::Split, {x}, {{2, 3, 6, 6}, {2, 5, 6, 6}});
  sp.axes = {1};
  add(sp);
  ir::Layer sl = layer("slice", OpKind::Slice, {x}, {{2, 8, 2, 3}});
  sl.starts = {0, 0, 1, 0};
  sl.ends = {2, 8, 5, 6};
  sl.steps = {1, 1, 2, 2};
  add(sl);
  ir::Layer ga = layer("gather", OpKind::Gather, {{100, 64}, {2, 7}}, {{2, 7, 64}});
  ga.input_dtypes = {ir::DType::Float16, ir::DType::Int64};
  add(ga);
  ir::Layer pd = layer("pad", OpKind::Pad, {x}, {{2, 8, 8, 8}});
  pd.pads = {0, 0, 0, 0, 1, 1, 1, 1};
  add(pd);
  ir::Layer op = layer("opaque", OpKind::Opaque, {x}, {x});
  op.opaque_flops = 12345;
  op.opaque_bytes = 99999;
  add(op);
  return ls;
}

TEST(GpuLower, EveryOpKindLowersToAModelWhoseDefaultPlanFitsTheGpus) {
  const ir::Graph g = graph(every_kind());
  std::set<OpKind> kinds;
  for (const ir::Layer& l : g.layers) kinds.insert(l.op);
  ASSERT_EQ(kinds.size(), static_cast<size_t>(ir::kNumOpKinds)) << "every_kind() misses an op kind";
  const mapping::ArkLowering low = mapping::lower_workload(g);
  // Every layer gave at least one op named after it, and the map names its kind.
  std::set<std::string> layers_seen;
  for (const gpu::Op* op : ops_of(low.model)) {
    const std::string layer_name = op->name.substr(0, op->name.find('/'));
    ASSERT_NE(g.find(layer_name), nullptr) << op->name;
    EXPECT_EQ(low.ir_op.at(op->name), ir::op_name(g.find(layer_name)->op)) << op->name;
    layers_seen.insert(layer_name);
  }
  EXPECT_EQ(layers_seen.size(), g.layers.size());
  // Node links are symmetric and point backwards.
  for (const gpu::Node& n : low.model.nodes)
    for (int64_t p : n.producer_ids) {
      EXPECT_LT(p, n.id);
      const auto& back = low.model.find_node(p)->consumer_ids;
      EXPECT_NE(std::find(back.begin(), back.end(), n.id), back.end());
    }
  for (const char* name : {"gpu_h100", "gpu_a100", "gpu_mi300x"}) {
    const models::GpuParams params = models::GpuParams::read(hw(name));
    const gpu::Program p = mapping::default_plan(low.model, params.num_sms, params.arch);
    EXPECT_NO_THROW(frontends::validate_against_device(p, params.num_sms, params.max_warps_per_block,
                                                       params.smem_per_block_bytes))
        << name;
    // ARK's plan reader accepts the plan as written (tensors, Args, configs, ranges) and
    // derives the same costs from it.
    gpu::Program back;
    ASSERT_NO_THROW(back = frontends::parse_ark_plan(report::plan_to_json(p), "lowered.json")) << name;
    ASSERT_EQ(back.task_infos.size(), p.task_infos.size());
    for (size_t i = 0; i < p.task_infos.size(); ++i) {
      EXPECT_EQ(back.task_infos[i].ops[0].cost.flops, p.task_infos[i].ops[0].cost.flops) << p.task_infos[i].ops[0].name;
      EXPECT_EQ(back.task_infos[i].ops[0].cost.bytes_read, p.task_infos[i].ops[0].cost.bytes_read);
      EXPECT_GT(p.task_infos[i].num_tasks, 0) << p.task_infos[i].ops[0].name;
    }
  }
}

TEST(GpuLower, ResNet50GemmFlopsAreTwiceItsMacs) {
  const ir::Graph g = frontends::read_frontend_ir(test::repo_file("../shared/examples/frontend_ir/int8_resnet50.sim_quantized_b1.json"));
  int64_t macs = 0;
  for (const ir::Layer& l : g.layers) macs += l.macs();
  const mapping::ArkLowering low = mapping::lower_workload(g);
  int64_t flops = 0, matmuls = 0;
  for (const gpu::Op* op : ops_of(low.model))
    if (op->type == gpu::OpType::Matmul) flops += op->cost.flops, ++matmuls;
  EXPECT_EQ(flops, 2 * macs);
  EXPECT_EQ(matmuls, 54);  // 53 convolutions and the classifier
  EXPECT_GT(macs, int64_t{4000000000});
}
