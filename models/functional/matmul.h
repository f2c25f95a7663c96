// matmul / batch_matmul on the PE array: A [..., M, K] x B [..., K, N] with transpose flags,
// NumPy-broadcast batch dims and an optional bias of N values. Like dense, products are
// accumulated in float64 and each output (bias included) is rounded once to float32
// (docs/functional.md#npusim-extension-ops).
#pragma once
#include <string>

#include "models/functional/tensor.h"

namespace npusim::functional {

// [broadcast(A batch, B batch), M, N]; empty with `why` when ranks are < 2, the K dims differ
// or the batch dims do not broadcast. transpose_a reads A as [..., K, M], transpose_b reads B
// as [..., N, K].
ir::Shape matmul_output_shape(const ir::Shape& a, const ir::Shape& b, bool transpose_a, bool transpose_b,
                              std::string* why = nullptr);

//   y[..., m, n] = fl32(bias[n] + sum_k A[..., m, k] * B[..., k, n])    (sum in float64)
// bias: nullptr or N values (any shape). Result dtype Float32. Inconsistent shapes:
// InternalError (callers validate first).
Tensor matmul(const Tensor& a, const Tensor& b, const Tensor* bias, bool transpose_a = false, bool transpose_b = false);

}  // namespace npusim::functional
