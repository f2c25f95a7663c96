#include "models/functional/vp_stages.h"

#include <limits>
#include <optional>

#include "models/functional/elementwise.h"
#include "models/functional/fp_round.h"
#include "sim/ir/error.h"

// pre_cal is a float32 multiply then a float32 add; GCC would fuse them on FMA targets.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace npusim::functional {

namespace {
// Reduction over C of [N,C,H,W] -> [N,1,H,W]; f folds one value into the accumulator.
template <class Acc, class F>
Tensor reduce_channels(const Tensor& x, Acc init, F f) {
  Nchw d = as_nchw(x.shape);
  if (x.shape.size() != 4) throw InternalError("channel reduction of " + x.describe());
  Tensor y(ir::Shape{d.n, 1, d.h, d.w}, ir::DType::Float32);
  const int64_t hw = d.h * d.w;
  for (int64_t n = 0; n < d.n; ++n)
    for (int64_t i = 0; i < hw; ++i) {
      Acc a = init;
      for (int64_t c = 0; c < d.c; ++c) a = f(a, x.data[(n * d.c + c) * hw + i]);
      y.data[n * hw + i] = static_cast<float>(a);
    }
  return y;
}
}  // namespace

Tensor pre_cal(const Tensor& x, double requan_scale, double requan_zp) {
  const float k = static_cast<float>(requan_scale), b = static_cast<float>(requan_zp);
  Tensor y(x.shape, ir::DType::Float32);
  for (int64_t i = 0; i < y.size(); ++i) {
    float p = x.data[i] * k;
    y.data[i] = p + b;
  }
  return y;
}

Tensor compare_group(const Tensor& x, bool max, ReduceDim dim, const PoolParams& window) {
  if (dim == ReduceDim::Kernel) return max ? max_pool2d(x, window) : min_pool2d(x, window);
  const float inf = std::numeric_limits<float>::infinity();
  if (max) return reduce_channels(x, -inf, [](float a, float v) { return v > a ? v : a; });
  return reduce_channels(x, inf, [](float a, float v) { return v < a ? v : a; });
}

Tensor fp32_sum_sub_group(const Tensor& a, const Tensor& b, bool subtract) {
  return binary(a, b, subtract ? BinaryOp::Sub : BinaryOp::Add);
}

Tensor fp32_sum_sub_group(const Tensor& a, double b, bool subtract) {
  return binary(a, Tensor({}, {static_cast<float>(b)}), subtract ? BinaryOp::Sub : BinaryOp::Add);
}

Tensor relu_group(const Tensor& x) { return relu(x); }

Tensor fp32_mul_group(const Tensor& a, const Tensor& k) { return binary(a, k, BinaryOp::Mul); }

Tensor fp32_mul_group(const Tensor& a, double k_scalar) { return mul_scalar(a, static_cast<float>(k_scalar)); }

Tensor acc_tree_group(const Tensor& x, ReduceDim dim, const PoolParams& window) {
  if (dim == ReduceDim::Kernel) return window_sum(x, window);
  return reduce_channels(x, 0.0, [](double a, float v) { return a + v; });
}

Tensor post_cal(const Tensor& x, double mul_k, double sum_b, bool subtract, RoundMode carry, ir::DType out) {
  const float k = static_cast<float>(mul_k), b = static_cast<float>(sum_b);
  Tensor y(x.shape, out);
  for (int64_t i = 0; i < y.size(); ++i) y.data[i] = requantize(x.data[i], k, b, subtract, carry, out);
  return y;
}

namespace {
// Settings of one stage, read with the error place at hand.
class StageReader {
 public:
  StageReader(const ir::VpStage& st, const VpContext& ctx)
      : m_st(st), m_ctx(ctx), m_where(ctx.where + "/module_list/" + st.kind) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(m_ctx.file, key.empty() ? m_where : m_where + "/" + key, what);
  }
  double number(const std::string& key) const {
    auto it = m_st.numbers.find(key);
    if (it == m_st.numbers.end()) fail("", "missing number '" + key + "'");
    return it->second;
  }
  double number_or(const std::string& key, double dflt) const {
    auto it = m_st.numbers.find(key);
    return it == m_st.numbers.end() ? dflt : it->second;
  }
  bool has(const std::string& key) const { return m_st.numbers.count(key) > 0; }
  // The string value, which must be one of `allowed`; `dflt` when absent.
  std::string choice(const std::string& key, std::initializer_list<const char*> allowed, const char* dflt) const {
    auto it = m_st.strings.find(key);
    if (it == m_st.strings.end()) return dflt;
    std::string list;
    for (const char* a : allowed) {
      if (it->second == a) return it->second;
      list += std::string(list.empty() ? "" : ", ") + a;
    }
    fail(key, "unsupported value '" + it->second + "' (supported: " + list + ")");
  }
  ReduceDim dim(const std::string& key) const {
    return choice(key, {"kernel", "channel"}, "kernel") == "kernel" ? ReduceDim::Kernel : ReduceDim::Channel;
  }
  void check_shape(size_t i, const Tensor& t, bool input) const {
    const auto& shapes = input ? m_st.input_shapes : m_st.output_shapes;
    if (i < shapes.size() && shapes[i] != t.shape)
      fail(std::string(input ? "input_shape/" : "output_shape/") + std::to_string(i),
           "the stage " + std::string(input ? "receives " : "computes ") + ir::shape_str(t.shape) +
               " but the file says " + ir::shape_str(shapes[i]));
  }

 private:
  const ir::VpStage& m_st;
  const VpContext& m_ctx;
  std::string m_where;
};
}  // namespace

Tensor run_module_list(const std::vector<ir::VpStage>& stages, const std::vector<Tensor>& inputs,
                       const VpContext& ctx) {
  if (inputs.empty()) throw InternalError("run_module_list without inputs");
  Tensor a = inputs[0];
  std::optional<Tensor> b;
  if (inputs.size() > 1) b = inputs[1];
  bool quantized = false;
  for (const ir::VpStage& st : stages) {
    StageReader rd(st, ctx);
    auto need_b = [&](const std::string& key) -> const Tensor& {
      if (!b) rd.fail(key, "needs a second operand (input b), but the layer has one input");
      return *b;
    };
    rd.check_shape(0, a, true);
    if (st.kind == "pre_cal") {
      a = pre_cal(a, rd.number("requan_scale_a"), rd.number_or("requan_zp_a", 0.0));
      if (b) {
        rd.check_shape(1, *b, true);
        if (rd.has("requan_scale_b")) b = pre_cal(*b, rd.number("requan_scale_b"), rd.number_or("requan_zp_b", 0.0));
        rd.check_shape(1, *b, false);
      }
    } else if (st.kind == "compare_group") {
      rd.choice("cmp_mode", {"cumulative"}, "cumulative");
      bool max = rd.choice("cmp_max_en", {"max", "min"}, "max") == "max";
      a = compare_group(a, max, rd.dim("cmp_dim"), ctx.window);
    } else if (st.kind.rfind("fp32_sum_sub_group", 0) == 0) {
      bool sub = rd.choice("sumsub_group_mode", {"add", "sub"}, "add") == "sub";
      if (rd.choice("sumsub_group_b_mux", {"vector", "scalar"}, "vector") == "scalar")
        a = fp32_sum_sub_group(a, rd.number("sumsub_group_b_scalar"), sub);
      else
        a = fp32_sum_sub_group(a, need_b("sumsub_group_b_mux"), sub);
    } else if (st.kind == "relu_group") {
      a = relu_group(a);
    } else if (st.kind == "fp32_mul_group") {
      rd.choice("act_mode", {"others"}, "others");
      if (rd.choice("mul_group_k_mux", {"scalar", "vector"}, "scalar") == "scalar")
        a = fp32_mul_group(a, rd.number("mul_group_k_scalar"));
      else
        a = fp32_mul_group(a, need_b("mul_group_k_mux"));
    } else if (st.kind == "acc_tree_group") {
      rd.choice("acc_tree_mode", {"acc"}, "acc");
      a = acc_tree_group(a, rd.dim("acc_dim"), ctx.window);
    } else if (st.kind == "post_cal") {
      bool sub = rd.choice("sumsub_mode", {"add", "sub"}, "add") == "sub";
      RoundMode mode = *parse_round_mode(rd.choice("carry_sel", {"round", "floor", "ceil"}, "round"));
      a = post_cal(a, rd.number("mul_k"), rd.number_or("sum_b", 0.0), sub, mode, ctx.out_dtype);
      quantized = true;
    } else {
      rd.fail("", "unknown vector-processor stage '" + st.kind + "'");
    }
    rd.check_shape(0, a, false);
  }
  if (!quantized) {
    if (is_integer_dtype(ctx.out_dtype))
      throw InputError(ctx.file, ctx.where + "/module_list",
                       std::string("no post_cal stage to produce the ") + ir::dtype_name(ctx.out_dtype) + " output");
    for (float& v : a.data) v = round_to_float_dtype(v, ctx.out_dtype);
  }
  a.dtype = ctx.out_dtype;
  return a;
}

}  // namespace npusim::functional
