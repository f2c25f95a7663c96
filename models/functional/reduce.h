// reduce_sum / reduce_mean / reduce_max over axes, and the global pools (npusim extension
// ops). Sums are accumulated in float64 and rounded once to float32; the mean divides the
// float64 sum by the element count before that rounding (docs/functional.md#npusim-extension-ops).
#pragma once
#include <cstdint>
#include <vector>

#include "models/functional/tensor.h"

namespace npusim::functional {

enum class ReduceOp { Sum, Mean, Max };

// The shape of a reduction: reduced axes kept as 1 (keepdims) or dropped; [1] when no axis
// is left. Axes may be negative; out of range or repeated: InternalError.
ir::Shape reduce_output_shape(const ir::Shape& x, const std::vector<int64_t>& axes, bool keepdims);

// Max: NaN anywhere in a group gives NaN (torch.amax). Result dtype Float32.
Tensor reduce(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, ReduceOp op);

// [N,C,H,W] -> [N,C,1,1]: the mean (max = false) or max over H and W.
Tensor global_pool(const Tensor& x, bool max);

}  // namespace npusim::functional
