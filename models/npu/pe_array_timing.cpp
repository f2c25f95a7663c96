// Timing formulas of the PE array (docs/timing.md#pe-array).
#include "models/npu/pe_array_timing.h"

#include <algorithm>
#include <cmath>

namespace npusim::models {

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

PeArrayParams PeArrayParams::read(const config::HwConfig& c) {
  PeArrayParams p;
  config::read_bound(p, c, params());  // every npu.pe_array key is bound to its field
  return p;
}

double PeArrayParams::macs_per_pe_cycle(ir::DType t) const {
  switch (t) {
    // 8-bit floats take the int8 datapath's rate (one-byte operands, as on NPUs that support fp8).
    case ir::DType::Int8: case ir::DType::UInt8: case ir::DType::Float8E4M3: case ir::DType::Float8E5M2:
      return macs_per_pe_cycle_int8;
    case ir::DType::Float16: case ir::DType::BFloat16: case ir::DType::Int16: return macs_per_pe_cycle_fp16;
    default: return macs_per_pe_cycle_fp32;
  }
}

static int64_t bytes_cycles(int64_t bytes, double per_cycle) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / per_cycle));
}

double pe_group_split_factor(const PeArrayParams& p, const PeTile& t) {
  const int64_t g = p.pe_groups;
  if (g <= 1) return 1;
  // Splitting an axis of extent d over g groups: the busiest group does ceil(d/g) of the d/g.
  auto idle = [g](int64_t d) { return d <= 0 ? 1.0 : static_cast<double>(g * ceil_div(d, g)) / static_cast<double>(d); };
  double best;
  if (t.n > 0 && t.h > 0 && t.w > 0)
    best = std::min({idle(t.n), idle(t.h), idle(t.w)});
  else
    best = idle(t.pixels);
  best = std::min(best, idle(ceil_div(t.k, p.rows)));  // K blocks of `rows` channels
  const int64_t lanes = std::max<int64_t>(1, p.cols / g);  // reduction lanes of one group
  const int64_t c_pad = ceil_div(t.c, p.channel_align) * p.channel_align;
  const int64_t c_units = ceil_div(c_pad, lanes);
  if (ceil_div(c_units, g) * t.r * t.s >= p.c_split_min_cycles) best = std::min(best, idle(c_units));
  return best;
}

PeTiming pe_tile_timing(const PeArrayParams& p, const PeTile& t) {
  PeTiming r;
  const int64_t reduction = t.c * t.r * t.s;  // output stationary streams it unpadded
  // A PE that does m MACs per cycle streams one operand every 1/m cycles.
  const double cycles_per_mac = 1.0 / p.macs_per_pe_cycle(t.dtype);
  const int64_t fill = p.rows + p.cols - 2;  // systolic fill + drain, once per tile
  int64_t per_group = 0;
  if (p.dataflow == Dataflow::WeightStationary) {
    // Weights of one K block sit in the array while every output pixel streams by; the
    // reduction (channels padded to channel_align, times the kernel) is packed onto the
    // columns, so a K block takes P * red / cols cycles. Loading the next block's weights
    // overlaps streaming, but a block is never shorter than its weight load. Fill and drain
    // of the systolic pipeline are paid once per tile: consecutive blocks follow back to back.
    const int64_t k_folds = ceil_div(t.k, p.rows);
    const int64_t c_pad = ceil_div(t.c, p.channel_align) * p.channel_align;
    // Without window packing each of the R x S positions folds its channels alone.
    const int64_t red_pad = p.window_packing ? c_pad * t.r * t.s : t.r * t.s * ceil_div(c_pad, p.cols) * p.cols;
    const int64_t red_folds = ceil_div(red_pad, p.cols);
    // pe_groups > 1: the groups split one axis of the tile; groups left idle stretch the stream.
    r.group_split = pe_group_split_factor(p, t);
    double stream_d = static_cast<double>(t.pixels) * red_pad / p.cols * cycles_per_mac;
    if (p.pe_groups > 1) stream_d = stream_d * r.group_split - 1e-9;  // the product of a ratio can land a hair above an integer
    const auto stream = static_cast<int64_t>(std::ceil(stream_d));
    const int64_t k_block_weight_bytes = ceil_div(t.weight_bytes, std::max<int64_t>(1, k_folds * t.groups));
    const int64_t k_block = std::max(stream, bytes_cycles(k_block_weight_bytes, p.weight_read_bytes_per_cycle));
    r.folds = k_folds * red_folds * t.groups;
    per_group = k_folds * k_block;
    r.act_cycles = bytes_cycles(t.in_bytes * k_folds, p.act_read_bytes_per_cycle);
  } else {
    // Output stationary: rows hold output pixels, cols hold output channels; the reduction streams.
    const int64_t px_folds = ceil_div(t.pixels, p.rows);
    const int64_t k_folds = ceil_div(t.k, p.cols);
    const int64_t stream = static_cast<int64_t>(std::ceil(reduction * cycles_per_mac));
    r.folds = px_folds * k_folds * t.groups;
    per_group = px_folds * k_folds * stream;
    r.act_cycles = bytes_cycles(t.in_bytes * k_folds, p.act_read_bytes_per_cycle);
  }
  r.compute_cycles = per_group * t.groups + fill + r.folds * p.fold_overhead_cycles;
  r.out_cycles = bytes_cycles(t.out_bytes, p.out_write_bytes_per_cycle);
  r.total_cycles = p.tile_setup_cycles + std::max({r.compute_cycles, r.act_cycles, r.out_cycles});
  return r;
}

}  // namespace npusim::models
