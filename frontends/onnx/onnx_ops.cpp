// One handler per ONNX op of the default domain (onnx_internal.h); the lowering table is in
// docs/format_onnx.md. Handlers compute the output shapes themselves (the IR's shape rules
// check them again) and emit IR ops; ops whose inputs are all constant fold into constants.
#include <cfloat>
#include <cmath>
#include <numeric>

#include "frontends/onnx/onnx_internal.h"

namespace npusim::frontends::onnx_fe {

using ir::DType;
using ir::OpKind;
using ir::Shape;

namespace {

const onnx::AttributeProto* attr(const onnx::NodeProto& p, const char* name) {
  for (const auto& a : p.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t ai(const onnx::NodeProto& p, const char* name, int64_t dflt) {
  const auto* a = attr(p, name);
  return a ? a->i() : dflt;
}
double af(const onnx::NodeProto& p, const char* name, double dflt) {
  const auto* a = attr(p, name);
  return a ? a->f() : dflt;
}
std::string as(const onnx::NodeProto& p, const char* name, const std::string& dflt) {
  const auto* a = attr(p, name);
  return a ? a->s() : dflt;
}
std::optional<std::vector<int64_t>> aints(const onnx::NodeProto& p, const char* name) {
  const auto* a = attr(p, name);
  if (!a) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<int64_t> norm_axes(const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> r;
  for (int64_t a : axes) r.push_back(norm_axis(a, rank));
  return r;
}

// Window parameters of Conv / pools over `spatial` axes after auto_pad.
struct Window {
  std::vector<int64_t> kernel, stride, dil, lo, hi, out;
};

Window window(const onnx::NodeProto& p, const Shape& x, std::vector<int64_t> kernel, bool ceil, bool allow_dil) {
  const size_t s = x.size() - 2;
  Window w;
  w.kernel = std::move(kernel);
  w.stride = aints(p, "strides").value_or(std::vector<int64_t>(s, 1));
  w.dil = allow_dil ? aints(p, "dilations").value_or(std::vector<int64_t>(s, 1)) : std::vector<int64_t>(s, 1);
  std::vector<int64_t> pads = aints(p, "pads").value_or(std::vector<int64_t>(2 * s, 0));
  if (w.kernel.size() != s || w.stride.size() != s || w.dil.size() != s || pads.size() != 2 * s)
    throw NodeError("kernel_shape, strides, dilations and pads must have one entry per spatial axis (" +
                    std::to_string(s) + ", pads 2x)");
  constexpr int64_t kMax = int64_t{1} << 30;
  for (size_t i = 0; i < s; ++i) {
    if (w.kernel[i] < 1 || w.stride[i] < 1 || w.dil[i] < 1 || w.kernel[i] > kMax || w.stride[i] > kMax || w.dil[i] > kMax)
      throw NodeError("kernel_shape, strides and dilations must be in [1, 2^30]");
    if (pads[i] < 0 || pads[s + i] < 0 || pads[i] > kMax || pads[s + i] > kMax)
      throw NodeError("pads must be in [0, 2^30]");
  }
  const std::string auto_pad = as(p, "auto_pad", "NOTSET");
  for (size_t i = 0; i < s; ++i) {
    const int64_t in = x[2 + i];
    int64_t lo = pads[i], hi = pads[s + i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + w.stride[i] - 1) / w.stride[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[i] + (w.kernel[i] - 1) * w.dil[i] + 1 - in);
      lo = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    } else if (auto_pad == "VALID") {
      lo = hi = 0;
    } else if (auto_pad != "NOTSET" && !auto_pad.empty()) {
      throw NodeError("auto_pad '" + auto_pad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    }
    const int64_t o = window_out(in, w.kernel[i], w.stride[i], lo, hi, w.dil[i], ceil);
    if (o < 1)
      throw NodeError("window " + std::to_string(w.kernel[i]) + " (dilation " + std::to_string(w.dil[i]) +
                      ") does not fit the input " + ir::shape_str(x) + " with pads " + std::to_string(lo) + "+" +
                      std::to_string(hi));
    w.lo.push_back(lo);
    w.hi.push_back(hi);
    w.out.push_back(o);
  }
  return w;
}

// Sets the IR window fields from a 2-D window (a 1-D one lifted to H = 1).
void set_window(ir::Layer& l, const Window& w, bool pool) {
  const bool one = w.kernel.size() == 1;
  auto at = [&](const std::vector<int64_t>& v, int i, int64_t lifted) { return static_cast<int>(one ? (i == 0 ? lifted : v[0]) : v[i]); };
  const std::array<int, 2> k{at(w.kernel, 0, 1), at(w.kernel, 1, 1)};
  if (pool) l.pool = k;
  else l.kernel = k;
  l.stride = {at(w.stride, 0, 1), at(w.stride, 1, 1)};
  l.dilation = {at(w.dil, 0, 1), at(w.dil, 1, 1)};
  l.padding = {at(w.lo, 0, 0), at(w.hi, 0, 0), at(w.lo, 1, 0), at(w.hi, 1, 0)};
}

}  // namespace

void Lowerer::lower_default_domain(const NodeRef& n) {
  const std::string& op = n.op();
  if (op == "Identity" || op == "Dropout") {
    alias(n, 0, input(n, 0));
    if (op == "Dropout" && n.p->output_size() > 1 && !n.p->output(1).empty()) {
      // The mask of an inference-mode Dropout is all true: a constant.
      define(n, 1, new_const(n.p->output(1), input(n, 0)->shape, DType::Bool));
    }
    ++m_info.folded_nodes;
    return;
  }
  if (try_eval(n)) return;
  static const std::map<std::string, OpKind> unary{
      {"Relu", OpKind::Relu}, {"Sigmoid", OpKind::Sigmoid}, {"Tanh", OpKind::Tanh}, {"Exp", OpKind::Exp},
      {"Sqrt", OpKind::Sqrt}, {"Neg", OpKind::Neg}, {"Gelu", OpKind::Gelu}, {"Erf", OpKind::Tanh}};
  static const std::map<std::string, OpKind> binary{
      {"Add", OpKind::ElementWiseAdd}, {"Sub", OpKind::Sub}, {"Mul", OpKind::Mul}, {"Div", OpKind::Div}};
  if (auto it = unary.find(op); it != unary.end()) return op_unary(n, it->second);
  if (auto it = binary.find(op); it != binary.end()) return op_binary(n, it->second);
  if (op == "Conv") return op_conv(n, false, false);
  if (op == "QLinearConv") return op_conv(n, true, false);
  if (op == "ConvInteger") return op_conv(n, false, true);
  if (op == "Gemm") return op_gemm(n);
  if (op == "MatMul") return op_matmul(n, false, false);
  if (op == "QLinearMatMul") return op_matmul(n, true, false);
  if (op == "MatMulInteger") return op_matmul(n, false, true);
  if (op == "Max") return op_variadic(n, OpKind::Maximum);
  if (op == "Min") return op_variadic(n, OpKind::Minimum);
  if (op == "Sum") return op_variadic(n, OpKind::ElementWiseAdd);
  if (op == "Pow") return op_pow(n);
  if (op == "Reciprocal") {
    ValuePtr x = input(n, 0);
    ValuePtr one = new_const(n.name + "/one", {1}, x->dtype);
    define(n, 0, emit(n, OpKind::Div, "", {one, x}, x->shape, x->dtype, out_name(n)));
    return;
  }
  if (op == "Clip") return op_clip(n);
  if (op == "Softmax" || op == "LogSoftmax") return op_softmax(n);
  if (op == "LayerNormalization") return op_layer_norm(n);
  if (op == "BatchNormalization") return op_batch_norm(n);
  if (op == "ReduceMean") return op_reduce(n, OpKind::ReduceMean, 18);
  if (op == "ReduceSum") return op_reduce(n, OpKind::ReduceSum, 13);
  if (op == "ReduceMax" || op == "ReduceMin") return op_reduce(n, OpKind::ReduceMax, 18);
  if (op == "Transpose") return op_transpose(n);
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") return op_reshape_like(n);
  if (op == "Concat") return op_concat(n);
  if (op == "Split") return op_split(n);
  if (op == "Slice") return op_slice(n);
  if (op == "Gather") return op_gather(n);
  if (op == "MaxPool") return op_pool(n, OpKind::MaxPool2d);
  if (op == "AveragePool") return op_pool(n, OpKind::AvgPool2d);
  if (op == "GlobalAveragePool") return op_global_pool(n, OpKind::GlobalAvgPool2d);
  if (op == "GlobalMaxPool") return op_global_pool(n, OpKind::GlobalMaxPool2d);
  if (op == "Pad") return op_pad(n);
  if (op == "QuantizeLinear") return op_quantize(n, true);
  if (op == "DequantizeLinear") return op_quantize(n, false);
  if (op == "Expand") return op_expand(n);
  if (op == "Cast" || op == "CastLike") {
    ValuePtr x = input(n, 0);
    const int to = op == "Cast" ? static_cast<int>(ai(*n.p, "to", 1)) : input(n, 1)->onnx_type;
    if (x->is_const) {  // a big constant (small ones were evaluated): the same values in another type
      auto v = new_const(out_name(n), x->shape, ir_dtype(to).value_or(x->dtype));
      v->onnx_type = to;
      define(n, 0, v);
      ++m_info.folded_nodes;
      return;
    }
    if (ir_dtype(to) == x->dtype) {
      alias(n, 0, x);
      ++m_info.folded_nodes;
      return;
    }
    return opaque(n, "", {x->shape}, ir_dtype(to));
  }
  opaque(n);
}

// ---------------------------------------------------------------- GEMM class

void Lowerer::op_conv(const NodeRef& n, bool quantized, bool integer) {
  const auto& p = *n.p;
  ValuePtr x = input(n, 0), w = input(n, quantized ? 3 : 1);
  const int bias_at = quantized ? 8 : integer ? -1 : 2;
  ValuePtr b = bias_at >= 0 && has_input(n, bias_at) ? input(n, bias_at) : nullptr;
  const size_t r = x->shape.size();
  if (r != 3 && r != 4) return opaque(n, "only 1-D and 2-D convolutions are lowered");
  if (w->shape.size() != r)
    throw NodeError("weight " + ir::shape_str(w->shape) + " must have the rank of the input " + ir::shape_str(x->shape));
  const int64_t group = ai(p, "group", 1);
  const int64_t c = x->shape[1], k = w->shape[0];
  if (group < 1 || c % group != 0 || k % group != 0 || w->shape[1] != c / group)
    throw NodeError("input " + ir::shape_str(x->shape) + ", weight " + ir::shape_str(w->shape) + " and group " +
                    std::to_string(group) + " disagree: the weight needs C/group at dim 1");
  std::vector<int64_t> wk(w->shape.begin() + 2, w->shape.end());
  if (auto ks = aints(p, "kernel_shape"); ks && *ks != wk)
    throw NodeError("kernel_shape " + ir::shape_str(*ks) + " differs from the weight's " + ir::shape_str(wk));
  const Window win = window(p, x->shape, wk, false, true);
  DType dt = x->dtype;
  if (quantized) dt = has_input(n, 7) ? input(n, 7)->dtype : DType::UInt8;
  if (integer) dt = DType::Int32;

  // BatchNormalization folded into this conv (onnx_fuse.cpp found it; the channels must agree).
  int bn = -1;
  if (auto it = m_absorbed.find(n.index); it != m_absorbed.end()) {
    const auto& bp = node(it->second);
    ValuePtr bn_bias = find(bp.input(2));
    if (bn_bias && ir::num_elements(bn_bias->shape) == k) {
      bn = it->second;
      if (!b) b = bn_bias;
    }
  }
  const std::string final_name = bn >= 0 ? node(bn).output(0) : out_name(n);

  Shape out{x->shape[0], k};
  for (int64_t o : win.out) out.push_back(o);
  ValuePtr x4 = x, w4 = w;
  Shape out4 = out;
  if (r == 3) {  // 1-D: a 2-D conv over H = 1
    x4 = reshape(n, x, {x->shape[0], c, 1, x->shape[2]}, final_name + "/in2d", "in2d");
    w4 = reshape(n, w, {k, c / group, 1, w->shape[2]}, w->name + "/2d", "weight2d");
    out4 = {out[0], k, 1, out[2]};
  }
  std::vector<ValuePtr> ins{x4, w4};
  if (b) ins.push_back(b);
  ValuePtr v = emit(n, OpKind::Conv2d, "", ins, out4, dt, r == 3 ? final_name + "/conv2d" : final_name, [&](ir::Layer& l) {
    set_window(l, win, false);
    l.groups = static_cast<int>(group);
  });
  if (r == 3) v = reshape(n, v, out, final_name);
  if (bn >= 0) {
    m_skip.insert(bn);
    ++m_info.fused["batch_norm into conv"];
    NodeRef bref{&node(bn), bn, n.where, n.name};
    define(bref, 0, v);
  } else {
    define(n, 0, v);
  }
}

void Lowerer::op_gemm(const NodeRef& n) {
  const auto& p = *n.p;
  ValuePtr a = input(n, 0), b = input(n, 1);
  ValuePtr c = has_input(n, 2) ? input(n, 2) : nullptr;
  const bool ta = ai(p, "transA", 0) != 0, tb = ai(p, "transB", 0) != 0;
  const double alpha = af(p, "alpha", 1.0), beta = af(p, "beta", 1.0);
  if (a->shape.size() != 2 || b->shape.size() != 2)
    throw NodeError("Gemm needs rank-2 A and B, got " + ir::shape_str(a->shape) + " and " + ir::shape_str(b->shape));
  const int64_t m = ta ? a->shape[1] : a->shape[0], k = ta ? a->shape[0] : a->shape[1];
  const int64_t kb = tb ? b->shape[1] : b->shape[0], nn = tb ? b->shape[0] : b->shape[1];
  if (k != kb)
    throw NodeError("Gemm reduction dims differ: A " + ir::shape_str(a->shape) + (ta ? " (transA)" : "") + " has K = " +
                    std::to_string(k) + ", B " + ir::shape_str(b->shape) + (tb ? " (transB)" : "") + " has K = " +
                    std::to_string(kb));
  const Shape out{m, nn};
  const DType dt = a->dtype;
  if (c) {
    auto bc = broadcast(out, c->shape);
    if (!bc || *bc != out) throw NodeError("Gemm C " + ir::shape_str(c->shape) + " does not broadcast to " + ir::shape_str(out));
    if (beta != 1.0) {
      if (c->is_const) {
        m_info.notes.push_back(n.where + ": Gemm beta " + std::to_string(beta) + " folded into the constant C");
      } else {
        c = emit(n, OpKind::Mul, "beta", {c, new_const(n.name + "/beta", {1}, c->dtype)}, c->shape, c->dtype,
                 out_name(n) + "/beta_c");
      }
    }
  }
  // C as the op's bias: N elements, added after the product with alpha = 1.
  const bool c_bias = c && alpha == 1.0 && ir::num_elements(c->shape) == nn &&
                      (c->shape.size() <= 1 || (c->shape.size() == 2 && c->shape[0] == 1));
  const bool more = (c && !c_bias) || alpha != 1.0;
  const std::string prod_name = more ? out_name(n) + "/gemm" : out_name(n);
  std::vector<ValuePtr> ins{a, b};
  if (c_bias) ins.push_back(c);
  ValuePtr v;
  if (!ta && tb && b->is_const) {
    v = emit(n, OpKind::Dense, "", ins, out, dt, prod_name);
  } else {
    v = emit(n, OpKind::MatMul, "", ins, out, dt, prod_name, [&](ir::Layer& l) {
      l.transpose_a = ta;
      l.transpose_b = tb;
    });
  }
  if (alpha != 1.0) {
    const bool last = !(c && !c_bias);
    v = emit(n, OpKind::Mul, "alpha", {v, new_const(n.name + "/alpha", {1}, dt)}, out, dt,
             last ? out_name(n) : out_name(n) + "/alpha_ab");
  }
  if (c && !c_bias) v = emit(n, OpKind::ElementWiseAdd, "c", {v, c}, out, dt, out_name(n));
  define(n, 0, v);
}

void Lowerer::op_matmul(const NodeRef& n, bool quantized, bool integer) {
  ValuePtr a = input(n, 0), b = input(n, quantized ? 3 : 1);
  const Shape as_ = a->shape, bs = b->shape;
  if (as_.empty() || bs.empty()) throw NodeError("MatMul operands must have rank >= 1");
  DType dt = a->dtype;
  if (quantized) dt = has_input(n, 7) ? input(n, 7)->dtype : DType::UInt8;
  if (integer) dt = DType::Int32;
  // numpy matmul: a rank-1 A is [1,K] (M dropped), a rank-1 B is [K,1] (N dropped).
  const bool drop_m = as_.size() == 1, drop_n = bs.size() == 1;
  const Shape a2 = drop_m ? Shape{1, as_[0]} : as_, b2 = drop_n ? Shape{bs[0], 1} : bs;
  const int64_t m = a2[a2.size() - 2], k = a2.back(), kb = b2[b2.size() - 2], nn = b2.back();
  if (k != kb)
    throw NodeError("MatMul reduction dims differ: A " + ir::shape_str(as_) + " has K = " + std::to_string(k) + ", B " +
                    ir::shape_str(bs) + " has K = " + std::to_string(kb));
  auto batch = broadcast(Shape(a2.begin(), a2.end() - 2), Shape(b2.begin(), b2.end() - 2));
  if (!batch) throw NodeError("MatMul batch dims of A " + ir::shape_str(as_) + " and B " + ir::shape_str(bs) + " do not broadcast");
  Shape out = *batch;
  out.push_back(m);
  out.push_back(nn);
  Shape onnx_out = *batch;
  if (!drop_m) onnx_out.push_back(m);
  if (!drop_n) onnx_out.push_back(nn);

  // A following Add of a constant with N elements becomes the op's bias (onnx_fuse.cpp).
  int add = -1;
  ValuePtr bias;
  if (auto it = m_bias_add.find(n.index); it != m_bias_add.end() && !drop_m && !drop_n) {
    const auto& ap = node(it->second);
    ValuePtr c = find(ap.input(0) == n.p->output(0) ? ap.input(1) : ap.input(0));
    auto bc = c ? broadcast(out, c->shape) : std::nullopt;
    if (c && c->is_const && ir::num_elements(c->shape) == nn && bc && *bc == out) {
      add = it->second;
      bias = c;
    }
  }
  const std::string final_name = add >= 0 ? node(add).output(0) : out_name(n);
  const bool reshaped = drop_m || drop_n;
  const std::string mm_name = reshaped ? final_name + "/matmul" : final_name;

  ValuePtr a_op = drop_m ? reshape(n, a, a2, final_name + "/a2d", "a2d") : a;
  ValuePtr b_op = drop_n ? reshape(n, b, b2, final_name + "/b2d", "b2d") : b;
  OpKind kind;
  if (b_op->is_const && b2.size() == 2) {
    kind = OpKind::MatMul;
  } else if (a2.size() >= 3) {
    kind = OpKind::BatchMatMul;
  } else if (b2.size() == 2) {
    kind = OpKind::MatMul;  // two rank-2 activations
  } else {
    kind = OpKind::BatchMatMul;  // [M,K] x [B..,K,N]: A gets a batch dim of 1
    a_op = reshape(n, a_op, {1, m, k}, final_name + "/a3d", "a3d");
  }
  std::vector<ValuePtr> ins{a_op, b_op};
  if (bias) ins.push_back(bias);
  ValuePtr v = emit(n, kind, "", ins, out, dt, mm_name);
  if (reshaped) v = reshape(n, v, onnx_out, final_name);
  if (add >= 0) {
    m_skip.insert(add);
    ++m_info.fused["matmul + bias add"];
    NodeRef aref{&node(add), add, n.where, n.name};
    define(aref, 0, v);
  } else {
    define(n, 0, v);
  }
}

// ---------------------------------------------------------------- element-wise

void Lowerer::op_binary(const NodeRef& n, OpKind k) {
  ValuePtr a = input(n, 0), b = input(n, 1);
  auto out = broadcast(a->shape, b->shape);
  if (!out) throw NodeError(n.op() + " inputs " + ir::shape_str(a->shape) + " and " + ir::shape_str(b->shape) + " do not broadcast");
  const DType dt = a->is_const && !b->is_const ? b->dtype : a->dtype;
  define(n, 0, emit(n, k, "", {a, b}, *out, dt, out_name(n)));
}

void Lowerer::op_variadic(const NodeRef& n, OpKind k) {
  std::vector<ValuePtr> ins;
  for (const auto& v : inputs(n))
    if (v) ins.push_back(v);
  if (ins.empty()) throw NodeError(n.op() + " needs at least one input");
  ValuePtr acc = ins[0];
  for (size_t i = 1; i < ins.size(); ++i) {
    auto out = broadcast(acc->shape, ins[i]->shape);
    if (!out) throw NodeError(n.op() + " inputs " + ir::shape_str(acc->shape) + " and " + ir::shape_str(ins[i]->shape) + " do not broadcast");
    const bool last = i + 1 == ins.size();
    acc = emit(n, k, last ? "" : "part" + std::to_string(i), {acc, ins[i]}, *out, acc->dtype,
               last ? out_name(n) : out_name(n) + "/part" + std::to_string(i));
  }
  if (ins.size() == 1) {
    alias(n, 0, acc);
    ++m_info.folded_nodes;
  } else {
    define(n, 0, acc);
  }
}

void Lowerer::op_pow(const NodeRef& n) {
  ValuePtr x = input(n, 0), e = input(n, 1);
  auto out = broadcast(x->shape, e->shape);
  if (!out) throw NodeError("Pow inputs " + ir::shape_str(x->shape) + " and " + ir::shape_str(e->shape) + " do not broadcast");
  const auto ev = e->is_const ? scalar_of(e) : std::nullopt;
  if (ev && *out == x->shape) {
    if (*ev == 1.0) {
      alias(n, 0, x);
      ++m_info.folded_nodes;
      return;
    }
    if (*ev == 2.0) return define(n, 0, emit(n, OpKind::Mul, "", {x, x}, x->shape, x->dtype, out_name(n)));
    if (*ev == 0.5) return define(n, 0, emit(n, OpKind::Sqrt, "", {x}, x->shape, x->dtype, out_name(n)));
    if (*ev == -0.5) return define(n, 0, emit(n, OpKind::Rsqrt, "", {x}, x->shape, x->dtype, out_name(n)));
    if (*ev == 3.0) {
      ValuePtr sq = emit(n, OpKind::Mul, "square", {x, x}, x->shape, x->dtype, out_name(n) + "/square");
      return define(n, 0, emit(n, OpKind::Mul, "", {sq, x}, x->shape, x->dtype, out_name(n)));
    }
  }
  opaque(n, "", {*out});
}

void Lowerer::op_unary(const NodeRef& n, OpKind k) {
  ValuePtr x = input(n, 0);
  if (n.op() == "Erf" && !x->is_const) ++m_info.fused["erf read as tanh"];
  define(n, 0, emit(n, k, "", {x}, x->shape, x->dtype, out_name(n)));
}

void Lowerer::op_clip(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  double lo = -DBL_MAX, hi = DBL_MAX;
  bool has_lo = false, has_hi = false;
  if (m_opset < 11) {
    if (attr(*n.p, "min")) lo = af(*n.p, "min", 0), has_lo = true;
    if (attr(*n.p, "max")) hi = af(*n.p, "max", 0), has_hi = true;
  } else {
    for (int k = 1; k <= 2; ++k) {
      if (!has_input(n, k)) continue;
      auto s = scalar_of(input(n, k));
      if (!s) return opaque(n, "", {x->shape});
      (k == 1 ? lo : hi) = *s;
      (k == 1 ? has_lo : has_hi) = true;
    }
  }
  if (has_lo && lo == 0 && has_hi && hi == 6) return define(n, 0, emit(n, OpKind::Relu6, "", {x}, x->shape, x->dtype, out_name(n)));
  if (has_lo && lo == 0 && !has_hi) return define(n, 0, emit(n, OpKind::Relu, "", {x}, x->shape, x->dtype, out_name(n)));
  if (lo > hi) throw NodeError("Clip min " + std::to_string(lo) + " exceeds max " + std::to_string(hi));
  define(n, 0, emit(n, OpKind::Clip, "", {x}, x->shape, x->dtype, out_name(n), [&](ir::Layer& l) {
    l.clip_min = std::max(lo, -static_cast<double>(FLT_MAX));
    l.clip_max = std::min(hi, static_cast<double>(FLT_MAX));
  }));
}

// ---------------------------------------------------------------- normalizations and reductions

void Lowerer::op_softmax(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  const Shape& s = x->shape;
  if (s.empty()) throw NodeError("softmax of a scalar");
  const int64_t ax = norm_axis(ai(*n.p, "axis", m_opset < 13 ? 1 : -1), s.size(), "softmax axis");
  bool trailing_ones = true;
  for (size_t i = static_cast<size_t>(ax) + 1; i < s.size(); ++i) trailing_ones = trailing_ones && s[i] == 1;
  if (m_opset >= 13 || trailing_ones) {
    define(n, 0, emit(n, OpKind::Softmax, "", {x}, s, x->dtype, out_name(n), [&](ir::Layer& l) { l.axes = {ax}; }));
    return;
  }
  // Before opset 13 the input is seen as 2-D [prod(:axis), prod(axis:)].
  const Shape flat = flatten_shape(s, ax);
  ValuePtr f = reshape(n, x, flat, out_name(n) + "/2d", "2d");
  ValuePtr sm = emit(n, OpKind::Softmax, "", {f}, flat, x->dtype, out_name(n) + "/softmax", [&](ir::Layer& l) { l.axes = {1}; });
  define(n, 0, reshape(n, sm, s, out_name(n)));
}

void Lowerer::op_layer_norm(const NodeRef& n) {
  ValuePtr x = input(n, 0), g = input(n, 1);
  ValuePtr b = has_input(n, 2) ? input(n, 2) : nullptr;
  for (int k = 1; k < n.p->output_size(); ++k)
    if (!n.p->output(k).empty() && consumed(n.p->output(k))) return opaque(n, "", {x->shape});
  const Shape& s = x->shape;
  const int64_t ax = norm_axis(ai(*n.p, "axis", -1), s.size(), "layer norm axis");
  std::vector<int64_t> axes;
  int64_t normalized = 1;
  for (int64_t i = ax; i < static_cast<int64_t>(s.size()); ++i) axes.push_back(i), normalized *= s[i];
  if (ir::num_elements(g->shape) != normalized || (b && ir::num_elements(b->shape) != normalized))
    return opaque(n, "", {s});
  std::vector<ValuePtr> ins{x, g};
  if (b) ins.push_back(b);
  const double eps = af(*n.p, "epsilon", 1e-5);
  define(n, 0, emit(n, OpKind::LayerNorm, "", ins, s, x->dtype, out_name(n), [&](ir::Layer& l) {
    l.axes = axes;
    l.epsilon = eps;
  }));
}

void Lowerer::op_batch_norm(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  for (int k = 1; k <= 4; ++k)
    if (!input(n, k)->is_const) return opaque(n, "", {x->shape});
  for (int k = 1; k < n.p->output_size(); ++k)
    if (!n.p->output(k).empty() && consumed(n.p->output(k))) return opaque(n, "training-mode outputs are used");
  if (x->shape.size() < 2) throw NodeError("BatchNormalization input " + ir::shape_str(x->shape) + " has no channel dim");
  const int64_t c = x->shape[1];
  if (ir::num_elements(input(n, 1)->shape) != c)
    throw NodeError("BatchNormalization scale " + ir::shape_str(input(n, 1)->shape) + " must have C = " + std::to_string(c) + " elements");
  // y = x * scale' + shift' with per-channel constants (scale' = gamma / sqrt(var + eps)).
  Shape pc{c};
  for (size_t i = 2; i < x->shape.size(); ++i) pc.push_back(1);
  ValuePtr scale = new_const(n.name + "/scale", pc, x->dtype), shift = new_const(n.name + "/shift", pc, x->dtype);
  ValuePtr m = emit(n, OpKind::Mul, "scale", {x, scale}, x->shape, x->dtype, out_name(n) + "/scaled");
  define(n, 0, emit(n, OpKind::ElementWiseAdd, "shift", {m, shift}, x->shape, x->dtype, out_name(n)));
}

void Lowerer::op_reduce(const NodeRef& n, OpKind k, int axes_input_opset) {
  ValuePtr x = input(n, 0);
  std::vector<int64_t> axes;
  if (m_opset >= axes_input_opset) {
    if (has_input(n, 1)) {
      auto a = ints_of(input(n, 1));
      if (!a) return opaque(n);
      axes = *a;
    }
  } else {
    axes = aints(*n.p, "axes").value_or(std::vector<int64_t>{});
  }
  const bool keep = ai(*n.p, "keepdims", 1) != 0;
  if (axes.empty()) {
    if (ai(*n.p, "noop_with_empty_axes", 0)) {
      alias(n, 0, x);
      ++m_info.folded_nodes;
      return;
    }
    for (size_t i = 0; i < x->shape.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  axes = norm_axes(axes, x->shape.size());
  Shape out;
  for (size_t i = 0; i < x->shape.size(); ++i) {
    const bool red = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!red) out.push_back(x->shape[i]);
    else if (keep) out.push_back(1);
  }
  define(n, 0, emit(n, k, "", {x}, out, x->dtype, out_name(n), [&](ir::Layer& l) {
    l.axes = axes;
    l.keepdims = keep;
  }));
}

// ---------------------------------------------------------------- data movement

void Lowerer::op_transpose(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  std::vector<int64_t> perm = aints(*n.p, "perm").value_or(std::vector<int64_t>{});
  if (perm.empty())
    for (size_t i = x->shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != x->shape.size())
    throw NodeError("perm " + ir::shape_str(perm) + " does not match the rank of " + ir::shape_str(x->shape));
  perm = norm_axes(perm, x->shape.size());
  Shape out;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) {
    out.push_back(x->shape[perm[i]]);
    identity = identity && perm[i] == static_cast<int64_t>(i);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i)) throw NodeError("perm " + ir::shape_str(perm) + " is not a permutation");
  if (identity) {
    alias(n, 0, x);
    ++m_info.folded_nodes;
    return;
  }
  define(n, 0, emit(n, OpKind::Transpose, "", {x}, out, x->dtype, out_name(n), [&](ir::Layer& l) { l.perm = perm; }));
}

void Lowerer::op_reshape_like(const NodeRef& n) {
  const std::string& op = n.op();
  ValuePtr x = input(n, 0);
  Shape out;
  auto from_vinfo = [&]() -> bool {
    auto vi = m_vinfo.find(out_name(n));
    if (vi == m_vinfo.end() || !vi->second.has_shape) return false;
    for (int64_t d : vi->second.dims)
      if (d < 0) return false;
    out.assign(vi->second.dims.begin(), vi->second.dims.end());
    return true;
  };
  if (op == "Reshape") {
    auto spec = has_input(n, 1) ? ints_of(input(n, 1)) : std::optional<std::vector<int64_t>>{};
    if (spec) out = reshape_shape(x->shape, *spec, ai(*n.p, "allowzero", 0) != 0);
    else if (!from_vinfo())
      throw NodeError("the target shape (input 1 '" + (n.p->input_size() > 1 ? n.p->input(1) : std::string()) +
                      "') is not known before run time and shape inference gave no shape for '" + out_name(n) + "'");
  } else if (op == "Flatten") {
    out = flatten_shape(x->shape, ai(*n.p, "axis", 1));
  } else {
    std::optional<std::vector<int64_t>> axes;
    if (m_opset >= 13) axes = has_input(n, 1) ? ints_of(input(n, 1)) : std::optional<std::vector<int64_t>>{std::vector<int64_t>{}};
    else axes = aints(*n.p, "axes").value_or(std::vector<int64_t>{});
    if (axes) out = op == "Squeeze" ? squeeze_shape(x->shape, *axes) : unsqueeze_shape(x->shape, *axes);
    else if (!from_vinfo())
      throw NodeError("the axes (input 1) are not known before run time and shape inference gave no shape for '" + out_name(n) + "'");
  }
  if (ir::num_elements(out) != ir::num_elements(x->shape))
    throw NodeError(op + " output " + ir::shape_str(out) + " has another number of elements than its input " + ir::shape_str(x->shape));
  if (out == x->shape) {
    alias(n, 0, x);
    ++m_info.folded_nodes;
    return;
  }
  define(n, 0, reshape(n, x, out, out_name(n), ""));
}

void Lowerer::op_concat(const NodeRef& n) {
  std::vector<ValuePtr> ins;
  for (const auto& v : inputs(n))
    if (v && ir::num_elements(v->shape) > 0) ins.push_back(v);
  if (ins.empty()) throw NodeError("every input of Concat is empty");
  if (ins.size() == 1) {
    alias(n, 0, ins[0]);
    ++m_info.folded_nodes;
    return;
  }
  std::vector<Shape> shapes;
  for (const auto& v : ins) shapes.push_back(v->shape);
  const int64_t ax = norm_axis(ai(*n.p, "axis", 0), shapes[0].size(), "concat axis");
  const Shape out = concat_shape(shapes, ax);
  define(n, 0, emit(n, OpKind::Concat, "", ins, out, ins[0]->dtype, out_name(n), [&](ir::Layer& l) { l.axes = {ax}; }));
}

void Lowerer::op_split(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  const int64_t ax = norm_axis(ai(*n.p, "axis", 0), x->shape.size(), "split axis");
  const int64_t dim = x->shape[ax];
  std::vector<int64_t> sizes;
  if (m_opset >= 13 && has_input(n, 1)) {
    auto s = ints_of(input(n, 1));
    if (!s) return opaque(n);
    sizes = *s;
  } else if (auto s = aints(*n.p, "split"); s && m_opset < 13) {
    sizes = *s;
  } else {
    const int64_t parts = m_opset >= 18 && attr(*n.p, "num_outputs") ? ai(*n.p, "num_outputs", 1) : n.p->output_size();
    if (parts < 1) throw NodeError("Split into " + std::to_string(parts) + " parts");
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(chunk, dim - i * chunk));
  }
  for (int64_t s : sizes)
    if (s < 0 || s > dim) throw NodeError("Split size " + std::to_string(s) + " is out of range for dim " + std::to_string(dim));
  if (static_cast<int>(sizes.size()) != n.p->output_size())
    throw NodeError("Split sizes " + ir::shape_str(sizes) + " do not match the " + std::to_string(n.p->output_size()) + " outputs");
  if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != dim)
    throw NodeError("Split sizes " + ir::shape_str(sizes) + " do not add up to dim " + std::to_string(dim) + " of " + ir::shape_str(x->shape));
  std::vector<Shape> outs;
  std::vector<std::string> names;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape s = x->shape;
    s[ax] = sizes[i];
    outs.push_back(s);
    names.push_back(n.p->output(static_cast<int>(i)).empty() ? n.name + ":" + std::to_string(i) : n.p->output(static_cast<int>(i)));
  }
  if (sizes.size() == 1) {
    alias(n, 0, x);
    ++m_info.folded_nodes;
    return;
  }
  auto vs = emit_multi(n, OpKind::Split, {x}, outs, x->dtype, names, [&](ir::Layer& l) { l.axes = {ax}; });
  for (size_t i = 0; i < vs.size(); ++i) define(n, static_cast<int>(i), vs[i]);
}

void Lowerer::op_slice(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (m_opset < 10) {
    starts = aints(*n.p, "starts").value_or(std::vector<int64_t>{});
    ends = aints(*n.p, "ends").value_or(std::vector<int64_t>{});
    axes = aints(*n.p, "axes").value_or(std::vector<int64_t>{});
  } else {
    std::vector<std::optional<std::vector<int64_t>>> v(5);
    for (int k = 1; k <= 4; ++k) {
      if (!has_input(n, k)) continue;
      v[k] = ints_of(input(n, k));
      if (!v[k]) return opaque(n, "the slice bounds are not known before run time");
    }
    if (!v[1] || !v[2]) throw NodeError("Slice needs starts and ends");
    starts = *v[1];
    ends = *v[2];
    if (v[3]) axes = *v[3];
    if (v[4]) steps = *v[4];
  }
  const auto sa = slice_axes(x->shape, starts, ends, axes, steps);
  Shape out;
  bool full = true, negative = false;
  std::vector<int64_t> s, e, st;
  for (size_t i = 0; i < sa.size(); ++i) {
    const SliceAxis& a = sa[i];
    if (a.count == 0)
      throw NodeError("slice of " + ir::shape_str(x->shape) + " (starts " + ir::shape_str(starts) + ", ends " +
                      ir::shape_str(ends) + ") selects no elements along axis " + std::to_string(i));
    out.push_back(a.count);
    full = full && a.start == 0 && a.step == 1 && a.count == x->shape[i];
    // A negative step reads the same elements as the forward slice over them.
    const int64_t step = a.step > 0 ? a.step : -a.step;
    const int64_t first = a.step > 0 ? a.start : a.start + (a.count - 1) * a.step;
    negative = negative || a.step < 0;
    s.push_back(first);
    e.push_back(first + (a.count - 1) * step + 1);
    st.push_back(step);
  }
  if (full) {
    alias(n, 0, x);
    ++m_info.folded_nodes;
    return;
  }
  if (negative && !x->is_const) ++m_info.fused["slice with negative step read forward"];
  define(n, 0, emit(n, OpKind::Slice, "", {x}, out, x->dtype, out_name(n), [&](ir::Layer& l) {
    l.starts = s;
    l.ends = e;
    l.steps = st;
  }));
}

void Lowerer::op_gather(const NodeRef& n) {
  ValuePtr t = input(n, 0), idx = input(n, 1);
  if (t->shape.empty()) throw NodeError("Gather from a scalar");
  if (ir::is_float(idx->dtype))
    throw NodeError("Gather indices must be integers, got " + onnx_type_name(idx->onnx_type));
  const int64_t ax = norm_axis(ai(*n.p, "axis", 0), t->shape.size(), "gather axis");
  const Shape out = gather_shape(t->shape, idx->shape, ax);
  const bool scalar_idx = idx->shape.empty();
  const Shape ir_out = gather_shape(t->shape, ir_shape(idx->shape), ax);
  ValuePtr v = emit(n, OpKind::Gather, "", {t, idx}, ir_out, t->dtype, scalar_idx ? out_name(n) + "/gather" : out_name(n),
                    [&](ir::Layer& l) { l.axes = {ax}; });
  if (scalar_idx) v = reshape(n, v, out, out_name(n));
  define(n, 0, v);
}

void Lowerer::op_pool(const NodeRef& n, OpKind k) {
  const auto& p = *n.p;
  ValuePtr x = input(n, 0);
  const size_t r = x->shape.size();
  if (r != 3 && r != 4) return opaque(n, "only 1-D and 2-D pools are lowered");
  if (p.output_size() > 1 && !p.output(1).empty() && consumed(p.output(1))) return opaque(n, "the indices output is used");
  auto ks = aints(p, "kernel_shape");
  if (!ks) throw NodeError(p.op_type() + " needs kernel_shape");
  const bool ceil = ai(p, "ceil_mode", 0) != 0;
  const Window win = window(p, x->shape, *ks, ceil, k == OpKind::MaxPool2d);
  Shape out{x->shape[0], x->shape[1]};
  for (int64_t o : win.out) out.push_back(o);
  ValuePtr x4 = x;
  Shape out4 = out;
  if (r == 3) {
    x4 = reshape(n, x, {x->shape[0], x->shape[1], 1, x->shape[2]}, out_name(n) + "/in2d", "in2d");
    out4 = {out[0], out[1], 1, out[2]};
  }
  ValuePtr v = emit(n, k, "", {x4}, out4, x->dtype, r == 3 ? out_name(n) + "/pool2d" : out_name(n), [&](ir::Layer& l) {
    set_window(l, win, true);
    l.ceil_mode = ceil;
  });
  if (r == 3) v = reshape(n, v, out, out_name(n));
  define(n, 0, v);
}

void Lowerer::op_global_pool(const NodeRef& n, OpKind k) {
  ValuePtr x = input(n, 0);
  const Shape& s = x->shape;
  if (s.size() < 3) throw NodeError(n.op() + " needs an [N,C,spatial...] input, got " + ir::shape_str(s));
  Shape out{s[0], s[1]};
  for (size_t i = 2; i < s.size(); ++i) out.push_back(1);
  if (s.size() == 4) return define(n, 0, emit(n, k, "", {x}, out, x->dtype, out_name(n)));
  // Other ranks: a reduction over the spatial axes.
  std::vector<int64_t> axes;
  for (size_t i = 2; i < s.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const OpKind rk = k == OpKind::GlobalAvgPool2d ? OpKind::ReduceMean : OpKind::ReduceMax;
  define(n, 0, emit(n, rk, "", {x}, out, x->dtype, out_name(n), [&](ir::Layer& l) {
    l.axes = axes;
    l.keepdims = true;
  }));
}

void Lowerer::op_pad(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  const size_t r = x->shape.size();
  std::vector<int64_t> pads;
  if (m_opset < 11) {
    pads = aints(*n.p, "pads").value_or(std::vector<int64_t>{});
  } else {
    auto v = has_input(n, 1) ? ints_of(input(n, 1)) : std::nullopt;
    if (!v) return opaque(n, "the pads are not known before run time");
    pads = *v;
  }
  std::vector<int64_t> axes;
  if (m_opset >= 18 && has_input(n, 3)) {
    auto a = ints_of(input(n, 3));
    if (!a) return opaque(n, "the pad axes are not known before run time");
    axes = norm_axes(*a, r);
  } else {
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads.size() != 2 * axes.size())
    throw NodeError("pads " + ir::shape_str(pads) + " need 2 entries per padded axis (" + std::to_string(axes.size()) + ")");
  std::vector<int64_t> ir_pads(2 * r, 0);
  Shape out = x->shape;
  bool zero = true, negative = false;
  for (size_t j = 0; j < axes.size(); ++j) {
    const int64_t lo = pads[j], hi = pads[axes.size() + j];
    if (std::abs(lo) > (int64_t{1} << 40) || std::abs(hi) > (int64_t{1} << 40))
      throw NodeError("pads " + ir::shape_str(pads) + " are out of range");
    ir_pads[2 * axes[j]] = lo;
    ir_pads[2 * axes[j] + 1] = hi;
    out[axes[j]] += lo + hi;
    zero = zero && lo == 0 && hi == 0;
    negative = negative || lo < 0 || hi < 0;
  }
  if (zero) {
    alias(n, 0, x);
    ++m_info.folded_nodes;
    return;
  }
  if (negative) return opaque(n, "negative pads crop", {out});
  define(n, 0, emit(n, OpKind::Pad, "", {x}, out, x->dtype, out_name(n), [&](ir::Layer& l) { l.pads = ir_pads; }));
}

void Lowerer::op_quantize(const NodeRef& n, bool quantize) {
  ValuePtr x = input(n, 0);
  if (!quantize && x->is_const) {
    // A dequantized weight stays int8 in memory: the op that reads it gets the int8 tensor.
    alias(n, 0, x);
    ++m_info.folded_nodes;
    return;
  }
  DType dt;
  if (quantize) {
    dt = has_input(n, 2) ? input(n, 2)->dtype
                         : ir_dtype(static_cast<int>(ai(*n.p, "output_dtype", onnx::TensorProto::UINT8))).value_or(DType::UInt8);
  } else {
    dt = has_input(n, 1) ? input(n, 1)->dtype : DType::Float32;
  }
  define(n, 0, emit(n, quantize ? OpKind::Quantize : OpKind::Dequantize, "", {x}, x->shape, dt, out_name(n)));
}

void Lowerer::op_expand(const NodeRef& n) {
  ValuePtr x = input(n, 0);
  Shape out;
  if (auto spec = has_input(n, 1) ? ints_of(input(n, 1)) : std::nullopt) {
    auto b = broadcast(x->shape, *spec);
    if (!b) throw NodeError("cannot expand " + ir::shape_str(x->shape) + " to " + ir::shape_str(*spec));
    out = *b;
  } else {
    return opaque(n);
  }
  if (out == x->shape) {
    alias(n, 0, x);
    ++m_info.folded_nodes;
    return;
  }
  if (x->is_const) {
    define(n, 0, new_const(out_name(n), out, x->dtype));
    ++m_info.folded_nodes;
    return;
  }
  opaque(n, "", {out});
}

}  // namespace npusim::frontends::onnx_fe
