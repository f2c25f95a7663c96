// `sim gpu-calibrate` (docs/gpu.md#calibration): measured single-kernel times (GEMMs, implicit-GEMM
// convolutions, row-wise kernels; configs/calibration/) against the GPU model's predictions. Each
// kernel becomes a one-kernel ARK plan simulated through run::run in a forked child; a GEMM row
// without its own tile takes the fastest of the candidate tiles, as the library plan chooses.
#pragma once
#include <string>
#include <vector>

namespace npusim::run {

struct CalibrateOptions {
  std::string hw = "configs/gpu_h100.yaml";
  std::vector<std::string> sets;  // --set overrides of hw
  std::string gemm, conv, ops;    // exactly one: the measured rows (JSON)
  std::vector<std::string> tiles; // candidate tiles TMxTNxTK:WARPS[:STAGES] (empty: the library plan's)
  int jobs = 0;                   // simulations in parallel (0: one per core)
};

// Prints the measured-vs-predicted table and the error summaries (median and worst |error|,
// per kind of row) on stdout and returns the comparison as CSV. InputError for bad rows or options.
std::string calibrate_gpu(const CalibrateOptions& o);

}  // namespace npusim::run
