#include "models/functional/normalization.h"

#include <cmath>
#include <limits>

#include "models/functional/axes.h"
#include "sim/ir/error.h"

// Keep x*x + s and v*gamma + beta as two roundings on every target (reproducible results).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace npusim::functional {

namespace {

AxisSplit groups(const Tensor& x, const std::vector<int64_t>& axes, const char* what) {
  return split_axes(x.shape, normalize_axes(axes.empty() ? std::vector<int64_t>{-1} : axes, x.shape.size(), what));
}

void check_affine(const Tensor* t, size_t n, const char* what) {
  if (t && t->size() != static_cast<int64_t>(n))
    throw InternalError(std::string(what) + " has " + std::to_string(t->size()) + " values for " + std::to_string(n) +
                        " normalized elements");
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) {
  const AxisSplit g = split_axes(x.shape, {normalize_axis(axis, x.shape.size(), "softmax")});
  Tensor y(x.shape, ir::DType::Float32);
  std::vector<double> e(g.inner.size());
  for (int64_t o : g.outer) {
    double mx = -std::numeric_limits<double>::infinity();
    bool nan = false;
    for (int64_t i : g.inner) {
      const double v = x.data[o + i];
      nan |= std::isnan(v);
      if (v > mx) mx = v;
    }
    double sum = 0.0;
    for (size_t j = 0; j < e.size(); ++j) sum += e[j] = std::exp(x.data[o + g.inner[j]] - mx);
    for (size_t j = 0; j < e.size(); ++j)
      y.data[o + g.inner[j]] = nan ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(e[j] / sum);
  }
  return y;
}

Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& axes, double eps, const Tensor* gamma, const Tensor* beta) {
  const AxisSplit g = groups(x, axes, "layer_norm");
  check_affine(gamma, g.inner.size(), "layer_norm gamma");
  check_affine(beta, g.inner.size(), "layer_norm beta");
  Tensor y(x.shape, ir::DType::Float32);
  const double n = static_cast<double>(g.inner.size());
  for (int64_t o : g.outer) {
    double sum = 0.0;
    for (int64_t i : g.inner) sum += x.data[o + i];
    const double mean = sum / n;
    double sq = 0.0;
    for (int64_t i : g.inner) {
      const double d = x.data[o + i] - mean;
      sq += d * d;
    }
    const double inv = 1.0 / std::sqrt(sq / n + eps);
    for (size_t j = 0; j < g.inner.size(); ++j) {
      double v = (x.data[o + g.inner[j]] - mean) * inv;
      if (gamma) v *= gamma->data[j];
      if (beta) v += beta->data[j];
      y.data[o + g.inner[j]] = static_cast<float>(v);
    }
  }
  return y;
}

Tensor rms_norm(const Tensor& x, const std::vector<int64_t>& axes, double eps, const Tensor* gamma) {
  const AxisSplit g = groups(x, axes, "rms_norm");
  check_affine(gamma, g.inner.size(), "rms_norm gamma");
  Tensor y(x.shape, ir::DType::Float32);
  const double n = static_cast<double>(g.inner.size());
  for (int64_t o : g.outer) {
    double sq = 0.0;
    for (int64_t i : g.inner) sq += static_cast<double>(x.data[o + i]) * x.data[o + i];
    const double inv = 1.0 / std::sqrt(sq / n + eps);
    for (size_t j = 0; j < g.inner.size(); ++j) {
      double v = x.data[o + g.inner[j]] * inv;
      if (gamma) v *= gamma->data[j];
      y.data[o + g.inner[j]] = static_cast<float>(v);
    }
  }
  return y;
}

}  // namespace npusim::functional
