// Data-movement kernels of the npusim extension ops: transpose, concat, split, slice, gather,
// pad. They move values without arithmetic; the result keeps the dtype tag of the (first)
// input. Inconsistent shapes or attributes: InternalError (run_layer validates first; an
// out-of-range gather index is found by gather_index_error, which run_layer reports as an
// InputError).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/functional/tensor.h"

namespace npusim::functional {

// y.shape[i] = x.shape[perm[i]].
Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm);

// Inputs equal outside `axis` (negative counts from the end), joined along it in order.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);

// Consecutive pieces of x along `axis` with the given sizes (which must sum to the dim).
std::vector<Tensor> split(const Tensor& x, int64_t axis, const std::vector<int64_t>& sizes);

// Per axis: start / end with negative values counting from the end, both clamped to
// [0, dim], step >= 1 (steps empty: all 1); ceil((end - start) / step) elements (at least 1).
ir::Shape slice_output_shape(const ir::Shape& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                             const std::vector<int64_t>& steps, std::string* why = nullptr);
Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
             const std::vector<int64_t>& steps);

// Output [table[:axis], indices..., table[axis+1:]]: y[a, i, b] = table[a, indices[i], b].
// An index may be negative (counting from the end: -dim .. dim-1, ONNX Gather).
// gather_index_error: nullopt when every index is an integer in range, else a message naming
// the first bad index and its position.
std::optional<std::string> gather_index_error(const ir::Shape& table, int64_t axis, const Tensor& indices);
Tensor gather(const Tensor& table, const Tensor& indices, int64_t axis);

// pads = [before_0, after_0, before_1, after_1, ...] (each >= 0); new elements are `value`.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, float value = 0.0f);

}  // namespace npusim::functional
