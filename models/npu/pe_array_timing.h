// PE array timing: pure formulas, no SystemC. See docs/timing.md#pe-array.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/ir/dtype.h"

namespace npusim::models {

enum class Dataflow { WeightStationary, OutputStationary };

struct PeArrayParams {
  int64_t rows = 64;  // K lanes
  int64_t cols = 64;  // reduction lanes
  Dataflow dataflow = Dataflow::WeightStationary;
  double macs_per_pe_cycle_int8 = 1, macs_per_pe_cycle_fp16 = 0.5, macs_per_pe_cycle_fp32 = 0.125;
  int64_t fold_overhead_cycles = 0;
  int64_t channel_align = 1;  // input channels are padded to a multiple of this on the columns
  int64_t tile_setup_cycles = 84;
  double act_read_bytes_per_cycle = 64;
  double weight_read_bytes_per_cycle = 32;
  double out_write_bytes_per_cycle = 32;
  int64_t pe_groups = 1;           // groups that split one axis of a tile (1: no split)
  int64_t c_split_min_cycles = 1;  // a C split keeps at least this many reduction steps per pixel
  // Weight stationary: the kernel window's positions share the columns with the channels
  // (im2col); false: each position is a pass of its own over ceil(C / cols) folds (Gemmini, ONNXim).
  bool window_packing = true;

  // The npu.pe_array.* keys: the one place their defaults and ranges are written, each bound to
  // its field (config::bind); the member initializers above repeat the defaults for tests that
  // build the struct by hand, and a test checks that they agree.
  static const std::vector<config::ParamDecl>& params();
  static PeArrayParams read(const config::HwConfig& c);  // reads only the keys of params()
  double macs_per_pe_cycle(ir::DType t) const;
  double peak_macs_per_cycle(ir::DType t) const { return rows * cols * macs_per_pe_cycle(t); }
};

// In the header, not pe_array_timing.cpp: sim/config assembles the schema from the units'
// declarations without linking the units.
inline const std::vector<config::ParamDecl>& PeArrayParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"npu.pe_array.rows", T::Int, "64", "PEs", "rows: output channels (K) mapped in parallel", {}, r::count, config::bind(&PeArrayParams::rows)},
      {"npu.pe_array.cols", T::Int, "64", "PEs", "columns: reduction lanes (C*R*S) in parallel", {}, r::count, config::bind(&PeArrayParams::cols)},
      {"npu.pe_array.dataflow", T::String, "weight_stationary", "",
       "weight_stationary: weights held, output pixels streamed; output_stationary: outputs held, reduction streamed",
       {"weight_stationary", "output_stationary"}, r::none, config::bind_choice(&PeArrayParams::dataflow, {{"weight_stationary", Dataflow::WeightStationary}, {"output_stationary", Dataflow::OutputStationary}})},
      {"npu.pe_array.macs_per_pe_cycle.int8", T::Double, "1", "MAC/PE/cycle", "int8 throughput per PE", {}, r::rate, config::bind(&PeArrayParams::macs_per_pe_cycle_int8)},
      {"npu.pe_array.macs_per_pe_cycle.fp16", T::Double, "0.5", "MAC/PE/cycle", "fp16/bf16 throughput per PE", {}, r::rate, config::bind(&PeArrayParams::macs_per_pe_cycle_fp16)},
      {"npu.pe_array.macs_per_pe_cycle.fp32", T::Double, "0.125", "MAC/PE/cycle", "fp32 throughput per PE", {}, r::rate, config::bind(&PeArrayParams::macs_per_pe_cycle_fp32)},
      {"npu.pe_array.fold_overhead_cycles", T::Int, "0", "cycles",
       "extra cycles per fold (one K block x one reduction block of cols)", {}, r::delay, config::bind(&PeArrayParams::fold_overhead_cycles)},
      {"npu.pe_array.channel_align", T::Int, "1", "channels",
       "input channels are padded to a multiple of this when packed onto the columns", {}, r::count, config::bind(&PeArrayParams::channel_align)},
      {"npu.pe_array.tile_setup_cycles", T::Int, "84", "cycles", "per PE tile: the pe_cfg_* instructions before a pe_conv", {}, r::delay, config::bind(&PeArrayParams::tile_setup_cycles)},
      {"npu.pe_array.act_read_bytes_per_cycle", T::Double, "64", "B/cycle",
       "input activations from L2 into the array (re-read once per K fold)", {}, r::rate, config::bind(&PeArrayParams::act_read_bytes_per_cycle)},
      {"npu.pe_array.weight_read_bytes_per_cycle", T::Double, "32", "B/cycle",
       "weights from the weight buffer into the array; a fold cannot be shorter than its weight load", {}, r::rate, config::bind(&PeArrayParams::weight_read_bytes_per_cycle)},
      {"npu.pe_array.out_write_bytes_per_cycle", T::Double, "32", "B/cycle", "results from the array back to L2", {}, r::rate, config::bind(&PeArrayParams::out_write_bytes_per_cycle)},
      {"npu.pe_array.pe_groups", T::Int, "1", "groups",
       "weight stationary: the columns form this many groups that split one axis of a tile (output N, H or W, "
       "K blocks, or input channels), the one that leaves the fewest groups idle; 1: no split (docs/timing.md#pe-array)",
       {}, r::count, config::bind(&PeArrayParams::pe_groups)},
      {"npu.pe_array.c_split_min_cycles", T::Int, "1", "cycles",
       "groups split the input channels only if each group keeps at least this many reduction steps per output "
       "pixel: ceil(ceil(C / (cols / pe_groups)) / pe_groups) x R x S",
       {}, r::count, config::bind(&PeArrayParams::c_split_min_cycles)},
      {"npu.pe_array.window_packing", T::Bool, "true", "",
       "weight stationary: pack the kernel window's positions with the channels onto the columns (im2col); false: "
       "each position is a pass of its own over ceil(C_pad / cols) folds (Gemmini-style arrays, ONNXim)", {}, r::none, config::bind(&PeArrayParams::window_packing)},
  };
  return decls;
}

// One PE command: a convolution (or dense = 1x1 conv on 1x1 pixels) over an output tile.
struct PeTile {
  int64_t k = 1;        // output channels of the tile (per group)
  int64_t c = 1;        // input channels per group
  int64_t r = 1, s = 1; // kernel
  int64_t pixels = 1;   // output pixels in the tile: N * Ho * Wo
  int64_t groups = 1;   // grouped conv: each group is a separate pass
  int64_t n = 0, h = 0, w = 0;  // output images, rows per image, columns (0: unknown, pixels is one axis)
  int64_t in_bytes = 0;      // input activation bytes the tile reads
  int64_t out_bytes = 0;     // output bytes the tile writes
  int64_t weight_bytes = 0;  // weight bytes the tile uses
  ir::DType dtype = ir::DType::Int8;
  int64_t macs() const { return k * c * r * s * pixels * groups; }
};

struct PeTiming {
  int64_t folds = 0;           // K blocks x reduction blocks (x groups)
  double group_split = 1;      // pe_groups: streaming time / the time with every group busy (>= 1)
  int64_t compute_cycles = 0;  // folds streamed through the array, incl. fill/drain
  int64_t act_cycles = 0;      // input reads (per K fold)
  int64_t out_cycles = 0;      // output writes
  int64_t total_cycles = 0;    // setup + max(compute, act, out)
};

PeTiming pe_tile_timing(const PeArrayParams& p, const PeTile& t);

// pe_groups > 1: the factor the best split of the tile over the groups stretches its streaming
// time by (docs/timing.md#pe-array); 1 when pe_groups is 1.
double pe_group_split_factor(const PeArrayParams& p, const PeTile& t);

int64_t ceil_div(int64_t a, int64_t b);

}  // namespace npusim::models
