// Element-wise kernels with NumPy broadcasting (a scalar [1,1,1,1] or a per-channel [1,C,1,1]
// operand against [N,C,H,W]), in float32 arithmetic: each result is one float32 operation.
#pragma once
#include <optional>
#include <string>

#include "models/functional/tensor.h"

namespace npusim::functional {

// Max / Min: a NaN operand gives NaN (np.maximum). Div: IEEE (x/0 = +-inf, 0/0 = NaN).
enum class BinaryOp { Add, Sub, Mul, Max, Min, Div };

// NumPy broadcast of two shapes (right-aligned; each dim equal or 1); nullopt with `why` when
// they do not broadcast. A rank-0 shape broadcasts to anything.
std::optional<ir::Shape> broadcast_shape(const ir::Shape& a, const ir::Shape& b, std::string* why = nullptr);

// out = a op b elementwise after broadcasting; dtype Float32. Shapes that do not broadcast:
// InternalError (callers validate first).
Tensor binary(const Tensor& a, const Tensor& b, BinaryOp op);
Tensor add(const Tensor& a, const Tensor& b);
Tensor mul_scalar(const Tensor& a, float k);  // fl32(a * k)
Tensor relu(const Tensor& a);
Tensor relu6(const Tensor& a);
// Same values, new shape with the same element count (else InternalError); dtype kept.
Tensor reshape(const Tensor& a, const ir::Shape& shape);

}  // namespace npusim::functional
