#include "frontends/zoo/graph_builder.h"

#include <utility>

#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

GraphBuilder::GraphBuilder(std::string source, std::string name) {
  m_g.source = std::move(source);
  m_g.name = std::move(name);
  m_g.format = "zoo";
}

int GraphBuilder::input(const std::string& name, ir::Shape shape, ir::DType dtype) {
  ir::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.role = ir::TensorRole::GraphInput;
  return m_g.add_tensor(std::move(t));
}

int GraphBuilder::param(const std::string& name, ir::Shape shape, ir::DType dtype, ir::TensorRole role) {
  ir::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.role = role;
  return m_g.add_tensor(std::move(t));
}

int GraphBuilder::op(ir::OpKind kind, const std::string& name, std::vector<int> inputs, ir::Shape out,
                     ir::DType dtype, const Attrs& attrs) {
  return op_multi(kind, name, std::move(inputs), {std::move(out)}, dtype, attrs).at(0);
}

std::vector<int> GraphBuilder::op_multi(ir::OpKind kind, const std::string& name, std::vector<int> inputs,
                                        const std::vector<ir::Shape>& outs, ir::DType dtype, const Attrs& attrs) {
  ir::Layer l;
  l.index = static_cast<int>(m_g.layers.size());
  l.name = name;
  l.pointer = "/" + name;
  l.op = kind;
  l.inputs = std::move(inputs);
  for (size_t k = 0; k < outs.size(); ++k) {
    ir::Tensor t;
    t.name = k == 0 ? name : name + ":" + std::to_string(k);
    t.shape = outs[k];
    t.dtype = dtype;
    t.role = ir::TensorRole::Activation;
    t.producer = l.index;
    l.outputs.push_back(m_g.add_tensor(std::move(t)));
  }
  if (attrs) attrs(l);
  m_g.layers.push_back(std::move(l));
  return m_g.layers.back().outputs;
}

void GraphBuilder::mark_output(int tensor) { m_g.tensors.at(static_cast<size_t>(tensor)).role = ir::TensorRole::GraphOutput; }

ir::Graph GraphBuilder::finish() {
  // The readers' bound (json_util): 2^40 elements keeps byte and MAC counts far from overflow.
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  for (const ir::Tensor& t : m_g.tensors) {
    int64_t n = 1;
    for (int64_t d : t.shape) {
      if (d < 1) break;  // ir::validate names it
      if (n > kMaxElements / d)
        throw InputError(m_g.source, t.producer >= 0 ? m_g.layers[t.producer].pointer : "",
                         "tensor '" + t.name + "' " + ir::shape_str(t.shape) + " has more than 2^40 elements");
      n *= d;
    }
  }
  ir::derive_edges(m_g);
  ir::validate(m_g);
  return std::move(m_g);
}

}  // namespace npusim::frontends::zoo
