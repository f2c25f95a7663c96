// fx payload (torch.export graph schema) -> workload IR (rules in fx_lower.h).
#include "frontends/pipeline/fx_lower.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "sim/ir/error.h"

namespace npusim::frontends::pipeline {

namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using json::Cursor;
using json::Json;

// ---- base64 ----

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

// ---- torch.export ScalarType ----

std::optional<DType> scalar_type(const Cursor& c) {
  // schema.py (torch >= 2.1): UNKNOWN 0, BYTE 1, CHAR 2, SHORT 3, INT 4, LONG 5, HALF 6, FLOAT 7,
  // DOUBLE 8, COMPLEX* 9-11, BOOL 12, BFLOAT16 13, UINT16 28, FLOAT8* 29-32.
  static const std::map<int64_t, DType> by_number = {
      {1, DType::UInt8},   {2, DType::Int8},     {3, DType::Int16},    {4, DType::Int32},
      {5, DType::Int64},   {6, DType::Float16},  {7, DType::Float32},  {8, DType::Float64},
      {12, DType::Bool},   {13, DType::BFloat16}, {28, DType::Int16},  {29, DType::Float8E4M3},
      {30, DType::Float8E5M2}, {31, DType::Float8E4M3}, {32, DType::Float8E5M2}};  // FNUZ variants as the OCP types
  static const std::map<std::string, DType> by_name = {
      {"BYTE", DType::UInt8},      {"CHAR", DType::Int8},     {"SHORT", DType::Int16},
      {"INT", DType::Int32},       {"LONG", DType::Int64},    {"HALF", DType::Float16},
      {"FLOAT", DType::Float32},   {"DOUBLE", DType::Float64}, {"BOOL", DType::Bool},
      {"BFLOAT16", DType::BFloat16}, {"UINT16", DType::Int16}, {"FLOAT8E4M3FN", DType::Float8E4M3},
      {"FLOAT8E5M2", DType::Float8E5M2}, {"FLOAT8E4M3FNUZ", DType::Float8E4M3}, {"FLOAT8E5M2FNUZ", DType::Float8E5M2}};
  if (c.value().is_string()) {
    std::string s = c.as_string();
    if (s.rfind("torch.", 0) == 0) return ir::parse_dtype(s.substr(6));
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    auto it = by_name.find(s);
    if (it != by_name.end()) return it->second;
    return std::nullopt;
  }
  auto it = by_number.find(c.as_int());
  if (it == by_number.end()) return std::nullopt;
  return it->second;
}

// A SymInt: {"as_int": n}, {"as_expr": {"expr_str", "hint": {"as_int": n} | n}} or a plain integer.
int64_t sym_int(const Cursor& c) {
  if (c.value().is_number()) return c.as_int();
  c.expect_object();
  if (auto i = c.find("as_int")) return i->as_int();
  if (auto e = c.find("as_expr")) {
    if (e->value().is_object())
      if (auto h = e->find("hint")) return h->value().is_object() ? h->get_int("as_int") : h->as_int();
    c.fail("symbolic size '" + (e->value().is_object() && e->has("expr_str") ? e->get_string("expr_str") : std::string("?")) +
           "' has no hint; npusim needs concrete shapes");
  }
  c.fail("expected a SymInt ({\"as_int\": n} or {\"as_expr\": ...})");
}

struct Meta {
  Shape shape;
  DType dtype = DType::Float32;
};

// ---- aten ops ----

enum class H {
  Mm, Bmm, Matmul, Addmm, Linear, Conv, Binary, RSub, Unary, Clip, Softmax, LayerNorm, RmsNorm, Reduce, Embedding,
  IndexSelect, Reshape, Expand, Permute, TransposeInt, T, Cat, Slice, Split, Pad
};

struct AtenOp {
  H handler;
  OpKind op;
};

const std::map<std::string, AtenOp>& aten_ops() {
  static const std::map<std::string, AtenOp> ops = {
      {"mm", {H::Mm, OpKind::MatMul}},
      {"bmm", {H::Bmm, OpKind::BatchMatMul}},
      {"matmul", {H::Matmul, OpKind::MatMul}},
      {"addmm", {H::Addmm, OpKind::MatMul}},
      {"linear", {H::Linear, OpKind::Dense}},
      {"convolution", {H::Conv, OpKind::Conv2d}},
      {"conv2d", {H::Conv, OpKind::Conv2d}},
      {"add", {H::Binary, OpKind::ElementWiseAdd}},
      {"sub", {H::Binary, OpKind::Sub}},
      {"rsub", {H::RSub, OpKind::Sub}},
      {"mul", {H::Binary, OpKind::Mul}},
      {"div", {H::Binary, OpKind::Div}},
      {"maximum", {H::Binary, OpKind::Maximum}},
      {"minimum", {H::Binary, OpKind::Minimum}},
      {"relu", {H::Unary, OpKind::Relu}},
      {"gelu", {H::Unary, OpKind::Gelu}},
      {"silu", {H::Unary, OpKind::Silu}},
      {"sigmoid", {H::Unary, OpKind::Sigmoid}},
      {"tanh", {H::Unary, OpKind::Tanh}},
      {"exp", {H::Unary, OpKind::Exp}},
      {"sqrt", {H::Unary, OpKind::Sqrt}},
      {"rsqrt", {H::Unary, OpKind::Rsqrt}},
      {"neg", {H::Unary, OpKind::Neg}},
      {"hardtanh", {H::Clip, OpKind::Clip}},
      {"clamp", {H::Clip, OpKind::Clip}},
      {"softmax", {H::Softmax, OpKind::Softmax}},
      {"_softmax", {H::Softmax, OpKind::Softmax}},
      {"_log_softmax", {H::Softmax, OpKind::Softmax}},
      {"log_softmax", {H::Softmax, OpKind::Softmax}},
      {"layer_norm", {H::LayerNorm, OpKind::LayerNorm}},
      {"native_layer_norm", {H::LayerNorm, OpKind::LayerNorm}},
      {"rms_norm", {H::RmsNorm, OpKind::RmsNorm}},
      {"mean", {H::Reduce, OpKind::ReduceMean}},
      {"sum", {H::Reduce, OpKind::ReduceSum}},
      {"amax", {H::Reduce, OpKind::ReduceMax}},
      {"embedding", {H::Embedding, OpKind::Gather}},
      {"index_select", {H::IndexSelect, OpKind::Gather}},
      {"view", {H::Reshape, OpKind::Reshape}},
      {"reshape", {H::Reshape, OpKind::Reshape}},
      {"_unsafe_view", {H::Reshape, OpKind::Reshape}},
      {"view_copy", {H::Reshape, OpKind::Reshape}},
      {"squeeze", {H::Reshape, OpKind::Reshape}},
      {"unsqueeze", {H::Reshape, OpKind::Reshape}},
      {"flatten", {H::Reshape, OpKind::Reshape}},
      {"clone", {H::Reshape, OpKind::Reshape}},
      {"contiguous", {H::Reshape, OpKind::Reshape}},
      {"detach", {H::Reshape, OpKind::Reshape}},
      {"alias", {H::Reshape, OpKind::Reshape}},
      {"lift_fresh_copy", {H::Reshape, OpKind::Reshape}},
      {"_to_copy", {H::Reshape, OpKind::Reshape}},
      {"to", {H::Reshape, OpKind::Reshape}},
      {"expand", {H::Expand, OpKind::Reshape}},
      {"permute", {H::Permute, OpKind::Transpose}},
      {"transpose", {H::TransposeInt, OpKind::Transpose}},
      {"t", {H::T, OpKind::Transpose}},
      {"cat", {H::Cat, OpKind::Concat}},
      {"slice", {H::Slice, OpKind::Slice}},
      {"split", {H::Split, OpKind::Split}},
      {"split_with_sizes", {H::Split, OpKind::Split}},
      {"constant_pad_nd", {H::Pad, OpKind::Pad}},
  };
  return ops;
}

// "torch.ops.aten.mm.default" -> ("aten", "mm", "default"); "aten::mm" reads the same.
struct Target {
  std::string ns, op, overload;
};
Target parse_target(std::string s) {
  if (s.rfind("torch.ops.", 0) == 0) s = s.substr(10);
  Target t;
  const size_t colons = s.find("::");
  if (colons != std::string::npos) {
    t.ns = s.substr(0, colons);
    s = s.substr(colons + 2);
    const size_t dot = s.find('.');
    t.op = s.substr(0, dot);
    t.overload = dot == std::string::npos ? "default" : s.substr(dot + 1);
    return t;
  }
  const size_t d1 = s.find('.');
  if (d1 == std::string::npos) return {"", s, ""};
  t.ns = s.substr(0, d1);
  const size_t d2 = s.find('.', d1 + 1);
  t.op = s.substr(d1 + 1, d2 == std::string::npos ? std::string::npos : d2 - d1 - 1);
  t.overload = d2 == std::string::npos ? "default" : s.substr(d2 + 1);
  return t;
}

// Why a node did not lower to its op; it becomes opaque with this reason.
struct NotLowered {
  std::string reason;
};
[[noreturn]] void not_lowered(const std::string& why) { throw NotLowered{why}; }

class Lowerer {
 public:
  Lowerer(const Json& payload, const FxLowerOptions& opt) : m_opt(opt), m_root(payload, opt.source, opt.pointer) {}

  FxLowered run() {
    m_out.graph.source = m_opt.source;
    m_out.graph.name = m_opt.name;
    m_out.graph.format = "pipeline";
    const Cursor g = locate_graph();
    m_tv = g.find("tensor_values");
    if (m_tv) {
      m_tv->expect_object();
      // ordered_json finds members by a linear scan: index them once.
      for (auto it = m_tv->value().begin(); it != m_tv->value().end(); ++it) m_tv_index.emplace(it.key(), &it.value());
    }
    collect_uses(g);
    inputs(g);
    const Cursor nodes = g.at("nodes");
    nodes.expect_array();
    for (const Cursor& n : nodes.elements()) {
      ++m_out.num_nodes;
      node(n);
    }
    outputs(g);
    assign_parameter_roles();
    ir::derive_edges(m_out.graph);
    ir::validate(m_out.graph);
    return std::move(m_out);
  }

 private:
  // ---- structure ----

  Cursor locate_graph() const {
    m_root.expect_object();
    if (m_root.has("nodes")) return m_root;
    if (auto g = m_root.find("graph")) return *g;
    if (auto gm = m_root.find("graph_module")) return gm->at("graph");
    m_root.fail("no graph in the fx payload: expected 'nodes' (a torch.export Graph), 'graph' or 'graph_module'");
  }

  // Tensor names in an Argument union: as_tensor, as_tensors, as_optional_tensors, as_optional_tensor.
  static std::vector<std::pair<std::string, Cursor>> tensor_names(const Cursor& arg) {
    std::vector<std::pair<std::string, Cursor>> r;
    if (!arg.value().is_object()) return r;
    if (auto t = arg.find("as_tensor")) r.emplace_back(t->get_string("name"), t->at("name"));
    if (auto ts = arg.find("as_tensors"))
      for (const Cursor& e : ts->elements()) r.emplace_back(e.get_string("name"), e.at("name"));
    if (auto ts = arg.find("as_optional_tensors"))
      for (const Cursor& e : ts->elements())
        if (auto t = e.find("as_tensor")) r.emplace_back(t->get_string("name"), t->at("name"));
    if (auto t = arg.find("as_optional_tensor"))
      if (auto tt = t->find("as_tensor")) r.emplace_back(tt->get_string("name"), tt->at("name"));
    return r;
  }

  void collect_uses(const Cursor& g) {
    for (const Cursor& n : g.at("nodes").elements())
      for (const Cursor& na : n.at("inputs").elements())
        for (const auto& [name, c] : tensor_names(na.at("arg"))) m_used.insert(name);
    for (const Cursor& o : g.at("outputs").elements())
      for (const auto& [name, c] : tensor_names(o)) m_used.insert(name);
  }

  Cursor tensor_value(const std::string& name, const Cursor& where) const {
    auto it = m_tv_index.find(name);
    if (it == m_tv_index.end()) where.fail("tensor '" + name + "' has no entry in tensor_values (npusim needs its shape)");
    return Cursor(*it->second, m_opt.source, json::pointer_join(m_tv->pointer(), name));
  }

  Meta meta(const std::string& name, const Cursor& where) const {
    const Cursor tm = tensor_value(name, where);
    Meta m;
    for (const Cursor& s : tm.at("sizes").elements()) {
      const int64_t d = sym_int(s);
      if (d < 0) s.fail("size must be >= 0, got " + std::to_string(d));
      m.shape.push_back(d);
    }
    const auto dt = scalar_type(tm.at("dtype"));
    if (!dt) tm.at("dtype").fail("unsupported tensor dtype " + tm.at("dtype").value().dump());
    m.dtype = *dt;
    return m;
  }

  int new_tensor(const std::string& name, const Shape& shape, DType dtype, ir::TensorRole role) {
    ir::Tensor t;
    t.name = name;
    t.shape = shape;
    t.dtype = dtype;
    t.role = role;
    return m_out.graph.add_tensor(std::move(t));
  }

  void inputs(const Cursor& g) {
    std::vector<std::pair<std::string, Cursor>> names;
    for (const Cursor& a : g.at("inputs").elements())
      for (auto& nc : tensor_names(a)) names.push_back(nc);
    if (m_opt.inputs && names.size() != m_opt.inputs->size())
      g.at("inputs").fail("the graph has " + std::to_string(names.size()) + " tensor inputs but the supertask has " +
                          std::to_string(m_opt.inputs->size()));
    for (size_t k = 0; k < names.size(); ++k) {
      const auto& [name, where] = names[k];
      int id;
      if (m_opt.inputs) {
        const FxBinding& b = (*m_opt.inputs)[k];
        if (m_tv_index.count(name)) {
          const Meta m = meta(name, where);
          if (m.shape != b.shape)
            tensor_value(name, where).fail("graph input " + std::to_string(k) + " '" + name + "' " + ir::shape_str(m.shape) +
                                " differs from the supertask's input '" + b.name + "' " + ir::shape_str(b.shape));
        }
        id = new_tensor(b.name, b.shape, b.dtype, b.constant ? ir::TensorRole::Constant : ir::TensorRole::GraphInput);
        if (b.constant) m_params.insert(id);
      } else {
        const Meta m = meta(name, where);
        id = new_tensor(name, m.shape, m.dtype, ir::TensorRole::GraphInput);
      }
      if (m_tensor.count(name)) where.fail("graph input '" + name + "' is listed twice");
      m_tensor[name] = id;
    }
  }

  void outputs(const Cursor& g) {
    std::vector<std::pair<std::string, Cursor>> names;
    for (const Cursor& a : g.at("outputs").elements())
      for (auto& nc : tensor_names(a)) names.push_back(nc);
    if (m_opt.outputs && names.size() != m_opt.outputs->size())
      g.at("outputs").fail("the graph has " + std::to_string(names.size()) + " tensor outputs but the supertask has " +
                           std::to_string(m_opt.outputs->size()));
    std::set<int> bound;
    for (size_t k = 0; k < names.size(); ++k) {
      const auto& [name, where] = names[k];
      const int id = tensor(name, where);
      ir::Tensor& t = m_out.graph.tensors[id];
      const std::string out_name = m_opt.outputs ? (*m_opt.outputs)[k].name : name;
      if (m_opt.outputs && t.shape != (*m_opt.outputs)[k].shape)
        where.fail("graph output " + std::to_string(k) + " '" + name + "' " + ir::shape_str(t.shape) +
                   " differs from the supertask's output '" + out_name + "' " + ir::shape_str((*m_opt.outputs)[k].shape));
      const bool made_by_op = t.role == ir::TensorRole::Activation;
      if (made_by_op && !bound.count(id)) {
        t.role = ir::TensorRole::GraphOutput;
        t.name = out_name;
        bound.insert(id);
        continue;
      }
      // An input passed through, or a value returned twice: a copy gives the output its own tensor.
      const int copy = new_tensor(out_name, t.shape, m_opt.outputs ? (*m_opt.outputs)[k].dtype : t.dtype, ir::TensorRole::GraphOutput);
      ir::Layer l;
      l.name = unique_name(out_name + "/copy");
      l.op = OpKind::Reshape;
      l.inputs = {id};
      l.outputs = {copy};
      l.pointer = where.pointer();
      m_out.graph.layers.push_back(std::move(l));
    }
  }

  int tensor(const std::string& name, const Cursor& where) const {
    auto it = m_tensor.find(name);
    if (it == m_tensor.end()) where.fail("tensor '" + name + "' is not defined before it is used");
    return it->second;
  }

  std::string unique_name(const std::string& base) {
    std::string n = base;
    for (int i = 1; !m_names.insert(n).second; ++i) n = base + "_" + std::to_string(i);
    return n;
  }

  // Parameters take their role from their first use, as validate.cpp's name-linked readers do.
  void assign_parameter_roles() {
    std::set<int> done;
    for (const ir::Layer& l : m_out.graph.layers)
      for (size_t j = 0; j < l.inputs.size(); ++j) {
        const int id = l.inputs[j];
        if (!m_params.count(id) || !done.insert(id).second) continue;
        ir::TensorRole r = ir::TensorRole::Constant;
        if (ir::runs_on_pe_array(l.op) && j == 1) r = ir::TensorRole::Weight;
        else if (ir::runs_on_pe_array(l.op) && j == 2) r = ir::TensorRole::Bias;
        else if ((l.op == OpKind::LayerNorm || l.op == OpKind::RmsNorm) && j == 1) r = ir::TensorRole::Weight;
        else if (l.op == OpKind::LayerNorm && j == 2) r = ir::TensorRole::Bias;
        else if (l.op == OpKind::Gather && j == 0) r = ir::TensorRole::Weight;
        m_out.graph.tensors[id].role = r;
      }
  }

  // ---- one node ----

  struct Node {
    Cursor c;
    std::string target;
    Target t;
    std::vector<Cursor> args;              // NamedArgument cursors
    std::vector<int> tensor_inputs;        // every tensor argument, in order
    std::vector<int> outs;                 // its tensor outputs (IR ids), in order
    std::string name;
  };

  void node(const Cursor& c) {
    Node n{c, c.get_string("target"), {}, c.at("inputs").elements(), {}, {}, {}};
    n.t = parse_target(n.target);
    for (const Cursor& na : n.args)
      for (const auto& [name, where] : tensor_names(na.at("arg"))) n.tensor_inputs.push_back(tensor(name, where));
    // Outputs: define every tensor output with its meta.
    std::vector<std::pair<std::string, Cursor>> outs;
    for (const Cursor& o : c.at("outputs").elements())
      for (auto& nc : tensor_names(o)) outs.push_back(nc);
    if (outs.empty()) {
      ++m_out.num_skipped;
      return;
    }
    std::string base = c.value().contains("name") && c.value()["name"].is_string() ? c.get_string("name") : outs[0].first;
    n.name = unique_name(base);
    const auto& ops = aten_ops();
    auto it = n.t.ns == "aten" ? ops.find(n.t.op) : ops.end();
    // Outputs past the first exist only when something reads them (native_layer_norm's mean
    // and rstd usually do not), except for split, whose op makes them all.
    const bool all_outputs = it != ops.end() && it->second.handler == H::Split;
    for (size_t k = 0; k < outs.size(); ++k) {
      const auto& [name, where] = outs[k];
      if (m_tensor.count(name)) where.fail("tensor '" + name + "' is defined twice");
      const Meta m = meta(name, where);
      if (k > 0 && !all_outputs && !m_used.count(name)) continue;
      const int id = new_tensor(name, m.shape, m.dtype, ir::TensorRole::Activation);
      m_tensor[name] = id;
      n.outs.push_back(id);
    }
    if (it == ops.end()) {
      opaque(n, n.tensor_inputs, n.outs, n.target);
      return;
    }
    const size_t first_layer = m_out.graph.layers.size(), first_tensor = m_out.graph.tensors.size();
    try {
      lower(n, it->second);
    } catch (const NotLowered& e) {
      m_out.graph.layers.resize(first_layer);
      m_out.graph.tensors.resize(first_tensor);  // temporaries and scalar operands of the failed lowering
      opaque(n, n.tensor_inputs, n.outs, n.target + " (" + e.reason + ")");
    }
  }

  // Arguments by schema name, else by position.
  std::optional<Cursor> arg(const Node& n, const std::string& name, size_t pos) const {
    for (const Cursor& a : n.args)
      if (a.get_string("name") == name) return a.at("arg");
    if (pos < n.args.size()) {
      const Cursor& a = n.args[pos];
      // A positional match only when the producer did not name its arguments.
      if (a.get_string("name").empty()) return a.at("arg");
    }
    return std::nullopt;
  }
  static bool is_none(const std::optional<Cursor>& a) {
    return !a || !a->value().is_object() || a->has("as_none") || a->value().empty();
  }
  std::optional<int> tensor_arg(const Node& n, const std::string& name, size_t pos) const {
    const auto a = arg(n, name, pos);
    if (is_none(a)) return std::nullopt;
    if (auto t = a->find("as_tensor")) return tensor(t->get_string("name"), t->at("name"));
    return std::nullopt;
  }
  int need_tensor(const Node& n, const std::string& name, size_t pos) const {
    auto t = tensor_arg(n, name, pos);
    if (!t) not_lowered("argument '" + name + "' is not a tensor");
    return *t;
  }
  std::optional<int64_t> int_arg(const Node& n, const std::string& name, size_t pos) const {
    const auto a = arg(n, name, pos);
    if (is_none(a)) return std::nullopt;
    if (auto i = a->find("as_int")) return i->as_int();
    if (auto s = a->find("as_sym_int")) {
      if (auto i = s->find("as_int")) return i->as_int();
      not_lowered("argument '" + name + "' is symbolic");
    }
    not_lowered("argument '" + name + "' is not an integer");
  }
  std::optional<double> number_arg(const Node& n, const std::string& name, size_t pos) const {
    const auto a = arg(n, name, pos);
    if (is_none(a)) return std::nullopt;
    if (auto f = a->find("as_float")) return f->as_double();
    if (auto i = a->find("as_int")) return static_cast<double>(i->as_int());
    if (a->has("as_tensor")) return std::nullopt;
    not_lowered("argument '" + name + "' is not a number");
  }
  std::optional<std::vector<int64_t>> ints_arg(const Node& n, const std::string& name, size_t pos) const {
    const auto a = arg(n, name, pos);
    if (is_none(a)) return std::nullopt;
    if (auto i = a->find("as_ints")) return i->as_int_array();
    if (auto i = a->find("as_int")) return std::vector<int64_t>{i->as_int()};
    if (auto s = a->find("as_sym_ints")) {
      std::vector<int64_t> r;
      for (const Cursor& e : s->elements()) {
        auto i = e.find("as_int");
        if (!i) not_lowered("argument '" + name + "' is symbolic");
        r.push_back(i->as_int());
      }
      return r;
    }
    not_lowered("argument '" + name + "' is not a list of integers");
  }
  std::optional<bool> bool_arg(const Node& n, const std::string& name, size_t pos) const {
    const auto a = arg(n, name, pos);
    if (is_none(a)) return std::nullopt;
    if (auto b = a->find("as_bool")) return b->as_bool();
    not_lowered("argument '" + name + "' is not a boolean");
  }

  const ir::Tensor& T(int id) const { return m_out.graph.tensors[id]; }
  const Shape& S(int id) const { return T(id).shape; }

  int64_t norm_dim(int64_t d, size_t rank) const {
    const int64_t r = static_cast<int64_t>(rank);
    if (d < -r || d >= r) not_lowered("dim " + std::to_string(d) + " is out of range for rank " + std::to_string(rank));
    return d < 0 ? d + r : d;
  }

  // Appends one op; an op that breaks the IR's shape rules is not lowered.
  ir::Layer& emit(const Node& n, OpKind op, std::vector<int> ins, std::vector<int> outs,
                  const std::function<void(ir::Layer&)>& attrs = {}, const std::string& suffix = "") {
    ir::Layer l;
    l.name = suffix.empty() ? n.name : unique_name(n.name + "/" + suffix);
    l.op = op;
    l.inputs = std::move(ins);
    l.outputs = std::move(outs);
    l.pointer = n.c.pointer();
    if (attrs) attrs(l);
    for (int id : l.inputs) {
      l.input_shapes.push_back(S(id));
      l.input_dtypes.push_back(T(id).dtype);
    }
    for (int id : l.outputs) {
      l.output_shapes.push_back(S(id));
      l.output_dtypes.push_back(T(id).dtype);
    }
    try {
      ir::check_op(l, m_opt.source);
    } catch (const InputError& e) {
      not_lowered(std::string(ir::op_name(op)) + ": " + e.detail());
    }
    m_out.graph.layers.push_back(std::move(l));
    return m_out.graph.layers.back();
  }

  void opaque(const Node& n, const std::vector<int>& ins, const std::vector<int>& outs, const std::string& label) {
    ir::Layer l;
    l.name = n.name;
    l.op = OpKind::Opaque;
    l.inputs = ins;
    l.outputs = outs;
    l.pointer = n.c.pointer();
    int64_t bytes = 0, elems = 0;
    for (int id : ins) bytes += ir::num_elements(S(id)) * ir::dtype_bytes(T(id).dtype);
    for (int id : outs) {
      bytes += ir::num_elements(S(id)) * ir::dtype_bytes(T(id).dtype);
      elems += ir::num_elements(S(id));
    }
    l.opaque_flops = elems;
    l.opaque_bytes = bytes;
    l.opaque_label = label;
    m_out.graph.layers.push_back(std::move(l));
    ++m_out.num_opaque;
    if (std::find(m_out.opaque_targets.begin(), m_out.opaque_targets.end(), n.target) == m_out.opaque_targets.end())
      m_out.opaque_targets.push_back(n.target);
  }

  // A [1] constant for a scalar operand.
  int scalar(const Node& n, DType dtype) {
    return new_tensor(unique_name(n.name + "/scalar"), {1}, dtype, ir::TensorRole::Constant);
  }

  int temp(const Node& n, const std::string& suffix, const Shape& s, DType t) {
    return new_tensor(unique_name(n.name + "/" + suffix), s, t, ir::TensorRole::Activation);
  }

  // Outputs past the first `used` ones (those that are read, see node()): an extra opaque op
  // makes them.
  void extra_outputs(const Node& n, size_t used, int from) {
    std::vector<int> rest(n.outs.begin() + static_cast<std::ptrdiff_t>(std::min(used, n.outs.size())), n.outs.end());
    if (rest.empty()) return;
    Node extra = n;
    extra.name = unique_name(n.name + "/extra_outputs");
    opaque(extra, {from}, rest, n.target + " (outputs " + std::to_string(used) + "..)");
    --m_out.num_opaque;  // a side product, not an op that failed to lower
  }

  void one_output(const Node& n) const {
    if (n.outs.size() != 1) not_lowered("expected 1 tensor output, got " + std::to_string(n.outs.size()));
  }

  void lower(const Node& n, const AtenOp& a) {
    const int y = n.outs[0];
    switch (a.handler) {
      case H::Mm:
      case H::Bmm: {
        one_output(n);
        emit(n, a.op, {need_tensor(n, "self", 0), need_tensor(n, "mat2", 1)}, {y});
        break;
      }
      case H::Matmul: {
        one_output(n);
        const int x = need_tensor(n, "self", 0), w = need_tensor(n, "other", 1);
        const bool batched = S(x).size() >= 3 && S(w).size() >= 3;
        emit(n, batched ? OpKind::BatchMatMul : OpKind::MatMul, {x, w}, {y});
        break;
      }
      case H::Addmm: {
        one_output(n);
        const int b = need_tensor(n, "self", 0), x = need_tensor(n, "mat1", 1), w = need_tensor(n, "mat2", 2);
        if (ir::num_elements(S(b)) == S(y).back()) {
          emit(n, OpKind::MatMul, {x, w, b}, {y});
        } else {
          const int mm = temp(n, "mm", S(y), T(y).dtype);
          emit(n, OpKind::MatMul, {x, w}, {mm}, {}, "mm");
          emit(n, OpKind::ElementWiseAdd, {mm, b}, {y}, {}, "bias");
        }
        break;
      }
      case H::Linear: {
        one_output(n);
        const int x = need_tensor(n, "input", 0), w = need_tensor(n, "weight", 1);
        std::vector<int> ins{x, w};
        if (auto b = tensor_arg(n, "bias", 2)) ins.push_back(*b);
        if (S(x).size() == 2)
          emit(n, OpKind::Dense, ins, {y});
        else
          emit(n, OpKind::MatMul, ins, {y}, [](ir::Layer& l) { l.transpose_b = true; });
        break;
      }
      case H::Conv: conv(n, y); break;
      case H::Binary:
      case H::RSub: binary(n, a, y); break;
      case H::Unary:
        one_output(n);
        emit(n, a.op, {need_tensor(n, "self", 0)}, {y});
        break;
      case H::Clip: {
        one_output(n);
        const bool hardtanh = n.t.op == "hardtanh";
        const auto lo = number_arg(n, hardtanh ? "min_val" : "min", 1), hi = number_arg(n, hardtanh ? "max_val" : "max", 2);
        if (!hardtanh && (!lo || !hi)) not_lowered("clamp with an open bound");
        emit(n, OpKind::Clip, {need_tensor(n, "self", 0)}, {y}, [&](ir::Layer& l) {
          l.clip_min = lo.value_or(-1.0);
          l.clip_max = hi.value_or(1.0);
        });
        break;
      }
      case H::Softmax: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        const int64_t d = norm_dim(int_arg(n, "dim", 1).value_or(-1), S(x).size());
        emit(n, OpKind::Softmax, {x}, {y}, [&](ir::Layer& l) { l.axes = {d}; });
        break;
      }
      case H::LayerNorm:
      case H::RmsNorm: {
        const int x = need_tensor(n, "input", 0);
        const auto ns = ints_arg(n, "normalized_shape", 1);
        if (!ns || ns->empty() || ns->size() > S(x).size()) not_lowered("normalized_shape does not fit the input");
        std::vector<int> ins{x};
        const bool rms = a.handler == H::RmsNorm;
        if (auto w = tensor_arg(n, "weight", 2)) ins.push_back(*w);
        if (!rms)
          if (auto b = tensor_arg(n, "bias", 3)) ins.push_back(*b);
        const auto eps = number_arg(n, "eps", rms ? 3 : 4);
        const size_t r = S(x).size();
        emit(n, a.op, ins, {y}, [&](ir::Layer& l) {
          for (size_t i = r - ns->size(); i < r; ++i) l.axes.push_back(static_cast<int64_t>(i));
          l.epsilon = eps.value_or(rms ? 1e-6 : 1e-5);
        });
        extra_outputs(n, 1, x);
        break;
      }
      case H::Reduce: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        auto dims = ints_arg(n, "dim", 1);
        if (!dims || dims->empty()) {  // all axes
          dims = std::vector<int64_t>();
          for (size_t i = 0; i < S(x).size(); ++i) dims->push_back(static_cast<int64_t>(i));
        }
        const bool keep = bool_arg(n, "keepdim", 2).value_or(false);
        std::vector<int64_t> axes;
        for (int64_t d : *dims) axes.push_back(norm_dim(d, S(x).size()));
        emit(n, a.op, {x}, {y}, [&](ir::Layer& l) {
          l.axes = axes;
          l.keepdims = keep;
        });
        break;
      }
      case H::Embedding: {
        one_output(n);
        emit(n, OpKind::Gather, {need_tensor(n, "weight", 0), need_tensor(n, "indices", 1)}, {y},
             [](ir::Layer& l) { l.axes = {0}; });
        break;
      }
      case H::IndexSelect: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        const int64_t d = norm_dim(int_arg(n, "dim", 1).value_or(0), S(x).size());
        emit(n, OpKind::Gather, {x, need_tensor(n, "index", 2)}, {y}, [&](ir::Layer& l) { l.axes = {d}; });
        break;
      }
      case H::Reshape:
        one_output(n);
        emit(n, OpKind::Reshape, {need_tensor(n, "self", 0)}, {y});
        break;
      case H::Expand: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        if (ir::num_elements(S(x)) != ir::num_elements(S(y))) not_lowered("broadcast copy");
        emit(n, OpKind::Reshape, {x}, {y});
        break;
      }
      case H::Permute: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        const auto dims = ints_arg(n, "dims", 1);
        if (!dims) not_lowered("no dims");
        std::vector<int64_t> perm;
        for (int64_t d : *dims) perm.push_back(norm_dim(d, S(x).size()));
        emit(n, OpKind::Transpose, {x}, {y}, [&](ir::Layer& l) { l.perm = perm; });
        break;
      }
      case H::TransposeInt:
      case H::T: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        const size_t r = S(x).size();
        if (r < 2) {  // t() of a vector is the vector
          emit(n, OpKind::Reshape, {x}, {y});
          break;
        }
        int64_t d0 = 0, d1 = 1;
        if (a.handler == H::TransposeInt) {
          d0 = norm_dim(int_arg(n, "dim0", 1).value_or(0), r);
          d1 = norm_dim(int_arg(n, "dim1", 2).value_or(1), r);
        }
        std::vector<int64_t> perm(r);
        for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
        std::swap(perm[d0], perm[d1]);
        emit(n, OpKind::Transpose, {x}, {y}, [&](ir::Layer& l) { l.perm = perm; });
        break;
      }
      case H::Cat: {
        one_output(n);
        std::vector<int> ins;
        if (auto t = arg(n, "tensors", 0))
          for (const auto& [name, where] : tensor_names(*t)) ins.push_back(tensor(name, where));
        if (ins.empty()) not_lowered("no tensors");
        const int64_t d = norm_dim(int_arg(n, "dim", 1).value_or(0), S(ins[0]).size());
        emit(n, OpKind::Concat, ins, {y}, [&](ir::Layer& l) { l.axes = {d}; });
        break;
      }
      case H::Slice: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        const Shape& xs = S(x);
        const int64_t d = norm_dim(int_arg(n, "dim", 1).value_or(0), xs.size());
        const int64_t start = int_arg(n, "start", 2).value_or(0);
        const int64_t end = int_arg(n, "end", 3).value_or(xs[d]);
        const int64_t step = int_arg(n, "step", 4).value_or(1);
        emit(n, OpKind::Slice, {x}, {y}, [&](ir::Layer& l) {
          l.starts.assign(xs.size(), 0);
          l.ends = xs;
          l.steps.assign(xs.size(), 1);
          l.starts[d] = start;
          l.ends[d] = std::min(end, xs[d]);
          l.steps[d] = step;
        });
        break;
      }
      case H::Split: {
        const int x = need_tensor(n, "self", 0);
        const int64_t d = norm_dim(int_arg(n, "dim", 2).value_or(0), S(x).size());
        emit(n, OpKind::Split, {x}, n.outs, [&](ir::Layer& l) { l.axes = {d}; });
        break;
      }
      case H::Pad: {
        one_output(n);
        const int x = need_tensor(n, "self", 0);
        const auto pad = ints_arg(n, "pad", 1);
        const size_t r = S(x).size();
        if (!pad || pad->size() % 2 != 0 || pad->size() > 2 * r) not_lowered("pad list does not fit the input");
        std::vector<int64_t> pads(2 * r, 0);
        // torch lists (before, after) pairs from the last dimension backwards.
        for (size_t i = 0; i < pad->size() / 2; ++i) {
          const size_t dim = r - 1 - i;
          pads[2 * dim] = (*pad)[2 * i];
          pads[2 * dim + 1] = (*pad)[2 * i + 1];
        }
        emit(n, OpKind::Pad, {x}, {y}, [&](ir::Layer& l) { l.pads = pads; });
        break;
      }
    }
  }

  void conv(const Node& n, int y) {
    one_output(n);
    const int x = need_tensor(n, "input", 0), w = need_tensor(n, "weight", 1);
    std::vector<int> ins{x, w};
    if (auto b = tensor_arg(n, "bias", 2)) ins.push_back(*b);
    const bool full = n.t.op == "convolution";
    if (full && bool_arg(n, "transposed", 6).value_or(false)) not_lowered("transposed convolution");
    if (auto pa = arg(n, "padding", 4); pa && pa->value().is_object() && pa->has("as_string"))
      not_lowered("padding '" + pa->at("as_string").as_string() + "'");
    auto pair = [&](const std::string& name, size_t pos, int64_t dflt) {
      const auto v = ints_arg(n, name, pos);
      if (!v || v->empty()) return std::array<int, 2>{static_cast<int>(dflt), static_cast<int>(dflt)};
      if (v->size() > 2) not_lowered(name + " has " + std::to_string(v->size()) + " entries (only 2-D convolutions lower)");
      return std::array<int, 2>{static_cast<int>((*v)[0]), static_cast<int>(v->size() == 2 ? (*v)[1] : (*v)[0])};
    };
    const auto stride = pair("stride", 3, 1), padding = pair("padding", 4, 0), dilation = pair("dilation", 5, 1);
    const int64_t groups = int_arg(n, "groups", full ? 8 : 6).value_or(1);
    const Shape& ws = S(w);
    if (ws.size() != 4) not_lowered("weight " + ir::shape_str(ws) + " is not 2-D [K,C,R,S]");
    emit(n, OpKind::Conv2d, ins, {y}, [&](ir::Layer& l) {
      l.kernel = {static_cast<int>(ws[2]), static_cast<int>(ws[3])};
      l.stride = stride;
      l.dilation = dilation;
      l.padding = {padding[0], padding[0], padding[1], padding[1]};
      l.groups = static_cast<int>(groups);
    });
  }

  void binary(const Node& n, const AtenOp& a, int y) {
    one_output(n);
    const int x = need_tensor(n, "self", 0);
    int other;
    if (auto t = tensor_arg(n, "other", 1))
      other = *t;
    else if (number_arg(n, "other", 1))
      other = scalar(n, T(y).dtype);
    else
      not_lowered("operand 'other' is neither a tensor nor a number");
    if (a.handler == H::RSub)
      emit(n, OpKind::Sub, {other, x}, {y});
    else
      emit(n, a.op, {x, other}, {y});
  }

  const FxLowerOptions& m_opt;
  Cursor m_root;
  std::optional<Cursor> m_tv;
  std::unordered_map<std::string, const Json*> m_tv_index;
  FxLowered m_out;
  std::unordered_map<std::string, int> m_tensor;  // fx name -> IR tensor id
  std::set<std::string> m_used;                   // fx names read by nodes or returned
  std::set<std::string> m_names;                  // layer names taken
  std::set<int> m_params;                         // IR ids of parameter inputs
};

}  // namespace

FxLowered lower_fx_graph(const json::Json& payload, const FxLowerOptions& opt) { return Lowerer(payload, opt).run(); }

std::string base64_decode(const std::string& text, const std::string& source, const std::string& pointer) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  bool padding = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    const int v = b64_value(c);
    if (v < 0 || padding)
      throw InputError(source, pointer, std::string("not base64: ") + (padding ? "data after '=' padding" : "character '" + std::string(1, c) + "'") +
                                            " at offset " + std::to_string(i));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (bits >= 6) throw InputError(source, pointer, "not base64: its length leaves a dangling character");
  return out;
}

std::string base64_encode(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out.push_back(kAlphabet[(v >> s) & 63]);
  }
  if (i < bytes.size()) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

json::Json decode_fx_payload(const std::string& data, const std::string& source, const std::string& pointer) {
  const std::string text = base64_decode(data, source, pointer);
  try {
    return json::parse_text(text, source);
  } catch (const InputError& e) {
    throw InputError(source, pointer, "the decoded fx payload is not JSON: " + e.where() + ": " + e.detail());
  }
}

std::optional<ir::OpKind> fx_lowered_op(const std::string& aten_op) {
  auto it = aten_ops().find(aten_op);
  if (it == aten_ops().end()) return std::nullopt;
  return it->second.op;
}

}  // namespace npusim::frontends::pipeline
