// Measured kernel times for `sim gpu-calibrate` (docs/gpu.md#calibration): GEMM rows (M, N, K,
// ms, optionally the kernel's fixed tile and tile order), convolution rows (N, C, H, W, K, R, S,
// stride, pad, ms) and row-wise kernel rows (kind, M, N, dtype, tensors, flops, warps, ms).
// Every value is checked here; a bad one is an InputError naming the file and the JSON pointer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontends/json_util.h"
#include "sim/ir/gpu_program.h"

namespace npusim::frontends {

// A matmul tile as written "TMxTNxTK:WARPS[:STAGES]" (stages default 3).
struct TileText {
  int64_t tm = 0, tn = 0, tk = 0;
  int warps = 0, stages = 3;
};
// False unless `s` is such a tile with sizes 1..65536, 1..1024 warps and 2..64 stages.
bool parse_tile_text(const std::string& s, TileText* out);

struct GemmRow {
  int64_t m = 0, n = 0, k = 0;
  double measured_us = 0;
  std::string tile;     // the kernel's fixed tile ("" : the library chose; the best candidate stands in)
  int64_t group_m = 1;  // tile order: 1 row-major, G: Triton's grouped order (G tile rows at a time)
  std::string kind;     // what measured it ("gemm_triton", "gemm_cublas"), if the row says
  bool warp_mma = false;  // "mma": "mma.sync" (the kernel's PTX used warp-level MMA; "wgmma": warpgroup MMA)
  int64_t cluster_m = 1, cluster_n = 1;  // "cluster": "CMxCN", the kernel's thread-block cluster
  gpu::DataType dtype = gpu::DataType::FP16;  // "dtype": the operands' type (fp16 when absent)
  std::string pointer;  // "/rows/3"
};

// One convolution y = conv2d(x, w): x N x C x H x W, w K x C x R x S, no groups, no dilation.
struct ConvRow {
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, stride = 1, pad = 0;
  int64_t p = 0, q = 0;  // output height and width
  std::string layer;     // the row's name, if any
  std::string tile;      // the implicit GEMM's tile, when the kernel's name gave it ("": the best candidate)
  bool warp_mma = false; // "mma": "mma.sync" (cuDNN's Ampere kernels), "wgmma" (its Hopper ones)
  int64_t cluster_m = 1, cluster_n = 1;  // "cluster": "CMxCN" (implicit GEMM tiles along M x along N)
  std::string dtype_name;
  gpu::DataType dtype = gpu::DataType::FP16;
  double measured_us = 0;
  std::string pointer;
};

// One fused row-wise kernel: one program of `warps` warps per row of M x N (docs/gpu.md#
// memory-bound-kernels-held-out-data).
struct RowKernelRow {
  std::string kind;
  std::string dtype_name;  // as written: fp32, fp16, bf16
  gpu::DataType dtype = gpu::DataType::FP32;
  int64_t m = 0, n = 0;
  int row_inputs = 0, row_outputs = 1, col_vectors = 0, row_stats = 0;
  double flops_per_element = 0, transcendentals_per_element = 0;
  int warps = 1;
  double measured_us = 0;
  std::string pointer;  // "/rows/3", for messages about the row as a whole
};

// rows[]: M, N, K (1 .. 2^31) and ms (> 0); optional tile (as TileText), group_m (1 .. 2^20), kind,
// mma ("wgmma" or "mma.sync"), cluster ("CMxCN", at most 16 tiles), dtype (fp32, fp16, bf16, int8,
// fp8; fp16 when absent).
std::vector<GemmRow> parse_gemm_rows(const json::Json& doc, const std::string& source);
// rows[]: N, C, H, W, K, R, S (1 .. 2^20), stride (1 .. 64), pad (0 .. 64), dtype (fp32, fp16,
// bf16), ms (> 0), optional layer, tile (as TileText), mma and cluster; the kernel fits the padded input and the implicit GEMM's
// M = N x P x Q and K = C x R x S stay below 2^31.
std::vector<ConvRow> parse_conv_rows(const json::Json& doc, const std::string& source);
// rows[]: as RowKernelRow; warps 1 .. max_warps (the device's warps per block).
std::vector<RowKernelRow> parse_rowwise_rows(const json::Json& doc, const std::string& source, int max_warps);

}  // namespace npusim::frontends
