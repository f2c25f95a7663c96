#include "frontends/frontend_ir/frontend_ir_checks.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "frontends/json_util.h"
#include "sim/ir/error.h"

namespace npusim::frontends::frontend_ir {

namespace {

using ir::Layer;
using ir::Shape;
using ir::shape_str;

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
    fail(file, l, sub, std::string(ir::op_name(l.op)) + " " + what + " must have rank " + std::to_string(rank) +
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
  if (ins.size() == 3 && ir::num_elements(ins[2]) != k)
    fail(file, l, "input_shape/2", "bias " + shape_str(ins[2]) + " must have K = " + std::to_string(k) + " elements");
  Shape expect = window_output(file, l, x, k, l.kernel, "kernel_size", false);
  check_mac_bound(file, l, ir::num_elements(y), w[1] * w[2] * w[3]);
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
         std::string(ir::op_name(l.op)) + " output " + shape_str(y) + " should be " + shape_str(expect) + " (input " +
             shape_str(x) + ", pool_size " + pair_str(l.pool) + ", stride " + pair_str(l.stride) + ", padding " +
             padding_str(l.padding) + ", ceil_mode " + (l.ceil_mode ? "true" : "false") + ")");
}

// An operand broadcasts onto `out` if it is a scalar ([1,1,1,1]) or per channel ([C] or [1,C,1,1]).
bool broadcasts(const Shape& s, const Shape& out) {
  if (ir::num_elements(s) == 1) return true;
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
  if (ins.size() == 3 && ir::num_elements(ins[2]) != w[0])
    fail(file, l, "input_shape/2", "bias " + shape_str(ins[2]) + " must have K = " + std::to_string(w[0]) + " elements");
  check_mac_bound(file, l, ir::num_elements(y), w[1]);
  if (!is_2d(y) || y[0] != x[0] || y[1] != w[0])
    fail(file, l, "output_shape/0", "dense output " + shape_str(y) + " should be [" + std::to_string(x[0]) + "," +
                                        std::to_string(w[0]) + "] or [" + std::to_string(x[0]) + "," +
                                        std::to_string(w[0]) + ",1,1] (input " + shape_str(x) + ", weight " +
                                        shape_str(w) + ")");
}

bool lists(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

void check_layer_shapes(const Layer& l, const std::string& file) {
  const Shape &x = l.input_shapes[0], &y = l.output_shapes[0];
  switch (l.op) {
    case ir::OpKind::Conv2d: check_conv2d(file, l); break;
    case ir::OpKind::MaxPool2d:
    case ir::OpKind::AvgPool2d: check_pool(file, l); break;
    case ir::OpKind::ElementWiseAdd: check_add(file, l); break;
    case ir::OpKind::Dense: check_dense(file, l); break;
    case ir::OpKind::Quantize:
    case ir::OpKind::Dequantize:
      if (x != y)
        fail(file, l, "output_shape/0", std::string(ir::op_name(l.op)) + " output " + shape_str(y) +
                                            " must equal its input " + shape_str(x));
      break;
    case ir::OpKind::Reshape:
      if (ir::num_elements(x) != ir::num_elements(y))
        fail(file, l, "output_shape/0", "reshape output " + shape_str(y) + " has " +
                                            std::to_string(ir::num_elements(y)) + " elements but its input " +
                                            shape_str(x) + " has " + std::to_string(ir::num_elements(x)));
      break;
  }
}

void check_edges(ir::Graph& g) {
  std::unordered_map<std::string, const Layer*> by_name;
  for (const Layer& l : g.layers) by_name[l.name] = &l;
  // First every name must resolve, so that a misspelt name is reported where it is written
  // rather than as a one-sided edge at the layer it was meant to reach.
  std::unordered_set<std::string> seen_in, seen_out;
  for (const Layer& l : g.layers) {
    for (size_t i = 0; i < l.previous.size(); ++i) {
      const std::string& p = l.previous[i];
      if (by_name.count(p)) continue;
      if (ir::is_graph_input_name(p)) {
        if (seen_in.insert(p).second) g.graph_inputs.push_back(p);
      } else if (!ir::is_constant_name(p)) {
        fail(g.source, l, idx("previous_layer", i),
             "dangling reference: '" + p + "' is neither a layer, a graph input (input<N>) nor a constant (constant_*)");
      }
    }
    for (size_t i = 0; i < l.next.size(); ++i) {
      const std::string& n = l.next[i];
      if (by_name.count(n)) continue;
      if (!ir::is_graph_output_name(n))
        fail(g.source, l, idx("next_layer", i),
             "dangling reference: '" + n + "' is neither a layer nor a graph output (output<N>)");
      if (seen_out.insert(n).second) g.graph_outputs.push_back(n);
    }
  }
  // Then every edge between layers must be listed on both sides.
  for (const Layer& l : g.layers) {
    for (size_t i = 0; i < l.previous.size(); ++i) {
      auto it = by_name.find(l.previous[i]);
      if (it != by_name.end() && !lists(it->second->next, l.name))
        fail(g.source, l, idx("previous_layer", i),
             "one-sided edge: '" + it->first + "' is listed here but '" + it->first + "' does not list '" + l.name +
                 "' in its next_layer");
    }
    for (size_t i = 0; i < l.next.size(); ++i) {
      auto it = by_name.find(l.next[i]);
      if (it != by_name.end() && !lists(it->second->previous, l.name))
        fail(g.source, l, idx("next_layer", i),
             "one-sided edge: '" + it->first + "' is listed here but '" + it->first + "' does not list '" + l.name +
                 "' in its previous_layer");
    }
  }
}

void check_order(const ir::Graph& g) {
  // Kahn's algorithm over previous_layer edges between layers; what is left holds a cycle.
  size_t n = g.layers.size();
  std::unordered_map<std::string, size_t> pos;
  for (size_t i = 0; i < n; ++i) pos[g.layers[i].name] = i;
  std::vector<std::vector<size_t>> preds(n), succs(n);
  std::vector<size_t> indeg(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const std::string& p : g.layers[i].previous) {
      auto it = pos.find(p);
      if (it == pos.end()) continue;
      preds[i].push_back(it->second);
      succs[it->second].push_back(i);
      ++indeg[i];
    }
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push_back(i);
  size_t done = 0;
  while (!ready.empty()) {
    size_t i = ready.back();
    ready.pop_back();
    ++done;
    for (size_t s : succs[i])
      if (--indeg[s] == 0) ready.push_back(s);
  }
  if (done < n) {
    // Every layer left has a predecessor that is left too: walk back until one repeats.
    size_t start = 0;
    while (indeg[start] == 0) ++start;
    std::vector<size_t> walk;
    std::vector<int> at(n, -1);
    size_t cur = start;
    while (at[cur] < 0) {
      at[cur] = static_cast<int>(walk.size());
      walk.push_back(cur);
      for (size_t p : preds[cur])
        if (indeg[p] > 0) {
          cur = p;
          break;
        }
    }
    // walk[k + 1] feeds walk[k], so the data flows from the end of the walk back to cur.
    std::string path = g.layers[cur].name;
    for (size_t k = walk.size(); k-- > static_cast<size_t>(at[cur]) + 1;) path += " -> " + g.layers[walk[k]].name;
    path += " -> " + g.layers[cur].name;
    fail(g.source, g.layers[cur], "previous_layer", "cycle: " + path);
  }
  // No cycle: the order by layer_index must run every producer before its consumers.
  for (size_t i = 0; i < n; ++i)
    for (size_t p : preds[i])
      if (p > i)
        fail(g.source, g.layers[i], "layer_index",
             "layer_index order is not a topological order: '" + g.layers[i].name + "' (layer_index " +
                 std::to_string(g.layers[i].index) + ") reads '" + g.layers[p].name + "' (layer_index " +
                 std::to_string(g.layers[p].index) + ")");
}

void check_edge_tensors(const ir::Graph& g) {
  std::unordered_map<std::string, const Layer*> by_name;
  for (const Layer& l : g.layers) by_name[l.name] = &l;
  for (const Layer& l : g.layers)
    for (size_t i = 0; i < l.previous.size(); ++i) {
      auto it = by_name.find(l.previous[i]);
      if (it == by_name.end()) continue;
      const Layer& p = *it->second;
      auto o = std::find(p.output_shapes.begin(), p.output_shapes.end(), l.input_shapes[i]);
      if (o == p.output_shapes.end())
        fail(g.source, l, idx("input_shape", i),
             "input " + shape_str(l.input_shapes[i]) + " differs from the output " + shape_str(p.output_shapes[0]) +
                 " of its producer '" + p.name + "'");
      ir::DType produced = p.output_dtypes[o - p.output_shapes.begin()];
      if (l.input_dtypes[i] != produced)
        fail(g.source, l, idx("input_dtype", i),
             std::string("input dtype ") + ir::dtype_name(l.input_dtypes[i]) + " differs from the output dtype " +
                 ir::dtype_name(produced) + " of its producer '" + p.name + "'");
    }
}

void check_batch(const ir::Graph& g) {
  const Layer& first = g.layers.front();
  int bd0 = first.input_batchdim[0] >= 0 ? first.input_batchdim[0] : 0;
  int64_t batch = first.input_shapes[0][bd0];
  auto check = [&](const Layer& l, const std::vector<Shape>& shapes, const std::vector<int>& dims,
                   const char* field) {
    for (size_t i = 0; i < shapes.size(); ++i)
      if (dims[i] >= 0 && shapes[i][dims[i]] != batch)
        fail(g.source, l, idx(field, i),
             "batch dimension " + std::to_string(dims[i]) + " of " + shape_str(shapes[i]) + " is " +
                 std::to_string(shapes[i][dims[i]]) + " but the graph's batch is " + std::to_string(batch) +
                 " (from '" + first.name + "')");
  };
  for (const Layer& l : g.layers) {
    check(l, l.input_shapes, l.input_batchdim, "input_shape");
    check(l, l.output_shapes, l.output_batchdim, "output_shape");
  }
}

}  // namespace npusim::frontends::frontend_ir
