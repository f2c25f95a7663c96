#include "models/functional/layer.h"

#include <optional>

#include "models/functional/conv.h"
#include "models/functional/elementwise.h"
#include "models/functional/fp_round.h"
#include "models/functional/pool.h"
#include "models/functional/quant.h"
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
    if (m_l.input_shapes.size() > 1 && k->shape != m_l.input_shapes[1])
      fail("input_shape/1", "weights are " + k->describe() + ", the layer expects " + ir::shape_str(m_l.input_shapes[1]));
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
    // No module_list: the op itself on real values (docs/functional.md#layers).
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
      default: break;  // the npusim extension ops have no functional kernel yet
    }
    fail("operation", std::string("no functional kernel for ") + ir::op_name(m_l.op));
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

}  // namespace npusim::functional
