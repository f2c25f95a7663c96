#include "models/functional/tensor.h"

#include <algorithm>

#include "sim/ir/error.h"

namespace npusim::functional {

Tensor::Tensor(ir::Shape s, ir::DType t)
    : dtype(t), shape(std::move(s)), data(static_cast<size_t>(ir::num_elements(shape)), 0.0f) {}

Tensor Tensor::full(ir::Shape s, float value, ir::DType t) {
  Tensor r(std::move(s), t);
  std::fill(r.data.begin(), r.data.end(), value);
  return r;
}

Tensor::Tensor(ir::Shape s, std::vector<float> values, ir::DType t)
    : dtype(t), shape(std::move(s)), data(std::move(values)) {
  if (static_cast<int64_t>(data.size()) != ir::num_elements(shape))
    throw InternalError("tensor of shape " + ir::shape_str(shape) + " given " +
                        std::to_string(data.size()) + " values");
}

std::string Tensor::describe() const { return std::string(ir::dtype_name(dtype)) + ir::shape_str(shape); }

Nchw as_nchw(const ir::Shape& s) {
  switch (s.size()) {
    case 0: return {};
    case 1: return {1, s[0], 1, 1};
    case 2: return {s[0], s[1], 1, 1};
    case 3: return {s[0], s[1], 1, s[2]};
    case 4: return {s[0], s[1], s[2], s[3]};
    default: throw InternalError("tensor of rank " + std::to_string(s.size()) + " is not NCHW: " + ir::shape_str(s));
  }
}

}  // namespace npusim::functional
