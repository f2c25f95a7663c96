// The library plan (docs/gpu_library.md): a workload of the IR run on a GPU as production
// stacks run it (cuBLAS / cuDNN / TensorRT / FlashAttention / torch.compile). Each IR op, or each
// group of ops such a stack fuses, becomes one kernel:
//   gemm / conv     a tile chosen by the candidate search `sim gpu-calibrate` validates (split-K,
//                   stream-K), with its epilogue fused: bias, activation, residual add, (de)quantize
//   depthwise       depthwise and narrow grouped convolutions, a streaming kernel of their own
//   attention       QK^T, scale, mask, softmax and PV as one FlashAttention kernel (causal tiles
//                   skipped; flash-decoding splits the keys of a short query)
//   rowwise         softmax, layer_norm, rms_norm: one program per row (gpu-calibrate --ops)
//   elementwise     a connected group of element-wise and layout ops: one vectorized kernel
//                   that reads what enters the group and writes what leaves it
//   pool, reduce, gather, copy, opaque: one streaming kernel each
// Reshapes are views (no kernel). Without fusion (`--fusion off`, PyTorch eager) every op is a
// kernel of its own and only a GEMM's bias is fused (cuBLASLt's epilogue).
// Each kernel is a small gpu::Program (the single-kernel plans of gpu_default_plan.h); the engine
// simulates each distinct one once (sim/engine/gpu_engine.h: simulate_kernels) and
// launch_timeline() strings the kernels together in graph or eager launch mode. No SystemC here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu/gpu_timing.h"
#include "sim/ir/gpu_program.h"
#include "sim/ir/graph.h"
#include "sim/mapping/gpu_default_plan.h"

namespace npusim::mapping {

enum class LaunchMode { Graph, Eager };
const char* launch_mode_name(LaunchMode m);  // "graph", "eager"

struct LibraryOptions {
  bool fuse = true;    // false: one kernel per IR op (PyTorch eager), a GEMM's bias still fused
  bool tf32 = false;   // fp32 GEMMs on the tensor cores as TF32 (default: FFMA on the CUDA cores)
  // Softmax and norms as looped kernels, a thread block walking its row in passes (PyTorch's
  // native kernels, vLLM's rms_norm), instead of one pass with the row in registers (Triton,
  // Liger, TensorRT). docs/gpu_library.md#looped-row-kernels
  bool looped_rows = false;
  LaunchMode launch = LaunchMode::Graph;
};

enum class KernelClass { Gemm, Conv, Depthwise, Attention, RowWise, Elementwise, Pool, Reduce, Gather, Copy, Opaque };
const char* kernel_class_name(KernelClass c);  // "gemm", "conv", ...

// One candidate way to run a kernel: its plan and what to call it in reports.
struct KernelCandidate {
  std::string schedule;  // "128x256x64:8:3 split-K 2", "rows 4 warps x 16/SM", "flash 128x64:4"
  gpu::Program program;
};

struct LibraryKernel {
  std::string name;                   // the first IR op it covers
  KernelClass cls = KernelClass::Elementwise;
  std::vector<std::string> ir_ops;    // every IR op it covers (views included), in graph order
  std::string shape;                  // "M=512 N=768 K=768", "rows=512 cols=768", "elements=393216"
  std::string signature;              // kernels with equal signatures run alike: simulated once
  std::vector<KernelCandidate> candidates;  // the fastest runs (a library's heuristic picks it)
  double macs = 0;                    // useful multiply-accumulates (GEMMs, convolutions, attention)
  double flops = 0;                   // useful arithmetic (2 x macs for the matrix kernels)
  double min_bytes = 0;               // what enters and leaves the kernel once: the bandwidth bound
  std::string dtype;                  // of its main input: "fp16", "int8" ...
};

struct LibraryPlan {
  std::string source;
  LibraryOptions options;
  std::vector<LibraryKernel> kernels;  // in launch order
  std::vector<std::string> free_ops;   // views with no kernel to attach to
};

// The kernels of g (every op runs on the GPU, whatever its device). InputError naming the op for
// shapes a kernel cannot express.
LibraryPlan library_plan(const ir::Graph& g, const models::GpuParams& p, const LibraryOptions& o);

// ---- the kernel classes' plans, shared with `sim gpu-calibrate` ----

// One GEMM problem as the candidate search sees it.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  int64_t a_rows = 0;          // implicit GEMM: rows of A in memory (its input), 0: m
  bool b_shared = false;       // batched: one B for every batch (a weight)
  int64_t group_m = 1;
  bool warp_mma = false;
  int64_t cluster_m = 1, cluster_n = 1;
  gpu::DataType dtype = gpu::DataType::FP16, out_dtype = gpu::DataType::FP16;
  bool simt = false;
  double epilogue_read_bytes = 0;
};

// The default candidate tiles (gpu-calibrate's, docs/gpu.md#calibration): ten tiles, five split-K
// variants and two stream-K ones; the filter below drops those that cannot run a problem. A K
// step moves 128-byte rows of each operand, as the libraries' tiles do: TK = 64 fp16 elements,
// 128 of a 1-byte type, 32 of fp32.
std::vector<MatmulPlanSpec> default_gemm_tiles(gpu::DataType dtype = gpu::DataType::FP16);
std::string gemm_tile_name(const MatmulPlanSpec& t);  // "128x256x64:8:3 split-K 2"
// The plan of problem g on tile t, or nullopt when the tile cannot run it: its stages do not fit
// the shared memory, a split that does not divide K into whole steps (or of an implicit or
// batched GEMM), stream-K off Hopper or where the tiles do not fill the SMs.
std::optional<gpu::Program> gemm_plan(const GemmProblem& g, MatmulPlanSpec t, const models::GpuParams& p);

// Liger-Kernel's launch of a row-wise kernel: warps from the row's power-of-two block (4; 8 from
// 2048, 16 from 8192, 32 from 32768 elements, at most max_warps_per_block); programs per SM from
// the registers each thread's share of the row takes. Fills s.warps (when 0) and s.programs_per_sm.
void finish_rowwise_spec(RowKernelSpec& s, const models::GpuParams& p);

// A GPU without fp8 tensor cores (gpu.tensor_tflops.fp8 = 0) cannot run an fp8 workload: an
// InputError naming the config's key and the workload's first fp8 op. Any plan calls it first.
void require_gpu_dtypes(const ir::Graph& g, const models::GpuParams& p, const std::string& hw_source);

// The looped kernel a framework launches for softmax, layer_norm or rms_norm (one thread block a
// row; docs/gpu_library.md#looped-row-kernels): fills s.warps, s.programs_per_sm, s.loop_passes,
// s.loop_iters, s.reduce_steps and, for those three ops, s.flops_per_element (the arithmetic the
// kernel issues) from the op, s.rows, s.cols, s.dtype and the inputs.
void looped_row_geometry(RowKernelSpec& s, ir::OpKind op, const models::GpuParams& p);

// A streaming kernel over `elements` outputs: 4-warp programs, each a contiguous share of the
// reads, writes and flops (as PyTorch's vectorized element-wise kernels and cuDNN's pooling and
// depthwise kernels stream), at most num_sms x 16 x 8 programs.
struct StreamKernelSpec {
  std::string name = "stream";
  int64_t elements = 1;
  double read_bytes = 0, write_bytes = 0, flops = 0;
};
gpu::Program stream_plan(const StreamKernelSpec& s, const models::GpuParams& p);

// FlashAttention: queries [batch, sq, d] against keys / values [batch, skv, d].
struct AttentionProblem {
  int64_t batch = 1, sq = 1, skv = 1, d = 64;
  int64_t dk = 0;          // query/key head dim when it differs from the value's d (MLA: 192 and 128); 0: d
  bool causal = false;
  bool shared_kv = false;  // the values are the keys (MLA's absorbed decode over the latent cache)
  int64_t kv_group = 1;    // query heads per K/V head (grouped-query attention; batch counts query heads)
  gpu::DataType dtype = gpu::DataType::FP16;
};
// Empty when no tile of the head dim fits the shared memory.
std::vector<KernelCandidate> attention_candidates(const AttentionProblem& a, const models::GpuParams& p);

// What the engine measured of one kernel plan (sim/engine/gpu_engine.h: simulate_kernels).
struct KernelSim {
  double span_us = 0;  // first task to last task
  double hbm_bytes = 0, l2_bytes = 0, flops = 0;
  std::string bound = "-";  // models::limiter_name of the term that decided most of its tasks' time
  double bound_share = 0;
};

// ---- launch ----

// Kernel i runs span_us[i]. Graph: back to back, gap_us apart, the first launch_us after the
// start. Eager: the host launches kernel i at i x host_us; it starts launch_us later, or gap_us
// after the previous one ends, whichever is later (docs/gpu_library.md#launch-modes).
struct Timeline {
  std::vector<double> start_us, end_us;
  double total_us = 0;
};
Timeline launch_timeline(const std::vector<double>& span_us, LaunchMode mode, double launch_us, double gap_us,
                         double host_us);

}  // namespace npusim::mapping

namespace npusim::mapping {

// Kernels one after the other in one plan (buffers, tensors and TaskInfos renumbered, costs kept):
// every processor group overlaps the previous one, so a barrier separates each kernel from the
// next. pg_ranges[i]: [first, last) processor groups of kernels[i]; ti_ranges[i] likewise for
// TaskInfos.
gpu::Program chain_programs(const std::vector<const gpu::Program*>& kernels,
                            std::vector<std::pair<size_t, size_t>>* pg_ranges,
                            std::vector<std::pair<size_t, size_t>>* ti_ranges);

}  // namespace npusim::mapping
