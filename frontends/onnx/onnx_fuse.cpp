// Multi-node patterns that exporters write for one operation, lowered as one IR op
// (onnx_internal.h):
//   gelu        x * 0.5 * (1 + erf(x / sqrt(2)))  (Div by 1.414.. or Mul by 0.707..; the 0.5 and
//               x factors in any order)
//   silu        x * sigmoid(x)
//   layer_norm  ReduceMean, Sub, Pow 2 (or Mul d*d), ReduceMean, Add eps, Sqrt, Div [, Mul gamma
//               [, Add beta]]  (LayerNorm before opset 17)
// and two absorptions decided when the first node is lowered: BatchNormalization right after
// a Conv (folded into it: the conv gets BN's bias) and an Add of a constant with N elements
// right after a MatMul (the matmul's bias). Every inner value must have no other reader and
// not be a graph output; the constants must be initializers or Constant nodes.
#include <algorithm>
#include <cmath>

#include "frontends/onnx/onnx_internal.h"

namespace npusim::frontends::onnx_fe {

using ir::OpKind;

namespace {

bool near(double a, double b, double tol = 1e-3) { return std::abs(a - b) <= tol * std::max(1.0, std::abs(b)); }

// The operand of a two-input node that is not `x` ("" when x is not one of them).
std::string other(const onnx::NodeProto& p, const std::string& x) {
  if (p.input_size() != 2) return "";
  if (p.input(0) == x) return p.input(1);
  if (p.input(1) == x) return p.input(0);
  return "";
}

std::string common_prefix(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string p = names[0];
  for (const auto& s : names) {
    size_t i = 0;
    while (i < p.size() && i < s.size() && p[i] == s[i]) ++i;
    p.resize(i);
  }
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash + 1);
}

}  // namespace

std::string Lowerer::resolve_identity(const std::string& name) const {
  std::string s = name;
  for (int guard = 0; guard < 64; ++guard) {
    const int p = producer_of(s);
    if (!node_is(p, "Identity") || node(p).input_size() < 1) break;
    s = node(p).input(0);
  }
  return s;
}

bool Lowerer::is_static(const std::string& name) const {
  ValuePtr v = find(resolve_identity(name));
  return v && v->is_const;
}

std::optional<double> Lowerer::static_scalar(const std::string& name) {
  ValuePtr v = find(resolve_identity(name));
  if (!v || !v->is_const) return std::nullopt;
  return scalar_of(v);
}

int Lowerer::producer_of(const std::string& name) const {
  auto it = m_producer.find(name);
  return it == m_producer.end() ? -1 : it->second;
}

const std::vector<int>& Lowerer::consumers_of(const std::string& name) const {
  static const std::vector<int> none;
  auto it = m_consumers.find(name);
  return it == m_consumers.end() ? none : it->second;
}

bool Lowerer::single_use(const std::string& name, int consumer) const {
  if (m_graph_outputs.count(name)) return false;
  const auto& c = consumers_of(name);
  return !c.empty() && std::all_of(c.begin(), c.end(), [&](int i) { return i == consumer; });
}

bool Lowerer::node_is(int i, const char* op) const {
  if (i < 0 || i >= m_graph.node_size()) return false;
  const auto& p = m_graph.node(i);
  return p.op_type() == op && (p.domain().empty() || p.domain() == "ai.onnx");
}

void Lowerer::find_fusions() {
  // The one node that reads `name` (-1 if none, several, or a graph output).
  auto only = [&](const std::string& name) {
    const auto& c = consumers_of(name);
    if (c.empty() || m_graph_outputs.count(name) || node(c[0]).output_size() < 1) return -1;
    return std::all_of(c.begin(), c.end(), [&](int i) { return i == c[0]; }) ? c[0] : -1;
  };
  // A two-input node of that type (patterns read both operands).
  auto bin = [&](int i, const char* op) { return node_is(i, op) && node(i).input_size() == 2; };
  auto is_scalar = [&](const std::string& name, double v) {
    auto s = static_scalar(name);
    return s && near(*s, v);
  };
  auto taken = [&](const std::vector<int>& ns) {
    return std::any_of(ns.begin(), ns.end(), [&](int i) { return m_node_fusion.count(i) > 0; });
  };
  auto commit = [&](Fusion f) {
    if (taken(f.nodes)) return;
    f.anchor = *std::min_element(f.nodes.begin(), f.nodes.end());
    const int id = static_cast<int>(m_fusions.size());
    for (int i : f.nodes) m_node_fusion[i] = id;
    m_fusions.push_back(std::move(f));
  };
  // Axes of a ReduceMean (attribute, or a constant input from opset 18), keepdims = 1 only.
  auto mean_axes = [&](int r) -> std::optional<std::vector<int64_t>> {
    const auto& p = node(r);
    for (const auto& a : p.attribute())
      if (a.name() == "keepdims" && a.i() == 0) return std::nullopt;
    if (m_opset >= 18) {
      if (p.input_size() < 2 || p.input(1).empty()) return std::nullopt;
      ValuePtr v = find(resolve_identity(p.input(1)));
      if (!v || !v->is_const) return std::nullopt;
      auto r2 = ints_of(v);
      if (!r2 || r2->empty()) return std::nullopt;
      return r2;
    }
    for (const auto& a : p.attribute())
      if (a.name() == "axes" && a.ints_size() > 0) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    return std::nullopt;
  };

  for (int i = 0; i < m_graph.node_size(); ++i) {
    const auto& p = node(i);
    if (node_is(i, "Erf") && p.input_size() == 1 && p.output_size() >= 1) {
      const std::string& d = p.input(0);
      const int pd = producer_of(d);
      if (pd < 0 || only(d) != i) continue;
      std::string x;
      const auto& dp = node(pd);
      if (node_is(pd, "Div") && dp.input_size() == 2 && is_scalar(dp.input(1), std::sqrt(2.0))) x = dp.input(0);
      if (node_is(pd, "Mul") && dp.input_size() == 2)
        for (int k = 0; k < 2; ++k)
          if (is_scalar(dp.input(k), std::sqrt(0.5))) x = dp.input(1 - k);
      if (x.empty()) continue;
      const int a = only(p.output(0));
      if (!bin(a, "Add") || !is_scalar(other(node(a), p.output(0)), 1.0)) continue;
      const std::string& ao = node(a).output(0);
      const int m1 = only(ao);
      if (!bin(m1, "Mul")) continue;
      const std::string o1 = other(node(m1), ao);
      const std::string& m1o = node(m1).output(0);
      Fusion f;
      f.kind = "gelu";
      f.x = x;
      f.nodes = {pd, i, a, m1};
      if (o1 == x || is_scalar(o1, 0.5)) {  // (x * t) * 0.5 or (t * 0.5) * x
        const int m2 = only(m1o);
        if (!bin(m2, "Mul")) continue;
        const std::string o2 = other(node(m2), m1o);
        if (o1 == x ? !is_scalar(o2, 0.5) : o2 != x) continue;
        f.nodes.push_back(m2);
        f.out = node(m2).output(0);
      } else {  // (x * 0.5) * t
        const int h = producer_of(o1);
        if (!bin(h, "Mul") || only(o1) != m1) continue;
        const auto& hp = node(h);
        if (!(hp.input_size() == 2 && ((hp.input(0) == x && is_scalar(hp.input(1), 0.5)) ||
                                       (hp.input(1) == x && is_scalar(hp.input(0), 0.5)))))
          continue;
        f.nodes.push_back(h);
        f.out = m1o;
      }
      commit(f);
    } else if (node_is(i, "Sigmoid") && p.input_size() == 1 && p.output_size() == 1) {
      const int m = only(p.output(0));
      if (!bin(m, "Mul") || other(node(m), p.output(0)) != p.input(0)) continue;
      Fusion f;
      f.kind = "silu";
      f.x = p.input(0);
      f.nodes = {i, m};
      f.out = node(m).output(0);
      commit(f);
    } else if (node_is(i, "ReduceMean") && p.input_size() >= 1 && p.output_size() == 1) {
      const std::string& x = p.input(0);
      const auto axes = mean_axes(i);
      if (!axes) continue;
      const int s = only(p.output(0));
      if (!bin(s, "Sub") || node(s).input(0) != x || node(s).input(1) != p.output(0)) continue;
      const std::string& d = node(s).output(0);
      if (m_graph_outputs.count(d)) continue;
      std::vector<int> cs = consumers_of(d);
      std::sort(cs.begin(), cs.end());
      cs.erase(std::unique(cs.begin(), cs.end()), cs.end());
      if (cs.size() != 2) continue;
      int sq_node = -1, dv = -1;
      for (int c : cs) {
        const auto& cp = node(c);
        if (bin(c, "Pow") && cp.input(0) == d && is_scalar(cp.input(1), 2.0)) sq_node = c;
        else if (node_is(c, "Mul") && cp.input_size() == 2 && cp.input(0) == d && cp.input(1) == d) sq_node = c;
        else if (bin(c, "Div") && cp.input(0) == d) dv = c;
      }
      if (sq_node < 0 || dv < 0) continue;
      const int r2 = only(node(sq_node).output(0));
      if (!node_is(r2, "ReduceMean") || mean_axes(r2) != axes) continue;
      const int ae = only(node(r2).output(0));
      if (!bin(ae, "Add")) continue;
      const auto eps = static_scalar(other(node(ae), node(r2).output(0)));
      if (!eps || !(*eps > 0)) continue;
      const int sq = only(node(ae).output(0));
      if (!node_is(sq, "Sqrt") || only(node(sq).output(0)) != dv || node(dv).input(1) != node(sq).output(0)) continue;
      Fusion f;
      f.kind = "layer_norm";
      f.x = x;
      f.axes = *axes;
      f.epsilon = *eps;
      f.nodes = {i, s, sq_node, r2, ae, sq, dv};
      f.out = node(dv).output(0);
      const int mg = only(f.out);
      if (bin(mg, "Mul") && is_static(other(node(mg), f.out))) {
        f.params.push_back(other(node(mg), f.out));
        f.nodes.push_back(mg);
        f.out = node(mg).output(0);
        const int ab = only(f.out);
        if (bin(ab, "Add") && is_static(other(node(ab), f.out))) {
          f.params.push_back(other(node(ab), f.out));
          f.nodes.push_back(ab);
          f.out = node(ab).output(0);
        }
      }
      commit(f);
    }
  }
  // Absorptions (checked again with shapes when the Conv / MatMul is lowered).
  for (int i = 0; i < m_graph.node_size(); ++i) {
    if (m_node_fusion.count(i) || node(i).output_size() < 1) continue;
    const std::string& y = node(i).output(0);
    const int c = only(y);
    if (c < 0 || m_node_fusion.count(c)) continue;
    const auto& cp = node(c);
    if (node_is(i, "Conv") && node_is(c, "BatchNormalization") && cp.input_size() >= 5 && cp.input(0) == y) {
      bool ok = true;
      for (int k = 1; k <= 4; ++k) ok = ok && is_static(cp.input(k));
      for (int k = 1; k < cp.output_size(); ++k) ok = ok && (cp.output(k).empty() || !consumed(cp.output(k)));
      for (const auto& a : cp.attribute()) ok = ok && !(a.name() == "training_mode" && a.i() != 0);
      if (ok) m_absorbed[i] = c;
    } else if (node_is(i, "MatMul") && node_is(c, "Add") && is_static(other(cp, y))) {
      m_bias_add[i] = c;
    }
  }
}

void Lowerer::emit_fusion(const Fusion& f, const NodeRef& n) {
  ValuePtr x = find(f.x);
  if (!x) throw NodeError("input '" + f.x + "' is not a graph input, an initializer or the output of an earlier node");
  std::vector<std::string> names;
  for (int i : f.nodes) names.push_back(node(i).name());
  NodeRef fn = n;
  const std::string prefix = common_prefix(names);
  fn.name = prefix.empty() ? n.name + "_" + f.kind : prefix + f.kind;
  ValuePtr v;
  if (f.kind == "gelu" || f.kind == "silu") {
    v = emit(fn, f.kind == "gelu" ? OpKind::Gelu : OpKind::Silu, "", {x}, x->shape, x->dtype, f.out);
    ++m_info.fused[f.kind == "gelu" ? "gelu (Erf form)" : "silu (x * sigmoid(x))"];
  } else {
    std::vector<int64_t> axes;
    int64_t normalized = 1;
    for (int64_t a : f.axes) {
      axes.push_back(norm_axis(a, x->shape.size(), "layer norm axis"));
      normalized *= x->shape[axes.back()];
    }
    ValuePtr g = f.params.size() > 0 ? find(resolve_identity(f.params[0])) : nullptr;
    ValuePtr b = f.params.size() > 1 ? find(resolve_identity(f.params[1])) : nullptr;
    const bool with_g = g && ir::num_elements(g->shape) == normalized;
    const bool with_b = with_g && b && ir::num_elements(b->shape) == normalized;
    std::vector<ValuePtr> ins{x};
    if (with_g) ins.push_back(g);
    if (with_b) ins.push_back(b);
    const bool more = (g && !with_g) || (b && !with_b);
    v = emit(fn, OpKind::LayerNorm, "", ins, x->shape, x->dtype, more ? f.out + "/normalized" : f.out, [&](ir::Layer& l) {
      l.axes = axes;
      l.epsilon = f.epsilon;
    });
    // gamma / beta that do not have the normalized size stay element-wise ops.
    if (g && !with_g) {
      auto s = broadcast(v->shape, g->shape);
      if (!s || *s != x->shape) throw NodeError("layer norm scale " + ir::shape_str(g->shape) + " does not broadcast to " + ir::shape_str(x->shape));
      v = emit(fn, OpKind::Mul, "scale", {v, g}, x->shape, x->dtype, b ? f.out + "/scaled" : f.out);
    }
    if (b && !with_b) {
      auto s = broadcast(v->shape, b->shape);
      if (!s || *s != x->shape) throw NodeError("layer norm bias " + ir::shape_str(b->shape) + " does not broadcast to " + ir::shape_str(x->shape));
      v = emit(fn, OpKind::ElementWiseAdd, "bias", {v, b}, x->shape, x->dtype, f.out);
    }
    ++m_info.fused["layer_norm (decomposed, opset < 17)"];
  }
  const int pi = producer_of(f.out);
  NodeRef out_ref{&node(pi), pi, n.where, n.name};
  int k = 0;
  while (k < node(pi).output_size() && node(pi).output(k) != f.out) ++k;
  define(out_ref, k, v);
}

}  // namespace npusim::frontends::onnx_fe
