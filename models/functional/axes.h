// Index arithmetic shared by the kernels that work along axes (reductions, normalization,
// softmax, data movement): C-order strides, axis normalization, and the split of a tensor's
// flat offsets into "outer" (the kept axes) and "inner" (the reduced axes) offsets.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/ir/graph.h"

namespace npusim::functional {

// C-order element strides of s.
std::vector<int64_t> c_strides(const ir::Shape& s);

// a in [-rank, rank) -> [0, rank); anything else: InternalError naming `what`.
int64_t normalize_axis(int64_t a, size_t rank, const std::string& what);
// Each axis normalized, sorted ascending; a repeated or out-of-range axis: InternalError.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, size_t rank, const std::string& what);

// Flat offsets of a shape split by axes: every element is outer[o] + inner[i], with outer
// enumerating the axes not listed in C order and inner the listed axes in C order (ascending
// axis order). So for a reduction, outer[o] is output element o, for keepdims true or false.
struct AxisSplit {
  std::vector<int64_t> outer, inner;
};
AxisSplit split_axes(const ir::Shape& s, const std::vector<int64_t>& sorted_axes);

// Flat offsets of every index of `dims` (C order) with the given strides.
std::vector<int64_t> offsets(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);

}  // namespace npusim::functional
