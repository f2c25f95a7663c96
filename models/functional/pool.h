// Window kernels on NCHW tensors: max / average pooling with PyTorch semantics and the VP's
// window reductions (compare_group and acc_tree_group with cmp_dim / acc_dim "kernel").
#pragma once
#include <array>
#include <string>

#include "models/functional/tensor.h"

namespace npusim::functional {

struct PoolParams {
  std::array<int, 2> kernel{1, 1};
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> dilation{1, 1};       // max / window reductions only; avg needs {1, 1}
  std::array<int, 4> padding{0, 0, 0, 0};  // top, bottom, left, right
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d divisor (PyTorch's default)
};

// PyTorch's pooling output size, with the two paddings allowed to differ:
//   out = floor_or_ceil((in + lo + hi - d*(k-1) - 1) / s) + 1
//   and with ceil_mode, drop the last window if it starts at or after in + lo (it would start
//   in the bottom/right padding). Returns 0 when no window fits.
int64_t pool_output_size(int64_t in, int k, int s, int d, int lo, int hi, bool ceil_mode);
// [N,C,OH,OW] for x [N,C,H,W]; empty (with `why`) when invalid.
ir::Shape pool_output_shape(const ir::Shape& x, const PoolParams& p, std::string* why = nullptr);

// Max over the in-bounds elements of each window (padding never wins, as -inf in PyTorch).
Tensor max_pool2d(const Tensor& x, const PoolParams& p);
// Min likewise (compare_group with cmp_max_en "min").
Tensor min_pool2d(const Tensor& x, const PoolParams& p);
// torch.nn.functional.avg_pool2d: sum of in-bounds elements / divisor, where with
// count_include_pad the divisor is the window clipped to the padded input
// (hend = min(hstart + kh, H + bottom), ...), else the in-bounds count. Sum and division in
// float64, result rounded once to float32.
Tensor avg_pool2d(const Tensor& x, const PoolParams& p);
// Sum of the in-bounds elements of each window (padding adds 0), in float64, rounded once to
// float32 (acc_tree_group, acc_dim "kernel").
Tensor window_sum(const Tensor& x, const PoolParams& p);

}  // namespace npusim::functional
