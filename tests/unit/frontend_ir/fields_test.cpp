// Every Frontend IR key reaches ir::Layer: a hand-written graph that uses all of them,
// including the optional groups/dilation, 2-value padding, ceil_mode true and extra fields.
#include <gtest/gtest.h>

#include "tests/unit/frontend_ir/frontend_ir_test_util.h"

namespace npusim::frontends {
namespace {

using test::expect_input_error;

// q -> conv (groups 2, dilation 2) -> pool (ceil) -> add (+ per-channel constant) -> flat (cpu)
// -> fc (with bias) -> dq. Keys are deliberately not in layer_index order.
const char* kTinyNet = R"({
  "fc": {
    "layer_index": 5, "name": "fc", "operation": "dense", "device": "npu",
    "input_dtype": ["int8", "int8", "int32"], "output_dtype": ["int8"],
    "input_shape": [[1, 60], [10, 60], [10]], "output_shape": [[1, 10]],
    "previous_layer": ["flat", "constant_w", "constant_b"], "next_layer": ["dq"],
    "activation_type": null, "activation_attr": null
  },
  "q": {
    "layer_index": 0, "name": "q", "operation": "quantize", "device": "npu",
    "input_dtype": ["float32"], "output_dtype": ["int8"],
    "input_shape": [[1, 8, 9, 9]], "output_shape": [[1, 8, 9, 9]],
    "previous_layer": ["input1"], "next_layer": ["conv"],
    "file_list": {"input_activation1": "q_in.npy", "output_activation1": "q_out.npy"},
    "input_batchdim": [0], "output_batchdim": [0],
    "tensor0_lut": [1, 1, 1], "tensor_mode": 0,
    "module_list": {
      "pre_cal": {"input_shape": [[1, 8, 9, 9]], "output_shape": [[1, 8, 9, 9]], "requan_scale_a": 1, "requan_zp_a": 0},
      "post_cal": {"mul_k": 12.5, "sum_b": -3, "sumsub_mode": "add", "carry_sel": "round",
                   "input_shape": [[1, 8, 9, 9]], "output_shape": [[1, 8, 9, 9]]}
    },
    "ori_name": "QuantizeLinear_0"
  },
  "conv": {
    "layer_index": 1, "name": "conv", "operation": "conv2d", "device": "npu",
    "input_dtype": ["int8", "int8"], "output_dtype": ["int8"],
    "input_shape": [[1, 8, 9, 9], [4, 4, 3, 3]], "output_shape": [[1, 4, 5, 9]],
    "previous_layer": ["q", "constant_1"], "next_layer": ["pool"],
    "kernel_size": [3, 3], "stride": [2, 1], "padding": [2, 2], "dilation": [2, 2], "groups": 2,
    "activation_type": "leaky_relu", "activation_attr": 0.1,
    "quant_info": {"input_scale1": 0.5, "input_zero_point1": 1, "input_scale2": 0.25, "input_zero_point2": -2,
                   "output_scale": 8, "output_zero_point": -128, "round_type": "floor", "comment": "extra"},
    "input_batchdim": [0, -1], "output_batchdim": [0],
    "future_field": {"anything": [1, 2, 3]}
  },
  "pool": {
    "layer_index": 2, "name": "pool", "operation": "max_pool2d", "device": "npu",
    "input_dtype": ["int8"], "output_dtype": ["int8"],
    "input_shape": [[1, 4, 5, 9]], "output_shape": [[1, 4, 3, 5]],
    "previous_layer": ["conv"], "next_layer": ["add"],
    "pool_size": [2, 2], "stride": [2, 2], "padding": [0, 0, 0, 0], "ceil_mode": true,
    "module_list": {
      "pre_cal": {"requan_scale_a": 1, "requan_zp_a": 0},
      "compare_group": {"cmp_mode": "cumulative", "cmp_max_en": "max", "cmp_dim": "kernel"},
      "post_cal": {"mul_k": 1, "sum_b": 0}
    }
  },
  "add": {
    "layer_index": 3, "name": "add", "operation": "element_wise_add", "device": "npu",
    "input_dtype": ["int8", "float32"], "output_dtype": ["int8"],
    "input_shape": [[1, 4, 3, 5], [1, 4, 1, 1]], "output_shape": [[1, 4, 3, 5]],
    "previous_layer": ["pool", "add_constant1"], "next_layer": ["flat"],
    "tensor0_lut": [1, 1, 1], "tensor1_lut": [1, 0, 0], "tensor_mode": 1,
    "module_list": {
      "pre_cal": {"requan_scale_a": 1, "requan_zp_a": 0, "requan_scale_b": 0.5, "requan_zp_b": 2},
      "fp32_sum_sub_group1": {"sumsub_group_mode": "add", "sumsub_group_b_mux": "vector",
                              "enable": true, "note": null, "table": [1, 2]},
      "relu_group": {},
      "post_cal": {"mul_k": 2, "sum_b": 0}
    }
  },
  "flat": {
    "layer_index": 4, "name": "flat", "operation": "reshape", "device": "cpu",
    "input_dtype": ["int8"], "output_dtype": ["int8"],
    "input_shape": [[1, 4, 3, 5]], "output_shape": [[1, 60]],
    "previous_layer": ["add"], "next_layer": ["fc"], "nhwc_consistant": false
  },
  "dq": {
    "layer_index": 6, "name": "dq", "operation": "dequantize", "device": "npu",
    "input_dtype": ["int8"], "output_dtype": ["float32"],
    "input_shape": [[1, 10]], "output_shape": [[1, 10]],
    "previous_layer": ["fc"], "next_layer": ["output1"]
  }
})";

ir::Graph tiny() { return parse_frontend_ir(json::parse_text(kTinyNet, "models/tiny_net.json"), "models/tiny_net.json"); }

TEST(FrontendIrFields, GraphLevel) {
  ir::Graph g = tiny();
  EXPECT_EQ(g.source, "models/tiny_net.json");
  EXPECT_EQ(g.name, "tiny_net");
  ASSERT_EQ(g.layers.size(), 7u);
  std::vector<std::string> order;
  for (const auto& l : g.layers) order.push_back(l.name);
  EXPECT_EQ(order, (std::vector<std::string>{"q", "conv", "pool", "add", "flat", "fc", "dq"}));
  EXPECT_EQ(g.graph_inputs, std::vector<std::string>{"input1"});
  EXPECT_EQ(g.graph_outputs, std::vector<std::string>{"output1"});
  EXPECT_EQ(g.batch(), 1);
}

TEST(FrontendIrFields, QuantizeWithFilesLutsAndModules) {
  ir::Graph g = tiny();
  const ir::Layer& q = *g.find("q");
  EXPECT_EQ(q.pointer, "/q");
  EXPECT_EQ(q.files.at("input_activation1"), "q_in.npy");
  EXPECT_EQ(q.files.at("output_activation1"), "q_out.npy");
  EXPECT_EQ(q.input_batchdim, std::vector<int>{0});
  EXPECT_EQ(q.output_batchdim, std::vector<int>{0});
  EXPECT_EQ(q.gemini.tensor0_lut, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(q.gemini.tensor_mode, 0);
  EXPECT_EQ(q.gemini.ori_name, "QuantizeLinear_0");
  ASSERT_EQ(q.gemini.modules.size(), 2u);
  EXPECT_EQ(q.gemini.modules[0].kind, "pre_cal");
  EXPECT_EQ(q.gemini.modules[1].kind, "post_cal");
  EXPECT_DOUBLE_EQ(q.gemini.modules[1].numbers.at("mul_k"), 12.5);
  EXPECT_DOUBLE_EQ(q.gemini.modules[1].numbers.at("sum_b"), -3.0);
  EXPECT_EQ(q.gemini.modules[1].strings.at("sumsub_mode"), "add");
  EXPECT_EQ(q.gemini.modules[1].output_shapes, std::vector<ir::Shape>{(ir::Shape{1, 8, 9, 9})});
}

TEST(FrontendIrFields, GroupedDilatedConvWithFullQuantInfo) {
  ir::Graph g = tiny();
  const ir::Layer& c = *g.find("conv");
  EXPECT_EQ(c.op, ir::OpKind::Conv2d);
  EXPECT_EQ(c.groups, 2);
  EXPECT_EQ(c.dilation, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(c.stride, (std::array<int, 2>{2, 1}));
  EXPECT_EQ(c.padding, (std::array<int, 4>{2, 2, 2, 2}));  // [2, 2] = symmetric [h, w]
  EXPECT_EQ(c.kernel, (std::array<int, 2>{3, 3}));
  EXPECT_EQ(c.activation, "leaky_relu");
  EXPECT_DOUBLE_EQ(c.activation_attr.value(), 0.1);
  EXPECT_TRUE(c.gemini.quant.present);
  EXPECT_DOUBLE_EQ(c.gemini.quant.input_scale1.value(), 0.5);
  EXPECT_DOUBLE_EQ(c.gemini.quant.input_zero_point1.value(), 1.0);
  EXPECT_DOUBLE_EQ(c.gemini.quant.input_scale2.value(), 0.25);
  EXPECT_DOUBLE_EQ(c.gemini.quant.input_zero_point2.value(), -2.0);
  EXPECT_DOUBLE_EQ(c.gemini.quant.output_scale.value(), 8.0);
  EXPECT_DOUBLE_EQ(c.gemini.quant.output_zero_point.value(), -128.0);
  EXPECT_EQ(c.gemini.quant.round_type, "floor");
  EXPECT_EQ(c.input_batchdim, (std::vector<int>{0, -1}));
  EXPECT_FALSE(c.gemini.tensor0_lut.has_value());
  EXPECT_FALSE(c.gemini.tensor_mode.has_value());
  EXPECT_TRUE(c.files.empty());
  // 1*4*5*9 = 180 outputs, each C/groups*R*S = 4*3*3 = 36 MACs.
  EXPECT_EQ(c.macs(), 180 * 36);
}

TEST(FrontendIrFields, CeilModePoolAndElementWiseBroadcast) {
  ir::Graph g = tiny();
  const ir::Layer& p = *g.find("pool");
  EXPECT_TRUE(p.ceil_mode);
  EXPECT_EQ(p.pool, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(p.gemini.module("compare_group")->strings.at("cmp_dim"), "kernel");
  EXPECT_TRUE(p.gemini.module("compare_group")->input_shapes.empty());  // not given here

  const ir::Layer& a = *g.find("add");
  EXPECT_EQ(a.input_shapes[1], (ir::Shape{1, 4, 1, 1}));
  EXPECT_EQ(a.input_batchdim, (std::vector<int>{0, -1}));  // default: constants have none
  EXPECT_EQ(a.gemini.tensor1_lut, (std::array<int, 3>{1, 0, 0}));
  EXPECT_EQ(a.gemini.tensor_mode, 1);
  ASSERT_EQ(a.gemini.modules.size(), 4u);
  const ir::VpStage& s = a.gemini.modules[1];
  EXPECT_EQ(s.kind, "fp32_sum_sub_group1");
  EXPECT_EQ(s.strings.at("sumsub_group_b_mux"), "vector");
  EXPECT_DOUBLE_EQ(s.numbers.at("enable"), 1.0);  // booleans become 0/1
  EXPECT_EQ(s.numbers.count("note"), 0u);          // null: not given
  EXPECT_EQ(s.numbers.count("table"), 0u);         // arrays: unknown extra, ignored
  EXPECT_EQ(a.gemini.modules[2].kind, "relu_group");
  EXPECT_EQ(a.gemini.modules[3].kind, "post_cal");
}

TEST(FrontendIrFields, ReshapeDenseDequantize) {
  ir::Graph g = tiny();
  const ir::Layer& f = *g.find("flat");
  EXPECT_EQ(f.device, ir::Device::Cpu);
  EXPECT_EQ(f.gemini.nhwc_consistant, std::optional<bool>(false));
  EXPECT_EQ(f.output_shapes[0], (ir::Shape{1, 60}));
  const ir::Layer& fc = *g.find("fc");
  EXPECT_EQ(fc.input_batchdim, (std::vector<int>{0, -1, -1}));
  EXPECT_EQ(fc.input_dtypes[2], ir::DType::Int32);
  EXPECT_FALSE(fc.gemini.quant.present);
  EXPECT_EQ(fc.activation, "");
  EXPECT_FALSE(fc.activation_attr.has_value());
  EXPECT_EQ(fc.macs(), 10 * 60);
  const ir::Layer& dq = *g.find("dq");
  EXPECT_EQ(dq.op, ir::OpKind::Dequantize);
  EXPECT_EQ(dq.output_dtypes[0], ir::DType::Float32);
}

// A single pooling layer on [1,1,3,3]; pool 2, stride 2, padding 1 on every side.
json::Json one_pool(bool ceil, int out) {
  json::Json d = json::parse_text(R"({"p": {
    "layer_index": 0, "name": "p", "operation": "avg_pool2d", "device": "npu",
    "input_dtype": ["int8"], "output_dtype": ["int8"],
    "input_shape": [[1, 1, 3, 3]], "output_shape": [[1, 1, 2, 2]],
    "previous_layer": ["input1"], "next_layer": ["output1"],
    "pool_size": [2, 2], "stride": [2, 2], "padding": [1, 1, 1, 1]}})", "pool.json");
  d["p"]["ceil_mode"] = ceil;
  d["p"]["output_shape"] = json::Json::array({json::Json::array({1, 1, out, out})});
  return d;
}

TEST(FrontendIrFields, CeilModeDropsAWindowThatStartsInTrailingPadding) {
  // Padded extent 5: floor((5-2)/2)+1 = 2. Ceil gives ceil(3/2)+1 = 3, but the third window
  // would start at 4 >= 3 + 1 (input + leading padding), i.e. wholly in padding: PyTorch keeps 2.
  EXPECT_NO_THROW(parse_frontend_ir(one_pool(false, 2), "pool.json"));
  EXPECT_NO_THROW(parse_frontend_ir(one_pool(true, 2), "pool.json"));
  expect_input_error([] { parse_frontend_ir(one_pool(true, 3), "pool.json"); }, "/p/output_shape/0",
                     "should be [1,1,2,2]");
}

TEST(FrontendIrFields, ScalarAndRank1PerChannelOperandsBroadcast) {
  json::Json d = json::parse_text(kTinyNet, "t.json");
  d["add"]["input_shape"][1] = json::Json::array({4});
  EXPECT_NO_THROW(parse_frontend_ir(d, "t.json"));
  d["add"]["input_shape"][1] = json::Json::array({1, 1, 1, 1});
  EXPECT_NO_THROW(parse_frontend_ir(d, "t.json"));
  d["add"]["input_shape"][1] = json::Json::array({1, 4, 3, 1});  // numpy broadcasting: W 1 -> 3
  EXPECT_NO_THROW(parse_frontend_ir(d, "t.json"));
  d["add"]["input_shape"][1] = json::Json::array({1, 4, 2, 1});
  expect_input_error([&] { parse_frontend_ir(d, "t.json"); }, "/add/input_shape/1", "nor broadcasts");
}

TEST(FrontendIrFields, NhwcConsistentDictionarySpellingAccepted) {
  json::Json d = json::parse_text(kTinyNet, "t.json");
  d["flat"].erase("nhwc_consistant");
  d["flat"]["nhwc_consistent"] = 1;
  EXPECT_EQ(parse_frontend_ir(d, "t.json").find("flat")->gemini.nhwc_consistant, std::optional<bool>(true));
}

}  // namespace
}  // namespace npusim::frontends
