// `sim zoo op OP key=value ...`: a workload of one operation, for every ir::OpKind. Weights
// (and biases, gamma/beta, embedding tables) are parameter tensors; every other operand is a
// graph input. Keys per operation: op_keys() and docs/format_frontend_ir.md#npusim-extensions.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "frontends/zoo/graph_builder.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::TensorRole;

const char* const kFile = "zoo op";
constexpr int64_t kMaxDim = int64_t{1} << 31;
constexpr int64_t kMaxWindow = int64_t{1} << 24;

bool is_binary(OpKind k) {
  return k == OpKind::ElementWiseAdd || k == OpKind::Sub || k == OpKind::Mul || k == OpKind::Div ||
         k == OpKind::Maximum || k == OpKind::Minimum;
}

bool is_unary(OpKind k) {
  switch (k) {
    case OpKind::Relu: case OpKind::Relu6: case OpKind::Gelu: case OpKind::Silu: case OpKind::Sigmoid:
    case OpKind::Tanh: case OpKind::Exp: case OpKind::Sqrt: case OpKind::Rsqrt: case OpKind::Neg:
      return true;
    default: return false;
  }
}

std::vector<std::string> keys_of(OpKind k) {
  if (is_binary(k)) return {"shape", "shape2"};
  if (is_unary(k)) return {"shape"};
  switch (k) {
    case OpKind::Conv2d: return {"n", "c", "h", "w", "k", "r", "s", "stride", "pad", "dilation", "groups", "bias"};
    case OpKind::Dense: return {"n", "c", "k", "bias"};
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: return {"n", "c", "h", "w", "r", "s", "stride", "pad", "ceil_mode"};
    case OpKind::GlobalAvgPool2d:
    case OpKind::GlobalMaxPool2d: return {"n", "c", "h", "w"};
    case OpKind::MatMul: return {"m", "n", "k", "b", "bias", "transpose_a", "transpose_b"};
    case OpKind::BatchMatMul: return {"b", "h", "m", "n", "k", "transpose_a", "transpose_b"};
    case OpKind::Clip: return {"shape", "min", "max"};
    case OpKind::Softmax: return {"shape", "axis"};
    case OpKind::LayerNorm:
    case OpKind::RmsNorm: return {"shape", "axis", "axes", "epsilon", "affine"};
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax: return {"shape", "axis", "axes", "keepdims"};
    case OpKind::Transpose: return {"shape", "perm"};
    case OpKind::Concat: return {"shape", "inputs", "axis"};
    case OpKind::Split: return {"shape", "axis", "parts"};
    case OpKind::Slice: return {"shape", "starts", "ends", "steps"};
    case OpKind::Gather: return {"vocab", "dim", "indices"};
    case OpKind::Pad: return {"shape", "pads"};
    case OpKind::Quantize:
    case OpKind::Dequantize:
    case OpKind::Requantize: return {"shape"};
    case OpKind::Reshape: return {"shape", "to"};
    case OpKind::Opaque: return {"shape", "out", "flops", "bytes", "label"};
    default: return {};
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string r;
  for (const std::string& s : v) r += (r.empty() ? "" : ", ") + s;
  return r;
}

std::string valid_ops() {
  std::string r;
  for (int i = 0; i < ir::kNumOpKinds; ++i) r += (i ? ", " : "") + std::string(ir::op_name(static_cast<OpKind>(i)));
  return r;
}

// The key=value arguments of one operation, checked against its keys.
class Args {
 public:
  Args(OpKind kind, const std::vector<std::string>& kvs) : m_op(ir::op_name(kind)), m_keys(keys_of(kind)) {
    for (const std::string& kv : kvs) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) fail(kv, "expected key=value, got '" + kv + "'");
      const std::string key = kv.substr(0, eq);
      if (std::find(m_keys.begin(), m_keys.end(), key) == m_keys.end()) fail(key, "unknown key '" + key + "' for " + m_op);
      if (!m_values.emplace(key, kv.substr(eq + 1)).second) fail(key, "key '" + key + "' is given twice");
    }
  }

  bool has(const std::string& key) const { return m_values.count(key) > 0; }

  int64_t integer(const std::string& key, std::optional<int64_t> def, int64_t lo, int64_t hi) const {
    auto it = m_values.find(key);
    if (it == m_values.end()) {
      if (!def) missing(key, "an integer");
      return *def;
    }
    return parse_int(key, it->second, lo, hi);
  }
  int64_t dim(const std::string& key, std::optional<int64_t> def = std::nullopt) const { return integer(key, def, 1, kMaxDim); }

  double number(const std::string& key, double def) const {
    auto it = m_values.find(key);
    if (it == m_values.end()) return def;
    try {
      size_t used = 0;
      const double v = std::stod(it->second, &used);
      if (used == it->second.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    fail(key, "expected a number, got '" + it->second + "'");
  }

  bool flag(const std::string& key, bool def) const {
    auto it = m_values.find(key);
    if (it == m_values.end()) return def;
    const std::string& v = it->second;
    if (v == "1" || v == "true") return true;
    if (v == "0" || v == "false") return false;
    fail(key, "expected 0, 1, true or false, got '" + v + "'");
  }

  std::string text(const std::string& key, const std::string& def) const {
    auto it = m_values.find(key);
    return it == m_values.end() ? def : it->second;
  }

  // Integers separated by ',' (and 'x' for shapes): "0,2,1", "512x4096".
  std::vector<int64_t> list(const std::string& key, std::optional<std::vector<int64_t>> def, bool shape) const {
    auto it = m_values.find(key);
    if (it == m_values.end()) {
      if (!def) missing(key, shape ? "a shape like 512x4096" : "a list like 0,2,1");
      return *def;
    }
    std::vector<int64_t> r;
    const std::string& v = it->second;
    size_t start = 0;
    while (true) {
      size_t end = v.find_first_of(shape ? "x," : ",", start);
      const std::string item = v.substr(start, end == std::string::npos ? std::string::npos : end - start);
      r.push_back(shape ? parse_int(key, item, 1, kMaxDim) : parse_int(key, item, -kMaxDim, kMaxDim));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    int64_t n = 1;
    for (int64_t d : r) {
      if (shape && n > (int64_t{1} << 40) / d) fail(key, "shape " + v + " has more than 2^40 elements");
      n *= shape ? d : 1;
    }
    return r;
  }
  Shape shape(const std::string& key, std::optional<Shape> def = std::nullopt) const { return list(key, def, true); }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(kFile, key, what + "; valid keys for " + m_op + ": " + join(m_keys));
  }

 private:
  [[noreturn]] void missing(const std::string& key, const std::string& what) const {
    fail(key, m_op + " needs " + key + "=<" + what + ">");
  }

  int64_t parse_int(const std::string& key, const std::string& s, int64_t lo, int64_t hi) const {
    size_t used = 0;
    int64_t v = 0;
    bool ok = !s.empty();
    try {
      v = std::stoll(s, &used);
      ok = ok && used == s.size();
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok) fail(key, "expected an integer, got '" + s + "'");
    if (v < lo || v > hi)
      fail(key, key + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(v));
    return v;
  }

  std::string m_op;
  std::vector<std::string> m_keys;
  std::map<std::string, std::string> m_values;
};

// Output size of a window along one axis (op_rules.cpp's rule: PyTorch's, with ceil_mode).
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil, bool ceil) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (span + (ceil ? stride - 1 : 0)) / stride + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

int64_t axis_of(const Args& a, const std::string& key, int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) a.fail(key, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

std::vector<int64_t> axes_arg(const Args& a, int64_t def) {
  if (a.has("axis") && a.has("axes")) a.fail("axes", "give axis= or axes=, not both");
  if (a.has("axes")) return a.list("axes", std::nullopt, false);
  return {a.integer("axis", def, -64, 63)};
}

class OpBuilder {
 public:
  OpBuilder(const OpWorkload& w, OpKind kind, DType dt)
      : m_w(w), m_kind(kind), m_a(kind, w.args), m_b(kFile, ir::op_name(kind)), m_dt(dt), m_name(ir::op_name(kind)) {}

  ir::Graph build() {
    const bool batch_key = m_kind == OpKind::Conv2d || m_kind == OpKind::Dense || m_kind == OpKind::MaxPool2d ||
                           m_kind == OpKind::AvgPool2d || m_kind == OpKind::GlobalAvgPool2d ||
                           m_kind == OpKind::GlobalMaxPool2d || m_kind == OpKind::MatMul ||
                           m_kind == OpKind::BatchMatMul;
    if (!batch_key && m_w.batch != 1)
      throw InputError(kFile, "batch", std::string("--batch sets n= or b= of conv2d, dense, pools, matmul and batch_matmul; ") +
                                           m_name + " takes the whole shape= instead");
    if (m_w.batch < 1) throw InputError(kFile, "batch", "batch must be >= 1, got " + std::to_string(m_w.batch));
    m_b.mark_output(build_op());
    return m_b.finish();
  }

 private:
  int x(const Shape& s, const std::string& name = "x") { return m_b.input(name, s, m_dt); }
  int weight(const std::string& name, const Shape& s, TensorRole role = TensorRole::Weight) {
    return m_b.param(name, s, m_dt, role);
  }
  int op(std::vector<int> ins, const Shape& out, const GraphBuilder::Attrs& attrs = {}, std::optional<DType> dt = {}) {
    return m_b.op(m_kind, m_name, std::move(ins), out, dt.value_or(m_dt), attrs);
  }

  int build_op() {
    const Args& a = m_a;
    if (is_unary(m_kind)) {
      const Shape s = a.shape("shape");
      return op({x(s)}, s);
    }
    if (is_binary(m_kind)) {
      const Shape s1 = a.shape("shape"), s2 = a.shape("shape2", s1);
      const size_t n = std::max(s1.size(), s2.size());
      Shape out(n, 1);
      for (size_t i = 0; i < n; ++i) {
        const int64_t d1 = i < n - s1.size() ? 1 : s1[i - (n - s1.size())];
        const int64_t d2 = i < n - s2.size() ? 1 : s2[i - (n - s2.size())];
        if (d1 != d2 && d1 != 1 && d2 != 1)
          a.fail("shape2", "shapes " + ir::shape_str(s1) + " and " + ir::shape_str(s2) + " do not broadcast");
        out[i] = std::max(d1, d2);
      }
      return op({x(s1, "a"), x(s2, "b")}, out);
    }
    switch (m_kind) {
      case OpKind::Conv2d: {
        const int64_t n = a.dim("n", m_w.batch), c = a.dim("c"), h = a.dim("h"), w = a.dim("w"), k = a.dim("k");
        const int64_t r = a.integer("r", std::nullopt, 1, kMaxWindow), s = a.integer("s", r, 1, kMaxWindow);
        const int64_t stride = a.integer("stride", 1, 1, kMaxWindow), pad = a.integer("pad", 0, 0, kMaxWindow);
        const int64_t dil = a.integer("dilation", 1, 1, kMaxWindow), groups = a.integer("groups", 1, 1, kMaxWindow);
        if (c % groups != 0 || k % groups != 0)
          a.fail("groups", "groups " + std::to_string(groups) + " must divide c " + std::to_string(c) + " and k " + std::to_string(k));
        const int64_t ho = window_out(h, r, stride, pad, dil, false), wo = window_out(w, s, stride, pad, dil, false);
        if (ho < 1 || wo < 1) a.fail("r", "the window does not fit the padded input");
        std::vector<int> ins{x({n, c, h, w}), weight("weight", {k, c / groups, r, s})};
        if (a.flag("bias", false)) ins.push_back(weight("bias", {k}, TensorRole::Bias));
        return op(ins, {n, k, ho, wo}, [&](ir::Layer& l) {
          l.kernel = {int(r), int(s)};
          l.stride = {int(stride), int(stride)};
          l.padding = {int(pad), int(pad), int(pad), int(pad)};
          l.dilation = {int(dil), int(dil)};
          l.groups = int(groups);
        });
      }
      case OpKind::Dense: {
        const int64_t n = a.dim("n", m_w.batch), c = a.dim("c"), k = a.dim("k");
        std::vector<int> ins{x({n, c}), weight("weight", {k, c})};
        if (a.flag("bias", false)) ins.push_back(weight("bias", {k}, TensorRole::Bias));
        return op(ins, {n, k});
      }
      case OpKind::MaxPool2d:
      case OpKind::AvgPool2d: {
        const int64_t n = a.dim("n", m_w.batch), c = a.dim("c"), h = a.dim("h"), w = a.dim("w");
        const int64_t r = a.integer("r", std::nullopt, 1, kMaxWindow), s = a.integer("s", r, 1, kMaxWindow);
        const int64_t stride = a.integer("stride", r, 1, kMaxWindow), pad = a.integer("pad", 0, 0, kMaxWindow);
        const bool ceil = a.flag("ceil_mode", false);
        const int64_t ho = window_out(h, r, stride, pad, 1, ceil), wo = window_out(w, s, stride, pad, 1, ceil);
        if (ho < 1 || wo < 1) a.fail("r", "the window does not fit the padded input");
        return op({x({n, c, h, w})}, {n, c, ho, wo}, [&](ir::Layer& l) {
          l.pool = {int(r), int(s)};
          l.stride = {int(stride), int(stride)};
          l.padding = {int(pad), int(pad), int(pad), int(pad)};
          l.ceil_mode = ceil;
        });
      }
      case OpKind::GlobalAvgPool2d:
      case OpKind::GlobalMaxPool2d: {
        const int64_t n = a.dim("n", m_w.batch), c = a.dim("c"), h = a.dim("h"), w = a.dim("w");
        return op({x({n, c, h, w})}, {n, c, 1, 1});
      }
      case OpKind::MatMul: {
        const int64_t m = a.dim("m"), n = a.dim("n"), k = a.dim("k");
        const bool ta = a.flag("transpose_a", false), tb = a.flag("transpose_b", false);
        Shape sa = ta ? Shape{k, m} : Shape{m, k};
        Shape out{m, n};
        if (a.has("b") || m_w.batch != 1) {
          const int64_t b = a.dim("b", m_w.batch);
          sa.insert(sa.begin(), b);
          out.insert(out.begin(), b);
        }
        std::vector<int> ins{x(sa, "a"), weight("weight", tb ? Shape{n, k} : Shape{k, n})};
        if (a.flag("bias", false)) ins.push_back(weight("bias", {n}, TensorRole::Bias));
        return op(ins, out, [&](ir::Layer& l) {
          l.transpose_a = ta;
          l.transpose_b = tb;
        });
      }
      case OpKind::BatchMatMul: {
        const int64_t b = a.dim("b", m_w.batch), m = a.dim("m"), n = a.dim("n"), k = a.dim("k");
        const bool ta = a.flag("transpose_a", false), tb = a.flag("transpose_b", false);
        Shape lead{b};
        if (a.has("h")) lead.push_back(a.dim("h"));
        auto with = [&](int64_t d0, int64_t d1) {
          Shape s = lead;
          s.push_back(d0);
          s.push_back(d1);
          return s;
        };
        return op({x(ta ? with(k, m) : with(m, k), "a"), x(tb ? with(n, k) : with(k, n), "b")}, with(m, n),
                  [&](ir::Layer& l) {
                    l.transpose_a = ta;
                    l.transpose_b = tb;
                  });
      }
      case OpKind::Clip: {
        const Shape s = a.shape("shape");
        const double lo = a.number("min", 0), hi = a.number("max", 6);
        if (lo > hi) a.fail("min", "min must not exceed max");
        return op({x(s)}, s, [&](ir::Layer& l) {
          l.clip_min = lo;
          l.clip_max = hi;
        });
      }
      case OpKind::Softmax: {
        const Shape s = a.shape("shape");
        const int64_t ax = a.integer("axis", -1, -64, 63);
        axis_of(a, "axis", ax, s.size());
        return op({x(s)}, s, [&](ir::Layer& l) { l.axes = {ax}; });
      }
      case OpKind::LayerNorm:
      case OpKind::RmsNorm: {
        const Shape s = a.shape("shape");
        const std::vector<int64_t> axes = axes_arg(a, -1);
        const double eps = a.number("epsilon", 1e-5);
        if (!(eps > 0)) a.fail("epsilon", "epsilon must be > 0");
        Shape normalized;
        for (int64_t ax : axes) normalized.push_back(s[static_cast<size_t>(axis_of(a, a.has("axes") ? "axes" : "axis", ax, s.size()))]);
        std::vector<int> ins{x(s)};
        if (a.flag("affine", true)) {
          ins.push_back(weight("gamma", normalized));
          if (m_kind == OpKind::LayerNorm) ins.push_back(weight("beta", normalized, TensorRole::Bias));
        }
        return op(ins, s, [&](ir::Layer& l) {
          l.axes = axes;
          l.epsilon = eps;
        });
      }
      case OpKind::ReduceSum:
      case OpKind::ReduceMean:
      case OpKind::ReduceMax: {
        const Shape s = a.shape("shape");
        const std::vector<int64_t> axes = axes_arg(a, -1);
        const bool keep = a.flag("keepdims", true);
        std::set<int64_t> reduced;
        for (int64_t ax : axes)
          if (!reduced.insert(axis_of(a, a.has("axes") ? "axes" : "axis", ax, s.size())).second)
            a.fail("axes", "axis " + std::to_string(ax) + " is listed twice");
        Shape out;
        for (size_t i = 0; i < s.size(); ++i) {
          if (!reduced.count(static_cast<int64_t>(i))) out.push_back(s[i]);
          else if (keep) out.push_back(1);
        }
        if (out.empty()) out.push_back(1);
        return op({x(s)}, out, [&](ir::Layer& l) {
          l.axes = axes;
          l.keepdims = keep;
        });
      }
      case OpKind::Transpose: {
        const Shape s = a.shape("shape");
        std::vector<int64_t> rev(s.size());
        std::iota(rev.rbegin(), rev.rend(), 0);
        const std::vector<int64_t> perm = a.list("perm", rev, false);
        std::vector<int64_t> sorted = perm, iota(s.size());
        std::sort(sorted.begin(), sorted.end());
        std::iota(iota.begin(), iota.end(), 0);
        if (sorted != iota) a.fail("perm", "perm must be a permutation of 0.." + std::to_string(s.size() - 1));
        Shape out;
        for (int64_t p : perm) out.push_back(s[static_cast<size_t>(p)]);
        return op({x(s)}, out, [&](ir::Layer& l) { l.perm = perm; });
      }
      case OpKind::Concat: {
        const Shape s = a.shape("shape");
        const int64_t n = a.integer("inputs", 2, 1, 1024);
        const int64_t ax = a.integer("axis", 0, -64, 63);
        const int64_t norm = axis_of(a, "axis", ax, s.size());
        std::vector<int> ins;
        for (int64_t i = 0; i < n; ++i) ins.push_back(x(s, "x" + std::to_string(i + 1)));
        Shape out = s;
        out[static_cast<size_t>(norm)] *= n;
        return op(ins, out, [&](ir::Layer& l) { l.axes = {ax}; });
      }
      case OpKind::Split: {
        const Shape s = a.shape("shape");
        const int64_t ax = a.integer("axis", 0, -64, 63);
        const size_t norm = static_cast<size_t>(axis_of(a, "axis", ax, s.size()));
        const int64_t parts = a.integer("parts", 2, 1, 1024);
        if (parts > s[norm]) a.fail("parts", "cannot split " + std::to_string(s[norm]) + " elements into " + std::to_string(parts) + " parts");
        std::vector<Shape> outs;
        for (int64_t i = 0; i < parts; ++i) {  // torch.tensor_split: the first ones take the remainder
          Shape o = s;
          o[norm] = s[norm] / parts + (i < s[norm] % parts ? 1 : 0);
          outs.push_back(o);
        }
        const std::vector<int> ts = m_b.op_multi(m_kind, m_name, {x(s)}, outs, m_dt, [&](ir::Layer& l) { l.axes = {ax}; });
        for (size_t i = 1; i < ts.size(); ++i) m_b.mark_output(ts[i]);
        return ts[0];
      }
      case OpKind::Slice: {
        const Shape s = a.shape("shape");
        const std::vector<int64_t> starts = a.list("starts", std::nullopt, false);
        const std::vector<int64_t> ends = a.list("ends", std::nullopt, false);
        const std::vector<int64_t> steps = a.list("steps", std::vector<int64_t>{}, false);
        if (starts.size() != s.size()) a.fail("starts", "starts needs one entry per axis of " + ir::shape_str(s));
        if (ends.size() != s.size()) a.fail("ends", "ends needs one entry per axis of " + ir::shape_str(s));
        if (!steps.empty() && steps.size() != s.size()) a.fail("steps", "steps needs one entry per axis of " + ir::shape_str(s));
        Shape out;
        for (size_t i = 0; i < s.size(); ++i) {
          const int64_t step = steps.empty() ? 1 : steps[i];
          if (step < 1) a.fail("steps", "steps must be >= 1");
          const int64_t b = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + s[i] : starts[i], 0, s[i]);
          const int64_t e = std::clamp<int64_t>(ends[i] < 0 ? ends[i] + s[i] : ends[i], 0, s[i]);
          if (e <= b) a.fail("ends", "empty slice along axis " + std::to_string(i));
          out.push_back((e - b + step - 1) / step);
        }
        return op({x(s)}, out, [&](ir::Layer& l) {
          l.starts = starts;
          l.ends = ends;
          l.steps = steps;
        });
      }
      case OpKind::Gather: {
        const int64_t vocab = a.dim("vocab"), d = a.dim("dim");
        const Shape ix = a.shape("indices");
        Shape out = ix;
        out.push_back(d);
        return op({weight("table", {vocab, d}), m_b.input("indices", ix, DType::Int32)}, out,
                  [](ir::Layer& l) { l.axes = {0}; });
      }
      case OpKind::Pad: {
        const Shape s = a.shape("shape");
        const std::vector<int64_t> pads = a.list("pads", std::nullopt, false);
        if (pads.size() != 2 * s.size())
          a.fail("pads", "pads needs 2 entries (before, after) per axis of " + ir::shape_str(s) + ", got " + std::to_string(pads.size()));
        Shape out = s;
        for (size_t i = 0; i < s.size(); ++i) {
          if (pads[2 * i] < 0 || pads[2 * i + 1] < 0 || pads[2 * i] > kMaxWindow || pads[2 * i + 1] > kMaxWindow)
            a.fail("pads", "pads must be in 0.." + std::to_string(kMaxWindow));
          out[i] += pads[2 * i] + pads[2 * i + 1];
        }
        return op({x(s)}, out, [&](ir::Layer& l) { l.pads = pads; });
      }
      case OpKind::Quantize:
      case OpKind::Dequantize:
      case OpKind::Requantize: {
        const Shape s = a.shape("shape");
        const DType f = ir::is_float(m_dt) ? m_dt : DType::Float16;  // the float side
        const DType in = m_kind == OpKind::Quantize ? f : DType::Int8;
        const DType out = m_kind == OpKind::Dequantize ? f : DType::Int8;
        return op({m_b.input("x", s, in)}, s, {}, out);
      }
      case OpKind::Reshape: {
        const Shape s = a.shape("shape"), to = a.shape("to");
        if (ir::num_elements(s) != ir::num_elements(to))
          a.fail("to", "reshape to " + ir::shape_str(to) + " must keep the " + std::to_string(ir::num_elements(s)) + " elements of " + ir::shape_str(s));
        return op({x(s)}, to);
      }
      case OpKind::Opaque: {
        const Shape s = a.shape("shape"), out = a.shape("out", s);
        const int64_t flops = a.integer("flops", std::nullopt, 0, int64_t{1} << 62);
        const int64_t def_bytes = (ir::num_elements(s) + ir::num_elements(out)) * ir::dtype_bytes(m_dt);
        const int64_t bytes = a.integer("bytes", def_bytes, 0, int64_t{1} << 62);
        const std::string label = a.text("label", "");
        return op({x(s)}, out, [&](ir::Layer& l) {
          l.opaque_flops = flops;
          l.opaque_bytes = bytes;
          l.opaque_label = label;
        });
      }
      default: break;
    }
    throw InternalError(std::string("zoo op: no builder for ") + m_name);
  }

  const OpWorkload& m_w;
  OpKind m_kind;
  Args m_a;
  GraphBuilder m_b;
  DType m_dt;
  std::string m_name;
};

}  // namespace

std::string op_keys(OpKind k) { return join(keys_of(k)); }

ir::Graph make_op_graph(const OpWorkload& w) {
  const auto kind = ir::parse_op(w.op);
  if (!kind) throw InputError(kFile, "op", "unknown operation '" + w.op + "'; valid: " + valid_ops());
  const DType dt = zoo_dtype(w.dtype, DType::Float16, kFile, true);
  return OpBuilder(w, *kind, dt).build();
}

}  // namespace npusim::frontends::zoo
