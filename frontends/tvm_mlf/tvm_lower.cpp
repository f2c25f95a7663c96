// GraphExecutor graph -> workload IR (rules in tvm_lower.h).
#include "frontends/tvm_mlf/tvm_lower.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <regex>

#include "sim/ir/error.h"

namespace npusim::frontends::tvm {

namespace {

using ir::OpKind;
using ir::Shape;

// ---- fused function names ----

enum class Tk {
  Conv2d, Dense, Matmul, BatchMatmul, MaxPool, AvgPool, GlobalAvg, GlobalMax, AdaptiveAvg, AdaptiveMax,
  Softmax, ReshapeLike, LayoutTransform, Transpose, Pad, Reduce, Slice, Concat, Binary, Unary, Folded, Unsupported
};

struct Token {
  const char* text;  // relay op name with '.' written '_', as in fused function names
  Tk kind;
  OpKind op = OpKind::Opaque;
};

// Relay ops npusim recognises in fused function names. Longer names are tried first, so
// "nn_conv2d_transpose" is not read as nn_conv2d + transpose.
const Token kTokens[] = {
    {"nn_conv2d", Tk::Conv2d, OpKind::Conv2d},
    {"nn_dense", Tk::Dense, OpKind::Dense},
    {"nn_matmul", Tk::Matmul, OpKind::MatMul},
    {"nn_batch_matmul", Tk::BatchMatmul, OpKind::BatchMatMul},
    {"nn_max_pool2d", Tk::MaxPool, OpKind::MaxPool2d},
    {"nn_avg_pool2d", Tk::AvgPool, OpKind::AvgPool2d},
    {"nn_global_avg_pool2d", Tk::GlobalAvg, OpKind::GlobalAvgPool2d},
    {"nn_global_max_pool2d", Tk::GlobalMax, OpKind::GlobalMaxPool2d},
    {"nn_adaptive_avg_pool2d", Tk::AdaptiveAvg, OpKind::AvgPool2d},
    {"nn_adaptive_max_pool2d", Tk::AdaptiveMax, OpKind::MaxPool2d},
    {"nn_softmax", Tk::Softmax, OpKind::Softmax},
    {"nn_fast_softmax", Tk::Softmax, OpKind::Softmax},
    {"nn_log_softmax", Tk::Softmax, OpKind::Softmax},
    {"reshape", Tk::ReshapeLike, OpKind::Reshape},
    {"reverse_reshape", Tk::ReshapeLike, OpKind::Reshape},
    {"contrib_reverse_reshape", Tk::ReshapeLike, OpKind::Reshape},
    {"nn_batch_flatten", Tk::ReshapeLike, OpKind::Reshape},
    {"squeeze", Tk::ReshapeLike, OpKind::Reshape},
    {"expand_dims", Tk::ReshapeLike, OpKind::Reshape},
    {"layout_transform", Tk::LayoutTransform, OpKind::Transpose},
    {"transpose", Tk::Transpose, OpKind::Transpose},
    {"nn_pad", Tk::Pad, OpKind::Pad},
    {"sum", Tk::Reduce, OpKind::ReduceSum},
    {"mean", Tk::Reduce, OpKind::ReduceMean},
    {"max", Tk::Reduce, OpKind::ReduceMax},
    {"strided_slice", Tk::Slice, OpKind::Slice},
    {"concatenate", Tk::Concat, OpKind::Concat},
    {"add", Tk::Binary, OpKind::ElementWiseAdd},
    {"nn_bias_add", Tk::Binary, OpKind::ElementWiseAdd},
    {"subtract", Tk::Binary, OpKind::Sub},
    {"multiply", Tk::Binary, OpKind::Mul},
    {"divide", Tk::Binary, OpKind::Div},
    {"maximum", Tk::Binary, OpKind::Maximum},
    {"minimum", Tk::Binary, OpKind::Minimum},
    {"nn_relu", Tk::Unary, OpKind::Relu},
    {"clip", Tk::Unary, OpKind::Clip},
    {"sigmoid", Tk::Unary, OpKind::Sigmoid},
    {"tanh", Tk::Unary, OpKind::Tanh},
    {"fast_tanh", Tk::Unary, OpKind::Tanh},
    {"exp", Tk::Unary, OpKind::Exp},
    {"fast_exp", Tk::Unary, OpKind::Exp},
    {"sqrt", Tk::Unary, OpKind::Sqrt},
    {"rsqrt", Tk::Unary, OpKind::Rsqrt},
    {"negative", Tk::Unary, OpKind::Neg},
    // Folded into the op before them: dtype changes and requantisation arithmetic.
    {"cast", Tk::Folded},
    {"cast_like", Tk::Folded},
    {"fixed_point_multiply", Tk::Folded},
    {"round", Tk::Folded},
    {"floor", Tk::Folded},
    {"ceil", Tk::Folded},
    {"trunc", Tk::Folded},
    {"copy", Tk::Folded},
    {"annotation_stop_fusion", Tk::Folded},
    // Names that would otherwise split into known ops.
    {"nn_conv2d_transpose", Tk::Unsupported},
    {"nn_conv1d_transpose", Tk::Unsupported},
    {"nn_conv3d_transpose", Tk::Unsupported},
    {"floor_divide", Tk::Unsupported},
    {"floor_mod", Tk::Unsupported},
};

const std::vector<const Token*>& tokens_longest_first() {
  static const std::vector<const Token*> v = [] {
    std::vector<const Token*> r;
    for (const Token& t : kTokens) r.push_back(&t);
    std::stable_sort(r.begin(), r.end(), [](const Token* a, const Token* b) { return std::strlen(a->text) > std::strlen(b->text); });
    return r;
  }();
  return v;
}

// "tvmgen_default_fused_nn_conv2d_add_nn_relu_1" -> "nn_conv2d_add_nn_relu"; "" if the
// name has no "fused_" part.
std::string fused_body(std::string s) {
  const size_t u = s.rfind('_');
  if (u != std::string::npos && u + 1 < s.size() && s.find_first_not_of("0123456789", u + 1) == std::string::npos)
    s.resize(u);
  if (s.compare(0, 6, "fused_") == 0) return s.substr(6);
  const size_t f = s.find("_fused_");
  return f == std::string::npos ? "" : s.substr(f + 7);
}

// Splits a body into known ops; nullopt with the unknown rest in *unknown.
std::optional<std::vector<const Token*>> tokenize(const std::string& body, std::string* unknown) {
  std::vector<const Token*> out;
  size_t i = 0;
  while (i < body.size()) {
    const Token* hit = nullptr;
    for (const Token* t : tokens_longest_first()) {
      const size_t n = std::strlen(t->text);
      if (body.compare(i, n, t->text) == 0 && (i + n == body.size() || body[i + n] == '_')) {
        hit = t;
        break;
      }
    }
    if (!hit) {
      *unknown = body.substr(i);
      return std::nullopt;
    }
    out.push_back(hit);
    i += std::strlen(hit->text) + 1;
  }
  return out;
}

bool is_eltwise(Tk k) { return k == Tk::Binary || k == Tk::Unary; }

// Why a node did not lower; it becomes an opaque op with this reason in its label.
struct NotLowered {
  std::string reason;
};
[[noreturn]] void not_lowered(const std::string& why) { throw NotLowered{why}; }

std::optional<Shape> broadcast(const Shape& a, const Shape& b) { return ir::broadcast_shapes(a, b); }

// The permutation p with out[i] = in[p[i]]: `preferred` ones first, then the first in
// lexicographic order; nullopt if none (or the rank is above 8).
std::optional<std::vector<int64_t>> find_perm(const Shape& in, const Shape& out,
                                              const std::vector<std::vector<int64_t>>& preferred) {
  if (in.size() != out.size() || in.size() > 8) return std::nullopt;
  auto fits = [&](const std::vector<int64_t>& p) {
    if (p.size() != in.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (out[i] != in[static_cast<size_t>(p[i])]) return false;
    return true;
  };
  for (const auto& p : preferred)
    if (fits(p)) return p;
  std::vector<int64_t> p(in.size());
  std::iota(p.begin(), p.end(), 0);
  do {
    if (fits(p)) return p;
  } while (std::next_permutation(p.begin(), p.end()));
  return std::nullopt;
}

// Total padding P in [lo, hi] (lo clamped at 0): the smallest even P, else the smallest.
std::optional<std::pair<int64_t, int64_t>> pick_pad(int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  if (lo > hi) return std::nullopt;
  const int64_t p = (lo % 2 == 0 || lo + 1 > hi) ? lo : lo + 1;
  return std::make_pair(p / 2, p - p / 2);
}

std::string dims(const Shape& s) { return ir::shape_str(s); }

}  // namespace

std::optional<WindowAxis> infer_conv_axis(int64_t in, int64_t out, int64_t kernel) {
  if (in < 1 || out < 1 || kernel < 1) return std::nullopt;
  const int64_t max_stride = std::min<int64_t>(std::max(in, kernel) + 1, int64_t{1} << 20);
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t s = 1; s <= max_stride; ++s) {
      const int64_t lo = (out - 1) * s + kernel - in;
      int64_t hi = out * s + kernel - in - 1;
      if (pass == 0) hi = std::min(hi, 2 * (kernel - 1));
      if (auto p = pick_pad(lo, hi)) return WindowAxis{kernel, s, p->first, p->second};
    }
  }
  return std::nullopt;
}

std::optional<WindowAxis> infer_pool_axis(int64_t in, int64_t out) {
  if (in < 1 || out < 1) return std::nullopt;
  const int64_t max_stride = std::min<int64_t>(in + 1, int64_t{1} << 20);
  for (int64_t s = std::max<int64_t>(1, in / out); s <= max_stride; ++s) {
    const int64_t k = s;
    const int64_t lo = (out - 1) * s + k - in;
    const int64_t hi = std::min(out * s + k - in - 1, 2 * (k / 2));
    if (auto p = pick_pad(lo, hi)) return WindowAxis{k, s, p->first, p->second};
  }
  return std::nullopt;
}

StorageUse storage_use(const ExecutorGraph& eg) {
  StorageUse u;
  std::map<int64_t, int64_t> largest;
  int64_t unplanned = 0;  // entries with storage id -1 each get a buffer of their own
  for (const GraphEntry& e : eg.entries) {
    const int64_t bytes = ir::num_elements(e.shape) * ir::dtype_bytes(e.dtype);
    u.entry_bytes += bytes;
    if (e.storage_id < 0) {
      unplanned += bytes;
      ++u.num_storage_ids;
      continue;
    }
    int64_t& m = largest[e.storage_id];
    m = std::max(m, bytes);
  }
  u.num_storage_ids += static_cast<int64_t>(largest.size());
  u.footprint_bytes = unplanned;
  for (const auto& [sid, bytes] : largest) u.footprint_bytes += bytes;
  return u;
}

namespace {

class Lowerer {
 public:
  Lowerer(const ExecutorGraph& eg, const LowerOptions& opt) : m_eg(eg), m_opt(opt) {
    m_g.source = opt.source;
    m_g.name = opt.name;
    m_g.format = "tvm_mlf";
  }

  Lowered run() {
    m_entry_tensor.assign(m_eg.entries.size(), -1);
    std::set<int64_t> heads;
    for (const EntryRef& h : m_eg.heads) heads.insert(m_eg.entry_id(h));
    for (size_t i = 0; i < m_eg.nodes.size(); ++i) {
      const GraphNode& n = m_eg.nodes[i];
      const int64_t e0 = m_eg.node_row_ptr[i];
      if (!n.is_op) {
        static const std::regex bound_constant("p[0-9]+");
        const bool param = m_opt.param_names ? m_opt.param_names->count(n.name) > 0
                                             : std::regex_match(n.name, bound_constant);
        const int id = new_tensor(unique_tensor(n.name), e0, param ? ir::TensorRole::Constant : ir::TensorRole::GraphInput);
        if (param) m_params.insert(id);
        m_entry_tensor[static_cast<size_t>(e0)] = id;
        continue;
      }
      std::vector<int> outs;
      for (int64_t k = 0; k < n.num_outputs; ++k) {
        const std::string name = k == 0 ? n.name : n.name + ":" + std::to_string(k);
        const int id = new_tensor(unique_tensor(name), e0 + k,
                                  heads.count(e0 + k) ? ir::TensorRole::GraphOutput : ir::TensorRole::Activation);
        m_entry_tensor[static_cast<size_t>(e0 + k)] = id;
        outs.push_back(id);
      }
      lower_node(n, outs);
    }
    assign_parameter_roles();
    for (size_t i = 0; i < m_g.layers.size(); ++i) m_g.layers[i].index = static_cast<int>(i);
    if (m_g.layers.empty())
      throw InputError(m_opt.source, m_eg.nodes.front().pointer.substr(0, m_eg.nodes.front().pointer.find("/nodes")) + "/nodes",
                       "the graph has no tvm_op nodes, so no operations");
    ir::derive_edges(m_g);
    ir::validate(m_g);
    return Lowered{std::move(m_g), m_opaque};
  }

 private:
  const ExecutorGraph& m_eg;
  const LowerOptions& m_opt;
  ir::Graph m_g;
  std::vector<int> m_entry_tensor;
  std::set<int> m_params;
  std::set<std::string> m_tensor_names, m_layer_names;
  int m_opaque = 0;

  static std::string unique(std::set<std::string>& used, const std::string& base) {
    std::string n = base;
    for (int k = 1; used.count(n); ++k) n = base + "_" + std::to_string(k);
    used.insert(n);
    return n;
  }
  std::string unique_tensor(const std::string& base) { return unique(m_tensor_names, base); }

  int new_tensor(const std::string& name, int64_t entry, ir::TensorRole role) {
    const GraphEntry& e = m_eg.entries[static_cast<size_t>(entry)];
    ir::Tensor t;
    t.name = name;
    t.shape = e.shape;
    t.dtype = e.dtype;
    t.role = role;
    return m_g.add_tensor(std::move(t));
  }

  const Shape& shape(int id) const { return m_g.tensor(id).shape; }
  int64_t bytes(int id) const { return ir::num_elements(shape(id)) * ir::dtype_bytes(m_g.tensor(id).dtype); }

  void fill_mirrors(ir::Layer& l) const {
    l.input_shapes.clear();
    l.input_dtypes.clear();
    l.output_shapes.clear();
    l.output_dtypes.clear();
    for (int id : l.inputs) {
      l.input_shapes.push_back(m_g.tensor(id).shape);
      l.input_dtypes.push_back(m_g.tensor(id).dtype);
    }
    for (int id : l.outputs) {
      l.output_shapes.push_back(m_g.tensor(id).shape);
      l.output_dtypes.push_back(m_g.tensor(id).dtype);
    }
  }

  void lower_node(const GraphNode& n, const std::vector<int>& outs) {
    std::vector<int> ins;
    for (const EntryRef& r : n.inputs) ins.push_back(m_entry_tensor[static_cast<size_t>(m_eg.entry_id(r))]);
    const size_t saved = m_g.tensors.size();
    const std::string base = m_g.tensor(outs[0]).name;
    try {
      std::vector<ir::Layer> layers = build(n, ins, outs, base);
      for (ir::Layer& l : layers) {
        fill_mirrors(l);
        try {
          ir::check_op(l, m_opt.source);
        } catch (const InputError& e) {
          not_lowered(std::string(ir::op_name(l.op)) + " shape rule: " + e.detail());
        }
      }
      for (size_t t = saved; t < m_g.tensors.size(); ++t) m_g.tensors[t].name = unique_tensor(m_g.tensors[t].name);
      for (ir::Layer& l : layers) {
        l.name = unique(m_layer_names, l.name);
        m_g.layers.push_back(std::move(l));
      }
    } catch (const NotLowered& nl) {
      m_g.tensors.resize(saved);
      opaque(n, ins, outs, base, nl.reason);
    }
  }

  void opaque(const GraphNode& n, const std::vector<int>& ins, const std::vector<int>& outs, const std::string& base,
              const std::string& why) {
    ir::Layer l;
    l.op = OpKind::Opaque;
    l.name = unique(m_layer_names, base);
    l.pointer = n.pointer;
    l.inputs = ins;
    l.outputs = outs;
    int64_t b = 0, out_elems = 0;
    for (int id : ins) b += bytes(id);
    for (int id : outs) {
      b += bytes(id);
      out_elems += ir::num_elements(shape(id));
    }
    l.opaque_bytes = b;
    l.opaque_flops = out_elems;
    // A GEMM-like function (a conv2d in another layout, a packed dense...): 2 x MACs, with
    // the reduction length = weight elements / output channels.
    const std::string body = fused_body(n.func_name);
    const bool gemm = body.find("conv") != std::string::npos || body.find("dense") != std::string::npos ||
                      body.find("matmul") != std::string::npos;
    if (gemm && ins.size() >= 2 && outs.size() == 1) {
      const Shape &w = shape(ins[1]), &y = shape(outs[0]);
      const int64_t we = ir::num_elements(w);
      int64_t k = 0;
      if (!w.empty() && y.size() >= 2 && w[0] == y[1]) k = w[0];
      else if (!w.empty() && !y.empty() && w.back() == y.back()) k = w.back();
      if (k > 0 && we % k == 0) {
        const long double f = 2.0L * ir::num_elements(y) * static_cast<long double>(we / k);
        l.opaque_flops = f > static_cast<long double>(int64_t{1} << 62) ? int64_t{1} << 62 : static_cast<int64_t>(f);
      }
    }
    l.opaque_label = n.func_name + " (" + why + ")";
    m_g.layers.push_back(std::move(l));
    ++m_opaque;
  }

  // ---- lowering one fused function ----

  struct Step {
    const Token* tok = nullptr;
    std::vector<int> inputs;  // tensor ids; -1 = the previous step's value
    std::string activation;
    Shape out_shape;
    int out = -1;
  };

  bool is_param(int id) const { return m_params.count(id) > 0; }

  std::vector<ir::Layer> build(const GraphNode& n, const std::vector<int>& ins, const std::vector<int>& outs,
                               const std::string& base) {
    if (outs.size() != 1) not_lowered(std::to_string(outs.size()) + " outputs");
    // A copy: intermediate tensors added below may move the graph's tensors (found by
    // fuzz/fuzz_tvm_graph: a heap use after free through a reference).
    const ir::Tensor y = m_g.tensor(outs[0]);
    if (n.func_name == "__nop") {
      if (ins.size() != 1 || ir::num_elements(shape(ins[0])) != ir::num_elements(y.shape))
        not_lowered("__nop that is not a reshape");
      ir::Layer l = layer(n, base, OpKind::Reshape, ins, outs[0]);
      return {l};
    }
    if (n.func_name == "__copy") not_lowered("device copy");
    const std::string body = fused_body(n.func_name);
    if (body.empty()) not_lowered("not a fused function name");
    std::string unknown;
    const auto toks = tokenize(body, &unknown);
    if (!toks) not_lowered("unrecognised op '" + unknown + "'");
    std::vector<const Token*> ops;
    for (const Token* t : *toks) {
      if (t->kind == Tk::Unsupported) not_lowered(std::string("unsupported op '") + t->text + "'");
      if (t->kind == Tk::Folded) continue;
      if (t->kind == Tk::ReshapeLike && !ops.empty() && ops.back()->kind == Tk::ReshapeLike) continue;
      ops.push_back(t);
    }
    if (ops.empty()) not_lowered("only casts / requantisation steps");

    // Operands, in the order of the node's inputs.
    std::vector<Step> steps;
    size_t next = 0;
    auto take = [&](size_t k) {
      if (next + k > ins.size())
        not_lowered("its ops need more than the node's " + std::to_string(ins.size()) + " inputs");
      std::vector<int> r(ins.begin() + static_cast<std::ptrdiff_t>(next), ins.begin() + static_cast<std::ptrdiff_t>(next + k));
      next += k;
      return r;
    };
    auto chain = [&](std::vector<int> more) {
      more.insert(more.begin(), -1);
      return more;
    };
    for (size_t i = 0; i < ops.size(); ++i) {
      Step s;
      s.tok = ops[i];
      const bool first = steps.empty();
      switch (s.tok->kind) {
        case Tk::Concat:
          if (!first) not_lowered("concatenate after another op");
          s.inputs = take(ins.size() - next);
          break;
        case Tk::Binary:
        case Tk::Conv2d:
        case Tk::Dense:
        case Tk::Matmul:
        case Tk::BatchMatmul: s.inputs = first ? take(2) : chain(take(1)); break;
        default: s.inputs = first ? take(1) : chain({}); break;
      }
      if ((s.tok->kind == Tk::Conv2d || s.tok->kind == Tk::Dense) && s.inputs[1] >= 0) {
        const int64_t k = shape(s.inputs[1]).empty() ? -1 : shape(s.inputs[1])[0];
        // add / nn.bias_add of a per-channel parameter: the op's bias.
        if (i + 1 < ops.size() && ops[i + 1]->op == OpKind::ElementWiseAdd && next < ins.size() && is_param(ins[next])) {
          const Shape& b = shape(ins[next]);
          const bool per_channel = ir::num_elements(b) == k &&
                                   (b.empty() || *std::max_element(b.begin(), b.end()) == k);
          if (per_channel) {
            s.inputs.push_back(ins[next++]);
            ++i;
          }
        }
        if (i + 1 < ops.size() && (ops[i + 1]->op == OpKind::Relu || ops[i + 1]->op == OpKind::Clip)) {
          s.activation = ops[i + 1]->op == OpKind::Relu ? "relu" : "relu6";
          ++i;
        }
      }
      steps.push_back(std::move(s));
    }
    if (next != ins.size())
      not_lowered("the function takes " + std::to_string(ins.size()) + " inputs but its ops use " + std::to_string(next));

    // Shapes between the steps: element-wise steps broadcast their operands; any other step
    // before the last must be followed by element-wise steps only (it has the final shape).
    for (size_t i = 0; i < steps.size(); ++i) {
      Step& s = steps[i];
      if (i + 1 == steps.size()) {
        s.out_shape = y.shape;
        s.out = outs[0];
        break;
      }
      if (is_eltwise(s.tok->kind)) {
        std::optional<Shape> sh = Shape{};
        for (int id : s.inputs) {
          const Shape& in = id < 0 ? steps[i - 1].out_shape : shape(id);
          sh = sh ? broadcast(*sh, in) : std::nullopt;
        }
        if (!sh) not_lowered(std::string("the operands of ") + s.tok->text + " do not broadcast");
        s.out_shape = *sh;
      } else {
        for (size_t j = i + 1; j < steps.size(); ++j)
          if (!is_eltwise(steps[j].tok->kind))
            not_lowered(std::string("the shape between ") + s.tok->text + " and " + steps[j].tok->text + " is unknown");
        s.out_shape = y.shape;
      }
      ir::Tensor t;
      t.name = base + "/" + s.tok->text;
      t.shape = s.out_shape;
      t.dtype = y.dtype;
      t.role = ir::TensorRole::Activation;
      s.out = m_g.add_tensor(std::move(t));
    }

    std::vector<ir::Layer> layers;
    for (size_t i = 0; i < steps.size(); ++i) {
      Step& s = steps[i];
      for (int& id : s.inputs)
        if (id < 0) id = steps[i - 1].out;
      const std::string name = steps.size() == 1 ? base : base + "/" + s.tok->text;
      ir::Layer l = layer(n, name, s.tok->op, s.inputs, s.out);
      l.activation = s.activation;
      attributes(l, *s.tok);
      layers.push_back(std::move(l));
    }
    return layers;
  }

  ir::Layer layer(const GraphNode& n, const std::string& name, OpKind op, const std::vector<int>& ins, int out) const {
    ir::Layer l;
    l.name = name;
    l.op = op;
    l.pointer = n.pointer;
    l.inputs = ins;
    l.outputs = {out};
    return l;
  }

  // The attributes of one step, from its operand and result shapes.
  void attributes(ir::Layer& l, const Token& tok) const {
    const Shape& x = shape(l.inputs.at(0));
    const Shape& y = shape(l.outputs.at(0));
    const std::string what = tok.text;
    switch (tok.kind) {
      case Tk::Conv2d: {
        const Shape& w = shape(l.inputs.at(1));
        if (x.size() != 4 || w.size() != 4 || y.size() != 4)
          not_lowered("conv2d on " + dims(x) + " with weight " + dims(w) + " is not a 2-D NCHW convolution");
        if (w[1] < 1 || x[1] % w[1] != 0 || y[1] != w[0])
          not_lowered("conv2d input " + dims(x) + ", weight " + dims(w) + ", output " + dims(y) + " are not NCHW / OIHW");
        l.groups = static_cast<int>(x[1] / w[1]);
        const auto h = infer_conv_axis(x[2], y[2], w[2]), v = infer_conv_axis(x[3], y[3], w[3]);
        if (!h || !v) not_lowered("no stride and padding give " + dims(y) + " from " + dims(x));
        set_window(l, *h, *v);
        l.kernel = {static_cast<int>(w[2]), static_cast<int>(w[3])};
        break;
      }
      case Tk::Dense: {
        const Shape& w = shape(l.inputs.at(1));
        if (w.size() != 2) not_lowered("dense weight " + dims(w) + " is not [K, C]");
        const bool two_d = x.size() >= 2 && std::all_of(x.begin() + 2, x.end(), [](int64_t d) { return d == 1; });
        if (!two_d) {  // dense over [.., C]: a matmul with B transposed
          l.op = OpKind::MatMul;
          l.transpose_b = true;
        }
        break;
      }
      case Tk::Matmul: {
        const Shape& w = shape(l.inputs.at(1));
        if (x.empty() || w.size() < 2) not_lowered("matmul operands " + dims(x) + " and " + dims(w));
        l.transpose_b = w[w.size() - 2] != x.back() && w.back() == x.back();
        break;
      }
      case Tk::BatchMatmul: {
        const Shape& w = shape(l.inputs.at(1));
        if (x.size() < 3 || w.size() < 2 || y.size() < 2) not_lowered("batch_matmul operands " + dims(x) + " and " + dims(w));
        // relay's nn.batch_matmul defaults to transpose_b = true ([B, N, K]).
        l.transpose_b = w.back() == x.back() && w[w.size() - 2] == y.back();
        break;
      }
      case Tk::MaxPool:
      case Tk::AvgPool:
      case Tk::AdaptiveAvg:
      case Tk::AdaptiveMax: {
        if (x.size() != 4 || y.size() != 4 || x[0] != y[0] || x[1] != y[1])
          not_lowered(what + " from " + dims(x) + " to " + dims(y) + " is not NCHW");
        if ((tok.kind == Tk::AdaptiveAvg || tok.kind == Tk::AdaptiveMax) && y[2] == 1 && y[3] == 1) {
          l.op = tok.kind == Tk::AdaptiveAvg ? OpKind::GlobalAvgPool2d : OpKind::GlobalMaxPool2d;
          break;
        }
        const auto h = infer_pool_axis(x[2], y[2]), v = infer_pool_axis(x[3], y[3]);
        if (!h || !v) not_lowered("no window gives " + dims(y) + " from " + dims(x));
        set_window(l, *h, *v);
        l.pool = {static_cast<int>(h->kernel), static_cast<int>(v->kernel)};
        break;
      }
      case Tk::Softmax: l.axes = {-1}; break;
      case Tk::LayoutTransform: {
        if (auto p = find_perm(x, y, {{0, 2, 3, 1}, {0, 3, 1, 2}})) {
          l.perm = *p;
        } else {  // a packing layout (NCHW4c...): same data, new shape
          l.op = OpKind::Reshape;
        }
        break;
      }
      case Tk::Transpose: {
        std::vector<int64_t> rev(x.size());
        std::iota(rev.rbegin(), rev.rend(), 0);
        const auto p = find_perm(x, y, {rev});
        if (!p) not_lowered("no permutation of " + dims(x) + " gives " + dims(y));
        l.perm = *p;
        break;
      }
      case Tk::Pad: {
        if (x.size() != y.size()) not_lowered("nn.pad changes the rank");
        for (size_t i = 0; i < x.size(); ++i) {
          const int64_t d = y[i] - x[i];
          if (d < 0) not_lowered("nn.pad output " + dims(y) + " is smaller than its input " + dims(x));
          l.pads.push_back(d / 2);
          l.pads.push_back(d - d / 2);
        }
        break;
      }
      case Tk::Reduce: reduce_axes(l, x, y); break;
      case Tk::Slice: {
        if (x.size() != y.size()) not_lowered("strided_slice changes the rank");
        for (size_t i = 0; i < x.size(); ++i) {
          l.starts.push_back(0);
          l.ends.push_back(y[i]);
        }
        break;
      }
      case Tk::Concat: {
        int64_t axis = 0;
        for (size_t d = 0; d < x.size() && d < y.size(); ++d)
          if (x[d] != y[d]) {
            axis = static_cast<int64_t>(d);
            break;
          }
        l.axes = {axis};
        break;
      }
      default: break;  // reshape, element-wise, global pools: no attributes
    }
  }

  static void set_window(ir::Layer& l, const WindowAxis& h, const WindowAxis& v) {
    l.stride = {static_cast<int>(h.stride), static_cast<int>(v.stride)};
    l.padding = {static_cast<int>(h.pad_lo), static_cast<int>(h.pad_hi), static_cast<int>(v.pad_lo), static_cast<int>(v.pad_hi)};
  }

  // Reduced axes: the dims that became 1 (same rank: keepdims), or the dims left out.
  static void reduce_axes(ir::Layer& l, const Shape& x, const Shape& y) {
    if (x.size() == y.size()) {
      for (size_t i = 0; i < x.size(); ++i)
        if (y[i] != x[i]) l.axes.push_back(static_cast<int64_t>(i));
      l.keepdims = true;
    } else if (y.size() < x.size()) {
      size_t j = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        if (j < y.size() && x[i] == y[j]) {
          ++j;
        } else {
          l.axes.push_back(static_cast<int64_t>(i));
        }
      }
      if (j != y.size()) {
        l.axes.clear();
        if (y == Shape{1})
          for (size_t i = 0; i < x.size(); ++i) l.axes.push_back(static_cast<int64_t>(i));
      }
      l.keepdims = false;
    }
    if (l.axes.empty()) not_lowered("no reduced axes give " + dims(y) + " from " + dims(x));
  }

  // Weight / Bias / Constant by the first use of each parameter.
  void assign_parameter_roles() {
    std::set<int> done;
    for (const ir::Layer& l : m_g.layers) {
      for (size_t j = 0; j < l.inputs.size(); ++j) {
        const int id = l.inputs[j];
        if (!is_param(id) || !done.insert(id).second) continue;
        ir::TensorRole role = ir::TensorRole::Constant;
        if (ir::runs_on_pe_array(l.op) && j == 1) role = ir::TensorRole::Weight;
        if (ir::runs_on_pe_array(l.op) && j == 2) role = ir::TensorRole::Bias;
        m_g.tensors[static_cast<size_t>(id)].role = role;
      }
    }
  }
};

}  // namespace

Lowered lower_executor_graph(const ExecutorGraph& eg, const LowerOptions& opt) { return Lowerer(eg, opt).run(); }

}  // namespace npusim::frontends::tvm
