// ARK's DefaultPlanner (ark/api/planner.cpp at d8bbaebd), for `sim --model M --hw H` without a
// plan: one TaskInfo per non-virtual op in node order with the op's default Config; one
// processor group per op over [0, min(#SM, NumTasks)) with a single resource group (warps
// [0, NumWarps), SRAM [0, SramBytes)) and one task group [0, NumTasks) of granularity 1.
// Consecutive groups overlap, so the codegen puts a barrier between every two ops.
// NumProcessors is the largest group end, NumWarpsPerProcessor the largest NumWarps.
// Ops with no task (Noop) get no processor group (ARK's would be empty and is skipped).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "sim/ir/gpu_program.h"

namespace npusim::mapping {

// The op's default Config on an architecture ("CUDA_80", "CUDA_90", "ROCM_942"): the
// per-op-type default_config() of ARK's ops (notes/format_notes.md §1.3).
gpu::OpConfig default_op_config(const gpu::Op& op, const std::string& arch);

// The default plan of a model for a GPU with num_sms processors.
gpu::Program default_plan(const gpu::Model& m, int num_sms, const std::string& arch);

// A plan with one Matmul C[M,N] = A[M,K] x B[K,N] (row-major, fresh buffers): one task per
// TM x TN tile over [0, min(num_sms, tasks)) processors; NumWarpsPerProcessor warps per
// processor hold as many slots of `warps` warps as sram_bytes allows in the SM's shared memory
// (models::blocks_by_smem of sm_smem_bytes).
// Used by `sim gpu-calibrate` to stand in for a library GEMM.
struct MatmulPlanSpec {
  int64_t m = 0, n = 0, k = 0;
  gpu::DataType dtype = gpu::DataType::FP16;
  int64_t tm = 128, tn = 256, tk = 64;
  int warps = 8;
  int stages = 3;              // pipeline depth the slot's SRAM holds (sram_bytes = stages x stage)
  int64_t sram_bytes = 147456;
  int warps_per_processor = 8;
  int64_t slots = 0;           // tiles per processor at once; 0: as many as warps and shared memory allow
  int64_t a_rows = 0;          // rows of A in memory (0: m); fewer for an implicit GEMM, whose A is its input
  int64_t group_m = 1;         // tile order: 1 row-major (ARK), G: G tile rows walked column by column (Triton)
  bool warp_mma = false;       // the kernel uses warp-level mma.sync (not Hopper's warpgroup MMA)
  int64_t cluster_m = 1, cluster_n = 1;  // thread-block cluster: tiles along M / N that multicast B / A
  int64_t split_k = 1;         // > 1: K split in that many parts (dividing K), fp32 partials summed by a second op
  bool stream_k = false;       // a persistent kernel: one worker per slot shares the tiles' K steps (docs/gpu.md#stream-k)
  int64_t sum_programs_per_sm = 8;  // the sum's 4-warp programs an SM holds at once
  // The library plan's (sim/mapping/gpu_library.h):
  int64_t batch = 1;           // independent GEMMs of one shape (a batched matmul); not with split-K or stream-K
  bool b_shared = false;       // batched: every GEMM reads the same B (a weight)
  std::optional<gpu::DataType> out_dtype;  // C's type (default: dtype)
  bool simt = false;           // FFMA on the CUDA cores (fp32 without TF32)
  double epilogue_read_bytes = 0;  // per C element, read by the fused epilogue (a residual)
  // FlashAttention (docs/gpu_library.md#attention): m query rows, n = head dim, k keys, batch = batch x
  // heads; tile tm queries x tk keys. Tensors: Q, K, V read, O written.
  bool attention = false, causal = false, softmax_overlap = false;
  bool shared_kv = false;      // K and V one tensor (MLA): read once

};
gpu::Program single_matmul_plan(const MatmulPlanSpec& s, int num_sms, int64_t sm_smem_bytes);

// A plan with one fused row-wise kernel over an M x N problem, launched the way Triton's norm
// and activation kernels are (Liger's layer_norm, rms_norm, swiglu...): one program of `warps`
// warps per row, its whole row in registers, so every tensor is read and written once.
// Tensors: `row_inputs` M x N tensors read, `row_outputs` written, `col_vectors` N-long vectors
// every program reads (norm weights), `row_stats` M-long fp32 vectors written (mean, rstd; a
// row reduction's result, with no row output).
// Programs go to the SMs round-robin, `programs_per_sm` at once. Used by `sim gpu-calibrate
// --ops` to stand in for a measured kernel.
struct RowKernelSpec {
  std::string name = "rowwise";
  int64_t rows = 0, cols = 0;
  gpu::DataType dtype = gpu::DataType::FP32;
  int row_inputs = 1, row_outputs = 1, col_vectors = 0, row_stats = 0;
  double flops_per_element = 1;  // fp32 arithmetic per element (a transcendental counts as gpu.transcendental_flops)
  int warps = 4;
  int64_t programs_per_sm = 1;
  // A looped kernel instead (one thread block walks its row in passes; OpConfig::row_loop_*):
  // 0 passes is the one-pass kernel above.
  int loop_passes = 0;
  int64_t loop_iters = 0;
  int reduce_steps = 0;      // warp shuffles of its reductions
  int reduce_exchanges = 0;  // exchanges between warps through shared memory
};
gpu::Program single_rowwise_plan(const RowKernelSpec& s, int num_sms);

// ARK's Dims::dims4(): the last 4 dimensions, padded in front with 1s.
std::array<int64_t, 4> dims4(const gpu::Dims& d);

}  // namespace npusim::mapping
