// Tiling functions of the NPU mapping (sim/mapping/tiling.h, docs/mapping.md).
#include "sim/mapping/tiling.h"

#include <algorithm>
#include <cmath>

#include "models/npu/pe_array_timing.h"

namespace npusim::mapping {

using ir::Layer;
using ir::Shape;

int64_t bytes_of(const Shape& s, ir::DType t) { return ir::num_elements(s) * ir::dtype_bytes(t); }

Nchw nchw(const Shape& s) {
  Nchw r;
  if (s.size() >= 1) r.n = s[0];
  if (s.size() >= 2) r.c = s[1];
  if (s.size() >= 3) r.h = s[2];
  if (s.size() >= 4) r.w = s[3];
  if (s.size() > 4)
    for (size_t i = 4; i < s.size(); ++i) r.w *= s[i];
  return r;
}


// The shapes the PE array sees for a matmul: a 1x1 convolution. MatMul with a shared [K,N]
// operand: [M_total, K, 1, 1] x [N, K, 1, 1]; a batched operand: a grouped 1x1 convolution
// with one group per batch element, rows of M as pixels (docs/mapping.md#matmuls-on-the-pe-array).
Layer gemm_view(const Layer& l) {
  Layer v = l;
  const Shape &a = l.input_shapes[0], &b = l.input_shapes[1], &y = l.output_shapes[0];
  const int64_t m = y[y.size() - 2], n = y.back();
  const int64_t k = l.transpose_a ? a[a.size() - 2] : a.back();
  const int64_t groups = ir::num_elements(y) / (m * n);
  if (b.size() == 2) {
    v.input_shapes[0] = {groups * m, k, 1, 1};
    v.input_shapes[1] = {n, k, 1, 1};
    v.output_shapes[0] = {groups * m, n, 1, 1};
    v.groups = 1;
  } else {
    v.input_shapes[0] = {1, groups * k, m, 1};
    v.input_shapes[1] = {groups * n, k, 1, 1};
    v.output_shapes[0] = {1, groups * n, m, 1};
    v.groups = static_cast<int>(groups);
  }
  if (v.input_shapes.size() > 2) v.input_shapes[2] = {n};
  return v;
}

// Elements of a tensor as the VP vectorizes them: `channels` along a vector, `pixels` vectors'
// worth of positions. NCHW tensors of the Frontend IR's ops vectorize C; others the last dim.
std::pair<int64_t, int64_t> vp_extent(const Shape& s, bool nchw_layout) {
  if (nchw_layout) {
    const Nchw d = nchw(s);
    return {d.c, d.n * d.h * d.w};
  }
  const int64_t e = ir::num_elements(s);
  const int64_t last = s.empty() || s.back() == 1 ? e : s.back();
  return {last, e / std::max<int64_t>(1, last)};
}

// Row tiles run over output rows N x Ho for the Frontend IR's (NCHW, window) ops and the PE
// array's views; every other op over the rows of its larger tensor (every dim but the last),
// so a reduction to one row still tiles over its input.
bool window_rows(const Layer& l) { return ir::is_frontend_ir_native(l.op) || ir::runs_on_pe_array(l.op); }

int64_t row_count(const Layer& l) {
  const Shape& out = l.output_shapes.empty() ? Shape{1} : l.output_shapes[0];
  if (window_rows(l)) {
    const Nchw on = nchw(out);
    return on.n * on.h;
  }
  auto rows = [](const Shape& s) { return s.size() < 2 ? int64_t{1} : ir::num_elements(s) / s.back(); };
  return std::max<int64_t>(1, std::max(rows(out), l.input_shapes.empty() ? 1 : rows(l.input_shapes[0])));
}

// Elements in one normalized row (softmax axis, layer_norm trailing axes, reduced axes).
int64_t row_length(const Layer& l) {
  const Shape& x = l.input_shapes[0];
  std::vector<int64_t> axes = l.axes;
  if (axes.empty()) axes = {-1};
  int64_t len = 1;
  for (int64_t a : axes) len *= x[a < 0 ? a + static_cast<int64_t>(x.size()) : a];
  return std::max<int64_t>(1, len);
}

int64_t stream_rows(const Layer& l) {
  if (ir::runs_on_pe_array(l.op) || l.output_shapes.empty() || l.input_shapes.empty()) return 0;
  const Shape& out = l.output_shapes[0];
  const Shape& in = l.input_shapes[0];
  switch (ir::op_class(l.op)) {
    case ir::OpClass::Elementwise: case ir::OpClass::Quantization: case ir::OpClass::DataMovement:
      return std::max(ir::num_elements(out), ir::num_elements(in));
    case ir::OpClass::Normalization: case ir::OpClass::Reduction:
      return std::max<int64_t>(1, ir::num_elements(in) / row_length(l));
    case ir::OpClass::Window: {
      const Nchw o = nchw(out);
      if (o.h == 1 && o.w == 1) return o.n * o.c;  // a global pool: every channel on its own
      return 0;
    }
    default: return 0;
  }
}

int64_t tile_stream_bytes(const Layer& l, int64_t rows, int64_t dram_in, int64_t out_stream,
                          int64_t total_rows, bool proportional) {
  const double frac = static_cast<double>(rows) / static_cast<double>(std::max<int64_t>(1, total_rows));
  int64_t in_part = static_cast<int64_t>(std::ceil(dram_in * frac));
  if (!proportional && dram_in > 0 && !l.input_shapes.empty() && !l.output_shapes.empty() && window_rows(l)) {
    const Nchw in = nchw(l.input_shapes[0]), out = nchw(l.output_shapes[0]);
    if (rows < out.h) {  // rows of one image: add the window halo
      const int64_t in_rows = std::min<int64_t>(in.h, (rows - 1) * l.stride[0] + std::max(l.kernel[0], l.pool[0]));
      in_part = std::min(dram_in, static_cast<int64_t>(std::ceil(dram_in * static_cast<double>(in_rows) / (in.h * in.n))));
    }
  }
  return in_part + static_cast<int64_t>(std::ceil(out_stream * frac));
}


std::optional<RowTiling> plan_row_tiles(const Layer& l, int64_t fixed, int64_t capacity, int64_t dram_in,
                                        int64_t out_stream, int64_t total_rows, bool proportional) {
  const int64_t stream_total = dram_in + out_stream;
  if (fixed > capacity) return std::nullopt;
  const int64_t space = capacity - fixed;
  const int64_t given = proportional ? total_rows : 0;  // a streamed split keeps its row count
  if (stream_total == 0) return RowTiling{1, total_rows, given, proportional};
  for (int64_t t = 1; t <= total_rows; t = (t < total_rows && t * 2 > total_rows) ? total_rows : t * 2) {
    const int64_t rows = models::ceil_div(total_rows, t);
    // A tile's input includes its halo rows: (rows-1)*stride + kernel per image.
    const int64_t per_tile = tile_stream_bytes(l, rows, dram_in, out_stream, total_rows, proportional);
    if (2 * per_tile <= space) return RowTiling{models::ceil_div(total_rows, rows), rows, given, proportional};
    if (t == total_rows) break;
  }
  return std::nullopt;
}

int64_t k_chunk_size(int64_t weight_bytes, int64_t weight_store, int64_t bytes_per_k, int64_t k_total, int64_t groups,
                     int64_t pe_rows) {
  int64_t k_chunk = k_total;
  if (weight_bytes > weight_store / 2 && groups == 1) {
    k_chunk = std::max<int64_t>(1, (weight_store / 2) / std::max<int64_t>(1, bytes_per_k));
    if (k_chunk >= pe_rows) k_chunk -= k_chunk % pe_rows;
    k_chunk = std::min(k_chunk, k_total);
  }
  return k_chunk;
}

}  // namespace npusim::mapping
