// Element-wise unary kernels of the npusim extension ops. Each value is computed in float64
// from the float32 input and rounded once to float32, so +, *, /, sqrt and neg are exact
// float32 operations and exp, erf and tanh are within half a float32 ULP plus the libm error
// (docs/functional.md#npusim-extension-ops). NaN stays NaN.
#pragma once
#include "models/functional/tensor.h"

namespace npusim::functional {

enum class UnaryOp {
  Relu,     // max(x, 0)
  Relu6,    // min(max(x, 0), 6)
  Gelu,     // x/2 * (1 + erf(x / sqrt(2)))   (torch.nn.functional.gelu, approximate='none')
  Silu,     // x / (1 + exp(-x))
  Sigmoid,  // 1 / (1 + exp(-x))
  Tanh,
  Exp,
  Sqrt,     // NaN for x < 0
  Rsqrt,    // 1 / sqrt(x): +inf for +0, NaN for x < 0
  Neg,      // -x
};

float unary_value(float x, UnaryOp op);
// Result dtype Float32.
Tensor unary(const Tensor& x, UnaryOp op);
// min(max(x, lo), hi); NaN stays NaN (torch.clamp). Result dtype Float32.
Tensor clip(const Tensor& x, float lo, float hi);

}  // namespace npusim::functional
