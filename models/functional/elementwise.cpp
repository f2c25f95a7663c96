#include "models/functional/elementwise.h"

#include <algorithm>
#include <cmath>

#include "sim/ir/error.h"

namespace npusim::functional {

std::optional<ir::Shape> broadcast_shape(const ir::Shape& a, const ir::Shape& b, std::string* why) {
  size_t r = std::max(a.size(), b.size());
  ir::Shape out(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) {
      if (why) *why = "shapes " + ir::shape_str(a) + " and " + ir::shape_str(b) + " do not broadcast";
      return std::nullopt;
    }
    out[i] = (da == 0 || db == 0) ? 0 : std::max(da, db);
  }
  return out;
}

namespace {
// IEEE division: x/0 is ±inf or NaN, as NumPy and PyTorch give it (the goldens expect that), so
// it is exempt from UBSan's float-divide-by-zero in the sanitizer build (docs/hardening.md).
__attribute__((no_sanitize("float-divide-by-zero"), noinline)) float ieee_div(float x, float y) { return x / y; }

float apply(float x, float y, BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Max: return std::isnan(x) || std::isnan(y) ? x + y : (x > y ? x : y);  // NaN propagates (np.maximum)
    case BinaryOp::Min: return std::isnan(x) || std::isnan(y) ? x + y : (x < y ? x : y);
    case BinaryOp::Div: return ieee_div(x, y);
  }
  return x;
}

// Element strides of `s` viewed in the broadcast shape `out` (0 where s has a 1).
std::vector<int64_t> broadcast_strides(const ir::Shape& s, const ir::Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t acc = 1;
  for (size_t k = 0; k < s.size(); ++k) {
    size_t i = s.size() - 1 - k, o = out.size() - 1 - k;
    st[o] = s[i] == 1 ? 0 : acc;
    acc *= s[i];
  }
  return st;
}
}  // namespace

Tensor binary(const Tensor& a, const Tensor& b, BinaryOp op) {
  std::string why;
  std::optional<ir::Shape> bs = broadcast_shape(a.shape, b.shape, &why);
  if (!bs) throw InternalError("element-wise: " + why);
  const ir::Shape& os = *bs;
  Tensor y(os, ir::DType::Float32);
  if (a.shape == b.shape) {
    for (int64_t i = 0; i < y.size(); ++i) y.data[i] = apply(a.data[i], b.data[i], op);
    return y;
  }
  // Odometer over the output index with per-operand strides (rank is small).
  std::vector<int64_t> sa = broadcast_strides(a.shape, os), sb = broadcast_strides(b.shape, os);
  std::vector<int64_t> idx(os.size(), 0);
  int64_t ia = 0, ib = 0;
  const size_t r = os.size();
  for (int64_t i = 0; i < y.size(); ++i) {
    y.data[i] = apply(a.data[ia], b.data[ib], op);
    for (size_t d = r; d-- > 0;) {
      ia += sa[d], ib += sb[d];
      if (++idx[d] < os[d]) break;
      ia -= sa[d] * os[d], ib -= sb[d] * os[d];
      idx[d] = 0;
    }
  }
  return y;
}

Tensor add(const Tensor& a, const Tensor& b) { return binary(a, b, BinaryOp::Add); }

Tensor mul_scalar(const Tensor& a, float k) {
  Tensor y(a.shape, ir::DType::Float32);
  for (int64_t i = 0; i < y.size(); ++i) y.data[i] = a.data[i] * k;
  return y;
}

Tensor relu(const Tensor& a) {
  Tensor y(a.shape, ir::DType::Float32);
  for (int64_t i = 0; i < y.size(); ++i) y.data[i] = a.data[i] > 0.0f ? a.data[i] : 0.0f;
  return y;
}

Tensor relu6(const Tensor& a) {
  Tensor y(a.shape, ir::DType::Float32);
  for (int64_t i = 0; i < y.size(); ++i) y.data[i] = std::min(std::max(a.data[i], 0.0f), 6.0f);
  return y;
}

Tensor reshape(const Tensor& a, const ir::Shape& shape) {
  if (ir::num_elements(shape) != a.size())
    throw InternalError("reshape of " + a.describe() + " to " + ir::shape_str(shape));
  Tensor y = a;
  y.shape = shape;
  return y;
}

}  // namespace npusim::functional
