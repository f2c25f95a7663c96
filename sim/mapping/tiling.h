// Tiling: pure functions of a layer and sizes (docs/mapping.md): the shapes the PE array sees
// for a matmul, how the VP vectorizes a tensor, how many rows a layer tiles over, what one row
// tile streams through L2, the fewest row tiles that fit, and the output-channel chunks that fit
// the weight storage. No state; unit-tested on hand-computed cases (tests/unit/mapping/tiling_test.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <utility>

#include "sim/ir/graph.h"

namespace npusim::mapping {

int64_t bytes_of(const ir::Shape& s, ir::DType t);

// Dimensions of an activation as N, C, H, W (2-D tensors are [N, C] = [N, C, 1, 1]; dims past
// the fourth fold into W).
struct Nchw {
  int64_t n = 1, c = 1, h = 1, w = 1;
};
Nchw nchw(const ir::Shape& s);

// Row tiles of a layer: `tiles` tiles of `out_rows_per_tile` rows (the last may be shorter).
struct RowTiling {
  int64_t tiles = 1;
  int64_t out_rows_per_tile = 1;
  // A streamed split (stream_rows): `total_rows` independent slices, each tile a proportional
  // share of the bytes with no window halo. 0: the layer's row_count.
  int64_t total_rows = 0;
  bool proportional = false;
};

// The shapes the PE array sees for a matmul / batch_matmul: a 1x1 convolution (grouped for a
// batched second operand), docs/mapping.md#matmuls-on-the-pe-array.
ir::Layer gemm_view(const ir::Layer& l);
// (channels along a vector, positions): NCHW tensors vectorize C; others their last dim.
std::pair<int64_t, int64_t> vp_extent(const ir::Shape& s, bool nchw_layout);
// True for ops tiled over output rows N x Ho (the Frontend IR's ops and PE-array views).
bool window_rows(const ir::Layer& l);
// The rows a layer tiles over.
int64_t row_count(const ir::Layer& l);
// The finer slices a vector-processor layer streams through L2 when its rows do not fit
// (docs/mapping.md, streaming): every element of an element-wise, quantization or
// data-movement op, each channel of a global pool, each normalized row of a normalization or
// reduction; 0 when the op has no finer independent slice (windowed pools, PE-array ops).
int64_t stream_rows(const ir::Layer& l);
// Elements in one normalized row (softmax axis, layer_norm trailing axes, reduced axes).
int64_t row_length(const ir::Layer& l);
// Bytes that stream through L2 for one row tile of `rows` rows: its share of the DRAM input
// (plus the window halo when the tile is rows of one image) and of the streamed output.
int64_t tile_stream_bytes(const ir::Layer& l, int64_t rows, int64_t dram_in, int64_t out_stream, int64_t total_rows,
                          bool proportional = false);
// The fewest row tiles (1, 2, 4, ... then every row) whose streamed bytes, double-buffered, fit
// `capacity - fixed`; nullopt when none does (or fixed > capacity).
// proportional: total_rows are stream_rows slices (no halo); the result remembers them.
std::optional<RowTiling> plan_row_tiles(const ir::Layer& l, int64_t fixed, int64_t capacity, int64_t dram_in,
                                        int64_t out_stream, int64_t total_rows, bool proportional = false);
// Output channels per weight chunk: all of them when the weights fit half the weight storage
// (double buffering) or the op is grouped; else as many as fit half, rounded down to a multiple
// of the PE rows when at least one row's worth fits.
int64_t k_chunk_size(int64_t weight_bytes, int64_t weight_store, int64_t bytes_per_k, int64_t k_total, int64_t groups,
                     int64_t pe_rows);

}  // namespace npusim::mapping
