// Shape rules shared by lowering and evaluation, and the static evaluation of the small
// integer/float computations that ONNX exporters leave in graphs to compute shapes (Shape ->
// Gather -> Concat -> Reshape, ConstantOfShape, Range...). An evaluated node produces a
// constant with known values and no IR op (onnx_internal.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "frontends/onnx/onnx_internal.h"

namespace npusim::frontends::onnx_fe {

using ir::Shape;
using TP = onnx::TensorProto;

// ---------------------------------------------------------------- shape rules

int64_t norm_axis(int64_t axis, size_t rank, const std::string& what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw NodeError(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

int64_t checked_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw NodeError("shape " + ir::shape_str(s) + " has a negative dim");
    if (d > 0 && n > (int64_t{1} << 52) / d) throw NodeError("shape " + ir::shape_str(s) + " has more than 2^52 elements");
    n *= d;
  }
  return n;
}

std::optional<Shape> broadcast(const Shape& a, const Shape& b) { return ir::broadcast_shapes(a, b); }

Shape reshape_shape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero) {
  Shape out;
  int infer = -1;
  for (size_t i = 0; i < spec.size(); ++i) {
    const int64_t d = spec[i];
    if (d == -1) {
      if (infer >= 0) throw NodeError("shape " + ir::shape_str(spec) + " has more than one -1");
      infer = static_cast<int>(i);
      out.push_back(1);
    } else if (d == 0 && !allowzero) {
      if (i >= in.size())
        throw NodeError("shape " + ir::shape_str(spec) + " copies dim " + std::to_string(i) + " (0) of the rank-" +
                        std::to_string(in.size()) + " input " + ir::shape_str(in));
      out.push_back(in[i]);
    } else if (d < 0) {
      throw NodeError("shape " + ir::shape_str(spec) + " has a negative dim " + std::to_string(d));
    } else {
      out.push_back(d);
    }
  }
  const int64_t n = checked_elements(in);
  if (infer >= 0) {
    const int64_t known = checked_elements(out);
    if (known == 0 || n % known != 0)
      throw NodeError("cannot reshape " + ir::shape_str(in) + " (" + std::to_string(n) + " elements) to " +
                      ir::shape_str(spec));
    out[infer] = n / known;
  }
  if (checked_elements(out) != n)
    throw NodeError("cannot reshape " + ir::shape_str(in) + " (" + std::to_string(n) + " elements) to " +
                    ir::shape_str(spec) + " (" + std::to_string(ir::num_elements(out)) + " elements)");
  return out;
}

Shape squeeze_shape(const Shape& in, const std::vector<int64_t>& axes) {
  std::vector<bool> drop(in.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : axes) {
      const int64_t ax = norm_axis(a, in.size(), "squeeze axis");
      if (in[ax] != 1)
        throw NodeError("squeeze axis " + std::to_string(a) + " has size " + std::to_string(in[ax]) + " in " +
                        ir::shape_str(in) + ", not 1");
      drop[ax] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

Shape unsqueeze_shape(const Shape& in, const std::vector<int64_t>& axes) {
  const size_t r = in.size() + axes.size();
  std::vector<bool> added(r, false);
  for (int64_t a : axes) {
    const int64_t ax = norm_axis(a, r, "unsqueeze axis");
    if (added[ax]) throw NodeError("unsqueeze axis " + std::to_string(a) + " is listed twice");
    added[ax] = true;
  }
  Shape out;
  size_t k = 0;
  for (size_t i = 0; i < r; ++i) out.push_back(added[i] ? 1 : in[k++]);
  return out;
}

Shape flatten_shape(const Shape& in, int64_t axis) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (axis < -r || axis > r)
    throw NodeError("flatten axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= in[i];
  return {outer, inner};
}

Shape concat_shape(const std::vector<Shape>& ins, int64_t axis) {
  Shape out = ins.at(0);
  for (size_t i = 1; i < ins.size(); ++i) {
    const Shape& s = ins[i];
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == axis || s[d] == out[d];
    if (!ok)
      throw NodeError("concat input " + std::to_string(i) + " " + ir::shape_str(s) + " differs from " +
                      ir::shape_str(ins[0]) + " outside axis " + std::to_string(axis));
    if (s[axis] > (int64_t{1} << 52) || out[axis] > (int64_t{1} << 52)) throw NodeError("concat output is too large");
    out[axis] += s[axis];
  }
  return out;
}

Shape gather_shape(const Shape& table, const Shape& idx, int64_t axis) {
  Shape out(table.begin(), table.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), table.begin() + axis + 1, table.end());
  return out;
}

std::vector<SliceAxis> slice_axes(const Shape& in, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                                  const std::vector<int64_t>& axes_in, const std::vector<int64_t>& steps) {
  std::vector<SliceAxis> r(in.size());
  for (size_t i = 0; i < in.size(); ++i) r[i] = {0, 1, in[i]};
  std::vector<int64_t> axes = axes_in;
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (ends.size() != starts.size() || axes.size() != starts.size() || (!steps.empty() && steps.size() != starts.size()))
    throw NodeError("slice starts " + ir::shape_str(starts) + ", ends " + ir::shape_str(ends) + ", axes " +
                    ir::shape_str(axes) + " and steps " + ir::shape_str(steps) + " differ in length");
  std::vector<bool> seen(in.size(), false);
  for (size_t j = 0; j < starts.size(); ++j) {
    const int64_t ax = norm_axis(axes[j], in.size(), "slice axis");
    if (seen[ax]) throw NodeError("slice axis " + std::to_string(axes[j]) + " is listed twice");
    seen[ax] = true;
    const int64_t step = steps.empty() ? 1 : steps[j];
    if (step == 0) throw NodeError("slice step is 0");
    const int64_t dim = in[ax];
    int64_t s = starts[j], e = ends[j];
    if (s < 0) s = s < -dim ? -1 - dim : s + dim;  // keep far-negative values negative without overflow
    if (e < 0) e = e < -dim ? -1 - dim : e + dim;
    int64_t count = 0;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count = e > s ? (e - s - 1) / step + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count = s > e ? (s - e - 1) / (-step) + 1 : 0;
    }
    r[ax] = {s, step, count};
  }
  return r;
}

int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t dil, bool ceil) {
  const int64_t span = in + pad_lo + pad_hi - dil * (k - 1) - 1;
  if (span < 0 || stride < 1) return 0;
  int64_t out = (span + (ceil ? stride - 1 : 0)) / stride + 1;
  if (ceil && (out - 1) * stride >= in + pad_lo) --out;
  return out;
}

// ---------------------------------------------------------------- evaluation

namespace {

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// Flat index into `in` (broadcast onto `out`, aligned at the last dim) of flat output index o.
int64_t broadcast_index(const Shape& out, const std::vector<int64_t>& out_st, const Shape& in,
                        const std::vector<int64_t>& in_st, int64_t o) {
  int64_t idx = 0;
  const size_t off = out.size() - in.size();
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t c = (o / out_st[d]) % out[d];
    if (d >= off && in[d - off] != 1) idx += c * in_st[d - off];
  }
  return idx;
}

ConstData empty_like(bool is_int) {
  ConstData d;
  d.is_int = is_int;
  return d;
}

void push(ConstData& d, const ConstData& src, int64_t k) {
  if (d.is_int) d.i.push_back(src.get_int(static_cast<size_t>(k)));
  else d.f.push_back(src.get(static_cast<size_t>(k)));
}

// Copies elements of src (shape in) at the given flat indices.
ConstData gather_flat(const ConstData& src, const std::vector<int64_t>& idx) {
  ConstData d = empty_like(src.is_int);
  for (int64_t k : idx) push(d, src, k);
  return d;
}

double apply_binary(const std::string& op, double a, double b, bool is_int, bool& ok) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") {
    if (b == 0) { ok = false; return 0; }
    return is_int ? std::trunc(a / b) : a / b;
  }
  if (op == "Pow") return std::pow(a, b);
  if (op == "Mod") {
    if (b == 0) { ok = false; return 0; }
    double m = std::fmod(a, b);
    if (is_int && m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
  }
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "Greater") return a > b;
  if (op == "LessOrEqual") return a <= b;
  if (op == "GreaterOrEqual") return a >= b;
  if (op == "And") return (a != 0) && (b != 0);
  if (op == "Or") return (a != 0) || (b != 0);
  if (op == "Xor") return (a != 0) != (b != 0);
  ok = false;
  return 0;
}

int64_t apply_binary_int(const std::string& op, int64_t a, int64_t b, bool& ok) {
  // Exact integer arithmetic for the ops shape computations use (values can pass 2^53).
  int64_t r = 0;
  if (op == "Add") return __builtin_add_overflow(a, b, &r) ? (ok = false, 0) : r;
  if (op == "Sub") return __builtin_sub_overflow(a, b, &r) ? (ok = false, 0) : r;
  if (op == "Mul") return __builtin_mul_overflow(a, b, &r) ? (ok = false, 0) : r;
  if (op == "Div") {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) { ok = false; return 0; }
    return a / b;
  }
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "Equal") return a == b;
  return static_cast<int64_t>(apply_binary(op, static_cast<double>(a), static_cast<double>(b), true, ok));
}

bool is_compare(const std::string& op) {
  return op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" ||
         op == "And" || op == "Or" || op == "Xor" || op == "Not";
}

const std::set<std::string>& eval_ops() {
  static const std::set<std::string> s{
      "Shape", "Size", "ConstantOfShape", "Cast", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Gather",
      "Concat", "Slice", "Transpose", "Expand", "Neg", "Abs", "Sqrt", "Floor", "Ceil", "Not", "Reciprocal",
      "Relu", "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "Range", "ReduceProd", "ReduceSum",
      "ReduceMax", "ReduceMin", "Tile"};
  return s;
}

int64_t attr_i(const onnx::NodeProto& p, const char* name, int64_t dflt) {
  for (const auto& a : p.attribute())
    if (a.name() == name) return a.i();
  return dflt;
}

const onnx::AttributeProto* attr(const onnx::NodeProto& p, const char* name) {
  for (const auto& a : p.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

}  // namespace

bool Lowerer::try_eval(const NodeRef& n) {
  const std::string& op = n.op();
  if (!eval_ops().count(op)) return false;
  const onnx::NodeProto& p = *n.p;
  std::vector<ValuePtr> ins = inputs(n);
  std::vector<const ConstData*> d(ins.size(), nullptr);
  const bool shape_only = op == "Shape" || op == "Size";
  for (size_t k = 0; k < ins.size(); ++k) {
    if (!ins[k]) continue;
    if (shape_only) break;
    if (!ins[k]->is_const) return false;
    d[k] = data(ins[k]);
    if (!d[k]) {
      // The data of a big constant is not needed to know the result's shape: the handlers fold it.
      return false;
    }
  }
  if (ins.empty() || !ins[0]) return false;
  if (!shape_only && !d[0]) return false;
  // Optional inputs past the end read as absent.
  const size_t nin = ins.size();
  ins.resize(std::max<size_t>(nin, 5));
  d.resize(ins.size(), nullptr);

  auto result = [&](Shape shape, int onnx_type, ConstData data) {
    auto v = make_const(std::move(shape), ir_dtype(onnx_type).value_or(ir::DType::Int64), onnx_type, std::move(data));
    define(n, 0, v);
    ++m_info.folded_nodes;
    return true;
  };
  const ValuePtr& x = ins[0];
  const ConstData* xd = d.empty() ? nullptr : d[0];
  const Shape& xs = x->shape;

  if (op == "Shape") {
    int64_t r = static_cast<int64_t>(xs.size());
    int64_t s = attr_i(p, "start", 0), e = attr_i(p, "end", r);
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = std::clamp<int64_t>(s, 0, r);
    e = std::clamp<int64_t>(e, 0, r);
    ConstData c;
    for (int64_t i = s; i < e; ++i) c.i.push_back(xs[i]);
    return result({static_cast<int64_t>(c.i.size())}, TP::INT64, c);
  }
  if (op == "Size") {
    ConstData c;
    c.i.push_back(ir::num_elements(xs));
    return result({}, TP::INT64, c);
  }
  if (op == "ConstantOfShape") {
    Shape shape;
    for (size_t k = 0; k < xd->size(); ++k) shape.push_back(xd->get_int(k));
    checked_elements(shape);
    int type = TP::FLOAT;
    ConstData fill;
    fill.is_int = false;
    fill.f.push_back(0.0);
    if (const auto* a = attr(p, "value")) {
      type = a->t().data_type();
      auto dv = decode_tensor(a->t());
      if (!dv || dv->size() != 1) throw NodeError("ConstantOfShape value must be a tensor of one element");
      fill = *dv;
    }
    const int64_t cnt = ir::num_elements(shape);
    if (cnt > kEvalLimit) {
      auto v = std::make_shared<Value>();
      v->shape = shape;
      v->onnx_type = type;
      v->dtype = ir_dtype(type).value_or(ir::DType::Float32);
      v->is_const = true;
      define(n, 0, v);
      ++m_info.folded_nodes;
      return true;
    }
    ConstData c = empty_like(fill.is_int);
    for (int64_t k = 0; k < cnt; ++k) push(c, fill, 0);
    return result(shape, type, c);
  }
  if (op == "Cast") {
    const int to = static_cast<int>(attr_i(p, "to", TP::FLOAT));
    ConstData c = empty_like(is_integer_type(to));
    for (size_t k = 0; k < xd->size(); ++k) {
      if (to == TP::BOOL) c.i.push_back(xd->get(k) != 0);
      else push(c, *xd, static_cast<int64_t>(k));
    }
    return result(xs, to, c);
  }

  // Output elements are bounded before any is computed.
  auto small = [](const Shape& s) { return ir::num_elements(s) <= kEvalLimit; };
  std::vector<int64_t> xidx;  // flat indices of x that make the output, for data movement ops
  Shape out;
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
    if (op == "Reshape") {
      if (!d[1]) return false;
      auto spec = ints_of(ins[1]);
      out = reshape_shape(xs, *spec, attr_i(p, "allowzero", 0) != 0);
    } else if (op == "Flatten") {
      out = flatten_shape(xs, attr_i(p, "axis", 1));
    } else {
      std::vector<int64_t> axes;
      if (m_opset >= 13 && ins.size() > 1 && ins[1]) axes = *ints_of(ins[1]);
      else if (const auto* a = attr(p, "axes")) axes.assign(a->ints().begin(), a->ints().end());
      out = op == "Squeeze" ? squeeze_shape(xs, axes) : unsqueeze_shape(xs, axes);
    }
    return result(out, x->onnx_type, *xd);
  }
  if (op == "Gather") {
    if (!d[1]) return false;
    const int64_t ax = norm_axis(attr_i(p, "axis", 0), xs.size(), "gather axis");
    out = gather_shape(xs, ins[1]->shape, ax);
    if (!small(out)) return false;
    const auto st = strides_of(xs);
    const int64_t outer = std::accumulate(xs.begin(), xs.begin() + ax, int64_t{1}, std::multiplies<>());
    const int64_t inner = st[ax];
    for (int64_t o = 0; o < outer; ++o)
      for (size_t j = 0; j < d[1]->size(); ++j) {
        int64_t id = d[1]->get_int(j);
        if (id < 0) id += xs[ax];
        if (id < 0 || id >= xs[ax])
          throw NodeError("gather index " + std::to_string(d[1]->get_int(j)) + " is out of range for dim " +
                          std::to_string(xs[ax]));
        for (int64_t i = 0; i < inner; ++i) xidx.push_back(o * xs[ax] * inner + id * inner + i);
      }
    return result(out, x->onnx_type, gather_flat(*xd, xidx));
  }
  if (op == "Concat") {
    std::vector<Shape> shapes;
    std::vector<size_t> used;
    for (size_t k = 0; k < ins.size(); ++k)
      if (ins[k] && !(ins[k]->shape.size() == 1 && ins[k]->shape[0] == 0)) shapes.push_back(ins[k]->shape), used.push_back(k);
    if (shapes.empty()) {
      ConstData c = empty_like(xd->is_int);
      return result({0}, x->onnx_type, c);
    }
    const int64_t ax = norm_axis(attr_i(p, "axis", 0), shapes[0].size(), "concat axis");
    out = concat_shape(shapes, ax);
    if (!small(out)) return false;
    ConstData c = empty_like(xd->is_int);
    const int64_t outer = std::accumulate(out.begin(), out.begin() + ax, int64_t{1}, std::multiplies<>());
    for (int64_t o = 0; o < outer; ++o)
      for (size_t u = 0; u < used.size(); ++u) {
        const Shape& s = shapes[u];
        const int64_t chunk = ir::num_elements(s) / std::max<int64_t>(outer, 1);
        for (int64_t i = 0; i < chunk; ++i) push(c, *d[used[u]], o * chunk + i);
      }
    return result(out, x->onnx_type, c);
  }
  if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (m_opset < 10) {
      if (const auto* a = attr(p, "starts")) starts.assign(a->ints().begin(), a->ints().end());
      if (const auto* a = attr(p, "ends")) ends.assign(a->ints().begin(), a->ints().end());
      if (const auto* a = attr(p, "axes")) axes.assign(a->ints().begin(), a->ints().end());
    } else {
      for (size_t k = 1; k < 3; ++k)
        if (k >= ins.size() || !d[k]) return false;
      starts = *ints_of(ins[1]);
      ends = *ints_of(ins[2]);
      if (ins.size() > 3 && ins[3]) axes = *ints_of(ins[3]);
      if (ins.size() > 4 && ins[4]) steps = *ints_of(ins[4]);
    }
    const auto sa = slice_axes(xs, starts, ends, axes, steps);
    for (const auto& a : sa) out.push_back(a.count);
    const auto st = strides_of(xs);
    const int64_t cnt = ir::num_elements(out);
    const auto ost = strides_of(out);
    for (int64_t o = 0; o < cnt; ++o) {
      int64_t idx = 0;
      for (size_t dd = 0; dd < out.size(); ++dd) idx += (sa[dd].start + ((o / ost[dd]) % out[dd]) * sa[dd].step) * st[dd];
      xidx.push_back(idx);
    }
    return result(out, x->onnx_type, gather_flat(*xd, xidx));
  }
  if (op == "Transpose") {
    std::vector<int64_t> perm;
    if (const auto* a = attr(p, "perm")) perm.assign(a->ints().begin(), a->ints().end());
    else
      for (size_t i = xs.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    if (perm.size() != xs.size()) throw NodeError("transpose perm " + ir::shape_str(perm) + " does not match rank " + std::to_string(xs.size()));
    for (int64_t q : perm) out.push_back(xs.at(norm_axis(q, xs.size(), "perm entry")));
    const auto st = strides_of(xs), ost = strides_of(out);
    for (int64_t o = 0; o < ir::num_elements(out); ++o) {
      int64_t idx = 0;
      for (size_t dd = 0; dd < out.size(); ++dd) idx += ((o / ost[dd]) % out[dd]) * st[norm_axis(perm[dd], xs.size())];
      xidx.push_back(idx);
    }
    return result(out, x->onnx_type, gather_flat(*xd, xidx));
  }
  if (op == "Expand" || op == "Tile") {
    if (!d[1]) return false;
    auto spec = *ints_of(ins[1]);
    if (op == "Expand") {
      auto b = broadcast(xs, spec);
      if (!b) throw NodeError("cannot expand " + ir::shape_str(xs) + " to " + ir::shape_str(spec));
      out = *b;
      if (!small(out)) return false;
      const auto ost = strides_of(out), st = strides_of(xs);
      for (int64_t o = 0; o < ir::num_elements(out); ++o) xidx.push_back(broadcast_index(out, ost, xs, st, o));
    } else {
      if (spec.size() != xs.size()) throw NodeError("tile repeats " + ir::shape_str(spec) + " do not match rank " + std::to_string(xs.size()));
      for (size_t i = 0; i < xs.size(); ++i) {
        if (spec[i] < 0 || spec[i] > kEvalLimit) return false;
        out.push_back(xs[i] * spec[i]);
      }
      if (!small(out)) return false;
      const auto ost = strides_of(out), st = strides_of(xs);
      for (int64_t o = 0; o < ir::num_elements(out); ++o) {
        int64_t idx = 0;
        for (size_t dd = 0; dd < out.size(); ++dd) idx += (((o / ost[dd]) % out[dd]) % xs[dd]) * st[dd];
        xidx.push_back(idx);
      }
    }
    return result(out, x->onnx_type, gather_flat(*xd, xidx));
  }
  if (op == "Range") {
    if (nin < 3 || !d[1] || !d[2] || d[0]->size() != 1 || d[1]->size() != 1 || d[2]->size() != 1) return false;
    const double s = d[0]->get(0), lim = d[1]->get(0), delta = d[2]->get(0);
    if (delta == 0) throw NodeError("range delta is 0");
    const double cnt = std::max(std::ceil((lim - s) / delta), 0.0);
    if (cnt > static_cast<double>(kEvalLimit)) return false;
    ConstData c = empty_like(xd->is_int);
    for (int64_t k = 0; k < static_cast<int64_t>(cnt); ++k) {
      if (c.is_int) {
        int64_t step = 0, v = 0;
        if (__builtin_mul_overflow(k, d[2]->get_int(0), &step) || __builtin_add_overflow(d[0]->get_int(0), step, &v)) return false;
        c.i.push_back(v);
      }
      else c.f.push_back(s + static_cast<double>(k) * delta);
    }
    return result({static_cast<int64_t>(cnt)}, x->onnx_type, c);
  }
  if (op == "ReduceProd" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin") {
    std::vector<int64_t> axes;
    const int axes_input = op == "ReduceSum" ? 13 : 18;
    if (m_opset >= axes_input) {
      if (ins.size() > 1 && ins[1]) {
        if (!d[1]) return false;
        axes = *ints_of(ins[1]);
      }
    } else if (const auto* a = attr(p, "axes")) {
      axes.assign(a->ints().begin(), a->ints().end());
    }
    const bool keep = attr_i(p, "keepdims", 1) != 0;
    if (axes.empty() && attr_i(p, "noop_with_empty_axes", 0)) return result(xs, x->onnx_type, *xd);
    std::vector<bool> red(xs.size(), axes.empty());
    for (int64_t a : axes) red[norm_axis(a, xs.size(), "reduce axis")] = true;
    Shape keep_shape;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!red[i]) out.push_back(xs[i]);
      else if (keep) out.push_back(1);
      keep_shape.push_back(red[i] ? 1 : xs[i]);
    }
    const int64_t on = ir::num_elements(keep_shape);
    std::vector<double> acc(static_cast<size_t>(on), op == "ReduceProd" ? 1.0 : op == "ReduceSum" ? 0.0
                                                           : op == "ReduceMax" ? -std::numeric_limits<double>::infinity()
                                                                               : std::numeric_limits<double>::infinity());
    const auto st = strides_of(xs), kst = strides_of(keep_shape);
    for (int64_t k = 0; k < ir::num_elements(xs); ++k) {
      int64_t o = 0;
      for (size_t dd = 0; dd < xs.size(); ++dd)
        if (!red[dd]) o += ((k / st[dd]) % xs[dd]) * kst[dd];
      double& a = acc[static_cast<size_t>(o)];
      const double v = xd->get(static_cast<size_t>(k));
      a = op == "ReduceProd" ? a * v : op == "ReduceSum" ? a + v : op == "ReduceMax" ? std::max(a, v) : std::min(a, v);
    }
    ConstData c = empty_like(xd->is_int);
    for (double a : acc) {
      if (c.is_int) c.i.push_back(static_cast<int64_t>(a));
      else c.f.push_back(a);
    }
    return result(out, x->onnx_type, c);
  }

  // Element-wise: unary, binary (variadic Max/Min), Where.
  if (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Floor" || op == "Ceil" || op == "Not" || op == "Reciprocal" ||
      op == "Relu") {
    const bool as_int = xd->is_int && op != "Sqrt" && op != "Reciprocal";
    ConstData c = empty_like(op == "Not" ? true : as_int);
    for (size_t k = 0; k < xd->size(); ++k) {
      if (op == "Not") { c.i.push_back(xd->get(k) == 0); continue; }
      if (as_int) {
        const int64_t v = xd->get_int(k);
        if (v == std::numeric_limits<int64_t>::min() && (op == "Neg" || op == "Abs")) return false;
        c.i.push_back(op == "Neg" ? -v : op == "Abs" ? std::abs(v) : op == "Relu" ? std::max<int64_t>(v, 0) : v);
        continue;
      }
      const double v = xd->get(k);
      c.f.push_back(op == "Neg" ? -v : op == "Abs" ? std::abs(v) : op == "Sqrt" ? std::sqrt(v) : op == "Floor" ? std::floor(v)
                    : op == "Ceil" ? std::ceil(v) : op == "Relu" ? std::max(v, 0.0) : 1.0 / v);
    }
    if (!c.is_int && xd->is_int) return result(xs, TP::FLOAT, c);
    return result(xs, op == "Not" ? TP::BOOL : x->onnx_type, c);
  }
  if (op == "Where") {
    if (nin != 3 || !d[1] || !d[2]) return false;
    auto b1 = broadcast(xs, ins[1]->shape);
    auto b = b1 ? broadcast(*b1, ins[2]->shape) : std::nullopt;
    if (!b) throw NodeError("where inputs do not broadcast");
    out = *b;
    if (!small(out)) return false;
    const auto ost = strides_of(out);
    const auto s0 = strides_of(xs), s1 = strides_of(ins[1]->shape), s2 = strides_of(ins[2]->shape);
    ConstData c = empty_like(d[1]->is_int);
    for (int64_t o = 0; o < ir::num_elements(out); ++o) {
      const bool cond = xd->get(static_cast<size_t>(broadcast_index(out, ost, xs, s0, o))) != 0;
      if (cond) push(c, *d[1], broadcast_index(out, ost, ins[1]->shape, s1, o));
      else push(c, *d[2], broadcast_index(out, ost, ins[2]->shape, s2, o));
    }
    return result(out, ins[1]->onnx_type, c);
  }
  // Binary, left to right over every input (Max/Min take any number).
  if (nin < 2) return false;
  ConstData acc = *xd;
  Shape acc_s = xs;
  for (size_t k = 1; k < nin; ++k) {
    if (!ins[k]) return false;
    auto b = broadcast(acc_s, ins[k]->shape);
    if (!b) throw NodeError(op + " inputs " + ir::shape_str(acc_s) + " and " + ir::shape_str(ins[k]->shape) + " do not broadcast");
    if (!small(*b)) return false;
    const bool as_int = acc.is_int && d[k]->is_int;
    const auto ost = strides_of(*b), sa = strides_of(acc_s), sb = strides_of(ins[k]->shape);
    ConstData c = empty_like(as_int || is_compare(op));
    bool ok = true;
    for (int64_t o = 0; o < ir::num_elements(*b); ++o) {
      const auto ia = static_cast<size_t>(broadcast_index(*b, ost, acc_s, sa, o));
      const auto ib = static_cast<size_t>(broadcast_index(*b, ost, ins[k]->shape, sb, o));
      if (as_int) {
        c.i.push_back(apply_binary_int(op, acc.get_int(ia), d[k]->get_int(ib), ok));
      } else {
        const double r = apply_binary(op, acc.get(ia), d[k]->get(ib), false, ok);
        if (c.is_int) c.i.push_back(static_cast<int64_t>(r));
        else c.f.push_back(r);
      }
      if (!ok) return false;
    }
    acc = std::move(c);
    acc_s = *b;
  }
  const int type = is_compare(op) ? TP::BOOL : x->onnx_type;
  if (!acc.is_int && is_integer_type(type)) {  // int op float (mixed constants): keep floats
    return result(acc_s, TP::FLOAT, acc);
  }
  return result(acc_s, type, acc);
}

}  // namespace npusim::frontends::onnx_fe
