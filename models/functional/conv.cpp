#include "models/functional/conv.h"

#include <Eigen/Core>
#include <algorithm>

#include "sim/ir/error.h"

namespace npusim::functional {

namespace {
using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapD = Eigen::Map<MatD>;
using CMapD = Eigen::Map<const MatD>;

std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// Rows (c, r, s) x columns (oh, ow) of one group of one image; padding reads pad_value.
void im2col(const float* x, int64_t cg, int64_t h, int64_t w, int64_t r_, int64_t s_, int64_t oh_,
            int64_t ow_, const ConvParams& p, double* col) {
  const int sh = p.stride[0], sw = p.stride[1], dh = p.dilation[0], dw = p.dilation[1];
  const int top = p.padding[0], left = p.padding[2];
  const double pad = p.pad_value;
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t r = 0; r < r_; ++r)
      for (int64_t s = 0; s < s_; ++s) {
        double* row = col + ((c * r_ + r) * s_ + s) * oh_ * ow_;
        const float* xc = x + c * h * w;
        for (int64_t oh = 0; oh < oh_; ++oh) {
          double* out = row + oh * ow_;
          int64_t ih = oh * sh - top + r * dh;
          if (ih < 0 || ih >= h) {
            std::fill(out, out + ow_, pad);
            continue;
          }
          const float* xr = xc + ih * w;
          int64_t iw = -left + s * dw;
          for (int64_t ow = 0; ow < ow_; ++ow, iw += sw) out[ow] = (iw >= 0 && iw < w) ? xr[iw] : pad;
        }
      }
}
}  // namespace

std::optional<Activation> parse_activation(const std::string& s) {
  if (s.empty() || s == "null" || s == "none") return Activation::None;
  if (s == "relu") return Activation::Relu;
  if (s == "relu6") return Activation::Relu6;
  return std::nullopt;
}

float apply_activation(float y, Activation a) {
  switch (a) {
    case Activation::None: return y;
    case Activation::Relu: return y > 0.0f ? y : 0.0f;
    case Activation::Relu6: return y > 0.0f ? (y < 6.0f ? y : 6.0f) : 0.0f;
  }
  return y;
}

ir::Shape conv2d_output_shape(const ir::Shape& x, const ir::Shape& w, const ConvParams& p, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return ir::Shape{};
  };
  if (x.size() != 4) return fail("input " + ir::shape_str(x) + " is not [N,C,H,W]");
  if (w.size() != 4) return fail("weight " + ir::shape_str(w) + " is not [K,C/groups,R,S]");
  if (p.groups < 1) return fail("groups " + std::to_string(p.groups) + " < 1");
  for (int i = 0; i < 2; ++i)
    if (p.stride[i] < 1 || p.dilation[i] < 1) return fail("stride and dilation must be >= 1");
  for (int v : p.padding)
    if (v < 0) return fail("negative padding");
  if (x[1] % p.groups || w[0] % p.groups)
    return fail("channels " + std::to_string(x[1]) + " / kernels " + std::to_string(w[0]) +
                " not divisible by groups " + std::to_string(p.groups));
  if (w[1] != x[1] / p.groups)
    return fail("weight " + ir::shape_str(w) + " needs C/groups = " + std::to_string(x[1] / p.groups) +
                " input channels per kernel");
  int64_t eh = x[2] + p.padding[0] + p.padding[1] - static_cast<int64_t>(p.dilation[0]) * (w[2] - 1);
  int64_t ew = x[3] + p.padding[2] + p.padding[3] - static_cast<int64_t>(p.dilation[1]) * (w[3] - 1);
  if (w[2] < 1 || w[3] < 1 || eh < 1 || ew < 1) return fail("kernel window larger than the padded input");
  return {x[0], w[0], (eh - 1) / p.stride[0] + 1, (ew - 1) / p.stride[1] + 1};
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvParams& p) {
  std::string why;
  ir::Shape os = conv2d_output_shape(x.shape, w.shape, p, &why);
  if (os.empty()) throw InternalError("conv2d: " + why);
  const int64_t n_ = x.shape[0], c_ = x.shape[1], h = x.shape[2], wd = x.shape[3];
  const int64_t k_ = w.shape[0], r_ = w.shape[2], s_ = w.shape[3], oh_ = os[2], ow_ = os[3];
  const int64_t g_ = p.groups, cg = c_ / g_, kg = k_ / g_, crs = cg * r_ * s_, ohw = oh_ * ow_;
  if (bias && bias->size() != k_)
    throw InternalError("conv2d: bias has " + std::to_string(bias->size()) + " values for " + std::to_string(k_) + " kernels");

  const std::vector<double> wd64 = to_double(w.data);
  std::vector<double> col(static_cast<size_t>(crs * ohw)), acc(static_cast<size_t>(kg * ohw));
  Tensor y(os, ir::DType::Float32);
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t g = 0; g < g_; ++g) {
      im2col(x.data.data() + (n * c_ + g * cg) * h * wd, cg, h, wd, r_, s_, oh_, ow_, p, col.data());
      CMapD wm(wd64.data() + g * kg * crs, kg, crs);
      CMapD cm(col.data(), crs, ohw);
      MapD am(acc.data(), kg, ohw);
      am.noalias() = wm * cm;
      float* out = y.data.data() + (n * k_ + g * kg) * ohw;
      for (int64_t k = 0; k < kg; ++k) {
        const double b = bias ? static_cast<double>(bias->data[g * kg + k]) : 0.0;
        const double* a = acc.data() + k * ohw;
        float* o = out + k * ohw;
        for (int64_t i = 0; i < ohw; ++i) o[i] = apply_activation(static_cast<float>(a[i] + b), p.activation);
      }
    }
  return y;
}

ir::Shape dense_output_shape(const ir::Shape& x, const ir::Shape& w, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return ir::Shape{};
  };
  auto flat = [](const ir::Shape& s) { return (s.size() == 2) || (s.size() == 4 && s[2] == 1 && s[3] == 1); };
  if (!flat(x)) return fail("input " + ir::shape_str(x) + " is not [N,C] or [N,C,1,1]");
  if (!flat(w)) return fail("weight " + ir::shape_str(w) + " is not [K,C] or [K,C,1,1]");
  if (x[1] != w[1]) return fail("input has " + std::to_string(x[1]) + " channels, weight " + std::to_string(w[1]));
  if (x.size() == 4) return {x[0], w[0], 1, 1};
  return {x[0], w[0]};
}

Tensor dense(const Tensor& x, const Tensor& w, const Tensor* bias, Activation act) {
  std::string why;
  ir::Shape os = dense_output_shape(x.shape, w.shape, &why);
  if (os.empty()) throw InternalError("dense: " + why);
  const int64_t n_ = x.shape[0], c_ = x.shape[1], k_ = w.shape[0];
  if (bias && bias->size() != k_) throw InternalError("dense: bias size mismatch");
  const std::vector<double> xd = to_double(x.data), wd = to_double(w.data);
  MatD acc = CMapD(xd.data(), n_, c_) * CMapD(wd.data(), k_, c_).transpose();
  Tensor y(os, ir::DType::Float32);
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t k = 0; k < k_; ++k) {
      const double b = bias ? static_cast<double>(bias->data[k]) : 0.0;
      y.data[n * k_ + k] = apply_activation(static_cast<float>(acc(n, k) + b), act);
    }
  return y;
}

}  // namespace npusim::functional
