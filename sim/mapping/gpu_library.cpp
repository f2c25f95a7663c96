#include "sim/mapping/gpu_library.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "sim/ir/error.h"
#include "sim/mapping/gpu_lower.h"

namespace npusim::mapping {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

// Shared memory a kernel may take per block: ARK's limit less the 128 B it reserves
// (frontends::kArkSmemReservedBytes), as gpu-calibrate uses.
int64_t smem_limit(const models::GpuParams& p) { return p.smem_per_block_bytes - 128; }

std::string dtype_text(gpu::DataType t) {
  switch (t) {
    case gpu::DataType::FP32: return "fp32";
    case gpu::DataType::FP16: return "fp16";
    case gpu::DataType::BF16: return "bf16";
    case gpu::DataType::INT8: case gpu::DataType::UINT8: return "int8";
    case gpu::DataType::FP8_E4M3: return "fp8_e4m3";
    case gpu::DataType::FP8_E5M2: return "fp8_e5m2";
    default: return gpu::data_type_name(t);
  }
}

}  // namespace

const char* launch_mode_name(LaunchMode m) { return m == LaunchMode::Graph ? "graph" : "eager"; }

const char* kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::Gemm: return "gemm";
    case KernelClass::Conv: return "conv";
    case KernelClass::Depthwise: return "depthwise";
    case KernelClass::Attention: return "attention";
    case KernelClass::RowWise: return "rowwise";
    case KernelClass::Elementwise: return "elementwise";
    case KernelClass::Pool: return "pool";
    case KernelClass::Reduce: return "reduce";
    case KernelClass::Gather: return "gather";
    case KernelClass::Copy: return "copy";
    case KernelClass::Opaque: return "opaque";
  }
  return "?";
}

// ---- GEMM candidates ----

std::string gemm_tile_name(const MatmulPlanSpec& t) {
  std::string s = std::to_string(t.tm) + "x" + std::to_string(t.tn) + "x" + std::to_string(t.tk) + ":" +
                  std::to_string(t.warps) + ":" + std::to_string(t.stages);
  if (t.split_k > 1) s += " split-K " + std::to_string(t.split_k);
  if (t.stream_k) s += " stream-K";
  if (t.warp_mma) s += " mma.sync";
  if (t.cluster_m * t.cluster_n > 1) s += " cluster " + std::to_string(t.cluster_m) + "x" + std::to_string(t.cluster_n);
  return s;
}

// ARK's 128x256 tile and smaller ones, each with 3 stages and with a deeper pipeline (libraries
// pick 4-7 stages for skinny, latency-bound shapes); split-K variants where the tiles do not fill
// the SMs (cuBLAS's split-K); stream-K where they do (cuBLAS's persistent Hopper kernels).
std::vector<MatmulPlanSpec> default_gemm_tiles(gpu::DataType dtype) {
  struct Tile {
    int64_t tm, tn, tk;
    int warps, stages;
    int64_t split_k;
    bool stream_k;
  };
  static const Tile tiles[] = {
      {128, 256, 64, 8, 3, 1, false}, {256, 128, 64, 8, 3, 1, false}, {128, 128, 64, 4, 3, 1, false},
      {128, 64, 64, 4, 3, 1, false},  {64, 128, 64, 4, 3, 1, false},  {64, 64, 64, 4, 3, 1, false},
      {128, 128, 64, 4, 4, 1, false}, {128, 64, 64, 4, 5, 1, false},  {64, 128, 64, 4, 5, 1, false},
      {64, 64, 64, 4, 6, 1, false},
      // split-K
      {128, 128, 64, 4, 3, 2, false}, {128, 128, 64, 4, 3, 4, false}, {128, 256, 64, 8, 3, 2, false},
      {64, 128, 64, 4, 5, 2, false},  {64, 128, 64, 4, 5, 4, false},
      // stream-K
      {128, 256, 64, 8, 3, 1, true},  {128, 128, 64, 4, 3, 1, true},
      // a few rows (decode steps): 16-row tiles, one MMA row a warp, split-K
      {16, 128, 64, 4, 4, 1, false},  {16, 64, 64, 4, 4, 1, false},   {16, 128, 64, 4, 4, 2, false},
      {16, 128, 64, 4, 4, 4, false},  {16, 64, 64, 4, 4, 8, false},
  };
  std::vector<MatmulPlanSpec> out;
  for (const Tile& t : tiles) {
    MatmulPlanSpec s;
    s.tm = t.tm, s.tn = t.tn, s.tk = t.tk * 2 / gpu::data_type_bytes(dtype), s.warps = t.warps, s.stages = t.stages;
    s.split_k = t.split_k, s.stream_k = t.stream_k;
    s.sram_bytes = s.stages * (s.tm + s.tn) * s.tk * gpu::data_type_bytes(dtype);  // gemm_plan sets the problem's
    out.push_back(s);
  }
  return out;
}

std::optional<gpu::Program> gemm_plan(const GemmProblem& g, MatmulPlanSpec s, const models::GpuParams& p) {
  const int64_t limit = smem_limit(p);
  s.m = g.m, s.n = g.n, s.k = g.k, s.a_rows = g.a_rows, s.group_m = g.group_m, s.dtype = g.dtype;
  s.batch = g.batch, s.b_shared = g.b_shared, s.simt = g.simt, s.epilogue_read_bytes = g.epilogue_read_bytes;
  if (g.out_dtype != g.dtype) s.out_dtype = g.out_dtype;
  s.sram_bytes = s.stages * (s.tm + s.tn) * s.tk * gpu::data_type_bytes(g.dtype);
  if (s.sram_bytes > limit) return std::nullopt;
  // A split needs equal parts of at least one K step; an implicit or batched GEMM is not split.
  if (s.split_k > 1 && (g.a_rows > 0 || g.batch > 1 || g.k % s.split_k != 0 || g.k / s.split_k < s.tk))
    return std::nullopt;
  // Stream-K shares out the last wave of a kernel whose tiles fill the SMs; with fewer tiles
  // than SMs libraries split K instead (the split-K candidates). Only on Hopper, where cuBLAS's
  // kernels were seen persistent (the A100's rows were fitted without it).
  if (s.stream_k && (p.arch != "CUDA_90" || g.a_rows > 0 || g.batch > 1 || g.simt ||
                     ((g.m + s.tm - 1) / s.tm) * ((g.n + s.tn - 1) / s.tn) < p.num_sms))
    return std::nullopt;
  // The sum's 4-warp programs hold `split` fp32 values per output column and thread.
  s.sum_programs_per_sm = models::rowwise_programs_per_sm(p, 4, s.split_k * ((g.n + 127) / 128));
  // Occupancy: as many tiles per SM as its warps, shared memory and registers hold.
  models::MatmulTile tile;
  tile.tm = s.tm, tile.tn = s.tn, tile.tk = s.tk, tile.in_type = g.dtype;
  s.slots = models::matmul_tiles_per_sm(p, tile, s.warps, s.stages);
  return single_matmul_plan(s, p.num_sms, p.smem_per_sm_bytes);
}

// ---- row-wise, streaming and attention kernels ----

void finish_rowwise_spec(RowKernelSpec& s, const models::GpuParams& p) {
  int64_t block = 1;
  while (block < s.cols) block *= 2;
  if (s.warps <= 0) {
    s.warps = block >= 32768 ? 32 : block >= 8192 ? 16 : block >= 2048 ? 8 : 4;
    s.warps = std::min(s.warps, p.max_warps_per_block);
  }
  // Triton pads the row to a power of two; each thread holds its share of every row input and
  // weight vector in registers.
  const int64_t per_thread = (block + int64_t{s.warps} * p.warp_size - 1) / (int64_t{s.warps} * p.warp_size);
  s.programs_per_sm = models::rowwise_programs_per_sm(p, s.warps, (s.row_inputs + s.col_vectors) * per_thread);
}

void require_gpu_dtypes(const ir::Graph& g, const models::GpuParams& p, const std::string& hw_source) {
  if (p.tensor_fpc_fp8 > 0) return;
  for (const ir::Layer& l : g.layers)
    for (const auto* ts : {&l.input_dtypes, &l.output_dtypes})
      for (ir::DType t : *ts)
        if (ir::is_fp8(t))
          throw InputError(hw_source, "gpu.tensor_tflops.fp8",
                           "is 0: this GPU has no fp8 tensor cores, and " + g.source + " op '" + l.name + "' is " +
                               ir::dtype_name(t) + " (give a Hopper or newer config, or --dtype fp16)");
}

void looped_row_geometry(RowKernelSpec& s, ir::OpKind op, const models::GpuParams& p) {
  const int64_t ws = p.warp_size;
  const int64_t esize = std::max<int64_t>(1, static_cast<int64_t>(gpu::data_type_bytes(s.dtype)));
  int64_t threads, vector, reductions = 1;
  if (op == ir::OpKind::Softmax && s.cols <= 1024) {
    // PyTorch's persistent softmax: a warp per row, all of its elements loaded at once, warp-wide
    // max and sum.
    threads = ws, vector = (s.cols + ws - 1) / ws, reductions = 2, s.loop_passes = 1;
  } else if (op == ir::OpKind::Softmax) {
    // cunn_SoftMaxForward: a block of up to 1024 threads, 16-byte loads; max, sum of exp, write.
    threads = std::min<int64_t>(1024, s.cols), vector = std::max<int64_t>(1, 16 / esize), reductions = 2;
    s.loop_passes = 3;
  } else if (op == ir::OpKind::LayerNorm) {
    // PyTorch's vectorized layer_norm: 128 threads, 4-element loads; Welford statistics, then the
    // normalisation re-reading the row.
    threads = 128, vector = 4, s.loop_passes = 2;
  } else {
    // vLLM's rms_norm: a block of min(cols, 1024) threads, one element a load; the sum of squares,
    // then the scaling re-reading the row.
    threads = std::min<int64_t>(1024, s.cols), vector = 1, s.loop_passes = 2;
  }
  threads = std::min<int64_t>(int64_t{p.max_warps_per_block} * ws, (threads + ws - 1) / ws * ws);
  s.warps = static_cast<int>(threads / ws);
  // The arithmetic is what these kernels issue, compiled as the frameworks build them (no fast
  // math): FP32-pipe instructions an element, two flops each at the vector rate (which counts an
  // FMA as two). std::exp is 6 around one MUFU.EX2, an IEEE division 6 around MUFU.RCP, a
  // reciprocal 4; a 16-bit element costs a conversion to fp32 on each read and one back on the
  // write (the MUFU ops run beside them on their own unit). docs/gpu_library.md#looped-row-kernels.
  // Other ops (a reduction over the last axis) keep the arithmetic the caller set.
  const bool narrow = esize < 4;
  if (op == ir::OpKind::Softmax && s.cols <= 1024)
    s.flops_per_element = 2 * (1 + 1 + 6 + 1 + 6 + (narrow ? 2 : 0));  // max; x - max, exp, sum; exp / sum
  else if (op == ir::OpKind::Softmax)
    s.flops_per_element = 2 * (1 + (1 + 6 + 1) + (1 + 6 + 6) + (narrow ? 4 : 0));  // max; x - max, exp, sum; again, / sum
  else if (op == ir::OpKind::LayerNorm)
    s.flops_per_element = 2 * ((1 + 1 + 4 + 1 + 1 + 1) + 3 + (narrow ? 5 : 0));  // Welford (1 / count); (x - mean) x rstd x w + b
  else if (op == ir::OpKind::RmsNorm)
    s.flops_per_element = 2 * (1 + 2 + (narrow ? 3 : 0));  // x x x; x x rstd x w (vLLM scales in fp32, then in 16 bits)
  s.loop_iters = std::max<int64_t>(1, (s.cols + threads * vector - 1) / (threads * vector));
  // A block reduction: log2(warp) shuffles, then one exchange across the warps through shared
  // memory (a store, a barrier, a load) and log2(warps) more shuffles.
  int steps = 0;
  for (int64_t n = ws; n > 1; n /= 2) ++steps;
  for (int64_t n = s.warps; n > 1; n /= 2) ++steps;
  s.reduce_steps = static_cast<int>(reductions) * steps;
  s.reduce_exchanges = s.warps > 1 ? static_cast<int>(reductions) : 0;
  s.programs_per_sm = models::rowwise_programs_per_sm(p, s.warps, (s.row_inputs + s.col_vectors) * vector, 16);
}

gpu::Program stream_plan(const StreamKernelSpec& s, const models::GpuParams& p) {
  // 2048 elements a program (4 warps, 16 elements a thread: 16-byte vectors of fp16, unrolled),
  // more when that would launch beyond 8 waves of 16 programs an SM.
  const int64_t programs_per_sm = std::max(1, p.max_warps_per_sm / 4);
  const int64_t most = int64_t{p.num_sms} * programs_per_sm * 8;
  const int64_t tasks = std::clamp<int64_t>(ceil_div(std::max<int64_t>(1, s.elements), 2048), 1, most);
  RowKernelSpec r;
  r.name = s.name;
  r.rows = tasks;
  // Every byte as one BYTE-typed read tensor and one written: each program streams its share.
  r.cols = 1;
  r.dtype = gpu::DataType::BYTE;
  r.row_inputs = 0;
  r.warps = 4;
  r.programs_per_sm = programs_per_sm;
  gpu::Program prog = single_rowwise_plan(r, p.num_sms);
  gpu::Op& op = prog.task_infos[0].ops[0];
  const int64_t rb = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(s.read_bytes / static_cast<double>(tasks))));
  const int64_t wb = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(s.write_bytes / static_cast<double>(tasks))));
  // Replace the placeholder tensors by tasks x (bytes per task) byte tensors in fresh buffers.
  auto tensor = [&](int64_t cols) {
    gpu::Tensor t;
    t.id = t.buffer_id = static_cast<int64_t>(prog.buffers.size());
    prog.buffers.push_back({t.buffer_id, -1, false, {}, {}, ""});
    t.dtype = gpu::DataType::BYTE;
    t.shape = t.strides = t.padded_shape = {tasks, cols};
    t.offsets = {0, 0};
    return t;
  };
  op.read_tensors.clear();
  if (rb > 0) op.read_tensors.push_back(tensor(rb));
  op.write_tensors = {tensor(wb)};
  op.result_tensors = op.write_tensors;
  gpu::derive_costs(prog);
  op.cost.flops = static_cast<int64_t>(std::llround(s.flops));
  op.task_cost.flops = ceil_div(op.cost.flops, tasks);
  prog.task_infos[0].task_cost.flops = op.task_cost.flops;
  return prog;
}

std::vector<KernelCandidate> attention_candidates(const AttentionProblem& a, const models::GpuParams& p) {
  // FlashAttention's tiles: 128 or 64 queries by 64 or 128 keys, 4 or 8 warps; a short query
  // (decode) a 16-row tile, its keys split over enough programs to fill the SMs (flash-decoding).
  // Keys and values as one tensor (FlashMLA over the latent cache): 64 heads' rows by 64 or 32
  // keys, each key slice loaded once for QK^T and PV, the keys split over the SMs as in decoding.
  // Grouped-query decode: the query heads of a K/V head are one program's rows, so each K/V slice
  // is read once for the group (FlashAttention-2's seqlenq_ngroups_swapped, FlashInfer's head-group
  // fusion).
  struct Tile { int64_t tm, tk; int warps; };
  const bool decode = a.sq <= 16;
  const bool packed = decode && !a.shared_kv && a.kv_group > 1 && a.batch % a.kv_group == 0;
  const int64_t batch = packed ? a.batch / a.kv_group : a.batch, sq = packed ? a.sq * a.kv_group : a.sq;
  std::vector<Tile> tiles = {{128, 64, 4}, {128, 128, 8}, {64, 64, 4}};
  const bool split_keys = decode || a.shared_kv;
  if (decode) tiles = sq <= 16 ? std::vector<Tile>{{16, 128, 4}, {16, 64, 4}} : std::vector<Tile>{{64, 64, 4}, {64, 128, 4}};
  if (a.shared_kv) tiles = {{64, 64, 8}, {64, 32, 4}, {16, 32, 4}};
  // A query/key head wider than the value's (MLA's 192 and 128): the plan's head dim is their
  // mean, which gives QK^T + PV their flops and each key step its K and V bytes.
  const int64_t d = a.dk > 0 && a.dk != a.d ? (a.dk + a.d + 1) / 2 : a.d;
  const bool hopper = p.arch == "CUDA_90";
  // AMD's FlashAttention (Composable Kernel's ck_tile fmha forward, the kernel of ROCm's
  // FlashAttention-2 and vLLM on MI300X) holds Q in registers and streams K and V through LDS
  // in 32-wide slices (pipeline qr_ks_vs; ROCm/composable_kernel example/ck_tile/01_fmha/codegen:
  // fp16/bf16 tiles of 128 queries by 128 keys (64 below head dim 128), 4 wavefronts, for head
  // dims 32, 64, 128 and 256), so a tile needs far less than the 64 KB of LDS a CU has.
  const bool rocm = p.arch.rfind("ROCM", 0) == 0;
  constexpr int64_t kCkSlice = 32;
  if (rocm && !decode && !a.shared_kv) tiles = a.d <= 64 ? std::vector<Tile>{{128, 64, 4}} : std::vector<Tile>{{128, 128, 4}};
  // The kernels are compiled for a few head dims and run a head in the next one up, its extra
  // columns zero (FlashAttention-2's HEADDIM_SWITCH: 32, 64, 96, 128, 160, 192, 224, 256;
  // FlashAttention-3's 64, 96, 128, 192, 256): the tile's math and shared memory take the padded
  // width, its loads the head's own.
  int64_t d_tile = d;
  if (a.dk == 0 && !a.shared_kv) {
    const std::vector<int64_t> dims = hopper ? std::vector<int64_t>{64, 96, 128, 192, 256}
                                      : rocm   ? std::vector<int64_t>{32, 64, 128, 256}
                                               : std::vector<int64_t>{32, 64, 96, 128, 160, 192, 224, 256};
    for (const int64_t x : dims)
      if (d <= x) {
        d_tile = x;
        break;
      }
  }
  std::vector<KernelCandidate> out;
  for (const Tile& t : tiles) {
    MatmulPlanSpec s;
    s.attention = true;
    s.causal = a.causal && a.sq > 1;
    s.softmax_overlap = hopper;  // FlashAttention-3's ping-pong warpgroups
    s.dtype = a.dtype;
    s.shared_kv = a.shared_kv;
    s.tm = t.tm, s.tn = d_tile, s.tk = t.tk, s.warps = t.warps, s.stages = 2;
    s.m = sq, s.n = d;
    int64_t splits = 1;
    const int64_t programs = batch * ceil_div(sq, t.tm);
    if (split_keys) {  // flash-decoding: split the keys until the programs fill the SMs twice
      const int64_t key_tiles = ceil_div(a.skv, t.tk);
      splits = std::clamp<int64_t>(ceil_div(2 * int64_t{p.num_sms}, programs), 1, key_tiles);
    }
    s.k = ceil_div(a.skv, splits);
    s.batch = batch * splits;
    // Q tile + two stages of K and V slices (of the one slice when K is V); on ROCm Q in
    // registers and two stages of a 32-wide slice of K and of V.
    s.sram_bytes = (rocm ? 2 * (t.tk * kCkSlice + (a.shared_kv ? 0 : kCkSlice * d_tile))
                         : t.tm * d_tile + 2 * (a.shared_kv ? 1 : 2) * t.tk * d_tile) *
                   gpu::data_type_bytes(a.dtype);
    if (s.sram_bytes > smem_limit(p)) continue;
    s.slots = std::max<int64_t>(
        1, std::min<int64_t>(p.max_warps_per_block / t.warps, models::blocks_by_smem(p.smem_per_sm_bytes, s.sram_bytes)));
    s.warps_per_processor = static_cast<int>(s.slots) * t.warps;
    std::string name = "flash " + std::to_string(t.tm) + "x" + std::to_string(t.tk) + ":" + std::to_string(t.warps) +
                       (hopper ? " (FA3)" : rocm ? " (CK)" : " (FA2)");
    if (packed) name += " " + std::to_string(a.kv_group) + " heads a K/V";
    if (splits > 1) name += " split-KV " + std::to_string(splits);
    out.push_back({name, single_matmul_plan(s, p.num_sms, p.smem_per_sm_bytes)});
  }
  return out;  // empty: no tile of this head dim fits the shared memory
}

// ---- launch ----

Timeline launch_timeline(const std::vector<double>& span_us, LaunchMode mode, double launch_us, double gap_us,
                         double host_us) {
  Timeline t;
  double prev_end = 0;
  for (size_t i = 0; i < span_us.size(); ++i) {
    double start;
    if (mode == LaunchMode::Graph) {
      start = i == 0 ? launch_us : prev_end + gap_us;
    } else {
      const double issued = static_cast<double>(i) * host_us + launch_us;
      start = i == 0 ? issued : std::max(issued, prev_end + gap_us);
    }
    t.start_us.push_back(start);
    prev_end = start + span_us[i];
    t.end_us.push_back(prev_end);
  }
  t.total_us = span_us.empty() ? launch_us : prev_end;
  return t;
}

// ---- the plan of a graph ----

namespace {

using ir::Layer;
using ir::OpKind;

enum class Role { View, Matrix, Depthwise, RowWise, Pool, Reduce, Gather, Pointwise, Movement, Opaque };

bool depthwise_conv(const Layer& l) {
  if (l.op != OpKind::Conv2d || l.groups <= 1 || l.input_shapes.size() < 2) return false;
  return l.input_shapes[1].size() == 4 && l.input_shapes[1][1] < 16;  // C / groups below a tensor-core K step
}

Role role_of(const Layer& l) {
  switch (l.op) {
    case OpKind::Reshape: return Role::View;
    case OpKind::Conv2d: return depthwise_conv(l) ? Role::Depthwise : Role::Matrix;
    case OpKind::Dense: case OpKind::MatMul: case OpKind::BatchMatMul: return Role::Matrix;
    case OpKind::Softmax: case OpKind::LayerNorm: case OpKind::RmsNorm: return Role::RowWise;
    case OpKind::MaxPool2d: case OpKind::AvgPool2d: return Role::Pool;
    case OpKind::ReduceSum: case OpKind::ReduceMean: case OpKind::ReduceMax: case OpKind::GlobalAvgPool2d:
    case OpKind::GlobalMaxPool2d:
      return Role::Reduce;
    case OpKind::Gather: return Role::Gather;
    case OpKind::Transpose: case OpKind::Concat: case OpKind::Split: case OpKind::Slice: case OpKind::Pad:
      return Role::Movement;
    case OpKind::Opaque: return Role::Opaque;
    default: return Role::Pointwise;
  }
}

// fp32 flops per output element of a point-wise op (a transcendental at transcendental_flops).
double pointwise_flops(const Layer& l, const models::GpuParams& p) {
  switch (l.op) {
    case OpKind::Gelu: return 2 + 2 * p.transcendental_flops;
    case OpKind::Silu: case OpKind::Sigmoid: case OpKind::Tanh: case OpKind::Exp: return 1 + p.transcendental_flops;
    case OpKind::Div: case OpKind::Sqrt: case OpKind::Rsqrt: return p.transcendental_flops;
    case OpKind::Quantize: case OpKind::Requantize: return 3;
    default: return std::max<size_t>(1, l.input_shapes.size() > 1 ? l.input_shapes.size() - 1 : 1);
  }
}

// A fused activation attribute (conv2d + relu ...): its flops per element.
double activation_flops(const std::string& act, const models::GpuParams& p) {
  std::string a;
  for (char c : act) a += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (a.empty() || a == "none" || a == "null" || a == "linear" || a == "identity") return 0;
  if (a.find("gelu") != std::string::npos) return 2 + 2 * p.transcendental_flops;
  if (a.find("silu") != std::string::npos || a.find("swish") != std::string::npos || a.find("sigmoid") != std::string::npos ||
      a.find("tanh") != std::string::npos)
    return 1 + p.transcendental_flops;
  return 1;
}

std::string shape_text(const std::vector<std::pair<const char*, int64_t>>& kv) {
  std::string s;
  for (const auto& [k, v] : kv) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(v);
  return s;
}

struct Builder {
  const ir::Graph& g;
  const models::GpuParams& p;
  const LibraryOptions& o;
  LibraryPlan plan;
  // Per kernel while building: the tensors it reads from outside and the tensors it makes.
  struct Work {
    std::set<int> reads, makes;
    int main_out = -1;            // the tensor an epilogue extends (GEMM, row-wise ... outputs)
    int64_t main_elems = 0;
    bool open_pointwise = false;  // point-wise ops of the same size may join (an epilogue)
    bool open_group = false;      // an element-wise group: point-wise and layout ops may join
    double extra_flops = 0;       // of joined point-wise ops
    double epilogue_read_bytes = 0;  // per main output element
    int64_t extra_n = 0;          // a GEMM's merged siblings' columns
    double op_macs = 0;           // MACs of the IR ops it covers
    const Layer* anchor = nullptr;
    gpu::DataType out_dtype = gpu::DataType::FP16;
  };
  std::vector<Work> work;
  std::vector<int> kernel_of;                // tensor id -> kernel that makes it (-1: outside any)
  std::vector<std::vector<const Layer*>> consumers;  // tensor id -> layers reading it
  // Attention patterns found before the kernels are made (their kernels are made in graph order).
  struct Pattern {
    AttentionProblem a;
    std::string shape;
    double macs = 0, min_bytes = 0;
  };
  std::vector<Pattern> patterns;
  std::map<const Layer*, int> absorbed;      // layers an attention kernel covers -> its pattern
  std::map<const Layer*, int> attention_at;  // first layer of a pattern -> the pattern
  std::map<const Layer*, int> merged;        // projections run as part of an earlier one's GEMM -> its kernel

  Builder(const ir::Graph& graph, const models::GpuParams& params, const LibraryOptions& opts)
      : g(graph), p(params), o(opts), kernel_of(graph.tensors.size(), -1), consumers(graph.tensors.size()) {
    plan.source = g.source;
    plan.options = o;
    for (const Layer& l : g.layers)
      for (int t : l.inputs)  // each consumer once, however many of its inputs the tensor is
        if (valid(t) && (consumers[static_cast<size_t>(t)].empty() || consumers[static_cast<size_t>(t)].back() != &l))
          consumers[static_cast<size_t>(t)].push_back(&l);
  }

  bool valid(int t) const { return t >= 0 && static_cast<size_t>(t) < g.tensors.size(); }
  int64_t elems(int t) const { return valid(t) ? ir::num_elements(g.tensor(t).shape) : 0; }
  double bytes(int t) const { return valid(t) ? static_cast<double>(elems(t)) * ir::dtype_bytes(g.tensor(t).dtype) : 0; }
  bool is_param(int t) const { return valid(t) && g.tensor(t).is_parameter(); }
  bool single_use(int t) const {
    return valid(t) && consumers[static_cast<size_t>(t)].size() == 1 && g.tensor(t).role != ir::TensorRole::GraphOutput;
  }
  const Layer* only_consumer(int t) const { return single_use(t) ? consumers[static_cast<size_t>(t)][0] : nullptr; }
  int out0(const Layer& l) const { return l.outputs.empty() ? -1 : l.outputs[0]; }
  int in(const Layer& l, size_t i) const { return i < l.inputs.size() ? l.inputs[i] : -1; }

  [[noreturn]] void fail(const Layer& l, const std::string& what) const {
    throw InputError(g.source, l.pointer, std::string(ir::op_name(l.op)) + " '" + l.name + "': " + what);
  }

  int new_kernel(const Layer& l, KernelClass cls) {
    LibraryKernel k;
    k.name = l.name;
    k.cls = cls;
    plan.kernels.push_back(k);
    Work w;
    w.anchor = &l;
    work.push_back(w);
    return static_cast<int>(plan.kernels.size()) - 1;
  }

  // l's reads and writes become kernel k's.
  void add_to(int k, const Layer& l) {
    plan.kernels[static_cast<size_t>(k)].ir_ops.push_back(l.name);
    Work& w = work[static_cast<size_t>(k)];
    w.op_macs += static_cast<double>(l.macs());
    for (int t : l.inputs)
      if (valid(t) && !w.makes.count(t)) w.reads.insert(t);
    for (int t : l.outputs)
      if (valid(t)) {
        w.makes.insert(t);
        kernel_of[static_cast<size_t>(t)] = k;
      }
  }

  // A kernel made of l (its index in *k) whose output point-wise ops of its size may extend.
  Work& anchor(const Layer& l, KernelClass cls, int* k) {
    *k = new_kernel(l, cls);
    add_to(*k, l);
    Work& w = work[static_cast<size_t>(*k)];
    w.main_out = out0(l);
    w.main_elems = l.output_shapes.empty() ? 1 : ir::num_elements(l.output_shapes[0]);
    w.open_pointwise = true;
    return w;
  }

  // ---- attention patterns: bmm(q, k) [* or / scale] [tanh * cap] [+ mask] softmax bmm(p, v) ----
  void find_attention() {
    if (!o.fuse) return;
    for (const Layer& l : g.layers) {
      if (l.op != OpKind::BatchMatMul || l.transpose_a || l.inputs.size() < 2 || l.outputs.empty()) continue;
      std::vector<const Layer*> chain{&l};
      const Layer* c = only_consumer(out0(l));
      const Layer* mask = nullptr;
      if (c && (c->op == OpKind::Mul || c->op == OpKind::Div) && c->inputs.size() == 2 && is_param(in(*c, 1)))
        chain.push_back(c), c = only_consumer(out0(*c));
      // Gemma 2's soft-capping, c * tanh(x / c) (1/c in the scale): FlashAttention-2 and
      // FlashInfer apply it to each score tile in the kernel.
      if (c && c->op == OpKind::Tanh) {
        const Layer* cap = only_consumer(out0(*c));
        if (cap && cap->op == OpKind::Mul && cap->inputs.size() == 2 && is_param(in(*cap, 1)))
          chain.push_back(c), chain.push_back(cap), c = only_consumer(out0(*cap));
      }
      if (c && c->op == OpKind::ElementWiseAdd && c->inputs.size() == 2 && is_param(in(*c, 1)))
        chain.push_back(c), mask = c, c = only_consumer(out0(*c));
      if (!c || c->op != OpKind::Softmax) continue;
      // FlashAttention runs fp16, bf16 (and TensorRT's int8 MHA); fp32 attention stays unfused
      // (PyTorch's fp32 scaled_dot_product_attention takes the unfused math path).
      if (!l.input_dtypes.empty() && ir::dtype_bytes(l.input_dtypes[0]) > 2) continue;
      chain.push_back(c);
      const Layer* pv = only_consumer(out0(*c));
      if (!pv || pv->op != OpKind::BatchMatMul || pv->transpose_a || pv->transpose_b || in(*pv, 0) != out0(*c)) continue;
      chain.push_back(pv);
      const ir::Shape& s = l.output_shapes.at(0);
      if (s.size() < 2 || pv->output_shapes.empty() || !valid(out0(*pv))) continue;
      const int k = static_cast<int>(patterns.size());
      attention_at[&l] = k;
      for (const Layer* x : chain) absorbed[x] = k;
      // Views around it: the layout ops that feed q, k, v only to it, a cache concat whose first
      // input comes from outside (FlashAttention reads the cache in place), and the transpose
      // of its output (it writes [B, S, H, dh] directly).
      // Keys that are the values (MLA's latent cache, maybe through a transposed view) feed both
      // matmuls: read once.
      const bool shared = view_source(in(*pv, 1)) == view_source(in(l, 1));
      for (int t : {in(l, 0), in(l, 1), in(*pv, 1)}) absorb_layout_producers(t, k);
      if (const Layer* after = only_consumer(out0(*pv)); after && after->op == OpKind::Transpose) absorbed[after] = k;
      Pattern pat;
      AttentionProblem& a = pat.a;
      const int64_t sq = s[s.size() - 2], skv = s.back();
      a.sq = sq, a.skv = skv;
      a.batch = std::max<int64_t>(1, ir::num_elements(s) / std::max<int64_t>(1, sq * skv));
      a.d = pv->output_shapes.at(0).back();
      if (l.input_shapes.size() >= 2 && !l.input_shapes[0].empty() && l.input_shapes[0].back() != a.d) a.dk = l.input_shapes[0].back();
      a.shared_kv = shared;
      if (const int64_t gk = repeat_factor(in(l, 1)); gk > 1 && gk == repeat_factor(in(*pv, 1))) a.kv_group = gk;
      a.causal = mask != nullptr && sq > 1;
      a.dtype = ark_data_type(g.tensor(out0(*pv)).dtype);
      const int64_t dk = a.dk > 0 ? a.dk : a.d;
      pat.shape = shape_text({{"batch_heads", a.batch}, {"q", sq}, {"kv", skv}, {"d", a.d}}) + (a.dk > 0 ? " dk " + std::to_string(a.dk) : "") +
                  (a.kv_group > 1 ? " gqa " + std::to_string(a.kv_group) : "") + (a.shared_kv ? " shared kv" : "") + (a.causal ? " causal" : "");
      const double seen = a.causal ? (static_cast<double>(skv) - static_cast<double>(sq) / 2) / static_cast<double>(skv) : 1;
      pat.macs = static_cast<double>(a.batch * sq) * static_cast<double>(skv * (dk + a.d)) * seen;
      // Q and K of dk, V and O of d; keys that are the values read once, a K/V head once for its group.
      pat.min_bytes = gpu::data_type_bytes(a.dtype) * static_cast<double>(a.batch) *
                      (static_cast<double>(sq * dk + sq * a.d) +
                       static_cast<double>(skv * dk + (a.shared_kv ? 0 : skv * a.d)) / static_cast<double>(a.kv_group));
      patterns.push_back(pat);
    }
  }

  void attention(const Layer& first, int pattern) {
    const int k = new_kernel(first, KernelClass::Attention);
    for (const Layer& x : g.layers)  // the pattern's ops and views, in graph order
      if (auto it = absorbed.find(&x); it != absorbed.end() && it->second == pattern) add_to(k, x);
    const Pattern& pat = patterns[static_cast<size_t>(pattern)];
    LibraryKernel& kern = plan.kernels[static_cast<size_t>(k)];
    kern.candidates = attention_candidates(pat.a, p);
    if (kern.candidates.empty())
      fail(first, "no FlashAttention tile of head dim " + std::to_string(pat.a.d) + " fits the GPU's shared memory");
    kern.shape = pat.shape;
    kern.dtype = dtype_text(pat.a.dtype);
    kern.signature = "attention " + kern.shape + " " + kern.dtype;
    kern.macs = pat.macs;
    kern.flops = 2 * pat.macs;
    kern.min_bytes = pat.min_bytes;
  }

  // A concat of one tensor with itself: K/V heads repeated for grouped-query attention (repeat_kv).
  static bool repeats_one_tensor(const Layer& l) {
    return l.op == OpKind::Concat && l.inputs.size() > 1 &&
           std::all_of(l.inputs.begin(), l.inputs.end(), [&](int x) { return x == l.inputs[0]; });
  }

  // How many times a K/V head is repeated behind t's views; 1 when it is not.
  int64_t repeat_factor(int t) const {
    for (int guard = 0; guard < 8 && valid(t); ++guard) {
      const int maker = g.tensor(t).producer;
      if (maker < 0) return 1;
      const Layer& l = g.layers[static_cast<size_t>(maker)];
      if (repeats_one_tensor(l)) return static_cast<int64_t>(l.inputs.size());
      if (l.op != OpKind::Transpose && l.op != OpKind::Reshape) return 1;
      t = in(l, 0);
    }
    return 1;
  }

  // The tensor a chain of transposes and reshapes views.
  int view_source(int t) const {
    for (int guard = 0; guard < 8 && valid(t); ++guard) {
      const int maker = g.tensor(t).producer;
      if (maker < 0) break;
      const Layer& l = g.layers[static_cast<size_t>(maker)];
      if (l.op != OpKind::Transpose && l.op != OpKind::Reshape) break;
      t = in(l, 0);
    }
    return t;
  }

  // Every reader of t is part of pattern k (a view read by both of its matmuls).
  bool used_only_by(int t, int k) const {
    if (!valid(t) || g.tensor(t).role == ir::TensorRole::GraphOutput) return false;
    for (const Layer* c : consumers[static_cast<size_t>(t)]) {
      const auto it = absorbed.find(c);
      if (it == absorbed.end() || it->second != k) return false;
    }
    return true;
  }

  void absorb_layout_producers(int t, int k) {
    for (int guard = 0; guard < 8 && valid(t); ++guard) {
      const bool used_here = used_only_by(t, k);
      const int maker = g.tensor(t).producer;
      // A K/V head repeated for grouped-query attention: FlashAttention indexes the shared head.
      const bool repeat = maker >= 0 && repeats_one_tensor(g.layers[static_cast<size_t>(maker)]);
      if (maker < 0 || (!single_use(t) && !repeat && !used_here)) return;
      const Layer& l = g.layers[static_cast<size_t>(maker)];
      const bool cache = l.op == OpKind::Concat && !repeat && !l.inputs.empty() && valid(in(l, 0)) &&
                         g.tensor(in(l, 0)).producer < 0;
      if (l.op != OpKind::Transpose && l.op != OpKind::Reshape && !cache && !repeat) return;
      absorbed[&l] = k;
      if (cache) return;
      t = in(l, 0);
    }
  }

  // ---- kernels per op ----

  gpu::DataType gemm_dtype(const Layer& l) const {
    const ir::DType d = !l.input_dtypes.empty() ? l.input_dtypes[0] : ir::DType::Float16;
    return ark_data_type(d);
  }

  // A projection: an activation times a 2-D weight.
  bool projection(const Layer& l) const {
    return (l.op == OpKind::MatMul || l.op == OpKind::Dense) && !l.transpose_a && l.inputs.size() >= 2 &&
           is_param(in(l, 1)) && l.input_shapes.size() >= 2 && l.input_shapes[1].size() == 2 && valid(in(l, 0));
  }

  void matrix(const Layer& l) {
    const bool conv = l.op == OpKind::Conv2d;
    int k;
    Work& w = anchor(l, conv ? KernelClass::Conv : KernelClass::Gemm, &k);
    w.extra_flops = static_cast<double>(w.main_elems) * activation_flops(l.activation, p);
    if (l.input_shapes.size() > 2) w.extra_flops += static_cast<double>(w.main_elems);  // bias
    w.out_dtype = ark_data_type(!l.output_dtypes.empty() ? l.output_dtypes[0] : ir::DType::Float16);
    if (!o.fuse || !projection(l)) return;
    // Later projections of the same activation with weights of the same K and type run as one
    // GEMM with their columns side by side (TensorRT's and vLLM's fused QKV and gate/up).
    for (const Layer* c : consumers[static_cast<size_t>(in(l, 0))]) {
      if (c <= &l || merged.count(c) || c->op != l.op || !projection(*c) || c->transpose_b != l.transpose_b ||
          c->input_shapes[1] .size() != 2 || c->input_dtypes != l.input_dtypes || c->output_dtypes != l.output_dtypes)
        continue;
      const int64_t k_l = l.transpose_b || l.op == OpKind::Dense ? l.input_shapes[1][1] : l.input_shapes[1][0];
      const int64_t k_c = c->transpose_b || c->op == OpKind::Dense ? c->input_shapes[1][1] : c->input_shapes[1][0];
      const int64_t n_c = c->transpose_b || c->op == OpKind::Dense ? c->input_shapes[1][0] : c->input_shapes[1][1];
      if (k_c != k_l) continue;
      merged[c] = k;
      w.extra_n += n_c;
      w.open_pointwise = false;  // several outputs: each one's consumers run as kernels of their own
      const int64_t rows = n_c > 0 ? ir::num_elements(c->output_shapes.at(0)) / n_c : 0;
      w.extra_flops += static_cast<double>(rows * n_c) * (c->input_shapes.size() > 2 ? 1 : 0);
    }
  }

  GemmProblem gemm_problem(const Layer& l, int64_t extra_n, std::string* shape) const {
    GemmProblem gp;
    gp.dtype = gemm_dtype(l);
    gp.simt = gp.dtype == gpu::DataType::FP32 && !o.tf32;
    const ir::Shape& y = l.output_shapes.at(0);
    if (l.op == OpKind::Conv2d) {
      const ir::Shape &x = l.input_shapes.at(0), &wt = l.input_shapes.at(1);
      const int64_t groups = std::max(1, l.groups);
      // Tensor-core implicit GEMMs take channels in vectors of at least 4 (cuDNN's "c4").
      const int64_t channels = (wt[1] + 3) / 4 * 4;
      gp.m = y[0] * y[2] * y[3], gp.n = wt[0] / groups, gp.k = channels * wt[2] * wt[3];
      gp.batch = groups;
      gp.b_shared = false;
      if (groups == 1) gp.a_rows = std::min(gp.m, (x[0] * x[2] * x[3] * channels + gp.k - 1) / gp.k);
      *shape = shape_text({{"M", gp.m}, {"N", gp.n}, {"K", gp.k}}) + (groups > 1 ? " groups=" + std::to_string(groups) : "");
      return gp;
    }
    if (l.op == OpKind::Dense) {
      gp.m = l.input_shapes.at(0)[0], gp.n = l.input_shapes.at(1)[0] + extra_n, gp.k = l.input_shapes.at(1)[1];
      *shape = shape_text({{"M", gp.m}, {"N", gp.n}, {"K", gp.k}});
      return gp;
    }
    const ir::Shape &a = l.input_shapes.at(0), &b = l.input_shapes.at(1);
    auto last2 = [](const ir::Shape& s) {
      return s.size() >= 2 ? std::make_pair(s[s.size() - 2], s.back()) : std::make_pair(int64_t{1}, s.empty() ? 1 : s.back());
    };
    const auto [ar, ac] = last2(a);
    const auto [br, bc] = last2(b);
    gp.m = l.transpose_a ? ac : ar;
    gp.k = l.transpose_b ? bc : br;
    gp.n = l.transpose_b ? br : bc;
    const int64_t own_n = gp.n;
    const int64_t out_batch = std::max<int64_t>(1, ir::num_elements(y) / std::max<int64_t>(1, gp.m * own_n));
    gp.n += extra_n;
    const int64_t b_batch = std::max<int64_t>(1, ir::num_elements(b) / std::max<int64_t>(1, gp.k * gp.n));
    if (b_batch == 1 && !l.transpose_a) {
      // One B for every row block (a weight): the leading dims fold into M.
      gp.m *= out_batch;
    } else {
      gp.batch = out_batch;
      gp.b_shared = b_batch == 1;
    }
    *shape = shape_text({{"M", gp.m}, {"N", gp.n}, {"K", gp.k}}) + (gp.batch > 1 ? " batch=" + std::to_string(gp.batch) : "");
    return gp;
  }

  void finish_matrix(int k) {
    LibraryKernel& kern = plan.kernels[static_cast<size_t>(k)];
    const Work& w = work[static_cast<size_t>(k)];
    const Layer& l = *w.anchor;
    GemmProblem gp = gemm_problem(l, w.extra_n, &kern.shape);
    gp.out_dtype = w.out_dtype;
    gp.epilogue_read_bytes = w.epilogue_read_bytes;
    kern.dtype = dtype_text(gp.dtype) + (gp.simt ? " (FFMA)" : gp.dtype == gpu::DataType::FP32 ? " (TF32)" : "");
    for (const MatmulPlanSpec& t : default_gemm_tiles(gp.dtype)) {
      // As cuBLAS's heuristics: K is split only when the tiles leave SMs idle.
      if (t.split_k > 1 && ceil_div(gp.m, t.tm) * ceil_div(gp.n, t.tn) * gp.batch >= p.num_sms) continue;
      if (auto prog = gemm_plan(gp, t, p)) kern.candidates.push_back({gemm_tile_name(t), std::move(*prog)});
    }
    if (kern.candidates.empty()) fail(l, "no GEMM tile fits the GPU's shared memory (" + kern.shape + ")");
    std::ostringstream sig;
    sig << "gemm " << kern.shape << " a_rows=" << gp.a_rows << " b_shared=" << gp.b_shared << " " << kern.dtype << ">"
        << dtype_text(gp.out_dtype) << " epilogue=" << gp.epilogue_read_bytes;
    kern.signature = sig.str();
    // Useful MACs: the op's (the GEMM's dims pad a convolution's channels).
    const double gemm = static_cast<double>(gp.m) * static_cast<double>(gp.n) * static_cast<double>(gp.k) *
                        static_cast<double>(gp.batch);
    kern.macs = w.op_macs > 0 ? std::min(gemm, w.op_macs) : gemm;
    kern.flops = 2 * kern.macs + w.extra_flops;
  }

  void depthwise(const Layer& l) {
    int k;
    Work& w = anchor(l, KernelClass::Depthwise, &k);
    w.extra_flops = 2.0 * static_cast<double>(l.macs()) + static_cast<double>(w.main_elems) * activation_flops(l.activation, p);
    plan.kernels[static_cast<size_t>(k)].macs = static_cast<double>(l.macs());
  }

  static bool last_axis_reduction(const Layer& l) {
    if (l.op != OpKind::ReduceSum && l.op != OpKind::ReduceMean && l.op != OpKind::ReduceMax) return false;
    if (l.input_shapes.empty() || l.input_shapes[0].size() < 2 || l.axes.size() != 1) return false;
    const int64_t rank = static_cast<int64_t>(l.input_shapes[0].size());
    return l.axes[0] == -1 || l.axes[0] == rank - 1;
  }

  void rowwise(const Layer& l) {
    int k;
    anchor(l, KernelClass::RowWise, &k);
  }

  void streaming(const Layer& l, KernelClass cls) {
    int k;
    Work& w = anchor(l, cls, &k);
    w.open_pointwise = cls == KernelClass::Pool;
    w.open_group = (cls == KernelClass::Elementwise || cls == KernelClass::Copy) && o.fuse;
    if (cls == KernelClass::Elementwise)
      w.extra_flops = static_cast<double>(w.main_elems) * pointwise_flops(l, p);
    else if (cls == KernelClass::Pool)
      w.extra_flops = static_cast<double>(w.main_elems) * std::max(1, l.pool[0]) * std::max(1, l.pool[1]);
    else if (cls == KernelClass::Reduce)
      w.extra_flops = l.input_shapes.empty() ? 0 : static_cast<double>(ir::num_elements(l.input_shapes[0]));
    else if (cls == KernelClass::Opaque)
      w.extra_flops = static_cast<double>(std::max<int64_t>(0, l.opaque_flops));
  }

  // A point-wise or layout op: joins the kernel of its latest-made input when that kernel takes it.
  void pointwise(const Layer& l, bool layout) {
    int host = -1;
    for (int t : l.inputs)
      if (valid(t)) host = std::max(host, kernel_of[static_cast<size_t>(t)]);
    if (o.fuse && host >= 0) {
      Work& w = work[static_cast<size_t>(host)];
      const int64_t n = l.output_shapes.empty() ? 0 : ir::num_elements(l.output_shapes[0]);
      if (w.open_group) {
        add_to(host, l);
        if (!layout) w.extra_flops += static_cast<double>(n) * pointwise_flops(l, p);
        // A layout group that computes becomes an element-wise kernel.
        if (!layout) plan.kernels[static_cast<size_t>(host)].cls = KernelClass::Elementwise;
        w.main_out = out0(l);
        return;
      }
      // An epilogue: same size as the kernel's output, which only this op reads; other inputs
      // are parameters (bias, scale) or activations of that size (a residual).
      if (w.open_pointwise && !layout && n == w.main_elems && single_use(w.main_out) &&
          std::find(l.inputs.begin(), l.inputs.end(), w.main_out) != l.inputs.end()) {
        double extra = 0;
        bool ok = true;
        for (int t : l.inputs) {
          if (t == w.main_out || is_param(t)) continue;
          if (elems(t) == n) extra += ir::dtype_bytes(g.tensor(t).dtype);
          else ok = false;
        }
        if (ok) {
          add_to(host, l);
          w.extra_flops += static_cast<double>(n) * pointwise_flops(l, p);
          w.epilogue_read_bytes += extra;
          w.main_out = out0(l);
          w.out_dtype = ark_data_type(!l.output_dtypes.empty() ? l.output_dtypes[0] : ir::DType::Float16);
          return;
        }
      }
    }
    streaming(l, layout ? KernelClass::Copy : KernelClass::Elementwise);
  }

  void view(const Layer& l) {
    // A view: its output is its input's bytes, made by the same kernel.
    const int src = in(l, 0), dst = out0(l);
    const int maker = valid(src) ? kernel_of[static_cast<size_t>(src)] : -1;
    if (valid(dst)) kernel_of[static_cast<size_t>(dst)] = maker;
    if (maker >= 0) {
      plan.kernels[static_cast<size_t>(maker)].ir_ops.push_back(l.name);
      Work& w = work[static_cast<size_t>(maker)];
      if (valid(dst)) w.makes.insert(dst);
      if (w.main_out == src) w.main_out = dst;
    } else {
      plan.free_ops.push_back(l.name);
    }
  }

  void run() {
    find_attention();
    for (const Layer& l : g.layers) {
      if (l.output_shapes.empty()) fail(l, "has no output");
      if (auto it = attention_at.find(&l); it != attention_at.end()) {
        attention(l, it->second);
        continue;
      }
      if (absorbed.count(&l)) continue;
      if (auto it = merged.find(&l); it != merged.end()) {
        add_to(it->second, l);
        continue;
      }
      switch (role_of(l)) {
        case Role::View: view(l); break;
        case Role::Matrix: matrix(l); break;
        case Role::Depthwise: depthwise(l); break;
        case Role::RowWise: rowwise(l); break;
        case Role::Pool: streaming(l, KernelClass::Pool); break;
        case Role::Reduce:
          // A reduction over the last axis reads whole rows: a row-wise kernel (a warp or a block
          // per row, as PyTorch's and Triton's reductions run), not one thread per output.
          if (last_axis_reduction(l)) rowwise(l);
          else streaming(l, KernelClass::Reduce);
          break;
        case Role::Gather: streaming(l, KernelClass::Gather); break;
        case Role::Opaque: streaming(l, KernelClass::Opaque); break;
        case Role::Pointwise: pointwise(l, false); break;
        case Role::Movement:
          if (o.fuse) pointwise(l, true);
          else streaming(l, KernelClass::Copy);
          break;
      }
    }
    for (size_t k = 0; k < plan.kernels.size(); ++k) finish(static_cast<int>(k));
  }

  void finish(int k) {
    LibraryKernel& kern = plan.kernels[static_cast<size_t>(k)];
    Work& w = work[static_cast<size_t>(k)];
    const Layer& l = *w.anchor;
    // What leaves the kernel: tensors it makes that another kernel reads, or the graph's outputs.
    double reads = 0, writes = 0;
    for (int t : w.reads) reads += bytes(t);
    for (int t : w.makes) {
      bool outside = g.tensor(t).role == ir::TensorRole::GraphOutput || consumers[static_cast<size_t>(t)].empty();
      for (const Layer* c : consumers[static_cast<size_t>(t)])
        if (std::find(kern.ir_ops.begin(), kern.ir_ops.end(), c->name) == kern.ir_ops.end()) outside = true;
      // A view's output is its input's bytes: count the bytes once.
      const int maker = g.tensor(t).producer;
      if (maker >= 0 && g.layers[static_cast<size_t>(maker)].op == OpKind::Reshape) continue;
      if (outside) writes += bytes(t);
    }
    if (writes == 0 && valid(w.main_out)) writes = bytes(w.main_out);
    if (kern.cls != KernelClass::Attention) kern.min_bytes = reads + writes;
    if (kern.dtype.empty())
      kern.dtype = dtype_text(ark_data_type(!l.input_dtypes.empty() ? l.input_dtypes[0] : ir::DType::Float16));
    std::ostringstream sig;
    switch (kern.cls) {
      case KernelClass::Attention: return;
      case KernelClass::Gemm: case KernelClass::Conv: return finish_matrix(k);
      case KernelClass::RowWise: {
        const ir::Shape& x = l.input_shapes.at(0);
        size_t first = x.empty() ? 0 : x.size() - 1;
        if (l.op == OpKind::LayerNorm && !l.axes.empty()) {
          first = x.size();
          for (int64_t a : l.axes) first = std::min(first, static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(x.size()) : a));
        }
        if (l.op == OpKind::Softmax && !l.axes.empty()) {
          const int64_t a = l.axes[0] < 0 ? l.axes[0] + static_cast<int64_t>(x.size()) : l.axes[0];
          first = static_cast<size_t>(std::clamp<int64_t>(a, 0, static_cast<int64_t>(x.size()) - 1));
        }
        int64_t cols = 1;
        for (size_t i = first; i < x.size(); ++i) cols *= x[i];
        cols = std::max<int64_t>(1, cols);
        RowKernelSpec s;
        s.name = ir::op_name(l.op);
        s.rows = std::max<int64_t>(1, ir::num_elements(x) / cols), s.cols = cols;
        s.dtype = ark_data_type(l.input_dtypes.empty() ? ir::DType::Float16 : l.input_dtypes[0]);
        const double eb = gpu::data_type_bytes(s.dtype);
        const double row_bytes = static_cast<double>(s.rows * s.cols) * eb;
        // Whole rows in and out (a fused residual add reads two, and may write its sum too);
        // the norm's weights as column vectors.
        s.col_vectors = l.op == OpKind::Softmax ? 0 : static_cast<int>(l.input_shapes.size()) - 1;
        double vec_bytes = 0;
        for (size_t i = 1; i < l.inputs.size(); ++i) vec_bytes += bytes(l.inputs[i]);
        s.row_inputs = std::max(1, static_cast<int>(std::lround((reads - vec_bytes) / row_bytes)));
        s.row_outputs = std::max(1, static_cast<int>(std::lround(writes / row_bytes)));
        s.row_stats = 0;
        const bool reduction = last_axis_reduction(l);
        if (reduction) s.row_outputs = 0, s.row_stats = 1;  // one value per row out
        const double per_elem = reduction ? 1 : l.op == OpKind::Softmax ? 4 : l.op == OpKind::LayerNorm ? 7 : 4;
        const double trans = l.op == OpKind::Softmax ? 1 : 0;
        s.flops_per_element = per_elem + trans * p.transcendental_flops;  // a looped kernel sets its own
        s.warps = 0;
        if (o.looped_rows)
          looped_row_geometry(s, l.op, p);
        else
          finish_rowwise_spec(s, p);
        s.flops_per_element += w.extra_flops / static_cast<double>(s.rows * s.cols);  // fused epilogues
        kern.shape = shape_text({{"rows", s.rows}, {"cols", s.cols}});
        kern.flops = s.flops_per_element * static_cast<double>(s.rows * s.cols);
        sig << "rowwise " << s.name << " " << kern.shape << " " << kern.dtype << " in=" << s.row_inputs
            << " out=" << s.row_outputs << " vec=" << s.col_vectors << " flops=" << s.flops_per_element
            << " passes=" << s.loop_passes;
        kern.signature = sig.str();
        kern.candidates.push_back({(s.loop_passes > 0 ? "looped rows " + std::to_string(s.loop_passes) + " passes, " : "rows ") +
                                       std::to_string(s.warps) + " warps x " + std::to_string(s.programs_per_sm) + "/SM",
                                   single_rowwise_plan(s, p.num_sms)});
        if (reduction) {  // short rows: a thread per output, walking its row, is the faster schedule
          StreamKernelSpec t;
          t.name = "reduce";
          t.elements = s.rows;
          t.read_bytes = reads, t.write_bytes = writes;
          t.flops = static_cast<double>(s.rows * s.cols);
          kern.candidates.push_back({"thread per row, 4 warps", stream_plan(t, p)});
        } else if (!o.looped_rows && static_cast<double>(s.cols) * eb < 32 * 16) {
          // Rows shorter than a warp's 32 lanes of 16-byte loads: generated norms and softmax
          // (cuDNN's, Triton's under torch.compile) give a row a few lanes and a program many
          // rows, whose loads are in flight together; as one stream over the rows' bytes.
          StreamKernelSpec t;
          t.name = s.name;
          t.elements = s.rows * s.cols;
          t.read_bytes = reads, t.write_bytes = writes;
          t.flops = kern.flops;
          kern.candidates.push_back({"rows of a few lanes each, 4 warps", stream_plan(t, p)});
        }
        return;
      }
      default: {
        StreamKernelSpec s;
        s.name = kernel_class_name(kern.cls);
        s.elements = std::max<int64_t>(1, w.main_elems);
        s.read_bytes = reads;
        s.write_bytes = writes;
        if (kern.cls == KernelClass::Gather && l.inputs.size() >= 2)  // the rows it copies, not the whole table
          s.read_bytes = bytes(l.inputs[1]) + writes;
        if (l.op == OpKind::Slice && valid(out0(l)))  // the elements it copies, not its whole input
          s.read_bytes = std::min(s.read_bytes, bytes(out0(l)));
        if (kern.cls == KernelClass::Opaque) s.read_bytes = std::max<double>(0, static_cast<double>(l.opaque_bytes) - writes);
        s.flops = w.extra_flops;
        kern.flops = s.flops;
        kern.min_bytes = s.read_bytes + s.write_bytes;
        kern.shape = shape_text({{"elements", s.elements}});
        sig << kernel_class_name(kern.cls) << " " << kern.shape << " read=" << s.read_bytes << " write=" << s.write_bytes
            << " flops=" << s.flops;
        kern.signature = sig.str();
        kern.candidates.push_back({"stream 4 warps", stream_plan(s, p)});
        return;
      }
    }
  }
};

}  // namespace

LibraryPlan library_plan(const ir::Graph& g, const models::GpuParams& p, const LibraryOptions& o) {
  Builder b(g, p, o);
  b.run();
  return std::move(b.plan);
}

}  // namespace npusim::mapping

namespace npusim::mapping {

gpu::Program chain_programs(const std::vector<const gpu::Program*>& kernels,
                            std::vector<std::pair<size_t, size_t>>* pg_ranges,
                            std::vector<std::pair<size_t, size_t>>* ti_ranges) {
  gpu::Program out;
  out.source = "library plan";
  int64_t next_buffer = 0, next_tensor = 0;
  for (const gpu::Program* k : kernels) {
    out.architecture = k->architecture;
    const int64_t boff = next_buffer, toff = next_tensor;
    std::map<int64_t, int64_t> task_ids;
    for (const gpu::Buffer& b : k->buffers) {
      gpu::Buffer c = b;
      c.id += boff;
      next_buffer = std::max(next_buffer, c.id + 1);
      out.buffers.push_back(c);
    }
    const size_t ti_first = out.task_infos.size(), pg_first = out.processor_groups.size();
    for (const gpu::TaskInfo& t : k->task_infos) {
      gpu::TaskInfo c = t;
      c.id = static_cast<int64_t>(out.task_infos.size());
      task_ids[t.id] = c.id;
      for (gpu::Op& op : c.ops)
        for (auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
          for (gpu::Tensor& x : *list) {
            x.buffer_id += boff;
            x.id += toff;
            next_tensor = std::max(next_tensor, x.id + 1);
          }
      out.task_infos.push_back(std::move(c));
    }
    for (const gpu::ProcessorGroup& pg : k->processor_groups) {
      gpu::ProcessorGroup c = pg;
      for (gpu::ResourceGroup& rg : c.resource_groups)
        for (gpu::TaskGroup& tg : rg.task_groups) tg.task_id = task_ids.count(tg.task_id) ? task_ids[tg.task_id] : -1;
      out.processor_groups.push_back(std::move(c));
    }
    out.num_processors = std::max(out.num_processors, k->num_processors);
    out.num_warps_per_processor = std::max(out.num_warps_per_processor, k->num_warps_per_processor);
    if (pg_ranges) pg_ranges->emplace_back(pg_first, out.processor_groups.size());
    if (ti_ranges) ti_ranges->emplace_back(ti_first, out.task_infos.size());
  }
  std::sort(out.buffers.begin(), out.buffers.end(), [](const gpu::Buffer& a, const gpu::Buffer& b) { return a.id < b.id; });
  return out;
}

}  // namespace npusim::mapping
