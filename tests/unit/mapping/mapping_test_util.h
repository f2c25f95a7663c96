// Small graphs and program sums shared by the mapping tests.
#pragma once
#include <string>

#include "sim/ir/graph.h"
#include "sim/mapping/program.h"

namespace npusim::mapping::test {

// A square int8 convolution layer n x c x hw x hw -> n x k x hw x hw with an r x r kernel
// ("same" padding), fed by `prev` and feeding `next`.
inline ir::Layer conv(int idx, const std::string& name, const std::string& prev, const std::string& next, int64_t n,
                      int64_t c, int64_t k, int64_t hw, int r) {
  ir::Layer l;
  l.index = idx;
  l.name = name;
  l.op = ir::OpKind::Conv2d;
  l.input_dtypes = {ir::DType::Int8, ir::DType::Int8};
  l.output_dtypes = {ir::DType::Int8};
  l.input_shapes = {{n, c, hw, hw}, {k, c, r, r}};
  l.output_shapes = {{n, k, hw, hw}};
  l.kernel = {r, r};
  l.padding = {r / 2, r / 2, r / 2, r / 2};
  l.previous = {prev, "constant_" + name};
  l.next = {next};
  return l;
}

// MACs of the PE commands of one layer of a program.
inline int64_t pe_macs(const Program& p, int layer) {
  int64_t m = 0;
  for (const auto& c : p.commands)
    if (c.unit == Unit::PeArray && c.layer == layer) m += c.pe.macs();
  return m;
}

}  // namespace npusim::mapping::test
