// The library plan (sim/mapping/gpu_library.h, docs/gpu_library.md): which kernels a
// workload becomes, their launch timeline, the attention tile's formula, and the plans' shapes.
// No SystemC: the simulated times are in tests/integration/gpu_library_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "frontends/pipeline/pipeline_reader.h"
#include "frontends/zoo/zoo.h"
#include "models/gpu/gpu_timing.h"
#include "sim/mapping/gpu_library.h"
#include "tests/unit/gpu/gpu_test_util.h"

namespace npusim::test {
namespace {

using mapping::KernelClass;
using mapping::LaunchMode;

ir::Graph transformer(const std::string& model, int batch, int seq, int layers, const std::string& dtype = "fp16",
                      int kv_len = 0, const std::string& logits = "all") {
  frontends::zoo::ZooOptions o;
  o.logits = logits;
  o.model = model;
  o.batch = batch;
  o.seq = seq;
  o.layers = layers;
  o.dtype = dtype;
  o.kv_len = kv_len;
  return frontends::zoo::make_transformer(o);
}

std::vector<KernelClass> classes(const mapping::LibraryPlan& p) {
  std::vector<KernelClass> c;
  for (const auto& k : p.kernels) c.push_back(k.cls);
  return c;
}

TEST(GpuLibrary, GraphLaunchRunsKernelsBackToBackAndEagerWaitsForTheHost) {
  // Spans 10, 2, 3 us; launch 5 us, gap 1 us.
  const auto g = mapping::launch_timeline({10, 2, 3}, LaunchMode::Graph, 5, 1, 9);
  EXPECT_EQ(g.start_us, (std::vector<double>{5, 16, 19}));
  EXPECT_DOUBLE_EQ(g.total_us, 22);
  // Eager: the host launches every 9 us; kernel i starts at max(9 i + 5, previous end + 1).
  const auto e = mapping::launch_timeline({10, 2, 3}, LaunchMode::Eager, 5, 1, 9);
  EXPECT_EQ(e.start_us, (std::vector<double>{5, 16, 23}));  // 16 = 15 + 1 > 14; 23 = 18 + 5 > 19
  EXPECT_DOUBLE_EQ(e.total_us, 26);
  EXPECT_DOUBLE_EQ(mapping::launch_timeline({}, LaunchMode::Graph, 5, 1, 9).total_us, 5);
}

TEST(GpuLibrary, ABertLayerIsSevenKernelsWithItsAttentionFused) {
  const ir::Graph g = transformer("bert-base", 2, 128, 1);
  const models::GpuParams p = round_gpu_params();
  const mapping::LibraryPlan plan = mapping::library_plan(g, p, {});
  // embeddings: gather, position add, layer norm; the layer: QKV (one GEMM), attention, output
  // projection + residual add, layer norm, FC1 + GELU, FC2 + residual add, layer norm.
  const std::vector<KernelClass> want{KernelClass::Gather,  KernelClass::Elementwise, KernelClass::RowWise,
                                      KernelClass::Gemm,    KernelClass::Attention,   KernelClass::Gemm,
                                      KernelClass::RowWise, KernelClass::Gemm,        KernelClass::Gemm,
                                      KernelClass::RowWise};
  EXPECT_EQ(classes(plan), want);
  // Every IR op is covered exactly once (views included).
  std::multiset<std::string> covered(plan.free_ops.begin(), plan.free_ops.end());
  for (const auto& k : plan.kernels) covered.insert(k.ir_ops.begin(), k.ir_ops.end());
  ASSERT_EQ(covered.size(), g.layers.size());
  for (const auto& l : g.layers) EXPECT_EQ(covered.count(l.name), 1u) << l.name;
  // The three projections run as one GEMM of N = 3 x 768; the attention covers scale and softmax.
  EXPECT_NE(plan.kernels[3].shape.find("M=256 N=2304 K=768"), std::string::npos) << plan.kernels[3].shape;
  const auto& attn = plan.kernels[4].ir_ops;
  EXPECT_NE(std::find(attn.begin(), attn.end(), "encoder.layer.0.attention.self.softmax"), attn.end());
  EXPECT_NE(plan.kernels[4].shape.find("batch_heads=24 q=128 kv=128 d=64"), std::string::npos) << plan.kernels[4].shape;
  EXPECT_EQ(plan.kernels[4].shape.find("causal"), std::string::npos);
  // FC1's GELU and FC2's residual add are epilogues.
  EXPECT_EQ(plan.kernels[7].ir_ops.back(), "encoder.layer.0.intermediate.gelu");
  EXPECT_EQ(plan.kernels[8].ir_ops.back(), "encoder.layer.0.output.add");
  // MACs: the layer's GEMMs and the two attention matmuls (2 x 12 heads x 128 x 128 x 64 a sequence).
  double macs = 0;
  for (const auto& k : plan.kernels) macs += k.macs;
  int64_t ir_macs = 0;
  for (const auto& l : g.layers) ir_macs += l.macs();
  EXPECT_DOUBLE_EQ(macs, static_cast<double>(ir_macs));
}

TEST(GpuLibrary, WithoutFusionEveryOpIsItsOwnKernel) {
  const ir::Graph g = transformer("bert-base", 1, 64, 1);
  mapping::LibraryOptions o;
  o.fuse = false;
  const mapping::LibraryPlan plan = mapping::library_plan(g, round_gpu_params(), o);
  int views = 0;
  for (const auto& l : g.layers) views += l.op == ir::OpKind::Reshape;
  // Reshapes are views; everything else a kernel: softmax a row-wise one, the scale element-wise.
  EXPECT_EQ(plan.kernels.size(), g.layers.size() - views);
  const auto c = classes(plan);
  EXPECT_EQ(std::count(c.begin(), c.end(), KernelClass::Attention), 0);
  EXPECT_EQ(std::count(c.begin(), c.end(), KernelClass::RowWise), 3 + 1);  // 3 layer norms, softmax
}

TEST(GpuLibrary, LlamaPrefillIsCausalGroupedQueryAttentionAndItsLmHeadTakesTheLastToken) {
  const ir::Graph g = transformer("llama2-70b", 2, 64, 1, "fp16", 0, "last");  // as sim llm builds a prefill
  const mapping::LibraryPlan plan = mapping::library_plan(g, round_gpu_params(), {});
  const auto it = std::find_if(plan.kernels.begin(), plan.kernels.end(),
                               [](const auto& k) { return k.cls == KernelClass::Attention; });
  ASSERT_NE(it, plan.kernels.end());
  EXPECT_NE(it->shape.find("batch_heads=128 q=64 kv=64 d=128 gqa 8 causal"), std::string::npos) << it->shape;
  // A prefill's query heads keep a program each (FlashAttention-2 packs them only to decode).
  EXPECT_EQ(it->candidates[0].schedule.find("heads a K/V"), std::string::npos) << it->candidates[0].schedule;
  // The K / V heads repeated for the 64 query heads are read in place: no copy kernel for them.
  for (const auto& k : plan.kernels)
    for (const auto& op : k.ir_ops)
      if (op.find("repeat") != std::string::npos) {
        EXPECT_EQ(k.cls, KernelClass::Attention) << op;
      }
  // gate and up run as one GEMM (N = 2 x 28672); SiLU and the product as one element-wise kernel.
  bool gate_up = false, silu_mul = false;
  for (const auto& k : plan.kernels) {
    gate_up |= k.shape == "M=128 N=57344 K=8192";
    silu_mul |= k.cls == KernelClass::Elementwise && k.ir_ops.size() == 2 &&
                k.ir_ops[0] == "model.layers.0.mlp.act_fn" && k.ir_ops[1] == "model.layers.0.mlp.mul";
  }
  EXPECT_TRUE(gate_up);
  EXPECT_TRUE(silu_mul);
  EXPECT_EQ(plan.kernels.back().name, "lm_head");
  EXPECT_EQ(plan.kernels.back().shape, "M=2 N=32000 K=8192");  // one row per sequence
  // The workload decides: a graph with every position's logits runs every row on the GPU too.
  const mapping::LibraryPlan all = mapping::library_plan(transformer("llama2-70b", 2, 64, 1), round_gpu_params(), {});
  EXPECT_EQ(all.kernels.back().shape, "M=128 N=32000 K=8192");
}

TEST(GpuLibrary, ADecodeStepReadsTheCacheInPlaceAndSplitsItsKeys) {
  const ir::Graph g = transformer("llama2-7b", 1, 1, 1, "fp16", 4096);
  const models::GpuParams p = round_gpu_params();
  const mapping::LibraryPlan plan = mapping::library_plan(g, p, {});
  int attention = 0;
  for (const auto& k : plan.kernels) {
    // The cache concat is part of the attention kernel (no copy of the cache).
    for (const auto& op : k.ir_ops)
      if (op.find("cat_") != std::string::npos) {
        EXPECT_EQ(k.cls, KernelClass::Attention) << op;
      }
    if (k.cls != KernelClass::Attention) continue;
    ++attention;
    EXPECT_NE(k.shape.find("q=1 kv=4097"), std::string::npos) << k.shape;
    // 32 programs (one per head) fill the 132 SMs twice only with the keys split in 9.
    EXPECT_NE(k.candidates[0].schedule.find("split-KV 9"), std::string::npos) << k.candidates[0].schedule;
  }
  EXPECT_EQ(attention, 1);
}

// Grouped-query decode (docs/gpu_library.md#attention): the 8 query heads of a K/V head are one
// program's rows, so each K/V head's cache is read once: 2 sequences x 64 query heads over 4097
// keys of llama2-70b (8 K/V heads) move 2 B x 128 x (2 x 128 + 2 x 4097 x 128 / 8), and 16
// programs (2 x 8 K/V heads) fill the 132 SMs twice with the keys split in 17.
TEST(GpuLibrary, AGroupedQueryDecodeReadsEachKvHeadOnceForItsGroup) {
  const mapping::LibraryPlan plan = mapping::library_plan(transformer("llama2-70b", 2, 1, 1, "fp16", 4096), round_gpu_params(), {});
  const auto it = std::find_if(plan.kernels.begin(), plan.kernels.end(), [](const auto& k) { return k.cls == KernelClass::Attention; });
  ASSERT_NE(it, plan.kernels.end());
  EXPECT_NE(it->shape.find("batch_heads=128 q=1 kv=4097 d=128 gqa 8"), std::string::npos) << it->shape;
  EXPECT_DOUBLE_EQ(it->min_bytes, 2.0 * 128 * (2 * 128 + 2 * 4097 * 128 / 8.0));
  EXPECT_DOUBLE_EQ(it->macs, 128.0 * 4097 * 256);  // unchanged: every head attends every key
  ASSERT_FALSE(it->candidates.empty());
  EXPECT_NE(it->candidates[0].schedule.find("8 heads a K/V split-KV 17"), std::string::npos) << it->candidates[0].schedule;
}

// DeepSeek's latent attention (docs/llm_models.md#multi-head-latent-attention): a decode step
// attends the latent cache as one tensor of keys and values, the 16 heads of each sequence as
// its query rows (FlashMLA), the cache read once: 2 sequences x (16 + 1001 + 16) rows of 576
// fp16 values. A prefill's keys are wider than its values (192 and 128).
TEST(GpuLibrary, LatentAttentionReadsTheLatentCacheOnce) {
  const std::string lite = std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/DeepSeek-V2-Lite/config.json";
  const models::GpuParams p = round_gpu_params();
  const mapping::LibraryPlan decode = mapping::library_plan(transformer(lite, 2, 1, 1, "fp16", 1000), p, {});
  int attention = 0;
  for (const auto& k : decode.kernels) {
    for (const auto& op : k.ir_ops)
      if (op.find("cat_latent") != std::string::npos) {
        EXPECT_EQ(k.cls, KernelClass::Attention) << op;
      }
    if (k.cls != KernelClass::Attention) continue;
    ++attention;
    EXPECT_NE(k.shape.find("batch_heads=2 q=16 kv=1001 d=576 shared kv"), std::string::npos) << k.shape;
    EXPECT_DOUBLE_EQ(k.min_bytes, 2.0 * 2 * (16 + 1001 + 16) * 576);
    EXPECT_DOUBLE_EQ(k.macs, 2.0 * 16 * 1001 * (576 + 576));
    ASSERT_FALSE(k.candidates.empty());
    EXPECT_EQ(k.candidates[0].schedule.rfind("flash 64x64:8", 0), 0u) << k.candidates[0].schedule;
  }
  EXPECT_EQ(attention, 1);
  const mapping::LibraryPlan prefill = mapping::library_plan(transformer(lite, 1, 64, 1), p, {});
  const auto it = std::find_if(prefill.kernels.begin(), prefill.kernels.end(), [](const auto& k) { return k.cls == KernelClass::Attention; });
  ASSERT_NE(it, prefill.kernels.end());
  EXPECT_NE(it->shape.find("batch_heads=16 q=64 kv=64 d=128 dk 192 causal"), std::string::npos) << it->shape;
  EXPECT_DOUBLE_EQ(it->macs, 16.0 * 64 * 64 * (192 + 128) * (64 - 32) / 64);
  // A tensor-parallel rank of the same decode step (sim zoo --tp 2): its 8 heads attend the
  // latent cache, which the pipeline's graph transposes for the scores: still read once.
  frontends::zoo::ZooOptions z;
  z.model = lite, z.batch = 2, z.seq = 1, z.kv_len = 1000, z.layers = 1;
  const ir::System sys = frontends::pipeline::read_pipeline_text(frontends::zoo::make_parallel_pipeline(z, {2, 1, 1, 1}).dump(), "ds", ".");
  const auto at = std::find_if(sys.supertasks.begin(), sys.supertasks.end(), [](const ir::SuperTask& t) { return t.id == "layers.0.tp0.attn"; });
  ASSERT_NE(at, sys.supertasks.end());
  const mapping::LibraryPlan rank = mapping::library_plan(at->compute->graph, p, {});
  const auto ra = std::find_if(rank.kernels.begin(), rank.kernels.end(), [](const auto& k) { return k.cls == KernelClass::Attention; });
  ASSERT_NE(ra, rank.kernels.end());
  EXPECT_NE(ra->shape.find("batch_heads=2 q=8 kv=1001 d=576 shared kv"), std::string::npos) << ra->shape;
  EXPECT_DOUBLE_EQ(ra->min_bytes, 2.0 * 2 * (8 + 1001 + 8) * 576);
}

// Gemma 2's soft-capped scores stay inside the FlashAttention kernel (as FlashAttention-2 and
// FlashInfer run them): one attention kernel per layer, the cache read in place.
TEST(GpuLibrary, SoftCappedScoresStayInTheAttentionKernel) {
  const std::string gemma = std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/gemma-2-9b/config.json";
  for (int kv : {0, 1000}) {
    const mapping::LibraryPlan plan = mapping::library_plan(transformer(gemma, 2, kv > 0 ? 1 : 64, 1, "fp16", kv), round_gpu_params(), {});
    int attention = 0;
    for (const auto& k : plan.kernels) {
      for (const auto& op : k.ir_ops)
        if (op.find("self_attn.softcap") != std::string::npos || op.find("cat_key") != std::string::npos) {
          EXPECT_EQ(k.cls, KernelClass::Attention) << op;
        }
      attention += k.cls == KernelClass::Attention;
    }
    EXPECT_EQ(attention, 1) << "kv " << kv;
  }
}

TEST(GpuLibrary, Fp32GemmsRunOnTheCudaCoresUnlessTf32IsAsked) {
  frontends::zoo::OpWorkload w;
  w.op = "matmul";
  w.args = {"m=512", "n=512", "k=512"};
  w.dtype = "fp32";
  const ir::Graph g = frontends::zoo::make_op_graph(w);
  const models::GpuParams p = round_gpu_params();
  const auto ffma = mapping::library_plan(g, p, {});
  mapping::LibraryOptions o;
  o.tf32 = true;
  const auto tf32 = mapping::library_plan(g, p, o);
  ASSERT_EQ(ffma.kernels.size(), 1u);
  EXPECT_EQ(ffma.kernels[0].dtype, "fp32 (FFMA)");
  EXPECT_EQ(tf32.kernels[0].dtype, "fp32 (TF32)");
  EXPECT_TRUE(ffma.kernels[0].candidates[0].program.task_infos[0].ops[0].config.simt);
  EXPECT_FALSE(tf32.kernels[0].candidates[0].program.task_infos[0].ops[0].config.simt);
  EXPECT_NE(ffma.kernels[0].signature, tf32.kernels[0].signature);
}

TEST(GpuLibrary, AnAttentionTileComputesTwoMatmulsAndItsSoftmaxPerKeyStep) {
  // 128 queries x d 64 x 64 keys a step, 4 warps, fp16 on the round numbers of round_gpu_params:
  // math = 4 x 128 x 64 x 64 / (4096 x 0.5) = 1024 cycles; the K and V slices 2 x 64 x 64 x 2 B
  // = 16 KiB through a 64 B/cycle port: 256 cycles; softmax = 128 x 64 x (4 + 5) / 256 = 288.
  const models::GpuParams p = round_gpu_params();
  models::MatmulTile t;
  t.attention = true;
  t.tm = 128, t.tn = 64, t.tk = 64, t.m_valid = 128, t.n_valid = 64, t.k = 640;
  const int64_t sram = (128 * 64 + 4 * 64 * 64) * 2;
  const auto fa2 = models::matmul_timing(p, t, 4, sram);
  EXPECT_DOUBLE_EQ(fa2.math_step, 1024);
  EXPECT_DOUBLE_EQ(fa2.load_step, 256);
  EXPECT_DOUBLE_EQ(fa2.softmax_step, 288);
  EXPECT_EQ(fa2.k_steps, 10);
  // FlashAttention-2: the softmax follows the MMAs; -3: it hides under them.
  EXPECT_DOUBLE_EQ(fa2.step, std::max({1024.0, fa2.smem_step, fa2.latency_step}) + 288 + 20);
  t.softmax_overlap = true;
  const auto fa3 = models::matmul_timing(p, t, 4, sram);
  EXPECT_DOUBLE_EQ(fa3.step, std::max({1024.0, fa3.smem_step, fa3.latency_step}) + 20);
  // Q is read once, in the prologue (128 x 64 x 2 B through the port), O stored once.
  EXPECT_DOUBLE_EQ(fa2.l2_bytes, 10 * 16384.0 + 16384 + 16384);
}

TEST(GpuLibrary, CausalTilesSkipTheKeysAfterTheirLastQuery) {
  mapping::AttentionProblem a;
  a.batch = 1, a.sq = 512, a.skv = 512, a.d = 64, a.causal = true;
  const models::GpuParams p = round_gpu_params();
  const auto c = mapping::attention_candidates(a, p);
  ASSERT_FALSE(c.empty());
  const gpu::Op& op = c[0].program.task_infos[0].ops[0];  // 128-query tiles
  ASSERT_TRUE(op.config.causal);
  EXPECT_EQ(models::matmul_tile(op, 0).k, 128);  // rows 0-127 see keys 0-127
  EXPECT_EQ(models::matmul_tile(op, 3).k, 512);
  // Useful flops: 4 x 512 x 64 x (512 - 256): the lower triangle with its diagonal half.
  EXPECT_EQ(op.cost.flops, 4LL * 512 * 64 * 256);
}

// A head of 80 runs in the kernels' next compiled width, 96 (FlashAttention-2 and -3 alike): the
// tile's math takes 96 columns, its K/V loads the head's own 80.
TEST(GpuLibrary, AnAttentionHeadRunsInTheNextCompiledHeadDim) {
  mapping::AttentionProblem a;
  a.batch = 4, a.sq = 256, a.skv = 256, a.d = 80;
  models::GpuParams p = round_gpu_params();
  for (const char* arch : {"CUDA_80", "CUDA_90"}) {
    p.arch = arch;
    const auto c = mapping::attention_candidates(a, p);
    ASSERT_FALSE(c.empty()) << arch;
    const models::MatmulTile t = models::matmul_tile(c[0].program.task_infos[0].ops[0], 0);
    EXPECT_EQ(t.tn, 96) << arch;
    EXPECT_EQ(t.n_valid, 80) << arch;
  }
  a.d = 64;  // a compiled width runs as itself
  const auto c = mapping::attention_candidates(a, p);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(models::matmul_tile(c[0].program.task_infos[0].ops[0], 0).tn, 64);
}

TEST(GpuLibrary, ChainedKernelsKeepTheirOwnBuffersAndTaskInfos) {
  mapping::StreamKernelSpec s;
  s.elements = 4096;
  s.read_bytes = 8192, s.write_bytes = 8192;
  const models::GpuParams p = round_gpu_params();
  const gpu::Program a = mapping::stream_plan(s, p), b = mapping::stream_plan(s, p);
  std::vector<std::pair<size_t, size_t>> pgs, tis;
  const gpu::Program c = mapping::chain_programs({&a, &b}, &pgs, &tis);
  ASSERT_EQ(c.task_infos.size(), 2u);
  EXPECT_EQ(pgs, (std::vector<std::pair<size_t, size_t>>{{0, 1}, {1, 2}}));
  EXPECT_EQ(c.processor_groups[1].resource_groups[0].task_groups[0].task_id, 1);
  std::set<int64_t> buffers;
  for (const auto& t : c.task_infos)
    for (const auto& op : t.ops)
      for (const auto& x : op.read_tensors) buffers.insert(x.buffer_id);
  EXPECT_EQ(buffers.size(), 2u);  // each kernel reads its own input
  EXPECT_EQ(c.buffers.size(), a.buffers.size() + b.buffers.size());
  // A stream kernel moves what it was given: 2 programs of 2048 elements, 4 KiB in and out each.
  EXPECT_EQ(a.task_infos[0].num_tasks, 2);
  EXPECT_EQ(a.task_infos[0].ops[0].cost.bytes_read, 8192);
  EXPECT_EQ(a.task_infos[0].ops[0].cost.bytes_written, 8192);
}

TEST(GpuLibrary, LoopedRowKernelsTakeTheFrameworksLaunchGeometry) {
  const models::GpuParams p = test::round_gpu_params();  // 32-thread warps, 64 a SM, 256 KiB of registers
  auto geometry = [&](ir::OpKind op, int64_t cols, gpu::DataType dt, int vectors) {
    mapping::RowKernelSpec s;
    s.rows = 1000, s.cols = cols, s.dtype = dt, s.row_inputs = 1, s.col_vectors = vectors;
    mapping::looped_row_geometry(s, op, p);
    return s;
  };
  // vLLM's rms_norm, 4096 columns: 1024 threads, 4 scalar steps a pass, 2 passes; a reduction of
  // 5 shuffles, an exchange through shared memory and 5 shuffles over the 32 warps; 2 blocks by warps
  // ((16 + 2) registers x 1024 threads x 4 B = 72 KiB would allow 3).
  const mapping::RowKernelSpec rms = geometry(ir::OpKind::RmsNorm, 4096, gpu::DataType::FP16, 1);
  EXPECT_EQ(rms.warps, 32);
  EXPECT_EQ(rms.loop_passes, 2);
  EXPECT_EQ(rms.loop_iters, 4);
  EXPECT_EQ(rms.reduce_steps, 10);
  EXPECT_EQ(rms.reduce_exchanges, 1);
  EXPECT_EQ(rms.programs_per_sm, 2);
  // PyTorch's layer_norm, 768 columns: 128 threads of 4-element loads, ceil(768 / 512) = 2 steps.
  const mapping::RowKernelSpec ln = geometry(ir::OpKind::LayerNorm, 768, gpu::DataType::FP16, 2);
  EXPECT_EQ(ln.warps, 4);
  EXPECT_EQ(ln.loop_passes, 2);
  EXPECT_EQ(ln.loop_iters, 2);
  EXPECT_EQ(ln.reduce_steps, 5 + 2);
  EXPECT_EQ(ln.reduce_exchanges, 1);
  // Softmax to 1024 columns: a warp per row holding 24 values, one pass, two warp reductions;
  // (16 + 24) registers x 32 threads x 4 B = 5 KiB: 51 warps.
  const mapping::RowKernelSpec warp = geometry(ir::OpKind::Softmax, 768, gpu::DataType::FP16, 0);
  EXPECT_EQ(warp.warps, 1);
  EXPECT_EQ(warp.loop_passes, 1);
  EXPECT_EQ(warp.loop_iters, 1);
  EXPECT_EQ(warp.reduce_steps, 10);
  EXPECT_EQ(warp.reduce_exchanges, 0);  // a warp alone: shuffles only
  EXPECT_EQ(warp.programs_per_sm, 51);
  // Wider rows: 1024 threads of 16-byte loads (8 fp16) walk the row 3 times.
  const mapping::RowKernelSpec block = geometry(ir::OpKind::Softmax, 4096, gpu::DataType::FP16, 0);
  EXPECT_EQ(block.warps, 32);
  EXPECT_EQ(block.loop_passes, 3);
  EXPECT_EQ(block.loop_iters, 1);
  EXPECT_EQ(block.reduce_steps, 20);
  EXPECT_EQ(block.reduce_exchanges, 2);
  // Their arithmetic, as the kernels issue it (FP32-pipe instructions an element, 2 flops each):
  // rms_norm 1 + 2, layer_norm 9 + 3, the warp softmax 1 + 8 + 6, the block one 1 + 8 + 13, and a
  // 16-bit element's conversions on top (3, 5, 2, 4).
  EXPECT_DOUBLE_EQ(rms.flops_per_element, 2 * (3 + 3));
  EXPECT_DOUBLE_EQ(ln.flops_per_element, 2 * (12 + 5));
  EXPECT_DOUBLE_EQ(warp.flops_per_element, 2 * (15 + 2));
  EXPECT_DOUBLE_EQ(block.flops_per_element, 2 * (22 + 4));
  EXPECT_DOUBLE_EQ(geometry(ir::OpKind::Softmax, 4096, gpu::DataType::FP32, 0).flops_per_element, 2 * 22);
  EXPECT_DOUBLE_EQ(geometry(ir::OpKind::LayerNorm, 768, gpu::DataType::FP32, 2).flops_per_element, 2 * 12);
}

TEST(GpuLibrary, GemmCandidatesDropWhatCannotRunTheProblem) {
  models::GpuParams p = round_gpu_params();
  p.num_sms = 132;
  p.arch = "CUDA_90";
  p.smem_per_block_bytes = 227 * 1024;
  mapping::GemmProblem g;
  g.m = 4096, g.n = 4096, g.k = 4096;
  int split = 0, stream = 0, all = 0;
  for (const auto& t : mapping::default_gemm_tiles())
    if (auto prog = mapping::gemm_plan(g, t, p)) ++all, split += t.split_k > 1, stream += t.stream_k;
  EXPECT_EQ(all, 22);  // 10 tiles, 5 split-K, 2 stream-K, 5 of 16 rows (3 of them split)
  g.batch = 8;  // a batched GEMM is neither split nor streamed
  int batched = 0;
  for (const auto& t : mapping::default_gemm_tiles())
    if (auto prog = mapping::gemm_plan(g, t, p)) {
      ++batched;
      EXPECT_EQ(prog->task_infos[0].ops[0].matmul->batch, 8);
    }
  EXPECT_EQ(batched, 12);  // the 10 tiles and the two unsplit 16-row ones
  p.smem_per_block_bytes = 48 * 1024;  // only tiles whose stages fit 48 KiB
  g.batch = 1;
  for (const auto& t : mapping::default_gemm_tiles())
    if (mapping::gemm_plan(g, t, p)) {
      EXPECT_LE(t.stages * (t.tm + t.tn) * t.tk * 2, 48 * 1024 - 128);
    }
}

}  // namespace
}  // namespace npusim::test

namespace npusim::test {
namespace {

TEST(GpuLibrary, Bf16TransformersRunBf16Kernels) {
  const ir::Graph g = transformer("llama2-7b", 1, 16, 1, "bf16");
  const mapping::LibraryPlan plan = mapping::library_plan(g, round_gpu_params(), {});
  int gemms = 0;
  for (const auto& k : plan.kernels)
    if (k.cls == KernelClass::Gemm || k.cls == KernelClass::Attention) {
      ++gemms;
      EXPECT_EQ(k.dtype, "bf16") << k.name;
      EXPECT_EQ(k.candidates[0].program.task_infos[0].ops[0].read_tensors[0].dtype, gpu::DataType::BF16) << k.name;
    }
  EXPECT_GE(gemms, 5);  // QKV, attention, O, gate/up, down, LM head
}

// A K step moves 128-byte rows of each operand, as the libraries' tiles do: TK 64 fp16, 128 int8,
// 32 fp32 (cuBLAS's TF32 kernels are "_32x3"), so fp32's 128x256 tile fits its 3 stages in
// 3 x 384 x 32 x 4 B = 144 KiB.
TEST(GpuLibrary, GemmCandidatesStepKIn128ByteRows) {
  for (const auto& [dtype, tk] : std::vector<std::pair<gpu::DataType, int64_t>>{
           {gpu::DataType::FP16, 64}, {gpu::DataType::INT8, 128}, {gpu::DataType::FP32, 32}})
    for (const auto& t : mapping::default_gemm_tiles(dtype)) {
      EXPECT_EQ(t.tk, tk) << gpu::data_type_name(dtype);
      EXPECT_EQ(t.sram_bytes, t.stages * (t.tm + t.tn) * 128);
    }
  models::GpuParams p = round_gpu_params();
  p.smem_per_block_bytes = 163 * 1024;  // an A100's
  mapping::GemmProblem g;
  g.m = g.n = g.k = 4096, g.dtype = g.out_dtype = gpu::DataType::FP32;
  bool widest = false;
  for (const auto& t : mapping::default_gemm_tiles(g.dtype))
    widest = widest || (t.tm * t.tn == 128 * 256 && t.split_k == 1 && !t.stream_k && mapping::gemm_plan(g, t, p));
  EXPECT_TRUE(widest);
}

}  // namespace
}  // namespace npusim::test
