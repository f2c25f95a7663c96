#include "models/functional/matmul.h"

#include <Eigen/Core>

#include "models/functional/axes.h"
#include "models/functional/elementwise.h"
#include "sim/ir/error.h"

namespace npusim::functional {

namespace {
using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using CMapD = Eigen::Map<const MatD>;

// Strides (in matrices) of a batch shape viewed in the broadcast batch shape `out`.
std::vector<int64_t> batch_strides(const ir::Shape& s, const ir::Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t acc = 1;
  for (size_t k = 0; k < s.size(); ++k) {
    const size_t i = s.size() - 1 - k, o = out.size() - 1 - k;
    st[o] = s[i] == 1 ? 0 : acc;
    acc *= s[i];
  }
  return st;
}
}  // namespace

ir::Shape matmul_output_shape(const ir::Shape& a, const ir::Shape& b, bool ta, bool tb, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return ir::Shape{};
  };
  if (a.size() < 2) return fail("A " + ir::shape_str(a) + " must have rank >= 2");
  if (b.size() < 2) return fail("B " + ir::shape_str(b) + " must have rank >= 2");
  const int64_t m = ta ? a[a.size() - 1] : a[a.size() - 2], k = ta ? a[a.size() - 2] : a[a.size() - 1];
  const int64_t kb = tb ? b[b.size() - 1] : b[b.size() - 2], n = tb ? b[b.size() - 2] : b[b.size() - 1];
  if (k != kb)
    return fail("A " + ir::shape_str(a) + " has K = " + std::to_string(k) + " but B " + ir::shape_str(b) + " has K = " +
                std::to_string(kb));
  std::string bw;
  auto batch = broadcast_shape(ir::Shape(a.begin(), a.end() - 2), ir::Shape(b.begin(), b.end() - 2), &bw);
  if (!batch) return fail("batch dims: " + bw);
  ir::Shape out = *batch;
  out.push_back(m);
  out.push_back(n);
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor* bias, bool ta, bool tb) {
  std::string why;
  const ir::Shape os = matmul_output_shape(a.shape, b.shape, ta, tb, &why);
  if (os.empty()) throw InternalError("matmul: " + why);
  const size_t r = os.size();
  const int64_t m_ = os[r - 2], n_ = os[r - 1];
  const int64_t k_ = ta ? a.shape[a.shape.size() - 2] : a.shape.back();
  if (bias && bias->size() != n_) throw InternalError("matmul: bias has " + std::to_string(bias->size()) + " values for N = " + std::to_string(n_));
  const ir::Shape batch(os.begin(), os.end() - 2);
  const std::vector<int64_t> ao = offsets(batch, batch_strides(ir::Shape(a.shape.begin(), a.shape.end() - 2), batch));
  const std::vector<int64_t> bo = offsets(batch, batch_strides(ir::Shape(b.shape.begin(), b.shape.end() - 2), batch));
  const std::vector<double> ad(a.data.begin(), a.data.end()), bd(b.data.begin(), b.data.end());
  Tensor y(os, ir::DType::Float32);
  MatD acc(m_, n_);
  for (size_t i = 0; i < ao.size(); ++i) {
    const double* pa = ad.data() + ao[i] * m_ * k_;
    const double* pb = bd.data() + bo[i] * k_ * n_;
    if (!ta && !tb) acc.noalias() = CMapD(pa, m_, k_) * CMapD(pb, k_, n_);
    else if (ta && !tb) acc.noalias() = CMapD(pa, k_, m_).transpose() * CMapD(pb, k_, n_);
    else if (!ta && tb) acc.noalias() = CMapD(pa, m_, k_) * CMapD(pb, n_, k_).transpose();
    else acc.noalias() = CMapD(pa, k_, m_).transpose() * CMapD(pb, n_, k_).transpose();
    float* out = y.data.data() + static_cast<int64_t>(i) * m_ * n_;
    for (int64_t m = 0; m < m_; ++m)
      for (int64_t n = 0; n < n_; ++n)
        out[m * n_ + n] = static_cast<float>(acc(m, n) + (bias ? static_cast<double>(bias->data[n]) : 0.0));
  }
  return y;
}

}  // namespace npusim::functional
