// Measured kernel times for `sim gpu-calibrate` (docs/gpu.md#calibration): GEMM rows (M, N, K,
// ms) and row-wise kernel rows (kind, M, N, dtype, tensors, flops, warps, ms). Every value is
// checked here; a bad one is an InputError naming the file and the JSON pointer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontends/json_util.h"
#include "sim/ir/gpu_program.h"

namespace npusim::frontends {

struct GemmRow {
  int64_t m = 0, n = 0, k = 0;
  double measured_us = 0;
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

// rows[]: M, N, K (1 .. 2^31) and ms (> 0).
std::vector<GemmRow> parse_gemm_rows(const json::Json& doc, const std::string& source);
// rows[]: as RowKernelRow; warps 1 .. max_warps (the device's warps per block).
std::vector<RowKernelRow> parse_rowwise_rows(const json::Json& doc, const std::string& source, int max_warps);

}  // namespace npusim::frontends
