// PE-array kernels: conv2d (groups, dilation, asymmetric padding with a pad value, stride,
// bias, fused relu/relu6) and dense. im2col + GEMM on Eigen maps; products are accumulated in
// float64 and the result (bias included) is rounded once to float32, so any summation order
// gives the same float32 output except on ~1e-16 relative ties (docs/functional.md#conv2d-pe-array-convh-run_layer).
#pragma once
#include <array>
#include <optional>
#include <string>

#include "models/functional/tensor.h"

namespace npusim::functional {

enum class Activation { None, Relu, Relu6 };
// IR activation_type: "" / "null" / "none" -> None, "relu", "relu6"; nullopt otherwise.
std::optional<Activation> parse_activation(const std::string& s);
float apply_activation(float y, Activation a);

struct ConvParams {
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> dilation{1, 1};
  std::array<int, 4> padding{0, 0, 0, 0};  // top, bottom, left, right
  int groups = 1;
  float pad_value = 0.0f;  // value of every padded input element
  Activation activation = Activation::None;
};

// Output shape of conv2d for x [N,C,H,W] and w [K,C/groups,R,S]:
//   OH = floor((H + top + bottom - dh*(R-1) - 1) / sh) + 1, likewise OW.
// Empty when the shapes or params are inconsistent (C or K not divisible by groups, C/groups
// not w[1], window larger than the padded input, non-positive stride/dilation); `why` says why.
ir::Shape conv2d_output_shape(const ir::Shape& x, const ir::Shape& w, const ConvParams& p,
                              std::string* why = nullptr);

// y[n,k,oh,ow] = act(fl32(b[k] + sum_{c,r,s} x[n, g*Cg+c, oh*sh-top+r*dh, ow*sw-left+s*dw]
//                                          * w[k,c,r,s]))   with g = k / (K/groups)
// Out-of-range input positions read p.pad_value. bias: nullptr or K values (any shape).
// Result dtype Float32. Inconsistent shapes: InternalError (callers validate first).
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvParams& p);

// x [N,C] or [N,C,1,1]; w [K,C] or [K,C,1,1]; y [N,K] (rank-4 x gives [N,K,1,1]):
//   y[n,k] = act(fl32(b[k] + sum_c x[n,c] * w[k,c])), accumulated in float64.
ir::Shape dense_output_shape(const ir::Shape& x, const ir::Shape& w, std::string* why = nullptr);
Tensor dense(const Tensor& x, const Tensor& w, const Tensor* bias, Activation act = Activation::None);

}  // namespace npusim::functional
