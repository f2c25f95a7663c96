// Tensor table construction (from name edges or from ids) and the one validation pass that
// every reader's graph goes through before mapping.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "sim/ir/error.h"
#include "sim/ir/graph.h"

namespace npusim::ir {

namespace {

[[noreturn]] void fail(const Graph& g, const Layer& l, const std::string& sub, const std::string& what) {
  throw InputError(g.source, l.pointer + (sub.empty() ? "" : "/" + sub), what);
}

// The role a parameter input plays for its op: the second input of a GEMM-class op is its
// weight, the third its bias; anything else is a constant operand.
TensorRole parameter_role(const Layer& l, size_t input) {
  if (runs_on_pe_array(l.op) && input == 1) return TensorRole::Weight;
  if (runs_on_pe_array(l.op) && input == 2) return TensorRole::Bias;
  if ((l.op == OpKind::LayerNorm || l.op == OpKind::RmsNorm) && input == 1) return TensorRole::Weight;
  if (l.op == OpKind::LayerNorm && input == 2) return TensorRole::Bias;
  if (l.op == OpKind::Gather && input == 0) return TensorRole::Weight;
  return TensorRole::Constant;
}

std::string file_for(const Layer& l, const std::string& key) {
  auto it = l.files.find(key);
  return it == l.files.end() ? "" : it->second;
}

void set_weight_flag(Graph& g) {
  for (Layer& l : g.layers)
    l.weight_is_parameter = l.inputs.size() > 1 && g.tensor(l.inputs[1]).is_parameter();
}

}  // namespace

void link_tensors_by_name(Graph& g) {
  g.tensors.clear();
  std::unordered_map<std::string, size_t> layer_pos;
  for (size_t i = 0; i < g.layers.size(); ++i) layer_pos[g.layers[i].name] = i;
  // Outputs first, so that inputs can refer to any producer.
  for (size_t i = 0; i < g.layers.size(); ++i) {
    Layer& l = g.layers[i];
    l.outputs.clear();
    const bool to_graph_output =
        std::any_of(l.next.begin(), l.next.end(), [](const std::string& n) { return is_graph_output_name(n); });
    for (size_t k = 0; k < l.output_shapes.size(); ++k) {
      Tensor t;
      t.name = k == 0 ? l.name : l.name + ":" + std::to_string(k);
      t.shape = l.output_shapes[k];
      t.dtype = k < l.output_dtypes.size() ? l.output_dtypes[k] : DType::Int8;
      t.role = to_graph_output ? TensorRole::GraphOutput : TensorRole::Activation;
      t.file = k == 0 ? file_for(l, "output_activation1") : "";
      t.producer = static_cast<int>(i);
      l.outputs.push_back(g.add_tensor(std::move(t)));
    }
  }
  std::unordered_map<std::string, int> by_name;  // graph inputs and constants
  for (Layer& l : g.layers) {
    l.inputs.clear();
    for (size_t j = 0; j < l.previous.size(); ++j) {
      const std::string& p = l.previous[j];
      auto lp = layer_pos.find(edge_layer(p));
      if (lp != layer_pos.end()) {
        const Layer& prod = g.layers[lp->second];
        // "<layer>:<k>" names the output; otherwise the producer's output with this input's shape.
        size_t k = static_cast<size_t>(edge_port(p));
        if (k == 0)
          for (size_t o = 0; o < prod.output_shapes.size(); ++o)
            if (j < l.input_shapes.size() && prod.output_shapes[o] == l.input_shapes[j]) { k = o; break; }
        l.inputs.push_back(prod.outputs.at(k));
        continue;
      }
      auto it = by_name.find(p);
      if (it != by_name.end()) {
        l.inputs.push_back(it->second);
        continue;
      }
      Tensor t;
      t.name = p;
      if (j < l.input_shapes.size()) t.shape = l.input_shapes[j];
      if (j < l.input_dtypes.size()) t.dtype = l.input_dtypes[j];
      if (is_graph_input_name(p)) {
        t.role = TensorRole::GraphInput;
        t.file = file_for(l, "input_activation" + std::to_string(j + 1));
      } else {
        t.role = parameter_role(l, j);
        t.file = file_for(l, t.role == TensorRole::Weight ? "k" : t.role == TensorRole::Bias ? "b" : "");
      }
      const int id = g.add_tensor(std::move(t));
      by_name[p] = id;
      l.inputs.push_back(id);
    }
  }
  set_weight_flag(g);
}

void derive_edges(Graph& g) {
  std::vector<std::vector<int>> consumers(g.tensors.size());
  for (size_t i = 0; i < g.layers.size(); ++i)
    for (int t : g.layers[i].inputs)
      if (t >= 0 && static_cast<size_t>(t) < consumers.size()) consumers[t].push_back(static_cast<int>(i));
  for (size_t i = 0; i < g.layers.size(); ++i)
    for (int t : g.layers[i].outputs)
      if (t >= 0 && static_cast<size_t>(t) < g.tensors.size()) g.tensors[t].producer = static_cast<int>(i);
  g.graph_inputs.clear();
  g.graph_outputs.clear();
  std::map<int, std::string> output_names;
  for (const Tensor& t : g.tensors) {
    if (t.role == TensorRole::GraphInput) g.graph_inputs.push_back(t.name);
    if (t.role == TensorRole::GraphOutput) {
      output_names[t.id] = "output" + std::to_string(output_names.size() + 1);
      g.graph_outputs.push_back(output_names[t.id]);
    }
  }
  for (Layer& l : g.layers) {
    l.previous.clear();
    l.next.clear();
    l.input_shapes.clear();
    l.input_dtypes.clear();
    l.output_shapes.clear();
    l.output_dtypes.clear();
    for (int id : l.inputs) {
      if (id < 0 || static_cast<size_t>(id) >= g.tensors.size()) fail(g, l, "inputs", "tensor id " + std::to_string(id) + " does not exist");
      const Tensor& t = g.tensors[id];
      std::string src = t.producer >= 0 ? g.layers[t.producer].name : t.name;
      if (t.producer >= 0) {  // output k > 0 of a multi-output op: "<layer>:<k>"
        const auto& outs = g.layers[t.producer].outputs;
        for (size_t k = 1; k < outs.size(); ++k)
          if (outs[k] == id) src += ":" + std::to_string(k);
      }
      l.previous.push_back(src);
      l.input_shapes.push_back(t.shape);
      l.input_dtypes.push_back(t.dtype);
    }
    for (int id : l.outputs) {
      if (id < 0 || static_cast<size_t>(id) >= g.tensors.size()) fail(g, l, "outputs", "tensor id " + std::to_string(id) + " does not exist");
      const Tensor& t = g.tensors[id];
      l.output_shapes.push_back(t.shape);
      l.output_dtypes.push_back(t.dtype);
      for (int c : consumers[id]) {
        const std::string& n = g.layers[c].name;
        if (std::find(l.next.begin(), l.next.end(), n) == l.next.end()) l.next.push_back(n);
      }
      if (t.role == TensorRole::GraphOutput) l.next.push_back(output_names[id]);
    }
  }
  set_weight_flag(g);
}

void check_ops(const Graph& g) {
  for (const Layer& l : g.layers) check_op(l, g.source);
}

void validate_tensors(const Graph& g) {
  const int n = static_cast<int>(g.tensors.size());
  std::vector<int> produced_by(g.tensors.size(), -1);
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const Layer& l = g.layers[i];
    if (l.inputs.size() != l.input_shapes.size())
      fail(g, l, "inputs", "has " + std::to_string(l.inputs.size()) + " input tensors but " +
                               std::to_string(l.input_shapes.size()) + " input shapes");
    if (l.outputs.size() != l.output_shapes.size())
      fail(g, l, "outputs", "has " + std::to_string(l.outputs.size()) + " output tensors but " +
                                std::to_string(l.output_shapes.size()) + " output shapes");
    for (size_t j = 0; j < l.inputs.size(); ++j) {
      const int id = l.inputs[j];
      if (id < 0 || id >= n) fail(g, l, "inputs/" + std::to_string(j), "tensor id " + std::to_string(id) + " does not exist");
      const Tensor& t = g.tensors[id];
      if (t.shape != l.input_shapes[j])
        fail(g, l, "input_shape/" + std::to_string(j), "input " + shape_str(l.input_shapes[j]) + " differs from tensor '" +
                                                           t.name + "' " + shape_str(t.shape));
      if (t.role == TensorRole::Activation || t.role == TensorRole::GraphOutput) {
        if (t.producer < 0) fail(g, l, "inputs/" + std::to_string(j), "tensor '" + t.name + "' is read but no operation produces it");
        if (t.producer >= static_cast<int>(i))
          fail(g, l, "inputs/" + std::to_string(j), "tensor '" + t.name + "' is read before '" +
                                                        g.layers[t.producer].name + "' produces it");
      }
    }
    for (size_t j = 0; j < l.outputs.size(); ++j) {
      const int id = l.outputs[j];
      if (id < 0 || id >= n) fail(g, l, "outputs/" + std::to_string(j), "tensor id " + std::to_string(id) + " does not exist");
      const Tensor& t = g.tensors[id];
      if (t.role != TensorRole::Activation && t.role != TensorRole::GraphOutput)
        fail(g, l, "outputs/" + std::to_string(j), std::string("writes tensor '") + t.name + "' whose role is " + role_name(t.role));
      if (produced_by[id] >= 0)
        fail(g, l, "outputs/" + std::to_string(j), "tensor '" + t.name + "' is produced twice (also by '" +
                                                       g.layers[produced_by[id]].name + "')");
      produced_by[id] = static_cast<int>(i);
      if (t.shape != l.output_shapes[j])
        fail(g, l, "output_shape/" + std::to_string(j), "output " + shape_str(l.output_shapes[j]) + " differs from tensor '" +
                                                            t.name + "' " + shape_str(t.shape));
    }
  }
  for (const Tensor& t : g.tensors) {
    for (int64_t d : t.shape)
      if (d < 1) throw InputError(g.source, "", "tensor '" + t.name + "' has a dimension " + std::to_string(d) + " < 1");
    if (t.role == TensorRole::Activation && produced_by[t.id] < 0)
      throw InputError(g.source, "", "tensor '" + t.name + "' is an activation that no operation produces");
  }
}

void validate(const Graph& g) {
  if (g.layers.empty()) throw InputError(g.source, "", "the workload has no operations");
  check_ops(g);
  validate_tensors(g);
}

}  // namespace npusim::ir
