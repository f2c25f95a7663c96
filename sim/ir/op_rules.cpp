// Shape rules of every operation of the workload IR (sim/ir/graph.h), shared by every reader:
// each op's inputs, attributes and outputs must agree before anything is mapped. Errors name the
// file and the op's JSON pointer plus the field ("/Conv_0/output_shape/0").
#include <algorithm>
#include <numeric>
#include <set>

#include "sim/ir/error.h"
#include "sim/ir/graph.h"

namespace npusim::ir {

namespace {


// InputError at a member of the layer: sub is a pointer suffix such as "output_shape/0".
[[noreturn]] void fail(const std::string& file, const Layer& l, const std::string& sub, const std::string& what) {
  throw InputError(file, l.pointer + "/" + sub, what);
}

std::string idx(const std::string& field, size_t i) { return field + "/" + std::to_string(i); }

std::string pair_str(const std::array<int, 2>& a) { return std::to_string(a[0]) + "x" + std::to_string(a[1]); }

std::string padding_str(const std::array<int, 4>& p) {
  return "[" + std::to_string(p[0]) + "," + std::to_string(p[1]) + "," + std::to_string(p[2]) + "," +
         std::to_string(p[3]) + "]";
}

void need_rank(const std::string& file, const Layer& l, const std::string& sub, const Shape& s, size_t rank,
               const std::string& what) {
  if (s.size() != rank)
    fail(file, l, sub, std::string(op_name(l.op)) + " " + what + " must have rank " + std::to_string(rank) +
                           ", got " + shape_str(s));
}

// Keeps Layer::macs() (outputs x reduction length) far from int64 overflow.
void check_mac_bound(const std::string& file, const Layer& l, int64_t outputs, int64_t reduce) {
  constexpr int64_t kMaxMacs = int64_t{1} << 60;
  if (reduce > 0 && outputs > kMaxMacs / reduce)
    fail(file, l, "output_shape/0", "layer needs more than 2^60 multiply-accumulates");
}

// Output size of a window along one axis (PyTorch's conv / pooling_output_shape): floor, or
// with ceil_mode the last window must still start inside the input or its leading padding.
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t dil, bool ceil) {
  int64_t span = in + pad_lo + pad_hi - dil * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (span + (ceil ? stride - 1 : 0)) / stride + 1;
  if (ceil && (out - 1) * stride >= in + pad_lo) --out;
  return out;
}

// [N, C, Ho, Wo] for a window over an NCHW input; throws if the window does not fit.
Shape window_output(const std::string& file, const Layer& l, const Shape& in, int64_t channels,
                    const std::array<int, 2>& win, const std::string& win_field, bool ceil) {
  int64_t ho = window_out(in[2], win[0], l.stride[0], l.padding[0], l.padding[1], l.dilation[0], ceil);
  int64_t wo = window_out(in[3], win[1], l.stride[1], l.padding[2], l.padding[3], l.dilation[1], ceil);
  if (ho < 1 || wo < 1)
    fail(file, l, win_field, "window " + pair_str(win) + " (dilation " + pair_str(l.dilation) +
                                 ") is larger than the padded input " + shape_str(in) + " with padding " +
                                 padding_str(l.padding));
  return {in[0], channels, ho, wo};
}

void check_conv2d(const std::string& file, const Layer& l) {
  const auto& ins = l.input_shapes;
  if (ins.size() < 2 || ins.size() > 3)
    fail(file, l, "input_shape", "conv2d needs 2 inputs (activation, weight) or 3 (with bias), got " +
                                     std::to_string(ins.size()));
  const Shape &x = ins[0], &w = ins[1], &y = l.output_shapes[0];
  need_rank(file, l, "input_shape/0", x, 4, "input [N,C,H,W]");
  need_rank(file, l, "input_shape/1", w, 4, "weight [K,C/groups,R,S]");
  need_rank(file, l, "output_shape/0", y, 4, "output [N,K,H,W]");
  int64_t c = x[1], k = w[0], g = l.groups;
  // Readers check it too, but not every producer's reader does (TVM's "groups": 0 was a fuzz finding).
  if (g < 1) fail(file, l, "groups", "groups must be at least 1, got " + std::to_string(g));
  if (c % g != 0)
    fail(file, l, "groups", "groups " + std::to_string(g) + " does not divide the input channels " + std::to_string(c));
  if (k % g != 0)
    fail(file, l, "groups", "groups " + std::to_string(g) + " does not divide the output channels " + std::to_string(k));
  if (w[1] != c / g)
    fail(file, l, "input_shape/1", "weight " + shape_str(w) + " must have C/groups = " + std::to_string(c / g) +
                                       " at dim 1 (input " + shape_str(x) + ", groups " + std::to_string(g) + ")");
  if (w[2] != l.kernel[0] || w[3] != l.kernel[1])
    fail(file, l, "kernel_size", "kernel_size " + pair_str(l.kernel) + " differs from the weight's " +
                                     std::to_string(w[2]) + "x" + std::to_string(w[3]) + " (" + shape_str(w) + ")");
  if (ins.size() == 3 && num_elements(ins[2]) != k)
    fail(file, l, "input_shape/2", "bias " + shape_str(ins[2]) + " must have K = " + std::to_string(k) + " elements");
  Shape expect = window_output(file, l, x, k, l.kernel, "kernel_size", false);
  check_mac_bound(file, l, num_elements(y), w[1] * w[2] * w[3]);
  if (y != expect)
    fail(file, l, "output_shape/0",
         "conv2d output " + shape_str(y) + " should be " + shape_str(expect) + " (input " + shape_str(x) +
             ", weight " + shape_str(w) + ", stride " + pair_str(l.stride) + ", padding " + padding_str(l.padding) +
             ", dilation " + pair_str(l.dilation) + ")");
}

void check_pool(const std::string& file, const Layer& l) {
  const Shape &x = l.input_shapes[0], &y = l.output_shapes[0];
  need_rank(file, l, "input_shape/0", x, 4, "input [N,C,H,W]");
  need_rank(file, l, "output_shape/0", y, 4, "output [N,C,H,W]");
  Shape expect = window_output(file, l, x, x[1], l.pool, "pool_size", l.ceil_mode);
  if (y != expect)
    fail(file, l, "output_shape/0",
         std::string(op_name(l.op)) + " output " + shape_str(y) + " should be " + shape_str(expect) + " (input " +
             shape_str(x) + ", pool_size " + pair_str(l.pool) + ", stride " + pair_str(l.stride) + ", padding " +
             padding_str(l.padding) + ", ceil_mode " + (l.ceil_mode ? "true" : "false") + ")");
}

// An operand broadcasts onto `out` if it is a scalar ([1,1,1,1]) or per channel ([C] or [1,C,1,1]).
bool broadcasts(const Shape& s, const Shape& out) {
  if (num_elements(s) == 1) return true;
  if (out.size() < 2) return false;
  if (s.size() == 1) return s[0] == out[1];
  if (s.size() != out.size() || s[1] != out[1]) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != 1 && s[i] != 1) return false;
  return true;
}

void check_add(const std::string& file, const Layer& l) {
  const Shape& y = l.output_shapes[0];
  if (l.input_shapes.size() < 2)
    fail(file, l, "input_shape", "element_wise_add needs 2 inputs, got " + std::to_string(l.input_shapes.size()));
  bool any_full = false;
  for (size_t i = 0; i < l.input_shapes.size(); ++i) {
    const Shape& s = l.input_shapes[i];
    if (s == y) {
      any_full = true;
    } else if (!broadcasts(s, y)) {
      fail(file, l, idx("input_shape", i),
           "element_wise_add input " + shape_str(s) + " neither equals the output " + shape_str(y) +
               " nor broadcasts to it (scalar [1,1,1,1] or per-channel [1,C,1,1])");
    }
  }
  if (!any_full)
    fail(file, l, "output_shape/0", "element_wise_add output " + shape_str(y) + " equals none of its inputs");
}

// [N,C] or [N,C,1,...]: the dims after the second are all 1.
bool is_2d(const Shape& s) {
  if (s.size() < 2) return false;
  return std::all_of(s.begin() + 2, s.end(), [](int64_t d) { return d == 1; });
}

void check_dense(const std::string& file, const Layer& l) {
  const auto& ins = l.input_shapes;
  if (ins.size() < 2 || ins.size() > 3)
    fail(file, l, "input_shape", "dense needs 2 inputs (activation, weight) or 3 (with bias), got " +
                                     std::to_string(ins.size()));
  const Shape &x = ins[0], &w = ins[1], &y = l.output_shapes[0];
  if (!is_2d(x)) fail(file, l, "input_shape/0", "dense input must be [N,C] or [N,C,1,1], got " + shape_str(x));
  if (!is_2d(w)) fail(file, l, "input_shape/1", "dense weight must be [K,C] or [K,C,1,1], got " + shape_str(w));
  if (w[1] != x[1])
    fail(file, l, "input_shape/1", "dense weight " + shape_str(w) + " must have C = " + std::to_string(x[1]) +
                                       " at dim 1 (input " + shape_str(x) + ")");
  if (ins.size() == 3 && num_elements(ins[2]) != w[0])
    fail(file, l, "input_shape/2", "bias " + shape_str(ins[2]) + " must have K = " + std::to_string(w[0]) + " elements");
  check_mac_bound(file, l, num_elements(y), w[1]);
  if (!is_2d(y) || y[0] != x[0] || y[1] != w[0])
    fail(file, l, "output_shape/0", "dense output " + shape_str(y) + " should be [" + std::to_string(x[0]) + "," +
                                        std::to_string(w[0]) + "] or [" + std::to_string(x[0]) + "," +
                                        std::to_string(w[0]) + ",1,1] (input " + shape_str(x) + ", weight " +
                                        shape_str(w) + ")");
}


std::string dims_str(const std::vector<int64_t>& v) { return shape_str(v); }

void need_inputs(const std::string& file, const Layer& l, size_t lo, size_t hi, const std::string& what) {
  const size_t n = l.input_shapes.size();
  if (n < lo || n > hi)
    fail(file, l, "input_shape", std::string(op_name(l.op)) + " needs " + what + ", got " + std::to_string(n) +
                                     (n == 1 ? " input" : " inputs"));
}

void need_output(const std::string& file, const Layer& l, const Shape& expect, const std::string& why) {
  const Shape& y = l.output_shapes[0];
  if (y != expect)
    fail(file, l, "output_shape/0", std::string(op_name(l.op)) + " output " + shape_str(y) + " should be " +
                                        shape_str(expect) + " (" + why + ")");
}

// An axis of a tensor of the given rank, negative counting from the end; the normalized axis.
int64_t norm_axis(const std::string& file, const Layer& l, const std::string& field, int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    fail(file, l, field, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

void check_binary(const std::string& file, const Layer& l) {
  need_inputs(file, l, 2, l.op == OpKind::ElementWiseAdd ? 1u << 20 : 2, "2 inputs");
  const auto b = broadcast_shapes(l.input_shapes[0], l.input_shapes[1]);
  if (l.input_shapes.size() == 2 && b && *b == l.output_shapes[0]) return;
  // The Frontend IR's own rule: a scalar or per-channel operand ([C], [1,C,1,1]) aligned at dim 1.
  if (l.op == OpKind::ElementWiseAdd) return check_add(file, l);
  if (!b)
    fail(file, l, "input_shape/1", std::string(op_name(l.op)) + " inputs " + shape_str(l.input_shapes[0]) + " and " +
                                       shape_str(l.input_shapes[1]) + " do not broadcast");
  need_output(file, l, *b, "the broadcast of its inputs");
}

void check_same_shape(const std::string& file, const Layer& l) {
  const Shape &x = l.input_shapes[0], &y = l.output_shapes[0];
  if (x != y)
    fail(file, l, "output_shape/0", std::string(op_name(l.op)) + " output " + shape_str(y) +
                                        " must equal its input " + shape_str(x));
}

void check_matmul(const std::string& file, const Layer& l) {
  need_inputs(file, l, 2, 3, "2 inputs (A, B) or 3 (with bias)");
  const Shape &a = l.input_shapes[0], &b = l.input_shapes[1];
  const size_t min_rank = l.op == OpKind::BatchMatMul ? 3 : 2;
  if (a.size() < min_rank)
    fail(file, l, "input_shape/0", std::string(op_name(l.op)) + " A must have rank >= " + std::to_string(min_rank) + ", got " + shape_str(a));
  if (b.size() < 2)
    fail(file, l, "input_shape/1", std::string(op_name(l.op)) + " B must have rank >= 2, got " + shape_str(b));
  const int64_t m = l.transpose_a ? a[a.size() - 1] : a[a.size() - 2];
  const int64_t k = l.transpose_a ? a[a.size() - 2] : a[a.size() - 1];
  const int64_t kb = l.transpose_b ? b[b.size() - 1] : b[b.size() - 2];
  const int64_t n = l.transpose_b ? b[b.size() - 2] : b[b.size() - 1];
  if (k != kb)
    fail(file, l, "input_shape/1", std::string(op_name(l.op)) + " reduction dims differ: A " + shape_str(a) +
                                       (l.transpose_a ? " (transposed)" : "") + " has K = " + std::to_string(k) + ", B " +
                                       shape_str(b) + (l.transpose_b ? " (transposed)" : "") + " has K = " + std::to_string(kb));
  const auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!batch)
    fail(file, l, "input_shape/1", "batch dims of A " + shape_str(a) + " and B " + shape_str(b) + " do not broadcast");
  if (l.input_shapes.size() == 3 && num_elements(l.input_shapes[2]) != n)
    fail(file, l, "input_shape/2", "bias " + shape_str(l.input_shapes[2]) + " must have N = " + std::to_string(n) + " elements");
  Shape expect = *batch;
  expect.push_back(m);
  expect.push_back(n);
  check_mac_bound(file, l, num_elements(l.output_shapes[0]), k);
  need_output(file, l, expect, "A " + shape_str(a) + ", B " + shape_str(b));
}

void check_global_pool(const std::string& file, const Layer& l) {
  const Shape& x = l.input_shapes[0];
  need_rank(file, l, "input_shape/0", x, 4, "input [N,C,H,W]");
  need_output(file, l, {x[0], x[1], 1, 1}, "input " + shape_str(x));
}

std::vector<int64_t> norm_axes(const std::string& file, const Layer& l, const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> r;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = norm_axis(file, l, "axes/" + std::to_string(i), axes[i], rank);
    if (std::find(r.begin(), r.end(), a) != r.end())
      fail(file, l, "axes/" + std::to_string(i), "axis " + std::to_string(axes[i]) + " is listed twice");
    r.push_back(a);
  }
  return r;
}

void check_norm(const std::string& file, const Layer& l) {
  const size_t max_in = l.op == OpKind::LayerNorm ? 3 : l.op == OpKind::RmsNorm ? 2 : 1;
  need_inputs(file, l, 1, max_in, max_in == 1 ? "1 input" : "1 to " + std::to_string(max_in) + " inputs");
  const Shape& x = l.input_shapes[0];
  const std::vector<int64_t> axes = norm_axes(file, l, l.axes.empty() ? std::vector<int64_t>{-1} : l.axes, x.size());
  if (l.op == OpKind::Softmax && axes.size() != 1) fail(file, l, "axes", "softmax takes exactly one axis");
  if (l.op != OpKind::Softmax && !(l.epsilon > 0)) fail(file, l, "epsilon", "epsilon must be > 0");
  int64_t normalized = 1;
  for (int64_t a : axes) normalized *= x[a];
  for (size_t i = 1; i < l.input_shapes.size(); ++i)
    if (num_elements(l.input_shapes[i]) != normalized)
      fail(file, l, "input_shape/" + std::to_string(i), std::string(i == 1 ? "gamma " : "beta ") + shape_str(l.input_shapes[i]) +
                                                            " must have " + std::to_string(normalized) + " elements (the normalized dims)");
  check_same_shape(file, l);
}

void check_reduce(const std::string& file, const Layer& l) {
  need_inputs(file, l, 1, 1, "1 input");
  const Shape& x = l.input_shapes[0];
  if (l.axes.empty()) fail(file, l, "axes", std::string(op_name(l.op)) + " needs at least one axis");
  const std::vector<int64_t> axes = norm_axes(file, l, l.axes, x.size());
  Shape expect;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    if (!reduced) expect.push_back(x[i]);
    else if (l.keepdims) expect.push_back(1);
  }
  if (expect.empty()) expect.push_back(1);
  need_output(file, l, expect, "input " + shape_str(x) + ", axes " + dims_str(l.axes) + (l.keepdims ? ", keepdims" : ""));
}

void check_transpose(const std::string& file, const Layer& l) {
  need_inputs(file, l, 1, 1, "1 input");
  const Shape& x = l.input_shapes[0];
  std::vector<int64_t> sorted = l.perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(x.size());
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota) fail(file, l, "perm", "perm " + dims_str(l.perm) + " is not a permutation of the " + std::to_string(x.size()) + " axes of " + shape_str(x));
  Shape expect;
  for (int64_t p : l.perm) expect.push_back(x[p]);
  need_output(file, l, expect, "input " + shape_str(x) + ", perm " + dims_str(l.perm));
}

int64_t single_axis(const std::string& file, const Layer& l, size_t rank) {
  if (l.axes.size() > 1) fail(file, l, "axes", std::string(op_name(l.op)) + " takes one axis");
  return norm_axis(file, l, "axes/0", l.axes.empty() ? 0 : l.axes[0], rank);
}

void check_concat(const std::string& file, const Layer& l) {
  need_inputs(file, l, 1, 1u << 20, "at least 1 input");
  const Shape& x = l.input_shapes[0];
  const int64_t ax = single_axis(file, l, x.size());
  Shape expect = x;
  for (size_t i = 1; i < l.input_shapes.size(); ++i) {
    const Shape& s = l.input_shapes[i];
    bool ok = s.size() == x.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == ax || s[d] == x[d];
    if (!ok) fail(file, l, "input_shape/" + std::to_string(i), "concat input " + shape_str(s) + " differs from " + shape_str(x) + " outside axis " + std::to_string(ax));
    expect[ax] += s[ax];
  }
  need_output(file, l, expect, "inputs joined along axis " + std::to_string(ax));
}

void check_split(const std::string& file, const Layer& l) {
  need_inputs(file, l, 1, 1, "1 input");
  const Shape& x = l.input_shapes[0];
  const int64_t ax = single_axis(file, l, x.size());
  int64_t total = 0;
  for (size_t i = 0; i < l.output_shapes.size(); ++i) {
    const Shape& s = l.output_shapes[i];
    bool ok = s.size() == x.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == ax || s[d] == x[d];
    if (!ok) fail(file, l, "output_shape/" + std::to_string(i), "split output " + shape_str(s) + " differs from the input " + shape_str(x) + " outside axis " + std::to_string(ax));
    total += s[ax];
  }
  if (total != x[ax])
    fail(file, l, "output_shape", "split outputs cover " + std::to_string(total) + " of the " + std::to_string(x[ax]) + " elements along axis " + std::to_string(ax));
}

void check_slice(const std::string& file, const Layer& l) {
  need_inputs(file, l, 1, 1, "1 input");
  const Shape& x = l.input_shapes[0];
  const size_t r = x.size();
  if (l.starts.size() != r || l.ends.size() != r || (!l.steps.empty() && l.steps.size() != r))
    fail(file, l, "starts", "slice needs starts, ends (and optional steps) with one entry per axis of " + shape_str(x));
  Shape expect;
  for (size_t i = 0; i < r; ++i) {
    const int64_t step = l.steps.empty() ? 1 : l.steps[i];
    if (step < 1) fail(file, l, "steps/" + std::to_string(i), "step must be >= 1, got " + std::to_string(step));
    const int64_t b = std::clamp<int64_t>(l.starts[i] < 0 ? l.starts[i] + x[i] : l.starts[i], 0, x[i]);
    const int64_t e = std::clamp<int64_t>(l.ends[i] < 0 ? l.ends[i] + x[i] : l.ends[i], 0, x[i]);
    if (e <= b) fail(file, l, "ends/" + std::to_string(i), "empty slice [" + std::to_string(l.starts[i]) + ", " + std::to_string(l.ends[i]) + ") of dim " + std::to_string(x[i]));
    expect.push_back((e - b + step - 1) / step);
  }
  need_output(file, l, expect, "input " + shape_str(x) + ", starts " + dims_str(l.starts) + ", ends " + dims_str(l.ends));
}

void check_gather(const std::string& file, const Layer& l) {
  need_inputs(file, l, 2, 2, "2 inputs (table, indices)");
  const Shape &t = l.input_shapes[0], &ix = l.input_shapes[1];
  if (l.input_dtypes.size() > 1 && is_float(l.input_dtypes[1]))
    fail(file, l, "input_dtype/1", std::string("gather indices must be integers, got ") + dtype_name(l.input_dtypes[1]));
  const int64_t ax = single_axis(file, l, t.size());
  Shape expect(t.begin(), t.begin() + ax);
  expect.insert(expect.end(), ix.begin(), ix.end());
  expect.insert(expect.end(), t.begin() + ax + 1, t.end());
  need_output(file, l, expect, "table " + shape_str(t) + ", indices " + shape_str(ix));
}

void check_pad(const std::string& file, const Layer& l) {
  need_inputs(file, l, 1, 1, "1 input");
  const Shape& x = l.input_shapes[0];
  if (l.pads.size() != 2 * x.size())
    fail(file, l, "pads", "pad needs 2 entries (before, after) per axis of " + shape_str(x) + ", got " + std::to_string(l.pads.size()));
  Shape expect = x;
  for (size_t i = 0; i < x.size(); ++i) {
    if (l.pads[2 * i] < 0 || l.pads[2 * i + 1] < 0 || l.pads[2 * i] > (int64_t{1} << 24) || l.pads[2 * i + 1] > (int64_t{1} << 24))
      fail(file, l, "pads/" + std::to_string(2 * i), "pads must be in [0, 2^24]");
    expect[i] += l.pads[2 * i] + l.pads[2 * i + 1];
  }
  need_output(file, l, expect, "input " + shape_str(x) + ", pads " + dims_str(l.pads));
}

}  // namespace

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape r(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    r[i] = std::max(da, db);
  }
  return r;
}

void check_op(const Layer& l, const std::string& file) {
  if (l.input_shapes.empty() && l.op != OpKind::Opaque) fail(file, l, "input_shape", std::string(op_name(l.op)) + " needs at least one input");
  if (l.output_shapes.empty()) fail(file, l, "output_shape", std::string(op_name(l.op)) + " needs at least one output");
  if (l.op != OpKind::Split && l.op != OpKind::Opaque && l.output_shapes.size() != 1)
    fail(file, l, "output_shape", std::string(op_name(l.op)) + " has one output, got " + std::to_string(l.output_shapes.size()));
  switch (l.op) {
    case OpKind::Conv2d: check_conv2d(file, l); break;
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: check_pool(file, l); break;
    case OpKind::ElementWiseAdd:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Maximum:
    case OpKind::Minimum: check_binary(file, l); break;
    case OpKind::Dense: check_dense(file, l); break;
    case OpKind::MatMul:
    case OpKind::BatchMatMul: check_matmul(file, l); break;
    case OpKind::GlobalAvgPool2d:
    case OpKind::GlobalMaxPool2d: check_global_pool(file, l); break;
    case OpKind::Quantize:
    case OpKind::Dequantize:
    case OpKind::Requantize:
    case OpKind::Relu:
    case OpKind::Relu6:
    case OpKind::Gelu:
    case OpKind::Silu:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Exp:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Neg: check_same_shape(file, l); break;
    case OpKind::Clip:
      if (!(l.clip_min <= l.clip_max)) fail(file, l, "clip_min", "clip_min " + std::to_string(l.clip_min) + " exceeds clip_max " + std::to_string(l.clip_max));
      check_same_shape(file, l);
      break;
    case OpKind::Softmax:
    case OpKind::LayerNorm:
    case OpKind::RmsNorm: check_norm(file, l); break;
    case OpKind::ReduceSum:
    case OpKind::ReduceMean:
    case OpKind::ReduceMax: check_reduce(file, l); break;
    case OpKind::Reshape: {
      const Shape &x = l.input_shapes[0], &y = l.output_shapes[0];
      if (num_elements(x) != num_elements(y))
        fail(file, l, "output_shape/0", "reshape output " + shape_str(y) + " has " +
                                            std::to_string(num_elements(y)) + " elements but its input " +
                                            shape_str(x) + " has " + std::to_string(num_elements(x)));
      break;
    }
    case OpKind::Transpose: check_transpose(file, l); break;
    case OpKind::Concat: check_concat(file, l); break;
    case OpKind::Split: check_split(file, l); break;
    case OpKind::Slice: check_slice(file, l); break;
    case OpKind::Gather: check_gather(file, l); break;
    case OpKind::Pad: check_pad(file, l); break;
    case OpKind::Opaque:
      if (l.opaque_flops < 0) fail(file, l, "flops", "opaque flops must be >= 0");
      if (l.opaque_bytes < 0) fail(file, l, "bytes", "opaque bytes must be >= 0");
      break;
  }
}

}  // namespace npusim::ir
