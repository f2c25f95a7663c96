// Internal: builds an ir::Graph by tensor ids for the zoo's transformer models and single-op
// workloads (the CNNs keep their own Frontend IR emitter, zoo_builder.h). Every op gets its
// output shapes from the caller; finish() derives the name edges and runs ir::validate, so a
// wrong shape is caught by the same rules as every reader's.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "sim/ir/graph.h"

namespace npusim::frontends::zoo {

class GraphBuilder {
 public:
  // source: the graph's source for messages ("zoo", "zoo op"); name: the model name.
  GraphBuilder(std::string source, std::string name);

  int input(const std::string& name, ir::Shape shape, ir::DType dtype);
  // A parameter tensor: Weight, Bias or Constant.
  int param(const std::string& name, ir::Shape shape, ir::DType dtype,
            ir::TensorRole role = ir::TensorRole::Weight);

  using Attrs = std::function<void(ir::Layer&)>;
  // One operation with one output named like the layer; returns the output tensor id.
  int op(ir::OpKind kind, const std::string& name, std::vector<int> inputs, ir::Shape out, ir::DType dtype,
         const Attrs& attrs = {});
  // One operation with several outputs (split): output k is named <name>:<k> for k > 0.
  std::vector<int> op_multi(ir::OpKind kind, const std::string& name, std::vector<int> inputs,
                            const std::vector<ir::Shape>& outs, ir::DType dtype, const Attrs& attrs = {});
  void mark_output(int tensor);  // the tensor is read outside the graph

  const ir::Tensor& tensor(int id) const { return m_g.tensor(id); }
  const ir::Shape& shape(int id) const { return m_g.tensor(id).shape; }
  ir::DType dtype(int id) const { return m_g.tensor(id).dtype; }

  // derive_edges + validate; InputError(source, ...) if a shape rule fails.
  ir::Graph finish();

 private:
  ir::Graph m_g;
};

}  // namespace npusim::frontends::zoo
