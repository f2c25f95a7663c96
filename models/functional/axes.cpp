#include "models/functional/axes.h"

#include <algorithm>

#include "sim/ir/error.h"

namespace npusim::functional {

std::vector<int64_t> c_strides(const ir::Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

int64_t normalize_axis(int64_t a, size_t rank, const std::string& what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (a < -r || a >= r)
    throw InternalError(what + ": axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
  return a < 0 ? a + r : a;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, size_t rank, const std::string& what) {
  std::vector<int64_t> r;
  for (int64_t a : axes) r.push_back(normalize_axis(a, rank, what));
  std::sort(r.begin(), r.end());
  if (std::adjacent_find(r.begin(), r.end()) != r.end()) throw InternalError(what + ": an axis is listed twice");
  return r;
}

std::vector<int64_t> offsets(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> r(static_cast<size_t>(n));
  if (n == 0) return r;
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    r[i] = off;
    for (size_t d = dims.size(); d-- > 0;) {
      off += strides[d];
      if (++idx[d] < dims[d]) break;
      off -= strides[d] * dims[d];
      idx[d] = 0;
    }
  }
  return r;
}

AxisSplit split_axes(const ir::Shape& s, const std::vector<int64_t>& sorted_axes) {
  const std::vector<int64_t> st = c_strides(s);
  std::vector<int64_t> od, os, id, is;
  for (size_t d = 0; d < s.size(); ++d) {
    const bool listed = std::binary_search(sorted_axes.begin(), sorted_axes.end(), static_cast<int64_t>(d));
    (listed ? id : od).push_back(s[d]);
    (listed ? is : os).push_back(st[d]);
  }
  return {offsets(od, os), offsets(id, is)};
}

}  // namespace npusim::functional
