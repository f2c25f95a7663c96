// softmax, layer_norm and rms_norm of the npusim extension ops. Statistics (max, sums, means,
// variances) and each output are computed in float64 from the float32 inputs, and each output
// is rounded once to float32 (docs/functional.md#npusim-extension-ops).
#pragma once
#include <cstdint>
#include <vector>

#include "models/functional/tensor.h"

namespace npusim::functional {

// y = exp(x - max) / sum(exp(x - max)) along `axis` (negative counts from the end).
Tensor softmax(const Tensor& x, int64_t axis);

// Over `axes` (default: the last one; any set, normally the trailing axes):
//   y = (x - mean) / sqrt(var + eps) * gamma + beta,   var = mean((x - mean)^2)  (biased)
// gamma, beta: nullptr or one value per element of the normalized dims, in C order over the
// axes in ascending order (for trailing axes: gamma of shape x.shape[-len(axes):]).
Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& axes, double eps, const Tensor* gamma,
                  const Tensor* beta);

// y = x / sqrt(mean(x^2) + eps) * gamma over `axes` (default: the last one).
Tensor rms_norm(const Tensor& x, const std::vector<int64_t>& axes, double eps, const Tensor* gamma);

}  // namespace npusim::functional
