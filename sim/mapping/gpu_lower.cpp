#include "sim/mapping/gpu_lower.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "sim/ir/error.h"

namespace npusim::mapping {

using gpu::Dims;
using gpu::OpType;
using ir::Layer;
using ir::OpKind;

gpu::DataType ark_data_type(ir::DType t) {
  switch (t) {
    case ir::DType::Int8: return gpu::DataType::INT8;
    case ir::DType::UInt8: case ir::DType::Bool: return gpu::DataType::UINT8;
    case ir::DType::Int16: case ir::DType::Float16: return gpu::DataType::FP16;
    case ir::DType::BFloat16: return gpu::DataType::BF16;
    case ir::DType::Int32: case ir::DType::Int64: return gpu::DataType::INT32;
    case ir::DType::Float32: case ir::DType::Float64: return gpu::DataType::FP32;
    case ir::DType::Float8E4M3: return gpu::DataType::FP8_E4M3;
    case ir::DType::Float8E5M2: return gpu::DataType::FP8_E5M2;
  }
  return gpu::DataType::FP16;
}

namespace {

int64_t prod(const ir::Shape& s, size_t b, size_t e) {
  int64_t p = 1;
  for (size_t i = b; i < e && i < s.size(); ++i) p *= s[i];
  return p;
}

// ARK tensors have 1 to 4 dims: leading dims fold into the first, a scalar is [1].
Dims fold4(const ir::Shape& s) {
  if (s.empty()) return {1};
  if (s.size() <= 4) return Dims(s.begin(), s.end());
  Dims r{prod(s, 0, s.size() - 3)};
  r.insert(r.end(), s.end() - 3, s.end());
  return r;
}

// s seen as [pre, R, post] around the axes [a, b] (R their product); [pre, R] when post is 1.
Dims around(const ir::Shape& s, size_t a, size_t b) {
  const int64_t pre = prod(s, 0, a), r = prod(s, a, b + 1), post = prod(s, b + 1, s.size());
  return post == 1 ? Dims{pre, r} : Dims{pre, r, post};
}

// The same with the reduced dim kept as 1.
Dims kept(const Dims& v) {
  Dims r = v;
  r[1] = 1;
  return r;
}

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

gpu::ArgValue bool_arg(bool b) {
  gpu::ArgValue a;
  a.type = gpu::ArgType::Bool;
  a.bool_value = b;
  return a;
}

gpu::ArgValue int_arg(int64_t v) {
  gpu::ArgValue a;
  a.type = gpu::ArgType::Int;
  a.int_value = v;
  if (v >= 0) a.uint_value = static_cast<uint64_t>(v);
  return a;
}

gpu::ArgValue float_arg(double v) {
  gpu::ArgValue a;
  a.type = gpu::ArgType::Float;
  a.float_value = v;
  return a;
}

gpu::ArgValue dims_arg(const Dims& d) {
  gpu::ArgValue a;
  a.type = gpu::ArgType::Dims;
  a.dims = d;
  return a;
}

// The data of an IR tensor (or of a scratch buffer): a buffer, its element type and its
// canonical (folded) shape.
struct Val {
  int64_t buffer = -1;
  Dims shape;
  gpu::DataType dtype = gpu::DataType::FP16;
};

class Lowerer {
 public:
  explicit Lowerer(const ir::Graph& g) : m_g(g), m_ir_buf(g.tensors.size(), -1) {
    m_out.model.source = g.source;
    m_out.model.rank = 0;
    m_out.model.world_size = 1;
  }

  ArkLowering run() {
    for (const Layer& l : m_g.layers) {
      m_l = &l;
      lower(l);
      if (!l.activation.empty() && l.output_shapes.size() == 1) activation(l.activation, output_val(0));
    }
    std::set<int64_t> used;
    for (const gpu::Node& n : m_out.model.nodes)
      for (const gpu::Op& op : n.ops)
        for (const auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
          for (const gpu::Tensor& t : *list) used.insert(t.buffer_id);
    for (int64_t id : used) m_out.model.buffers.push_back({id, -1, false, {}, {}, ""});
    gpu::derive_costs(m_out.model);
    return std::move(m_out);
  }

 private:
  const ir::Graph& m_g;
  std::vector<int64_t> m_ir_buf;  // IR tensor id -> buffer id
  std::map<std::pair<const Layer*, size_t>, int64_t> m_anon_out;  // outputs of layers built without tensor ids
  ArkLowering m_out;
  int64_t m_next_tensor = 0, m_next_buffer = 0;
  std::map<int64_t, int64_t> m_writer;  // buffer -> the last node that wrote it
  const Layer* m_l = nullptr;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(m_g.source, m_l->pointer, std::string(ir::op_name(m_l->op)) + " '" + m_l->name + "': " + what);
  }

  bool has_tensor(const std::vector<int>& ids, size_t i) const {
    return i < ids.size() && ids[i] >= 0 && static_cast<size_t>(ids[i]) < m_ir_buf.size();
  }

  ir::DType dtype_of(const std::vector<ir::DType>& mirror, const std::vector<int>& ids, size_t i) const {
    if (i < mirror.size()) return mirror[i];
    if (has_tensor(ids, i)) return m_g.tensor(ids[i]).dtype;
    return ir::DType::Float16;
  }

  // ---- values ----

  Val input_val(size_t i) {
    const Layer& l = *m_l;
    if (i >= l.input_shapes.size()) fail("has no input " + std::to_string(i));
    Val v;
    v.shape = fold4(l.input_shapes[i]);
    v.dtype = ark_data_type(dtype_of(l.input_dtypes, l.inputs, i));
    if (has_tensor(l.inputs, i)) {
      int64_t& b = m_ir_buf[static_cast<size_t>(l.inputs[i])];
      if (b < 0) b = m_next_buffer++;
      v.buffer = b;
    } else {
      v.buffer = m_next_buffer++;
    }
    return v;
  }

  // The i-th output; its buffer is made on first use (alias: the buffer to share instead).
  Val output_val(size_t i, int64_t alias = -1) {
    const Layer& l = *m_l;
    if (i >= l.output_shapes.size()) fail("has no output " + std::to_string(i));
    Val v;
    v.shape = fold4(l.output_shapes[i]);
    v.dtype = ark_data_type(dtype_of(l.output_dtypes, l.outputs, i));
    int64_t* b;
    if (has_tensor(l.outputs, i)) {
      b = &m_ir_buf[static_cast<size_t>(l.outputs[i])];
    } else {
      auto it = m_anon_out.emplace(std::make_pair(&l, i), -1).first;
      b = &it->second;
    }
    if (*b < 0) *b = alias >= 0 ? alias : m_next_buffer++;
    v.buffer = *b;
    return v;
  }

  Val scratch(const Dims& shape, gpu::DataType dt) {
    Val v;
    v.buffer = m_next_buffer++;
    v.shape = shape;
    v.dtype = dt;
    return v;
  }

  gpu::Tensor view(const Val& v) { return view(v, v.shape); }
  gpu::Tensor view(const Val& v, const Dims& shape, const Dims& strides = {}, const Dims& offsets = {}) {
    gpu::Tensor t;
    t.id = m_next_tensor++;
    t.dtype = v.dtype;
    t.shape = shape;
    t.strides = strides.empty() ? shape : strides;
    t.offsets = offsets.empty() ? Dims(shape.size(), 0) : offsets;
    t.padded_shape = shape;
    t.buffer_id = v.buffer;
    t.buffer_rank = -1;
    return t;
  }

  // ---- ops ----

  // One node holding one op named `<layer>` (step empty) or `<layer>/<step>`. Non-virtual ops
  // return their writes as new result tensors over the same buffers (as ARK's ops do).
  gpu::Op& emit(OpType type, const std::string& step, std::vector<gpu::Tensor> reads, std::vector<gpu::Tensor> writes,
                std::vector<gpu::Tensor> results = {}) {
    std::vector<gpu::Node>& nodes = m_out.model.nodes;
    gpu::Node n;
    n.id = static_cast<int64_t>(nodes.size());
    n.pointer = "/Nodes/" + std::to_string(n.id);
    gpu::Op op;
    op.type = type;
    op.name = step.empty() ? m_l->name : m_l->name + "/" + step;
    op.is_virtual = gpu::op_class(type) == gpu::OpClass::Virtual;
    op.pointer = n.pointer + "/Op";
    if (results.empty())
      for (const gpu::Tensor& w : writes) {
        gpu::Tensor r = w;
        r.id = m_next_tensor++;
        results.push_back(r);
      }
    for (auto [key, list] : {std::make_pair("ReadTensors", &reads), std::make_pair("WriteTensors", &writes),
                             std::make_pair("ResultTensors", &results)})
      for (size_t i = 0; i < list->size(); ++i) (*list)[i].pointer = op.pointer + "/" + key + "/" + std::to_string(i);
    std::set<int64_t> producers;
    for (const gpu::Tensor& r : reads) {
      auto it = m_writer.find(r.buffer_id);
      if (it != m_writer.end()) producers.insert(it->second);
    }
    for (const gpu::Tensor& w : writes) m_writer[w.buffer_id] = n.id;
    if (op.is_virtual)  // consumers of a view depend on the op that made it
      for (const gpu::Tensor& r : results) m_writer[r.buffer_id] = n.id;
    n.producer_ids.assign(producers.begin(), producers.end());
    for (int64_t p : producers) nodes[static_cast<size_t>(p)].consumer_ids.push_back(n.id);
    op.read_tensors = std::move(reads);
    op.write_tensors = std::move(writes);
    op.result_tensors = std::move(results);
    m_out.ir_op[op.name] = ir::op_name(m_l->op);
    n.ops.push_back(std::move(op));
    nodes.push_back(std::move(n));
    return nodes.back().ops.back();
  }

  void eltwise(OpType t, const std::string& step, const std::vector<Val>& ins, const Val& out) {
    std::vector<gpu::Tensor> reads;
    for (const Val& v : ins) reads.push_back(view(v));
    emit(t, step, std::move(reads), {view(out)});
  }

  void reduce(OpType t, const std::string& step, gpu::Tensor in, gpu::Tensor out) {
    gpu::Op& op = emit(t, step, {std::move(in)}, {std::move(out)});
    op.args["Axis"] = int_arg(1);
    op.args["KeepDim"] = bool_arg(true);
  }

  // C[batch.., M, N] = A x B as ARK's reader derives it from the tensors.
  void matmul(const std::string& step, gpu::Tensor a, gpu::Tensor b, gpu::Tensor c, bool ta, bool tb) {
    auto last2 = [](const Dims& d) { return d.size() >= 2 ? std::make_pair(d[d.size() - 2], d.back()) : std::make_pair(int64_t{1}, d.back()); };
    const auto [ar, ac] = last2(a.shape);
    const auto [br, bc] = last2(b.shape);
    gpu::MatmulShape s;
    s.transpose_input = ta;
    s.transpose_other = tb;
    s.m = ta ? ac : ar;
    s.k = tb ? bc : br;
    s.n = tb ? br : bc;
    if ((ta ? ar : ac) != s.k) throw InternalError("lower_to_ark: matmul inner dims differ for '" + m_l->name + "'");
    s.batch = c.shape.size() > 2 ? gpu::product(Dims(c.shape.begin(), c.shape.end() - 2)) : 1;
    s.strides_acdb = {a.strides.back(), c.strides.back(), c.strides.back(), b.strides.back()};
    gpu::Op& op = emit(OpType::Matmul, step, {std::move(a), std::move(b)}, {std::move(c)});
    op.args["TransposeInput"] = bool_arg(ta);
    op.args["TransposeOther"] = bool_arg(tb);
    op.matmul = s;
  }

  // A fused activation of the IR op (conv2d + relu...): one in-place op on the output, as ARK
  // runs it (ARK fuses no epilogue into a Matmul).
  void activation(const std::string& act, const Val& out) {
    const std::string a = lower_case(act);
    if (a.empty() || a == "none" || a == "null" || a == "linear" || a == "identity") return;
    if (a.find("gelu") != std::string::npos) {
      eltwise(OpType::Gelu, a, {out}, out);
    } else if (a == "silu" || a == "swish" || a.find("hardswish") != std::string::npos || a == "hard_swish") {
      const Val s = scratch(out.shape, out.dtype);
      eltwise(OpType::Sigmoid, a + "_sigmoid", {out}, s);
      eltwise(OpType::Mul, a + "_mul", {out, s}, out);
    } else if (a.find("sigmoid") != std::string::npos || a.find("tanh") != std::string::npos) {
      eltwise(OpType::Sigmoid, a, {out}, out);
    } else {  // relu, relu6, clip, leaky_relu, ...: one compare per element
      eltwise(OpType::Relu, a, {out}, out);
    }
  }

  void bias(size_t index, const Val& out, const Dims& out_view) {
    if (m_l->input_shapes.size() <= index) return;
    const Val b = input_val(index);
    emit(OpType::Add, "bias", {view(out, out_view), view(b)}, {view(out, out_view)});
  }

  // ---- per op kind ----

  void conv2d() {
    const Layer& l = *m_l;
    const ir::Shape &w = l.input_shapes.at(1), &y = l.output_shapes.at(0);
    const int64_t g = std::max(1, l.groups);
    const int64_t m = y[0] * y[2] * y[3], kg = w[0] / g, kc = w[1] * w[2] * w[3];
    const Val in = input_val(0), wt = input_val(1), out = output_val(0);
    auto dims = [&](int64_t r, int64_t c) { return g == 1 ? Dims{r, c} : Dims{g, r, c}; };
    // Implicit GEMM: A is the im2col matrix [M, C/g*R*S] read from the input's buffer.
    matmul("", view(in, dims(m, kc)), view(wt, dims(kg, kc)), view(out, dims(m, kg)), false, true);
    bias(2, out, dims(m, kg));
  }

  void dense() {
    const Layer& l = *m_l;
    const ir::Shape &x = l.input_shapes.at(0), &w = l.input_shapes.at(1);
    const Val in = input_val(0), wt = input_val(1), out = output_val(0);
    matmul("", view(in, {x[0], x[1]}), view(wt, {w[0], w[1]}), view(out, {x[0], w[0]}), false, true);
    bias(2, out, {x[0], w[0]});
  }

  void batch_matmul() {
    const Val a = input_val(0), b = input_val(1), out = output_val(0);
    matmul("", view(a), view(b), view(out), m_l->transpose_a, m_l->transpose_b);
    bias(2, out, out.shape);
  }

  void binary(OpType t) {
    const Layer& l = *m_l;
    const Val out = output_val(0);
    const size_t n = l.input_shapes.size();
    if (n < 2) fail("needs 2 inputs");
    eltwise(t, n > 2 ? "add1" : "", {input_val(0), input_val(1)}, out);
    for (size_t i = 2; i < n; ++i) eltwise(t, "add" + std::to_string(i), {out, input_val(i)}, out);
  }

  void unary(OpType t) { eltwise(t, "", {input_val(0)}, output_val(0)); }

  void neg() {
    emit(OpType::ScalarMul, "", {view(input_val(0))}, {view(output_val(0))}).args["Factor"] = float_arg(-1.0);
  }

  void silu() {
    const Val x = input_val(0), out = output_val(0);
    const Val s = scratch(x.shape, x.dtype);
    eltwise(OpType::Sigmoid, "sigmoid", {x}, s);
    eltwise(OpType::Mul, "mul", {x, s}, out);
  }

  size_t norm_axis(int64_t a, size_t rank) const {
    const int64_t r = static_cast<int64_t>(rank);
    if (a < -r || a >= r) fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    return static_cast<size_t>(a < 0 ? a + r : a);
  }

  // ARK's softmax: ReduceMax, Sub, Exp, ReduceSum, Div over one axis.
  void softmax() {
    const Layer& l = *m_l;
    const ir::Shape& x = l.input_shapes.at(0);
    const size_t a = norm_axis(l.axes.empty() ? -1 : l.axes[0], x.size());
    const Dims v = around(x, a, a), r = kept(v);
    const Val in = input_val(0), out = output_val(0);
    const Val mx = scratch(r, in.dtype), sum = scratch(r, out.dtype);
    reduce(OpType::ReduceMax, "reduce_max", view(in, v), view(mx));
    emit(OpType::Sub, "sub", {view(in, v), view(mx)}, {view(out, v)});
    emit(OpType::Exp, "exp", {view(out, v)}, {view(out, v)});
    reduce(OpType::ReduceSum, "reduce_sum", view(out, v), view(sum));
    emit(OpType::Div, "div", {view(out, v), view(sum)}, {view(out, v)});
  }

  // Normalized dims (trailing) as [pre, R].
  Dims norm_view() const {
    const Layer& l = *m_l;
    const ir::Shape& x = l.input_shapes.at(0);
    size_t first = x.empty() ? 0 : x.size() - 1;
    for (int64_t ax : l.axes.empty() ? std::vector<int64_t>{-1} : l.axes) first = std::min(first, norm_axis(ax, x.size()));
    return x.empty() ? Dims{1, 1} : Dims{prod(x, 0, first), prod(x, first, x.size())};
  }

  // mean, x - mean, its square, variance, + eps, rsqrt, normalize, gamma, beta.
  void layer_norm() {
    const Dims v = norm_view(), r = kept(v);
    const Val in = input_val(0), out = output_val(0);
    const Val mean = scratch(r, gpu::DataType::FP32), var = scratch(r, gpu::DataType::FP32);
    const Val sq = scratch(v, out.dtype);
    reduce(OpType::ReduceMean, "reduce_mean", view(in, v), view(mean));
    emit(OpType::Sub, "sub", {view(in, v), view(mean)}, {view(out, v)});
    emit(OpType::Mul, "square", {view(out, v), view(out, v)}, {view(sq)});
    reduce(OpType::ReduceMean, "variance", view(sq), view(var));
    emit(OpType::ScalarAdd, "add_eps", {view(var)}, {view(var)}).args["Factor"] = float_arg(m_l->epsilon);
    emit(OpType::Rsqrt, "rsqrt", {view(var)}, {view(var)});
    emit(OpType::Mul, "normalize", {view(out, v), view(var)}, {view(out, v)});
    affine(v, out);
  }

  // x^2, mean, + eps, rsqrt, normalize, gamma.
  void rms_norm() {
    const Dims v = norm_view(), r = kept(v);
    const Val in = input_val(0), out = output_val(0);
    const Val sq = scratch(v, out.dtype), ms = scratch(r, gpu::DataType::FP32);
    emit(OpType::Mul, "square", {view(in, v), view(in, v)}, {view(sq)});
    reduce(OpType::ReduceMean, "reduce_mean", view(sq), view(ms));
    emit(OpType::ScalarAdd, "add_eps", {view(ms)}, {view(ms)}).args["Factor"] = float_arg(m_l->epsilon);
    emit(OpType::Rsqrt, "rsqrt", {view(ms)}, {view(ms)});
    emit(OpType::Mul, "normalize", {view(in, v), view(ms)}, {view(out, v)});
    affine(v, out);
  }

  void affine(const Dims& v, const Val& out) {
    if (m_l->input_shapes.size() > 1) {
      const Val gamma = input_val(1);
      emit(OpType::Mul, "gamma", {view(out, v), view(gamma)}, {view(out, v)});
    }
    if (m_l->input_shapes.size() > 2) {
      const Val beta = input_val(2);
      emit(OpType::Add, "beta", {view(out, v), view(beta)}, {view(out, v)});
    }
  }

  // Over contiguous axes: one op on [pre, R(, post)]; otherwise one op per axis, last first.
  void reduction(OpType t) {
    const Layer& l = *m_l;
    ir::Shape cur = l.input_shapes.at(0);
    std::vector<size_t> axes;
    for (int64_t a : l.axes) axes.push_back(norm_axis(a, cur.size()));
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    if (axes.empty()) fail("needs at least one axis");
    const Val in = input_val(0), out = output_val(0);
    if (axes.back() - axes.front() + 1 == axes.size()) {
      const Dims v = around(cur, axes.front(), axes.back());
      reduce(t, "", view(in, v), view(out, kept(v)));
      return;
    }
    Val src = in;
    for (size_t i = axes.size(); i-- > 0;) {
      const size_t a = axes[i];
      const Dims v = around(cur, a, a);
      const Val dst = i == 0 ? out : scratch(kept(v), in.dtype);
      reduce(t, "axis" + std::to_string(a), view(src, v), view(dst, kept(v)));
      cur[a] = 1;
      src = dst;
    }
  }

  void global_pool(OpType t) {
    const ir::Shape& x = m_l->input_shapes.at(0);
    const Dims v = around(x, 2, x.size() - 1);
    reduce(t, "", view(input_val(0), v), view(output_val(0), kept(v)));
  }

  // A reduce over the window-expanded input [N*C*Ho*Wo, R*S] read from the input's buffer.
  void window_pool(OpType t) {
    const Layer& l = *m_l;
    const int64_t rows = ir::num_elements(l.output_shapes.at(0));
    const int64_t cols = std::max(1, l.pool[0]) * static_cast<int64_t>(std::max(1, l.pool[1]));
    reduce(t, "", view(input_val(0), {rows, cols}), view(output_val(0), {rows, 1}));
  }

  void reshape() {
    const Val in = input_val(0);
    const Val out = output_val(0, in.buffer);
    if (out.buffer != in.buffer) {  // the output was already placed (cannot happen in IR order): copy
      eltwise(OpType::Copy, "", {in}, out);
      return;
    }
    emit(OpType::Reshape, "", {view(in)}, {}, {view(out)});
  }

  void transpose() {
    const Layer& l = *m_l;
    const ir::Shape& x = l.input_shapes.at(0);
    // Drop size-1 axes, then merge runs of axes that stay adjacent and in order.
    std::vector<int64_t> keep(x.size(), -1);
    ir::Shape xs;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i] != 1) keep[i] = static_cast<int64_t>(xs.size()), xs.push_back(x[i]);
    std::vector<int64_t> p;
    for (int64_t a : l.perm)
      if (a >= 0 && static_cast<size_t>(a) < x.size() && keep[static_cast<size_t>(a)] >= 0) p.push_back(keep[static_cast<size_t>(a)]);
    std::vector<std::pair<int64_t, int64_t>> groups;  // in output order: (first input axis, count)
    for (int64_t a : p) {
      if (!groups.empty() && groups.back().first + groups.back().second == a) ++groups.back().second;
      else groups.push_back({a, 1});
    }
    std::vector<std::pair<int64_t, int64_t>> by_input = groups;
    std::sort(by_input.begin(), by_input.end());
    Dims in_shape, out_shape, perm;
    for (const auto& [a, n] : by_input) in_shape.push_back(prod(xs, static_cast<size_t>(a), static_cast<size_t>(a + n)));
    for (const auto& gr : groups) {
      const auto pos = std::find(by_input.begin(), by_input.end(), gr) - by_input.begin();
      perm.push_back(pos);
      out_shape.push_back(in_shape[static_cast<size_t>(pos)]);
    }
    const Val in = input_val(0), out = output_val(0);
    if (perm.size() < 2 || perm.size() > 4) {  // a plain copy, or beyond ARK's 4 dims
      eltwise(OpType::Copy, "", {in}, out);
      return;
    }
    emit(OpType::Transpose, "", {view(in, in_shape)}, {view(out, out_shape)}).args["Permutation"] = dims_arg(perm);
  }

  size_t single_axis(const ir::Shape& s) const { return norm_axis(m_l->axes.empty() ? 0 : m_l->axes[0], s.size()); }

  static Dims three(const ir::Shape& s, size_t a) { return {prod(s, 0, a), s[a], prod(s, a + 1, s.size())}; }

  // Each input copied into its slice of the output.
  void concat() {
    const Layer& l = *m_l;
    const ir::Shape& y = l.output_shapes.at(0);
    const size_t a = single_axis(y);
    const Dims whole = three(y, a);
    const Val out = output_val(0);
    int64_t off = 0;
    for (size_t i = 0; i < l.input_shapes.size(); ++i) {
      const Val in = input_val(i);
      const int64_t n = l.input_shapes[i][a];
      emit(OpType::Copy, l.input_shapes.size() > 1 ? "in" + std::to_string(i) : "", {view(in)},
           {view(out, {whole[0], n, whole[2]}, whole, {0, off, 0})});
      off += n;
    }
  }

  void split() {
    const Layer& l = *m_l;
    const ir::Shape& x = l.input_shapes.at(0);
    const size_t a = single_axis(x);
    const Dims whole = three(x, a);
    const Val in = input_val(0);
    int64_t off = 0;
    for (size_t i = 0; i < l.output_shapes.size(); ++i) {
      const int64_t n = l.output_shapes[i][a];
      emit(OpType::Copy, l.output_shapes.size() > 1 ? "out" + std::to_string(i) : "",
           {view(in, {whole[0], n, whole[2]}, whole, {0, off, 0})}, {view(output_val(i))});
      off += n;
    }
  }

  void slice() {
    const Layer& l = *m_l;
    const ir::Shape &x = l.input_shapes.at(0), &y = l.output_shapes.at(0);
    const Val in = input_val(0), out = output_val(0);
    Dims offsets(out.shape.size(), 0), strides = in.shape;
    if (x.size() <= 4 && l.starts.size() == x.size() && y.size() == x.size()) {
      for (size_t i = 0; i < x.size(); ++i) {
        const int64_t s = l.starts[i] < 0 ? l.starts[i] + x[i] : l.starts[i];
        offsets[i] = std::clamp<int64_t>(s, 0, x[i] - y[i]);
      }
    } else if (strides.size() != out.shape.size()) {
      strides = out.shape;
    }
    emit(OpType::Copy, "", {view(in, out.shape, strides, offsets)}, {view(out)});
  }

  void gather() {
    const Layer& l = *m_l;
    const ir::Shape& t = l.input_shapes.at(0);
    const size_t a = single_axis(t);
    const Val table = input_val(0), idx = input_val(1), out = output_val(0);
    const int64_t rows = t.empty() ? 1 : t[a];
    emit(OpType::Embedding, "", {view(idx), view(table, {rows, std::max<int64_t>(1, ir::num_elements(t) / rows)})},
         {view(out)});
  }

  // FLOPs as a reduction over one-byte elements (ARK counts one flop per input element of a
  // reduction), the rest of the bytes as a second read; bytes only: a Copy.
  void opaque() {
    const Layer& l = *m_l;
    const int64_t f = std::max<int64_t>(0, l.opaque_flops), b = std::max<int64_t>(0, l.opaque_bytes);
    Val out = output_val(0);
    out.dtype = gpu::DataType::BYTE;
    if (f == 0) {
      const Val src = scratch({std::max<int64_t>(1, b - b / 2)}, gpu::DataType::BYTE);
      emit(OpType::Copy, "", {view(src)}, {view(out, {std::max<int64_t>(1, b / 2)})});
      return;
    }
    // Rows of L elements, one task each; L divides f when a divisor in [256, 4096] exists.
    int64_t row = std::min<int64_t>(f, 4096);
    if (f > 4096) {
      row = 4096;
      for (int64_t d = 4096; d >= 256; --d)
        if (f % d == 0) {
          row = d;
          break;
        }
    }
    const int64_t rows = (f + row - 1) / row;
    const Val src = scratch({rows, row}, gpu::DataType::BYTE);
    std::vector<gpu::Tensor> reads{view(src)};
    const int64_t rest = b - rows * row - rows;
    if (rest > 0) reads.push_back(view(scratch({rest}, gpu::DataType::BYTE)));
    gpu::Op& op = emit(OpType::ReduceSum, "", std::move(reads), {view(out, {rows, 1})});
    op.args["Axis"] = int_arg(1);
    op.args["KeepDim"] = bool_arg(true);
  }

  void lower(const Layer& l) {
    if (l.output_shapes.empty()) fail("has no output");
    switch (l.op) {
      case OpKind::Conv2d: return conv2d();
      case OpKind::Dense: return dense();
      case OpKind::MatMul: case OpKind::BatchMatMul: return batch_matmul();
      case OpKind::ElementWiseAdd: return binary(OpType::Add);
      case OpKind::Sub: return binary(OpType::Sub);
      case OpKind::Mul: return binary(OpType::Mul);
      case OpKind::Div: return binary(OpType::Div);
      case OpKind::Maximum: case OpKind::Minimum: return binary(OpType::Sub);  // compare-select: one flop
      case OpKind::Relu: case OpKind::Relu6: case OpKind::Clip: return unary(OpType::Relu);
      case OpKind::Gelu: return unary(OpType::Gelu);
      case OpKind::Sigmoid: case OpKind::Tanh: return unary(OpType::Sigmoid);
      case OpKind::Exp: return unary(OpType::Exp);
      case OpKind::Sqrt: return unary(OpType::Sqrt);
      case OpKind::Rsqrt: return unary(OpType::Rsqrt);
      case OpKind::Neg: return neg();
      case OpKind::Silu: return silu();
      case OpKind::Quantize: case OpKind::Dequantize: case OpKind::Requantize: return unary(OpType::Cast);
      case OpKind::Softmax: return softmax();
      case OpKind::LayerNorm: return layer_norm();
      case OpKind::RmsNorm: return rms_norm();
      case OpKind::ReduceSum: return reduction(OpType::ReduceSum);
      case OpKind::ReduceMean: return reduction(OpType::ReduceMean);
      case OpKind::ReduceMax: return reduction(OpType::ReduceMax);
      case OpKind::GlobalAvgPool2d: return global_pool(OpType::ReduceMean);
      case OpKind::GlobalMaxPool2d: return global_pool(OpType::ReduceMax);
      case OpKind::MaxPool2d: return window_pool(OpType::ReduceMax);
      case OpKind::AvgPool2d: return window_pool(OpType::ReduceMean);
      case OpKind::Reshape: return reshape();
      case OpKind::Transpose: return transpose();
      case OpKind::Concat: return concat();
      case OpKind::Split: return split();
      case OpKind::Slice: return slice();
      case OpKind::Pad: return unary(OpType::Copy);
      case OpKind::Gather: return gather();
      case OpKind::Opaque: return opaque();
    }
    fail("has no GPU lowering");
  }
};

}  // namespace

ArkLowering lower_workload(const ir::Graph& g) { return Lowerer(g).run(); }

}  // namespace npusim::mapping
