#include "models/functional/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/functional/axes.h"
#include "sim/ir/error.h"

namespace npusim::functional {

ir::Shape reduce_output_shape(const ir::Shape& x, const std::vector<int64_t>& axes, bool keepdims) {
  const std::vector<int64_t> ax = normalize_axes(axes, x.size(), "reduce");
  ir::Shape out;
  for (size_t d = 0; d < x.size(); ++d) {
    if (!std::binary_search(ax.begin(), ax.end(), static_cast<int64_t>(d))) out.push_back(x[d]);
    else if (keepdims) out.push_back(1);
  }
  if (out.empty()) out.push_back(1);
  return out;
}

Tensor reduce(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, ReduceOp op) {
  const ir::Shape os = reduce_output_shape(x.shape, axes, keepdims);
  const AxisSplit g = split_axes(x.shape, normalize_axes(axes, x.shape.size(), "reduce"));
  Tensor y(os, ir::DType::Float32);
  for (size_t o = 0; o < g.outer.size(); ++o) {
    const float* base = x.data.data() + g.outer[o];
    if (op == ReduceOp::Max) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i : g.inner) {
        const float v = base[i];
        if (std::isnan(v)) {
          m = v;
          break;
        }
        if (v > m) m = v;
      }
      y.data[o] = m;
    } else {
      double s = 0.0;
      for (int64_t i : g.inner) s += base[i];
      if (op == ReduceOp::Mean) s /= static_cast<double>(g.inner.size());
      y.data[o] = static_cast<float>(s);
    }
  }
  return y;
}

Tensor global_pool(const Tensor& x, bool max) {
  if (x.shape.size() != 4) throw InternalError("global pool of " + x.describe() + ": input must be [N,C,H,W]");
  return reduce(x, {2, 3}, true, max ? ReduceOp::Max : ReduceOp::Mean);
}

}  // namespace npusim::functional
