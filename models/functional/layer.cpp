#include "models/functional/layer.h"

#include <cmath>
#include <optional>

#include "models/functional/activations.h"
#include "models/functional/conv.h"
#include "models/functional/elementwise.h"
#include "models/functional/fp_round.h"
#include "models/functional/matmul.h"
#include "models/functional/movement.h"
#include "models/functional/normalization.h"
#include "models/functional/pool.h"
#include "models/functional/quant.h"
#include "models/functional/reduce.h"
#include "models/functional/vp_stages.h"
#include "sim/ir/error.h"

// Dequantization is a float32 add then multiply; keep GCC from fusing them.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace npusim::functional {

namespace {

class LayerRun {
 public:
  LayerRun(const ir::Layer& l, const std::vector<Tensor>& in, const ParamMap& params)
      : m_l(l), m_in(in), m_params(params) {
    auto it = l.files.find("input_activation1");
    m_file = it != l.files.end() ? it->second : l.name;
    m_where = l.pointer.empty() ? "/" + l.name : l.pointer;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(m_file, m_where + "/" + key, what);
  }
  // Weights of the wrong shape: the weight file is what is wrong (its header's shape), when it
  // is a file of its own; else the layer's input 2.
  [[noreturn]] void fail_weights(const Tensor& k) const {
    const auto f = m_l.files.find("k");
    const std::string what = "weights are " + k.describe() + ", layer " + m_l.name + " expects " + ir::shape_str(m_l.input_shapes[1]);
    if (f != m_l.files.end() && m_params.count("k")) throw InputError(f->second, "header: shape", what);
    fail("input_shape/1", what);
  }

  ir::DType in_dtype(size_t i) const { return i < m_l.input_dtypes.size() ? m_l.input_dtypes[i] : m_in[i].dtype; }
  ir::DType out_dtype() const { return m_l.output_dtypes.empty() ? ir::DType::Float32 : m_l.output_dtypes[0]; }

  // At least n activations, each with the shape the layer records.
  void check_inputs(size_t n) const {
    if (m_in.size() < n)
      fail("file_list", std::string(ir::op_name(m_l.op)) + " needs " + std::to_string(n) + " input(s), got " +
                            std::to_string(m_in.size()));
    for (size_t i = 0; i < m_in.size() && i < m_l.input_shapes.size(); ++i)
      if (m_in[i].shape != m_l.input_shapes[i])
        fail("input_shape/" + std::to_string(i), "input " + std::to_string(i + 1) + " is " + m_in[i].describe() +
                                                     ", the layer expects " + ir::shape_str(m_l.input_shapes[i]));
  }

  // Real value of activation 0: (q + input_zero_point1) * input_scale1 for integer dtypes.
  Tensor real_input() const {
    const Tensor& x = m_in[0];
    if (!is_integer_dtype(in_dtype(0))) return x;
    if (!m_l.gemini.quant.input_scale1) fail("quant_info/input_scale1", std::string(ir::dtype_name(in_dtype(0))) + " input needs input_scale1");
    const float s = static_cast<float>(*m_l.gemini.quant.input_scale1);
    const float zp = static_cast<float>(m_l.gemini.quant.input_zero_point1.value_or(0.0));
    Tensor y(x.shape, ir::DType::Float32);
    for (int64_t i = 0; i < y.size(); ++i) {
      float q = x.data[i] + zp;  // exact: integers
      y.data[i] = q * s;
    }
    return y;
  }

  // Per-kernel scale of integer weights / biases (params "k_scale": 1 or K values).
  std::vector<double> k_scale(int64_t k) const {
    auto it = m_params.find("k_scale");
    if (it == m_params.end())
      fail("file_list/k", "integer weights need a weight scale (params k_scale); the Frontend IR carries none");
    const Tensor& s = it->second;
    if (s.size() != 1 && s.size() != k)
      fail("file_list/k", "k_scale has " + std::to_string(s.size()) + " values for " + std::to_string(k) + " kernels");
    std::vector<double> r(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) r[i] = s.data[s.size() == 1 ? 0 : i];
    return r;
  }

  Tensor real_weights() const {
    const Tensor* k = nullptr;
    auto it = m_params.find("k");
    if (it != m_params.end()) k = &it->second;
    else if (m_in.size() > 1) k = &m_in[1];
    else fail("file_list/k", std::string(ir::op_name(m_l.op)) + " needs its weights k");
    if (m_l.input_shapes.size() > 1 && k->shape != m_l.input_shapes[1]) fail_weights(*k);
    if (k->shape.empty()) fail("file_list/k", "weights are a scalar");
    if (!is_integer_dtype(k->dtype)) return *k;
    const int64_t kk = k->shape[0], per = k->size() / kk;
    std::vector<double> sc = k_scale(kk);
    Tensor w(k->shape, ir::DType::Float32);
    for (int64_t i = 0; i < w.size(); ++i) w.data[i] = static_cast<float>(k->data[i] * sc[i / per]);
    return w;
  }

  std::optional<Tensor> real_bias(int64_t k) const {
    auto it = m_params.find("b");
    if (it == m_params.end()) return std::nullopt;
    const Tensor& b = it->second;
    if (b.size() != k) fail("file_list/b", "bias " + b.describe() + " has " + std::to_string(b.size()) + " values for " + std::to_string(k) + " kernels");
    Tensor r(ir::Shape{k}, ir::DType::Float32);
    if (!is_integer_dtype(b.dtype)) {
      r.data = b.data;
      return r;
    }
    // ONNX QLinearConv convention: int32 bias in units of input_scale * weight_scale[k].
    if (!m_l.gemini.quant.input_scale1) fail("quant_info/input_scale1", "an integer bias needs input_scale1");
    std::vector<double> sc = k_scale(k);
    for (int64_t i = 0; i < k; ++i) r.data[i] = static_cast<float>(b.data[i] * *m_l.gemini.quant.input_scale1 * sc[i]);
    return r;
  }

  // PE output: requantize with quant_info to an integer dtype, else round to the float dtype.
  Tensor finish_pe(Tensor y) const {
    ir::DType out = out_dtype();
    if (is_integer_dtype(out)) {
      if (!m_l.gemini.quant.output_scale) fail("quant_info/output_scale", std::string(ir::dtype_name(out)) + " output needs output_scale");
      RoundMode mode = RoundMode::HalfAwayFromZero;
      if (!m_l.gemini.quant.round_type.empty()) {
        auto m = parse_round_mode(m_l.gemini.quant.round_type);
        if (!m) fail("quant_info/round_type", "unsupported round_type '" + m_l.gemini.quant.round_type + "' (supported: round, floor, ceil)");
        mode = *m;
      }
      y = post_cal(y, *m_l.gemini.quant.output_scale, m_l.gemini.quant.output_zero_point.value_or(0.0), false, mode, out);
    } else {
      for (float& v : y.data) v = round_to_float_dtype(v, out);
    }
    y.dtype = out;
    return y;
  }

  // Result of a vector-processor op without module_list: quant_info if given, else plain
  // rounding (and saturation) of the value to the output dtype.
  Tensor finish_plain(Tensor y) const {
    if (is_integer_dtype(out_dtype()) && !m_l.gemini.quant.output_scale) {
      for (float& v : y.data) v = saturate(round_value(v, RoundMode::HalfAwayFromZero), out_dtype());
      y.dtype = out_dtype();
      return y;
    }
    return finish_pe(std::move(y));
  }

  Tensor check_output(Tensor y, bool allow_reshape) const {
    if (m_l.output_shapes.empty()) return y;
    const ir::Shape& want = m_l.output_shapes[0];
    if (y.shape == want) return y;
    if (allow_reshape && ir::num_elements(want) == y.size()) return reshape(y, want);
    fail("output_shape/0", "computes " + ir::shape_str(y.shape) + " but the layer says " + ir::shape_str(want));
  }

  Activation activation() const {
    auto a = parse_activation(m_l.activation);
    if (!a) fail("activation_type", "unsupported activation '" + m_l.activation + "' (supported: null, relu, relu6)");
    return *a;
  }

  PoolParams window() const {
    PoolParams p;
    p.kernel = m_l.pool[0] > 0 ? m_l.pool : m_l.kernel;
    p.stride = m_l.stride;
    p.dilation = m_l.dilation;
    p.padding = m_l.padding;
    p.ceil_mode = m_l.ceil_mode;
    return p;
  }

  Tensor conv() const {
    check_inputs(1);
    Tensor w = real_weights();
    ConvParams p;
    p.stride = m_l.stride;
    p.dilation = m_l.dilation;
    p.padding = m_l.padding;
    p.groups = m_l.groups;
    p.activation = activation();
    std::string why;
    if (conv2d_output_shape(m_in[0].shape, w.shape, p, &why).empty()) fail("input_shape", why);
    if (w.shape[2] != m_l.kernel[0] || w.shape[3] != m_l.kernel[1])
      fail("kernel_size", "weights " + w.describe() + " do not match kernel_size [" + std::to_string(m_l.kernel[0]) +
                              "," + std::to_string(m_l.kernel[1]) + "]");
    std::optional<Tensor> b = real_bias(w.shape[0]);
    return check_output(finish_pe(conv2d(real_input(), w, b ? &*b : nullptr, p)), false);
  }

  Tensor fc() const {
    check_inputs(1);
    Tensor w = real_weights();
    std::string why;
    if (dense_output_shape(m_in[0].shape, w.shape, &why).empty()) fail("input_shape", why);
    std::optional<Tensor> b = real_bias(w.shape[0]);
    return check_output(finish_pe(dense(real_input(), w, b ? &*b : nullptr, activation())), true);
  }

  Tensor vp(size_t n_inputs) const {
    check_inputs(n_inputs);
    if (!m_l.gemini.modules.empty()) {
      VpContext ctx{window(), out_dtype(), m_file, m_where};
      return check_output(run_module_list(m_l.gemini.modules, m_in, ctx), false);
    }
    // No module_list: the op itself on real values (docs/functional.md#layers-run_layerlayer-inputs-params).
    Tensor x = real_input();
    std::string why;
    Tensor y;
    switch (m_l.op) {
      case ir::OpKind::MaxPool2d:
      case ir::OpKind::AvgPool2d:
        if (pool_output_shape(x.shape, window(), &why).empty()) fail("pool_size", why);
        if (m_l.op == ir::OpKind::AvgPool2d && (m_l.dilation[0] != 1 || m_l.dilation[1] != 1))
          fail("dilation", "avg_pool2d takes no dilation");
        y = m_l.op == ir::OpKind::MaxPool2d ? max_pool2d(x, window()) : avg_pool2d(x, window());
        break;
      case ir::OpKind::ElementWiseAdd: {
        Tensor b = m_in[1];
        if (is_integer_dtype(in_dtype(1))) {
          if (!m_l.gemini.quant.input_scale2) fail("quant_info/input_scale2", "integer input 2 needs input_scale2");
          const float s = static_cast<float>(*m_l.gemini.quant.input_scale2), zp = static_cast<float>(m_l.gemini.quant.input_zero_point2.value_or(0.0));
          for (float& v : b.data) v = (v + zp) * s;
        }
        if (!broadcast_shape(x.shape, b.shape, &why)) fail("input_shape/1", why);
        y = add(x, b);
        for (float& v : y.data) v = apply_activation(v, activation());
        break;
      }
      default: y = x;  // quantize / dequantize
    }
    return check_output(finish_plain(std::move(y)), false);
  }

  Tensor reshape_op() const {
    check_inputs(1);
    Tensor y = m_in[0];
    if (!m_l.output_shapes.empty()) {
      if (ir::num_elements(m_l.output_shapes[0]) != y.size())
        fail("output_shape/0", "cannot reshape " + y.describe() + " to " + ir::shape_str(m_l.output_shapes[0]));
      y.shape = m_l.output_shapes[0];
    }
    const ir::DType out = out_dtype();
    if (out != in_dtype(0))  // a reshape that also converts: round / saturate to the new dtype
      for (float& v : y.data)
        v = is_integer_dtype(out) ? saturate(round_value(v, RoundMode::HalfAwayFromZero), out) : round_to_float_dtype(v, out);
    y.dtype = out;
    return y;
  }


  // ---- npusim extension ops (docs/functional.md#npusim-extension-ops) ----

  // The IR's shape and attribute rules of the op (sim/ir/op_rules.cpp), as InputErrors under
  // this layer, so the kernels below only see consistent shapes.
  void check_ir_rules() const {
    if (!m_l.pointer.empty()) return ir::check_op(m_l, m_file);
    ir::Layer named = m_l;
    named.pointer = m_where;
    ir::check_op(named, m_file);
  }

  // Input i as real values: an integer input is dequantized with input_scale<i+1> and
  // input_zero_point<i+1> (inputs 1 and 2) when quant_info gives the scale, as real_input;
  // without a scale it is taken as its integers.
  Tensor real_ext(size_t i) const {
    Tensor x = m_in[i];
    if (!is_integer_dtype(in_dtype(i))) return x;
    x.dtype = ir::DType::Float32;
    const ir::QuantInfo& q = m_l.gemini.quant;
    const std::optional<double> s = i == 0 ? q.input_scale1 : i == 1 ? q.input_scale2 : std::nullopt;
    const std::optional<double> z = i == 0 ? q.input_zero_point1 : i == 1 ? q.input_zero_point2 : std::nullopt;
    if (!s) return x;
    const float sf = static_cast<float>(*s), zf = static_cast<float>(z.value_or(0.0));
    for (float& v : x.data) {
      float t = v + zf;  // exact: integers
      v = t * sf;
    }
    return x;
  }

  // A computed result: quant_info / rounding / saturation to output_dtypes[0] (finish_plain),
  // and the layer's output shape.
  Tensor finish_ext(Tensor y) const { return check_output(finish_plain(std::move(y)), false); }

  // Moved values into dtype `to`: unchanged when it is the input's, else rounded to a float
  // format or rounded half away from zero and saturated to an integer dtype (as reshape).
  static Tensor convert(Tensor y, ir::DType from, ir::DType to) {
    if (to != from)
      for (float& v : y.data)
        v = is_integer_dtype(to) ? saturate(round_value(v, RoundMode::HalfAwayFromZero), to) : round_to_float_dtype(v, to);
    y.dtype = to;
    return y;
  }
  Tensor finish_moved(Tensor y, size_t out = 0) const {
    const ir::DType to = out < m_l.output_dtypes.size() ? m_l.output_dtypes[out] : in_dtype(0);
    y = convert(std::move(y), in_dtype(0), to);
    if (out < m_l.output_shapes.size() && y.shape != m_l.output_shapes[out])
      fail("output_shape/" + std::to_string(out), "computes " + ir::shape_str(y.shape) + " but the layer says " + ir::shape_str(m_l.output_shapes[out]));
    return y;
  }

  // matmul / batch_matmul: A is input 1; B is params k (a weight) or input 2; the optional
  // bias (N values) is params b or input 3.
  Tensor gemm() const {
    check_inputs(1);
    const int64_t n = m_l.output_shapes.at(0).back();
    Tensor a = real_ext(0), b;
    std::optional<double> b_scale;  // per-tensor scale of an integer B, for an integer bias
    std::vector<double> k_scales;   // per-N scales of integer weights k
    if (auto it = m_params.find("k"); it != m_params.end()) {
      const Tensor& k = it->second;
      if (m_l.input_shapes.size() > 1 && k.shape != m_l.input_shapes[1]) fail_weights(k);
      b = k;
      if (is_integer_dtype(k.dtype)) {
        k_scales = k_scale(n);
        const int64_t kk = m_l.transpose_b ? k.shape.back() : k.shape[k.shape.size() - 2];
        for (int64_t i = 0; i < b.size(); ++i) {
          const int64_t col = m_l.transpose_b ? (i / kk) % n : i % n;
          b.data[i] = static_cast<float>(k.data[i] * k_scales[col]);
        }
        b.dtype = ir::DType::Float32;
      }
    } else {
      if (m_in.size() < 2) fail("file_list", std::string(ir::op_name(m_l.op)) + " needs B: input_activation2 or weights k");
      b = real_ext(1);
      if (is_integer_dtype(in_dtype(1))) b_scale = m_l.gemini.quant.input_scale2.value_or(1.0);
    }
    std::optional<Tensor> bias;
    if (auto it = m_params.find("b"); it != m_params.end()) bias = it->second;
    else if (m_in.size() > 2) bias = m_in[2];
    if (bias) {
      if (bias->size() != n)
        fail("file_list/b", "bias " + bias->describe() + " has " + std::to_string(bias->size()) + " values for N = " + std::to_string(n));
      if (is_integer_dtype(bias->dtype)) {  // ONNX QLinearMatMul / Conv: units of input_scale * weight scale
        if (!m_l.gemini.quant.input_scale1) fail("quant_info/input_scale1", "an integer bias needs input_scale1");
        if (k_scales.empty() && !b_scale) fail("file_list/b", "an integer bias needs integer weights with k_scale");
        for (int64_t i = 0; i < n; ++i)
          bias->data[i] = static_cast<float>(bias->data[i] * *m_l.gemini.quant.input_scale1 * (k_scales.empty() ? *b_scale : k_scales[i]));
        bias->dtype = ir::DType::Float32;
      }
    }
    return finish_ext(matmul(a, b, bias ? &*bias : nullptr, m_l.transpose_a, m_l.transpose_b));
  }

  Tensor binary_ext(BinaryOp op) const {
    check_inputs(2);
    return finish_ext(binary(real_ext(0), real_ext(1), op));
  }

  Tensor unary_ext(UnaryOp op) const {
    check_inputs(1);
    return finish_ext(unary(real_ext(0), op));
  }

  // Optional affine parameter `role` of a normalization: params (k = gamma, b = beta) or input i.
  std::optional<Tensor> affine(const char* role, size_t i) const {
    if (auto it = m_params.find(role); it != m_params.end()) return it->second;
    if (m_in.size() > i) return real_ext(i);
    return std::nullopt;
  }

  Tensor norm_ext() const {
    check_inputs(1);
    const Tensor x = real_ext(0);
    if (m_l.op == ir::OpKind::Softmax) return finish_ext(softmax(x, m_l.axes.empty() ? -1 : m_l.axes[0]));
    const std::vector<int64_t> axes = m_l.axes.empty() ? std::vector<int64_t>{-1} : m_l.axes;
    const int64_t normalized = x.size() / ir::num_elements(reduce_output_shape(x.shape, axes, true));
    const std::optional<Tensor> gamma = affine("k", 1);
    std::optional<Tensor> beta;
    if (m_l.op == ir::OpKind::LayerNorm) beta = affine("b", 2);
    if (gamma && gamma->size() != normalized)
      fail("file_list/k", "gamma " + gamma->describe() + " must have " + std::to_string(normalized) + " values (the normalized dims)");
    if (beta && beta->size() != normalized)
      fail("file_list/b", "beta " + beta->describe() + " must have " + std::to_string(normalized) + " values (the normalized dims)");
    Tensor y = m_l.op == ir::OpKind::LayerNorm
                   ? layer_norm(x, axes, m_l.epsilon, gamma ? &*gamma : nullptr, beta ? &*beta : nullptr)
                   : rms_norm(x, axes, m_l.epsilon, gamma ? &*gamma : nullptr);
    return finish_ext(std::move(y));
  }

  Tensor reduce_ext() const {
    check_inputs(1);
    const ReduceOp op = m_l.op == ir::OpKind::ReduceSum ? ReduceOp::Sum : m_l.op == ir::OpKind::ReduceMean ? ReduceOp::Mean : ReduceOp::Max;
    return finish_ext(reduce(real_ext(0), m_l.axes, m_l.keepdims, op));
  }

  // int8 -> int8 with a new scale: real = (q + input_zero_point1) * input_scale1 when
  // input_scale1 is given (else q), then quantized with output_scale / output_zero_point when
  // output_scale is given (else rounded half away from zero and saturated). Without quant_info
  // this is the identity with saturation to the output dtype.
  Tensor requantize_ext() const {
    check_inputs(1);
    return finish_ext(real_ext(0));
  }

  Tensor gather_ext() const {
    check_inputs(2);
    const int64_t axis = m_l.axes.empty() ? 0 : m_l.axes[0];
    if (auto e = gather_index_error(m_in[0].shape, axis, m_in[1]))
      fail("file_list/input_activation2", "gather '" + m_l.name + "': " + *e);
    return finish_moved(gather(m_in[0], m_in[1], axis));
  }

  Tensor movement_ext() const {
    switch (m_l.op) {
      case ir::OpKind::Transpose: check_inputs(1); return finish_moved(transpose(m_in[0], m_l.perm));
      case ir::OpKind::Slice: check_inputs(1); return finish_moved(slice(m_in[0], m_l.starts, m_l.ends, m_l.steps));
      case ir::OpKind::Pad: check_inputs(1); return finish_moved(pad(m_in[0], m_l.pads));
      case ir::OpKind::Concat: {
        check_inputs(m_l.input_shapes.size());
        std::vector<Tensor> xs = m_in;
        for (size_t i = 1; i < xs.size(); ++i) xs[i] = convert(std::move(xs[i]), in_dtype(i), in_dtype(0));
        return finish_moved(concat(xs, m_l.axes.empty() ? 0 : m_l.axes[0]));
      }
      case ir::OpKind::Gather: return gather_ext();
      default: break;
    }
    throw InternalError(std::string("movement_ext: ") + ir::op_name(m_l.op));
  }

  std::vector<Tensor> split_ext() const {
    check_ir_rules();
    check_inputs(1);
    const int64_t axis = m_l.axes.empty() ? 0 : m_l.axes[0];
    const size_t ax = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(m_in[0].shape.size()) : axis);
    std::vector<int64_t> sizes;
    for (const ir::Shape& s : m_l.output_shapes) sizes.push_back(s.at(ax));
    std::vector<Tensor> out = split(m_in[0], axis, sizes);
    for (size_t k = 0; k < out.size(); ++k) out[k] = finish_moved(std::move(out[k]), k);
    return out;
  }

  Tensor extension() const {
    using ir::OpKind;
    if (m_l.op == OpKind::Opaque) {
      const std::string label = m_l.opaque_label.empty() ? m_l.name : m_l.opaque_label;
      fail("operation", "opaque op '" + label + "' has no functional reference");
    }
    check_ir_rules();
    switch (m_l.op) {
      case OpKind::MatMul:
      case OpKind::BatchMatMul: return gemm();
      case OpKind::Sub: return binary_ext(BinaryOp::Sub);
      case OpKind::Mul: return binary_ext(BinaryOp::Mul);
      case OpKind::Div: return binary_ext(BinaryOp::Div);
      case OpKind::Maximum: return binary_ext(BinaryOp::Max);
      case OpKind::Minimum: return binary_ext(BinaryOp::Min);
      case OpKind::Relu: return unary_ext(UnaryOp::Relu);
      case OpKind::Relu6: return unary_ext(UnaryOp::Relu6);
      case OpKind::Gelu: return unary_ext(UnaryOp::Gelu);
      case OpKind::Silu: return unary_ext(UnaryOp::Silu);
      case OpKind::Sigmoid: return unary_ext(UnaryOp::Sigmoid);
      case OpKind::Tanh: return unary_ext(UnaryOp::Tanh);
      case OpKind::Exp: return unary_ext(UnaryOp::Exp);
      case OpKind::Sqrt: return unary_ext(UnaryOp::Sqrt);
      case OpKind::Rsqrt: return unary_ext(UnaryOp::Rsqrt);
      case OpKind::Neg: return unary_ext(UnaryOp::Neg);
      case OpKind::Clip:
        check_inputs(1);
        return finish_ext(clip(real_ext(0), static_cast<float>(m_l.clip_min), static_cast<float>(m_l.clip_max)));
      case OpKind::GlobalAvgPool2d:
      case OpKind::GlobalMaxPool2d:
        check_inputs(1);
        return finish_ext(global_pool(real_ext(0), m_l.op == OpKind::GlobalMaxPool2d));
      case OpKind::Softmax:
      case OpKind::LayerNorm:
      case OpKind::RmsNorm: return norm_ext();
      case OpKind::ReduceSum:
      case OpKind::ReduceMean:
      case OpKind::ReduceMax: return reduce_ext();
      case OpKind::Requantize: return requantize_ext();
      case OpKind::Transpose:
      case OpKind::Concat:
      case OpKind::Slice:
      case OpKind::Gather:
      case OpKind::Pad: return movement_ext();
      case OpKind::Split: return split_ext().at(0);
      default: break;
    }
    fail("operation", std::string("no functional kernel for ") + ir::op_name(m_l.op));
  }

  std::vector<Tensor> run_all() const {
    if (m_l.op == ir::OpKind::Split) return split_ext();
    return {run()};
  }

  Tensor run() const {
    switch (m_l.op) {
      case ir::OpKind::Conv2d: return conv();
      case ir::OpKind::Dense: return fc();
      case ir::OpKind::ElementWiseAdd: return vp(2);
      case ir::OpKind::MaxPool2d:
      case ir::OpKind::AvgPool2d:
      case ir::OpKind::Quantize:
      case ir::OpKind::Dequantize: return vp(1);
      case ir::OpKind::Reshape: return reshape_op();
      default: return extension();  // the npusim extension ops
    }
  }

 private:
  const ir::Layer& m_l;
  const std::vector<Tensor>& m_in;
  const ParamMap& m_params;
  std::string m_file, m_where;
};

}  // namespace

Tensor run_layer(const ir::Layer& layer, const std::vector<Tensor>& inputs, const ParamMap& params) {
  return LayerRun(layer, inputs, params).run();
}

std::vector<Tensor> run_layer_outputs(const ir::Layer& layer, const std::vector<Tensor>& inputs, const ParamMap& params) {
  return LayerRun(layer, inputs, params).run_all();
}

}  // namespace npusim::functional
