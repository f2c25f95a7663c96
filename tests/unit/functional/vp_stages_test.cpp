// Vector-processor stages one by one and as module_list pipelines, with the settings of the
// real Frontend IR files (shared/examples/frontend_ir).
#include <gtest/gtest.h>

#include "models/functional/vp_stages.h"
#include "sim/ir/error.h"

namespace npusim::functional {
namespace {

using ir::DType;

ir::VpStage stage(const std::string& kind, std::map<std::string, double> numbers = {},
                  std::map<std::string, std::string> strings = {}) {
  ir::VpStage s;
  s.kind = kind;
  s.numbers = std::move(numbers);
  s.strings = std::move(strings);
  return s;
}

VpContext context(DType out, PoolParams window = {}) {
  VpContext c;
  c.window = window;
  c.out_dtype = out;
  c.file = "L_input_activation1.npy";
  c.where = "/L";
  return c;
}

TEST(VpPipeline, GlobalAveragePoolAsMulThenAccTree) {
  // As GlobalAveragePool_119_1: pre_cal, fp32_mul_group (scalar 1/(R*S)), acc_tree_group
  // over the window, post_cal. Here a 2x2 window, real = (q + 64) * 0.5:
  // ch0 q = [-64,-62,-60,-58] -> [0,1,2,3], mean 1.5; * 2 - 64 = -61.
  // ch1 q = [0,0,0,1] -> [32,32,32,32.5], mean 32.125; * 2 - 64 = 0.25 -> 0.
  Tensor x({1, 2, 2, 2}, {-64, -62, -60, -58, 0, 0, 0, 1}, DType::Int8);
  Tensor constant({1, 1, 1, 1}, {1.0f});  // input_activation2, unused by the scalar mux
  PoolParams win;
  win.kernel = {2, 2};
  std::vector<ir::VpStage> st = {
      stage("pre_cal", {{"requan_scale_a", 0.5}, {"requan_zp_a", 32}, {"requan_scale_b", 1}, {"requan_zp_b", 0}}),
      stage("fp32_mul_group", {{"mul_group_k_scalar", 0.25}}, {{"mul_group_k_mux", "scalar"}, {"act_mode", "others"}}),
      stage("acc_tree_group", {}, {{"acc_tree_mode", "acc"}, {"acc_dim", "kernel"}}),
      stage("post_cal", {{"mul_k", 2}, {"sum_b", -64}}, {{"sumsub_mode", "add"}, {"carry_sel", "round"}})};
  st[0].input_shapes = {{1, 2, 2, 2}, {1, 1, 1, 1}};
  st[2].output_shapes = {{1, 2, 1, 1}};
  Tensor y = run_module_list(st, {x, constant}, context(DType::Int8, win));
  EXPECT_EQ(y.dtype, DType::Int8);
  EXPECT_EQ(y.shape, (ir::Shape{1, 2, 1, 1}));
  EXPECT_EQ(y.data, (std::vector<float>{-61, 0}));
}

TEST(VpPipeline, ResidualAddWithRelu) {
  // As Add_9_1: a = q_a * 0.1 -> [1, -2]; b = q_b * 0.2 + 0.2 (zero point -1) -> [1.2, 1.2];
  // sum [2.2, -0.8], relu [2.2, 0], * 10 - 128 -> [-106, -128].
  Tensor a({1, 2, 1, 1}, {10, -20}, DType::Int8), b({1, 2, 1, 1}, {5, 5}, DType::Int8);
  std::vector<ir::VpStage> st = {
      stage("pre_cal", {{"requan_scale_a", 0.1}, {"requan_zp_a", 0}, {"requan_scale_b", 0.2}, {"requan_zp_b", 0.2}}),
      stage("fp32_sum_sub_group0", {}, {{"sumsub_group_mode", "add"}, {"sumsub_group_b_mux", "vector"}}),
      stage("relu_group"), stage("post_cal", {{"mul_k", 10}, {"sum_b", -128}}, {{"carry_sel", "round"}})};
  EXPECT_EQ(run_module_list(st, {a, b}, context(DType::Int8)).data, (std::vector<float>{-106, -128}));
}

TEST(VpPipeline, MaxPoolKeepsTheMaximumQuantizedValue) {
  // MaxPool_2_1's scales round-trip exactly, so the result is the max of the raw int8 values.
  Tensor x({1, 1, 2, 4}, {-128, 5, 7, 127, 3, -2, 100, -100}, DType::Int8);
  PoolParams win;
  win.kernel = {2, 2};
  win.stride = {2, 2};
  std::vector<ir::VpStage> st = {
      stage("pre_cal", {{"requan_scale_a", 0.022923696786165237}, {"requan_zp_a", 2.9342331886291504}}),
      stage("compare_group", {}, {{"cmp_mode", "cumulative"}, {"cmp_max_en", "max"}, {"cmp_dim", "kernel"}}),
      stage("post_cal", {{"mul_k", 43.62298146446928}, {"sum_b", -128}}, {{"carry_sel", "round"}})};
  EXPECT_EQ(run_module_list(st, {x}, context(DType::Int8, win)).data, (std::vector<float>{5, 127}));
}

TEST(VpPipeline, DequantizeToFloat16HasNoCarrySel) {
  // As dequantize_Add_10_input_2_1 (int8 -> float16): post_cal mul_k 1, sum_b 0, no carry_sel;
  // (q + 128) * 0.021062... then rounded to fp16: q = -127 -> 0.0210622 -> 1380 * 2^-16.
  Tensor x({1, 1, 1, 2}, {-128, -127}, DType::Int8);
  std::vector<ir::VpStage> st = {
      stage("pre_cal", {{"requan_scale_a", 0.02106219343841076}, {"requan_zp_a", 2.695960760116577}}),
      stage("post_cal", {{"mul_k", 1}, {"sum_b", 0}}, {{"sumsub_mode", "add"}})};
  Tensor y = run_module_list(st, {x}, context(DType::Float16));
  EXPECT_EQ(y.dtype, DType::Float16);
  EXPECT_NEAR(y.data[0], 0.0f, 1e-6f);
  EXPECT_EQ(y.data[1], 0.021057128906250f);  // fp16 nearest to 0.0210622
}

TEST(VpStages, ChannelReductionsAndBroadcast) {
  Tensor x({1, 3, 1, 2}, {1, -5, 4, 2, -3, 9});
  EXPECT_EQ(acc_tree_group(x, ReduceDim::Channel, {}).data, (std::vector<float>{2, 6}));
  EXPECT_EQ(compare_group(x, true, ReduceDim::Channel, {}).data, (std::vector<float>{4, 9}));
  EXPECT_EQ(compare_group(x, false, ReduceDim::Channel, {}).data, (std::vector<float>{-3, -5}));
  // Per-channel vector operand [1,C,1,1] and a scalar one.
  Tensor k({1, 3, 1, 1}, {1, 10, 100});
  EXPECT_EQ(fp32_mul_group(x, k).data, (std::vector<float>{1, -5, 40, 20, -300, 900}));
  EXPECT_EQ(fp32_sum_sub_group(x, k, true).data, (std::vector<float>{0, -6, -6, -8, -103, -91}));
  EXPECT_EQ(fp32_sum_sub_group(x, 1.0, false).data, (std::vector<float>{2, -4, 5, 3, -2, 10}));
  EXPECT_EQ(relu_group(x).data, (std::vector<float>{1, 0, 4, 2, 0, 9}));
}

// The InputError's place, for the error tests below.
std::string where_of(const std::vector<ir::VpStage>& st, const std::vector<Tensor>& in, DType out) {
  try {
    run_module_list(st, in, context(out));
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "L_input_activation1.npy");
    return e.where() + " | " + e.detail();
  }
  return "no error";
}

TEST(VpPipeline, BadSettingsAreInputErrors) {
  Tensor x({1, 1, 1, 1}, {1.0f});
  auto w = [&](std::vector<ir::VpStage> st, DType out = DType::Int8) { return where_of(st, {x}, out); };
  EXPECT_EQ(w({stage("fancy_group")}).rfind("/L/module_list/fancy_group |", 0), 0u);
  EXPECT_EQ(w({stage("compare_group", {}, {{"cmp_max_en", "median"}})}).rfind("/L/module_list/compare_group/cmp_max_en |", 0), 0u);
  EXPECT_EQ(w({stage("post_cal", {{"sum_b", 0}})}).rfind("/L/module_list/post_cal | missing number 'mul_k'", 0), 0u);
  EXPECT_EQ(w({stage("post_cal", {{"mul_k", 1}}, {{"carry_sel", "stochastic"}})}).rfind("/L/module_list/post_cal/carry_sel |", 0), 0u);
  EXPECT_EQ(w({stage("fp32_sum_sub_group0")}).rfind("/L/module_list/fp32_sum_sub_group0/sumsub_group_b_mux |", 0), 0u);
  EXPECT_EQ(w({stage("fp32_mul_group", {{"mul_group_k_scalar", 2}}, {{"act_mode", "sigmoid"}})}).rfind("/L/module_list/fp32_mul_group/act_mode", 0), 0u);
  EXPECT_EQ(w({stage("relu_group")}).rfind("/L/module_list | no post_cal", 0), 0u);  // int8 needs post_cal
  ir::VpStage r = stage("relu_group");
  r.output_shapes = {{1, 2, 1, 1}};
  EXPECT_EQ(w({r}, DType::Float32).rfind("/L/module_list/relu_group/output_shape/0 |", 0), 0u);
}

}  // namespace
}  // namespace npusim::functional
