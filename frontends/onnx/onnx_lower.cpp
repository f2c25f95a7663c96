// The node loop of the ONNX lowering: values, IR emission and graph inputs/outputs
// (onnx_internal.h). Op handlers: onnx_ops.cpp; patterns: onnx_fuse.cpp.
#include <algorithm>
#include <filesystem>

#include "sim/ir/error.h"
#include "frontends/onnx/onnx_internal.h"

namespace npusim::frontends::onnx_fe {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::TensorRole;

namespace {

int onnx_type_of(DType t) {
  using TP = onnx::TensorProto;
  switch (t) {
    case DType::Int8: return TP::INT8;
    case DType::UInt8: return TP::UINT8;
    case DType::Int16: return TP::INT16;
    case DType::Int32: return TP::INT32;
    case DType::Int64: return TP::INT64;
    case DType::Float16: return TP::FLOAT16;
    case DType::BFloat16: return TP::BFLOAT16;
    case DType::Float32: return TP::FLOAT;
    case DType::Float64: return TP::DOUBLE;
    case DType::Bool: return TP::BOOL;
    case DType::Float8E4M3: return 17;  // FLOAT8E4M3FN
    case DType::Float8E5M2: return 19;  // FLOAT8E5M2
  }
  return TP::FLOAT;
}

// The role of a constant operand (as sim/ir/validate.cpp's parameter_role).
TensorRole role_for(OpKind k, size_t input) {
  if (ir::runs_on_pe_array(k) && input == 1) return TensorRole::Weight;
  if (ir::runs_on_pe_array(k) && input == 2) return TensorRole::Bias;
  if ((k == OpKind::LayerNorm || k == OpKind::RmsNorm) && input == 1) return TensorRole::Weight;
  if (k == OpKind::LayerNorm && input == 2) return TensorRole::Bias;
  if (k == OpKind::Gather && input == 0) return TensorRole::Weight;
  return TensorRole::Constant;
}

int64_t tensor_bytes(const ir::Tensor& t) { return ir::num_elements(t.shape) * ir::dtype_bytes(t.dtype); }

std::string node_where(const onnx::NodeProto& p, int i) {
  return "/graph/node/" + std::to_string(i) + " (" + (p.name().empty() ? p.op_type() : p.name()) + ")";
}

}  // namespace

Lowerer::Lowerer(const onnx::ModelProto& m, std::string path, std::string model_dir, OnnxReadInfo& info)
    : m_model(m), m_graph(m.graph()), m_path(std::move(path)), m_dir(std::move(model_dir)), m_info(info) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") m_opset = static_cast<int>(o.version());
  m_info.opset = m_opset;
}

ir::Graph Lowerer::run() {
  index_graph();
  define_inputs_and_initializers();
  define_constant_nodes();
  find_fusions();
  for (int i = 0; i < m_graph.node_size(); ++i) {
    const onnx::NodeProto& p = m_graph.node(i);
    NodeRef n{&p, i, node_where(p, i), p.name().empty() ? p.op_type() + "_" + std::to_string(i) : p.name()};
    try {
      lower_node(n);
    } catch (const NodeError& e) {
      throw InputError(m_path, n.where, e.what());
    }
  }
  finish_outputs();
  m_g.source = m_path;
  m_g.name = std::filesystem::path(m_path).stem().string();
  m_g.format = "onnx";
  if (m_g.layers.empty())
    throw InputError(m_path, "/graph", "no operation is left to simulate: every node was constant, dropped or folded");
  ir::derive_edges(m_g);
  ir::validate(m_g);
  return std::move(m_g);
}

void Lowerer::index_graph() {
  for (int i = 0; i < m_graph.node_size(); ++i) {
    const auto& p = m_graph.node(i);
    for (const auto& o : p.output())
      if (!o.empty()) m_producer.emplace(o, i);
    for (const auto& in : p.input())
      if (!in.empty()) m_consumers[in].push_back(i);
  }
  for (const auto& o : m_graph.output()) m_graph_outputs.insert(o.name());
  auto add_vinfo = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.has_type() || !vi.type().has_tensor_type()) return;
    const auto& tt = vi.type().tensor_type();
    VInfo v;
    v.elem_type = tt.elem_type();
    v.has_shape = tt.has_shape();
    if (v.has_shape)
      for (const auto& d : tt.shape().dim()) v.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    // The first shape given wins (inputs, value_info, outputs): shape inference may have put
    // its own into an output the file's value_info disagrees with.
    auto it = m_vinfo.find(vi.name());
    if (it == m_vinfo.end() || !it->second.has_shape) m_vinfo[vi.name()] = v;
  };
  for (const auto& vi : m_graph.input()) add_vinfo(vi);
  for (const auto& vi : m_graph.value_info()) add_vinfo(vi);
  for (const auto& vi : m_graph.output()) add_vinfo(vi);
}

void Lowerer::define_inputs_and_initializers() {
  for (int i = 0; i < m_graph.initializer_size(); ++i) {
    const onnx::TensorProto& t = m_graph.initializer(i);
    const std::string where = "/graph/initializer/" + std::to_string(i) + " (" + t.name() + ")";
    if (t.name().empty()) throw InputError(m_path, where, "initializer has no name");
    if (m_values.count(t.name())) throw InputError(m_path, where, "initializer '" + t.name() + "' is defined twice");
    auto v = std::make_shared<Value>();
    v->name = t.name();
    v->shape.assign(t.dims().begin(), t.dims().end());
    v->onnx_type = t.data_type();
    v->dtype = ir_dtype(t.data_type()).value_or(DType::Int8);
    v->is_const = true;
    v->proto = &t;
    m_values[t.name()] = v;
    m_static[t.name()] = &t;
  }
  for (int k = 0; k < m_graph.input_size(); ++k) {
    const onnx::ValueInfoProto& vi = m_graph.input(k);
    if (m_values.count(vi.name())) continue;  // an initializer listed as an input (IR version < 4)
    const std::string where = "/graph/input/" + std::to_string(k) + " (" + vi.name() + ")";
    if (!vi.has_type() || !vi.type().has_tensor_type())
      throw InputError(m_path, where, "is not a tensor (sequence, map and optional inputs are not read)");
    const auto& tt = vi.type().tensor_type();
    const auto dt = ir_dtype(tt.elem_type());
    if (!dt) throw InputError(m_path, where, "element type " + onnx_type_name(tt.elem_type()) + " is not supported");
    if (!tt.has_shape()) throw InputError(m_path, where, "has no shape: npusim needs the static shape of every graph input");
    auto v = std::make_shared<Value>();
    v->name = vi.name();
    for (int d = 0; d < tt.shape().dim_size(); ++d) {
      const auto& dim = tt.shape().dim(d);
      if (!dim.has_dim_value())
        throw InputError(m_path, where, "dim " + std::to_string(d) + " has no value: npusim needs static input shapes");
      if (dim.dim_value() < 1)
        throw InputError(m_path, where, "dim " + std::to_string(d) + " is " + std::to_string(dim.dim_value()) + ", not >= 1");
      v->shape.push_back(dim.dim_value());
    }
    try {
      checked_elements(v->shape);
    } catch (const NodeError& e) {
      throw InputError(m_path, where, e.what());
    }
    v->dtype = *dt;
    v->onnx_type = tt.elem_type();
    ir::Tensor t;
    t.name = vi.name();
    t.shape = ir_shape(v->shape);
    t.dtype = *dt;
    t.role = TensorRole::GraphInput;
    v->tensor = m_g.add_tensor(std::move(t));
    m_values[vi.name()] = v;
  }
}

void Lowerer::define_constant_nodes() {
  for (int i = 0; i < m_graph.node_size(); ++i) {
    const auto& p = m_graph.node(i);
    if (p.op_type() != "Constant" || !(p.domain().empty() || p.domain() == "ai.onnx") || p.output_size() < 1) continue;
    const std::string where = node_where(p, i);
    if (p.attribute_size() != 1) throw InputError(m_path, where, "Constant needs exactly one value attribute");
    const auto& a = p.attribute(0);
    auto v = std::make_shared<Value>();
    v->is_const = true;
    v->name = p.output(0);
    ConstData d;
    const std::string& an = a.name();
    if (an == "value") {
      const std::string bad = check_tensor_data(a.t(), m_dir);
      if (!bad.empty()) throw InputError(m_path, where, "value: " + bad);
      v->shape.assign(a.t().dims().begin(), a.t().dims().end());
      v->onnx_type = a.t().data_type();
      v->proto = &a.t();
      m_static[p.output(0)] = &a.t();
    } else if (an == "value_float" || an == "value_floats") {
      d.is_int = false;
      if (an == "value_float") d.f.push_back(a.f());
      else d.f.assign(a.floats().begin(), a.floats().end());
      if (an == "value_floats") v->shape = {static_cast<int64_t>(d.f.size())};
      v->onnx_type = onnx::TensorProto::FLOAT;
      v->data = std::make_shared<ConstData>(d);
    } else if (an == "value_int" || an == "value_ints") {
      if (an == "value_int") d.i.push_back(a.i());
      else d.i.assign(a.ints().begin(), a.ints().end());
      if (an == "value_ints") v->shape = {static_cast<int64_t>(d.i.size())};
      v->onnx_type = onnx::TensorProto::INT64;
      v->data = std::make_shared<ConstData>(d);
    } else if (an == "value_string" || an == "value_strings") {
      v->onnx_type = onnx::TensorProto::STRING;
      if (an == "value_strings") v->shape = {static_cast<int64_t>(a.strings_size())};
    } else if (an == "sparse_value") {
      v->shape.assign(a.sparse_tensor().dims().begin(), a.sparse_tensor().dims().end());
      v->onnx_type = a.sparse_tensor().values().data_type();
    } else {
      throw InputError(m_path, where, "Constant attribute '" + an + "' is not a constant value");
    }
    v->dtype = ir_dtype(v->onnx_type).value_or(DType::Int8);
    if (m_values.count(p.output(0)))
      throw InputError(m_path, where, "output '" + p.output(0) + "' is already defined");
    m_values[p.output(0)] = v;
    ++m_info.folded_nodes;
  }
}

void Lowerer::lower_node(const NodeRef& n) {
  const auto& p = *n.p;
  const bool default_domain = p.domain().empty() || p.domain() == "ai.onnx";
  if (default_domain && p.op_type() == "Constant") return;  // defined before the loop
  if (m_skip.count(n.index)) return;
  if (p.output_size() < 1 || p.output(0).empty()) throw NodeError(p.op_type() + " has no output");
  if (auto it = m_node_fusion.find(n.index); it != m_node_fusion.end()) {
    const Fusion& f = m_fusions[it->second];
    if (f.anchor == n.index) emit_fusion(f, n);
    return;
  }
  for (int k = 0; k < p.input_size(); ++k) {
    const std::string& name = p.input(k);
    if (!name.empty() && !find(name))
      throw NodeError("input " + std::to_string(k) + " '" + name +
                      "' is not a graph input, an initializer or the output of an earlier node");
  }
  if (default_domain) lower_default_domain(n);
  else opaque(n);
}

void Lowerer::finish_outputs() {
  for (int k = 0; k < m_graph.output_size(); ++k) {
    const std::string& name = m_graph.output(k).name();
    const std::string where = "/graph/output/" + std::to_string(k) + " (" + name + ")";
    ValuePtr v = find(name);
    if (!v) throw InputError(m_path, where, "graph output '" + name + "' is not produced by any node, nor an input or initializer");
    if (v->is_const) {
      m_info.notes.push_back("graph output '" + name + "' is a constant computed before run time: no op writes it");
      continue;
    }
    if (v->tensor < 0) throw InternalError("onnx: graph output '" + name + "' has no IR tensor");
    ir::Tensor& t = m_g.tensors[v->tensor];
    if (t.role == TensorRole::GraphInput) {
      m_info.notes.push_back("graph output '" + name + "' is the graph input '" + t.name + "' itself");
      continue;
    }
    t.role = TensorRole::GraphOutput;
  }
}

// ---------------------------------------------------------------- values

ValuePtr Lowerer::find(const std::string& name) const {
  auto it = m_values.find(name);
  return it == m_values.end() ? nullptr : it->second;
}

bool Lowerer::has_input(const NodeRef& n, int k) const { return k < n.p->input_size() && !n.p->input(k).empty(); }

ValuePtr Lowerer::input(const NodeRef& n, int k) const {
  if (!has_input(n, k))
    throw NodeError(n.op() + " needs input " + std::to_string(k) + ", the node has " + std::to_string(n.p->input_size()));
  ValuePtr v = find(n.p->input(k));
  if (!v) throw NodeError("input " + std::to_string(k) + " '" + n.p->input(k) + "' is not defined");
  return v;
}

std::vector<ValuePtr> Lowerer::inputs(const NodeRef& n) const {
  std::vector<ValuePtr> r;
  for (int k = 0; k < n.p->input_size(); ++k) r.push_back(has_input(n, k) ? find(n.p->input(k)) : nullptr);
  return r;
}

bool Lowerer::all_const(const std::vector<ValuePtr>& vs) const {
  for (const auto& v : vs)
    if (v && !v->is_const) return false;
  return true;
}

const ConstData* Lowerer::data(const ValuePtr& v) {
  if (!v || !v->is_const) return nullptr;
  if (!v->data && v->proto && !v->decode_tried) {
    v->decode_tried = true;
    if (auto d = decode_tensor(*v->proto)) v->data = std::make_shared<ConstData>(std::move(*d));
  }
  return v->data.get();
}

std::optional<std::vector<int64_t>> Lowerer::ints_of(const ValuePtr& v) {
  const ConstData* d = data(v);
  if (!d) return std::nullopt;
  std::vector<int64_t> r;
  for (size_t k = 0; k < d->size(); ++k) r.push_back(d->get_int(k));
  return r;
}

std::optional<double> Lowerer::scalar_of(const ValuePtr& v) {
  const ConstData* d = data(v);
  if (!d || d->size() != 1) return std::nullopt;
  return d->get(0);
}

std::vector<int64_t> Lowerer::const_ints(const NodeRef& n, int k, const std::string& what) {
  ValuePtr v = input(n, k);
  auto r = ints_of(v);
  if (!r)
    throw NodeError(what + " (input " + std::to_string(k) + " '" + n.p->input(k) +
                    "') is not known before run time: npusim needs it constant");
  return *r;
}

bool Lowerer::consumed(const std::string& name) const {
  return m_consumers.count(name) || m_graph_outputs.count(name);
}

void Lowerer::define(const NodeRef& n, int out, ValuePtr v) {
  if (out >= n.p->output_size()) return;
  const std::string& name = n.p->output(out);
  if (name.empty()) return;
  if (m_values.count(name)) throw NodeError("output '" + name + "' is already defined by an earlier node, input or initializer");
  checked_elements(v->shape);
  auto vi = m_vinfo.find(name);
  if (vi != m_vinfo.end() && vi->second.has_shape) {
    const auto& dims = vi->second.dims;
    bool same = dims.size() == v->shape.size();
    for (size_t i = 0; same && i < dims.size(); ++i) same = dims[i] < 0 || dims[i] == v->shape[i];
    if (!same) {
      std::string s = "[";
      for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
      throw NodeError("output '" + name + "' is " + ir::shape_str(v->shape) + " by the rules of " + n.op() +
                      ", but the model's value_info says " + s + "]");
    }
  }
  if (v->name.empty()) v->name = name;
  m_values[name] = std::move(v);
}

void Lowerer::alias(const NodeRef& n, int out, const ValuePtr& v) {
  if (out >= n.p->output_size() || n.p->output(out).empty()) return;
  const std::string& name = n.p->output(out);
  if (m_values.count(name)) throw NodeError("output '" + name + "' is already defined by an earlier node, input or initializer");
  m_values[name] = v;
}

ValuePtr Lowerer::new_const(const std::string& name, Shape shape, DType dt) {
  auto v = std::make_shared<Value>();
  v->name = name;
  v->shape = std::move(shape);
  v->dtype = dt;
  v->onnx_type = onnx_type_of(dt);
  v->is_const = true;
  return v;
}

ValuePtr Lowerer::make_const(Shape shape, DType dt, int onnx_type, ConstData d) {
  auto v = std::make_shared<Value>();
  v->shape = std::move(shape);
  v->dtype = dt;
  v->onnx_type = onnx_type;
  v->is_const = true;
  v->data = std::make_shared<ConstData>(std::move(d));
  return v;
}

// ---------------------------------------------------------------- IR emission

std::string Lowerer::unique_name(const std::string& base) {
  std::string b = base.empty() ? "node" : base;
  std::string s = b;
  for (int k = 1; m_layer_names.count(s); ++k) s = b + "_" + std::to_string(k);
  m_layer_names.insert(s);
  return s;
}

int Lowerer::materialize(const ValuePtr& v, TensorRole role) {
  if (v->tensor >= 0) return v->tensor;
  if (!v->is_const) throw InternalError("onnx: activation '" + v->name + "' has no IR tensor");
  if (v->onnx_type == onnx::TensorProto::STRING || !ir_dtype(v->onnx_type))
    throw NodeError("constant '" + v->name + "' of element type " + onnx_type_name(v->onnx_type) +
                    " cannot be an operand of an IR op");
  ir::Tensor t;
  t.name = v->name.empty() ? "constant_" + std::to_string(m_g.tensors.size()) : v->name;
  t.shape = ir_shape(v->shape);
  for (int64_t d : t.shape)
    if (d < 1) throw NodeError("constant '" + t.name + "' " + ir::shape_str(v->shape) + " has no elements");
  t.dtype = v->dtype;
  t.role = role;
  v->tensor = m_g.add_tensor(std::move(t));
  return v->tensor;
}

ValuePtr Lowerer::emit(const NodeRef& n, OpKind k, const std::string& suffix, const std::vector<ValuePtr>& ins,
                       const Shape& out, DType dt, const std::string& out_name,
                       const std::function<void(ir::Layer&)>& attrs) {
  return emit_multi(n, k, ins, {out}, dt, {out_name}, attrs, suffix).at(0);
}

std::vector<ValuePtr> Lowerer::emit_multi(const NodeRef& n, OpKind k, const std::vector<ValuePtr>& ins,
                                          const std::vector<Shape>& outs, DType dt, const std::vector<std::string>& names,
                                          const std::function<void(ir::Layer&)>& attrs, const std::string& suffix) {
  for (const auto& v : ins)
    if (!v) throw InternalError("onnx: null operand of " + std::string(ir::op_name(k)));
  std::vector<ValuePtr> res;
  if (all_const(ins)) {  // computable before run time: a constant, no op
    for (size_t o = 0; o < outs.size(); ++o) {
      auto v = new_const(names[o], outs[o], dt);
      res.push_back(v);
    }
    ++m_info.folded_nodes;
    return res;
  }
  ir::Layer l;
  l.name = unique_name(suffix.empty() ? n.name : n.name + "/" + suffix);
  l.op = k;
  l.pointer = n.where;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (ir::num_elements(ins[i]->shape) < 1)
      throw NodeError(std::string(ir::op_name(k)) + " operand '" + ins[i]->name + "' " + ir::shape_str(ins[i]->shape) +
                      " has no elements");
    l.inputs.push_back(materialize(ins[i], role_for(k, i)));
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    checked_elements(outs[o]);
    for (int64_t d : outs[o])
      if (d < 1)
        throw NodeError(std::string(ir::op_name(k)) + " output '" + names[o] + "' " + ir::shape_str(outs[o]) +
                        " has no elements");
    ir::Tensor t;
    t.name = names[o];
    t.shape = ir_shape(outs[o]);
    t.dtype = dt;
    t.role = TensorRole::Activation;
    auto v = std::make_shared<Value>();
    v->name = names[o];
    v->shape = outs[o];
    v->dtype = dt;
    v->onnx_type = onnx_type_of(dt);
    v->tensor = m_g.add_tensor(std::move(t));
    l.outputs.push_back(v->tensor);
    res.push_back(v);
  }
  if (attrs) attrs(l);
  l.index = static_cast<int>(m_g.layers.size());
  m_g.layers.push_back(std::move(l));
  return res;
}

ValuePtr Lowerer::reshape(const NodeRef& n, const ValuePtr& x, const Shape& to, const std::string& out_name,
                          const std::string& suffix) {
  if (x->shape == to) return x;
  if (ir::num_elements(x->shape) != ir::num_elements(to))
    throw NodeError("cannot reshape " + ir::shape_str(x->shape) + " to " + ir::shape_str(to));
  if (x->is_const) {
    auto v = new_const(out_name, to, x->dtype);
    v->onnx_type = x->onnx_type;
    if (x->data) v->data = x->data;
    return v;
  }
  return emit(n, OpKind::Reshape, suffix, {x}, to, x->dtype, out_name);
}

void Lowerer::opaque(const NodeRef& n, const std::string& reason, const std::vector<Shape>& shapes,
                     std::optional<DType> dtype) {
  const auto& p = *n.p;
  std::vector<ValuePtr> ins;
  for (const auto& v : inputs(n))
    if (v && ir::num_elements(v->shape) > 0 && v->onnx_type != onnx::TensorProto::STRING) ins.push_back(v);
  std::vector<Shape> outs;
  std::vector<DType> dts;
  std::vector<int> idx;
  auto full = [&](const std::string& name) {
    auto vi = m_vinfo.find(name);
    return vi != m_vinfo.end() && vi->second.has_shape &&
           std::all_of(vi->second.dims.begin(), vi->second.dims.end(), [](int64_t d) { return d >= 0; });
  };
  for (int k = static_cast<int>(shapes.size()); k < p.output_size(); ++k)
    if (!p.output(k).empty() && !full(p.output(k)) && consumed(p.output(k))) {
      infer_node(n);
      break;
    }
  for (int k = 0; k < p.output_size(); ++k) {
    const std::string& name = p.output(k);
    if (name.empty()) continue;
    auto vi = m_vinfo.find(name);
    if (static_cast<size_t>(k) < shapes.size()) {
      outs.push_back(shapes[k]);
      const auto vt = vi != m_vinfo.end() ? ir_dtype(vi->second.elem_type) : std::nullopt;
      dts.push_back(dtype ? *dtype : vt ? *vt : ins.empty() ? DType::Float32 : ins[0]->dtype);
      idx.push_back(k);
      continue;
    }
    if (!full(name)) {
      if (!consumed(name)) continue;
      throw NodeError("output '" + name + "' of " + p.op_type() +
                      " has no static shape (neither the model's value_info nor libonnx's shape inference gives one); npusim needs static shapes" +
                      (reason.empty() ? "" : " (" + reason + ")"));
    }
    outs.push_back(Shape(vi->second.dims.begin(), vi->second.dims.end()));
    checked_elements(outs.back());
    dts.push_back(ir_dtype(vi->second.elem_type).value_or(ins.empty() ? DType::Float32 : ins[0]->dtype));
    idx.push_back(k);
  }
  const std::string label = (p.domain().empty() || p.domain() == "ai.onnx") ? p.op_type() : p.domain() + "." + p.op_type();
  if (all_const(ins)) {  // nothing computed at run time
    for (size_t o = 0; o < outs.size(); ++o) {
      auto v = new_const(p.output(idx[o]), outs[o], dts[o]);
      define(n, idx[o], v);
    }
    ++m_info.folded_nodes;
    return;
  }
  if (outs.empty()) {
    m_info.notes.push_back("node " + n.where + " (" + label + ") has no used output: dropped");
    ++m_info.folded_nodes;
    return;
  }
  ir::Layer l;
  l.name = unique_name(n.name);
  l.op = OpKind::Opaque;
  l.pointer = n.where;
  l.opaque_label = label;
  int64_t bytes = 0, flops = 0;
  for (const auto& v : ins) {
    l.inputs.push_back(materialize(v, TensorRole::Constant));
    bytes += tensor_bytes(m_g.tensor(l.inputs.back()));
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    for (int64_t d : outs[o])
      if (d < 1) throw NodeError(label + " output '" + p.output(idx[o]) + "' " + ir::shape_str(outs[o]) + " has no elements");
    ir::Tensor t;
    t.name = p.output(idx[o]);
    t.shape = ir_shape(outs[o]);
    t.dtype = dts[o];
    auto v = std::make_shared<Value>();
    v->shape = outs[o];
    v->dtype = dts[o];
    v->onnx_type = onnx_type_of(dts[o]);
    bytes += tensor_bytes(t);
    flops += ir::num_elements(t.shape);
    v->tensor = m_g.add_tensor(std::move(t));
    l.outputs.push_back(v->tensor);
    define(n, idx[o], v);
  }
  l.opaque_bytes = bytes;
  l.opaque_flops = flops;
  l.index = static_cast<int>(m_g.layers.size());
  m_g.layers.push_back(std::move(l));
  ++m_info.opaque_types[label];
}

}  // namespace npusim::frontends::onnx_fe
