#include "models/functional/activations.h"

#include <cmath>

namespace npusim::functional {

namespace {
// IEEE division: 1/0 is inf, as NumPy and PyTorch give it (the goldens expect that), so it is
// exempt from UBSan's float-divide-by-zero in the sanitizer build (docs/hardening.md).
__attribute__((no_sanitize("float-divide-by-zero"), noinline)) double ieee_div(double x, double y) { return x / y; }
}  // namespace

float unary_value(float xf, UnaryOp op) {
  if (std::isnan(xf)) return xf;
  const double x = xf;
  switch (op) {
    case UnaryOp::Relu: return xf > 0.0f ? xf : 0.0f;
    case UnaryOp::Relu6: return xf > 0.0f ? (xf < 6.0f ? xf : 6.0f) : 0.0f;
    case UnaryOp::Gelu: return static_cast<float>(0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440)));
    case UnaryOp::Silu: return static_cast<float>(x / (1.0 + std::exp(-x)));
    case UnaryOp::Sigmoid: return static_cast<float>(1.0 / (1.0 + std::exp(-x)));
    case UnaryOp::Tanh: return static_cast<float>(std::tanh(x));
    case UnaryOp::Exp: return static_cast<float>(std::exp(x));
    case UnaryOp::Sqrt: return static_cast<float>(std::sqrt(x));
    case UnaryOp::Rsqrt: return static_cast<float>(ieee_div(1.0, std::sqrt(x)));  // 1/sqrt(0) = inf
    case UnaryOp::Neg: return -xf;
  }
  return xf;
}

Tensor unary(const Tensor& x, UnaryOp op) {
  Tensor y(x.shape, ir::DType::Float32);
  for (int64_t i = 0; i < y.size(); ++i) y.data[i] = unary_value(x.data[i], op);
  return y;
}

Tensor clip(const Tensor& x, float lo, float hi) {
  Tensor y(x.shape, ir::DType::Float32);
  for (int64_t i = 0; i < y.size(); ++i) {
    const float v = x.data[i];
    y.data[i] = std::isnan(v) ? v : (v < lo ? lo : (v > hi ? hi : v));
  }
  return y;
}

}  // namespace npusim::functional
