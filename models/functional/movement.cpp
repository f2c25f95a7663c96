#include "models/functional/movement.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/functional/axes.h"
#include "sim/ir/error.h"

namespace npusim::functional {

namespace {

// Product of dims [b, e).
int64_t prod(const ir::Shape& s, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e && i < s.size(); ++i) n *= s[i];
  return n;
}

// Copies x into y at offset `at` along axis (outer x axis x inner blocks).
void place(const Tensor& x, Tensor& y, size_t axis, int64_t at) {
  const int64_t outer = prod(x.shape, 0, axis), inner = prod(x.shape, axis + 1, x.shape.size());
  const int64_t xa = x.shape[axis], ya = y.shape[axis];
  for (int64_t o = 0; o < outer; ++o)
    std::copy_n(x.data.data() + o * xa * inner, xa * inner, y.data.data() + (o * ya + at) * inner);
}

}  // namespace

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm) {
  const size_t r = x.shape.size();
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != r)
      throw InternalError("transpose of " + x.describe() + ": perm is not a permutation of its axes");
  const std::vector<int64_t> st = c_strides(x.shape);
  ir::Shape os(r);
  std::vector<int64_t> ps(r);  // input stride of each output axis
  for (size_t i = 0; i < r; ++i) os[i] = x.shape[perm[i]], ps[i] = st[perm[i]];
  const std::vector<int64_t> src = offsets(os, ps);
  Tensor y(os, x.dtype);
  for (size_t i = 0; i < src.size(); ++i) y.data[i] = x.data[src[i]];
  return y;
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw InternalError("concat of no tensors");
  const size_t ax = static_cast<size_t>(normalize_axis(axis, xs[0].shape.size(), "concat"));
  ir::Shape os = xs[0].shape;
  for (size_t i = 1; i < xs.size(); ++i) {
    bool ok = xs[i].shape.size() == os.size();
    for (size_t d = 0; ok && d < os.size(); ++d) ok = d == ax || xs[i].shape[d] == os[d];
    if (!ok) throw InternalError("concat: " + xs[i].describe() + " differs from " + xs[0].describe() + " outside axis " + std::to_string(ax));
    os[ax] += xs[i].shape[ax];
  }
  Tensor y(os, xs[0].dtype);
  int64_t at = 0;
  for (const Tensor& x : xs) {
    place(x, y, ax, at);
    at += x.shape[ax];
  }
  return y;
}

std::vector<Tensor> split(const Tensor& x, int64_t axis, const std::vector<int64_t>& sizes) {
  const size_t ax = static_cast<size_t>(normalize_axis(axis, x.shape.size(), "split"));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw InternalError("split: negative size");
    total += s;
  }
  if (total != x.shape[ax])
    throw InternalError("split of " + x.describe() + ": sizes sum to " + std::to_string(total) + " along axis " + std::to_string(ax));
  const int64_t outer = prod(x.shape, 0, ax), inner = prod(x.shape, ax + 1, x.shape.size()), xa = x.shape[ax];
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    ir::Shape os = x.shape;
    os[ax] = s;
    Tensor y(os, x.dtype);
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(x.data.data() + (o * xa + at) * inner, s * inner, y.data.data() + o * s * inner);
    out.push_back(std::move(y));
    at += s;
  }
  return out;
}

ir::Shape slice_output_shape(const ir::Shape& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                             const std::vector<int64_t>& steps, std::string* why) {
  auto fail = [&](const std::string& m) {
    if (why) *why = m;
    return ir::Shape{};
  };
  const size_t r = x.size();
  if (starts.size() != r || ends.size() != r || (!steps.empty() && steps.size() != r))
    return fail("slice needs starts, ends (and optional steps) with one entry per axis of " + ir::shape_str(x));
  ir::Shape os;
  for (size_t i = 0; i < r; ++i) {
    const int64_t step = steps.empty() ? 1 : steps[i];
    if (step < 1) return fail("step " + std::to_string(step) + " of axis " + std::to_string(i) + " must be >= 1");
    const int64_t b = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + x[i] : starts[i], 0, x[i]);
    const int64_t e = std::clamp<int64_t>(ends[i] < 0 ? ends[i] + x[i] : ends[i], 0, x[i]);
    if (e <= b) return fail("empty slice [" + std::to_string(starts[i]) + ", " + std::to_string(ends[i]) + ") of axis " + std::to_string(i));
    os.push_back((e - b + step - 1) / step);
  }
  return os;
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
             const std::vector<int64_t>& steps) {
  std::string why;
  const ir::Shape os = slice_output_shape(x.shape, starts, ends, steps, &why);
  if (os.empty()) throw InternalError("slice of " + x.describe() + ": " + why);
  const std::vector<int64_t> st = c_strides(x.shape);
  std::vector<int64_t> ss(os.size());
  int64_t base = 0;
  for (size_t i = 0; i < os.size(); ++i) {
    const int64_t step = steps.empty() ? 1 : steps[i];
    base += std::clamp<int64_t>(starts[i] < 0 ? starts[i] + x.shape[i] : starts[i], 0, x.shape[i]) * st[i];
    ss[i] = st[i] * step;
  }
  const std::vector<int64_t> src = offsets(os, ss);
  Tensor y(os, x.dtype);
  for (size_t i = 0; i < src.size(); ++i) y.data[i] = x.data[base + src[i]];
  return y;
}

std::optional<std::string> gather_index_error(const ir::Shape& table, int64_t axis, const Tensor& indices) {
  const int64_t dim = table.at(static_cast<size_t>(normalize_axis(axis, table.size(), "gather")));
  for (int64_t i = 0; i < indices.size(); ++i) {
    const float v = indices.data[i];
    if (!(v >= -dim && v < dim) || v != std::floor(v)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.9g", v);
      return std::string("index ") + buf + " (position " + std::to_string(i) + " of the indices) is out of range: axis " +
             std::to_string(axis) + " of the table " + ir::shape_str(table) + " takes integers in [" + std::to_string(-dim) +
             ", " + std::to_string(dim - 1) + "]";
    }
  }
  return std::nullopt;
}

Tensor gather(const Tensor& table, const Tensor& indices, int64_t axis) {
  const size_t ax = static_cast<size_t>(normalize_axis(axis, table.shape.size(), "gather"));
  if (auto e = gather_index_error(table.shape, axis, indices)) throw InternalError("gather: " + *e);
  const int64_t outer = prod(table.shape, 0, ax), inner = prod(table.shape, ax + 1, table.shape.size());
  const int64_t dim = table.shape[ax], ni = indices.size();
  ir::Shape os(table.shape.begin(), table.shape.begin() + ax);
  os.insert(os.end(), indices.shape.begin(), indices.shape.end());
  os.insert(os.end(), table.shape.begin() + ax + 1, table.shape.end());
  Tensor y(os, table.dtype);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < ni; ++i) {
      int64_t k = static_cast<int64_t>(indices.data[i]);
      if (k < 0) k += dim;
      std::copy_n(table.data.data() + (o * dim + k) * inner, inner, y.data.data() + (o * ni + i) * inner);
    }
  return y;
}

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, float value) {
  const size_t r = x.shape.size();
  if (pads.size() != 2 * r) throw InternalError("pad of " + x.describe() + ": needs 2 pads per axis");
  ir::Shape os = x.shape;
  int64_t base = 0;
  for (size_t i = 0; i < r; ++i) {
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) throw InternalError("pad: negative pads");
    os[i] += pads[2 * i] + pads[2 * i + 1];
  }
  const std::vector<int64_t> ys = c_strides(os);
  for (size_t i = 0; i < r; ++i) base += pads[2 * i] * ys[i];
  Tensor y = Tensor::full(os, value, x.dtype);
  const std::vector<int64_t> dst = offsets(x.shape, ys);
  for (size_t i = 0; i < dst.size(); ++i) y.data[base + dst[i]] = x.data[i];
  return y;
}

}  // namespace npusim::functional
