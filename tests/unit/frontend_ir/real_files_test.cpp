// The 8 real Frontend IR files (int8 ResNet-34/50, batch 1/4/16/64) load, and selected fields
// hold the values written in them.
#include <map>

#include <gtest/gtest.h>

#include "tests/unit/frontend_ir/frontend_ir_test_util.h"

namespace npusim::frontends {
namespace {

using test::frontend_ir_example;

struct RealFile {
  const char* file;
  int layers;
  int batch;
  int conv2d, quantize, element_wise_add;
};

class FrontendIrRealFile : public ::testing::TestWithParam<RealFile> {};

TEST_P(FrontendIrRealFile, LoadsWithExpectedStructure) {
  const RealFile& f = GetParam();
  std::string path = frontend_ir_example(f.file);
  ir::Graph g = read_frontend_ir(path);
  EXPECT_EQ(g.source, path);
  EXPECT_EQ(g.name, std::string(f.file).substr(0, std::string(f.file).size() - 5));  // minus ".json"
  ASSERT_EQ(static_cast<int>(g.layers.size()), f.layers);
  EXPECT_EQ(g.batch(), f.batch);
  std::map<ir::OpKind, int> ops;
  for (const auto& l : g.layers) ops[l.op]++;
  EXPECT_EQ(ops[ir::OpKind::Conv2d], f.conv2d);
  EXPECT_EQ(ops[ir::OpKind::Quantize], f.quantize);
  EXPECT_EQ(ops[ir::OpKind::ElementWiseAdd], f.element_wise_add);
  EXPECT_EQ(ops[ir::OpKind::MaxPool2d], 1);
  EXPECT_EQ(ops[ir::OpKind::AvgPool2d], 1);
  EXPECT_EQ(ops[ir::OpKind::Dense], 1);
  EXPECT_EQ(ops[ir::OpKind::Reshape], 1);
  // Sorted by layer_index, which runs 0..n-1 in these files.
  for (size_t i = 0; i < g.layers.size(); ++i) EXPECT_EQ(g.layers[i].index, static_cast<int>(i));
  EXPECT_EQ(g.graph_inputs, std::vector<std::string>{"input1"});
  EXPECT_EQ(g.graph_outputs, std::vector<std::string>{"output1"});
  // Output 1000 classes, flattened on the cpu.
  EXPECT_EQ(g.layers.back().output_shapes[0], (ir::Shape{f.batch, 1000}));
}

// ResNet-50: 74 layers = 1 quantize + 53 conv2d + 16 add + max/avg pool + dense + reshape.
// ResNet-34: 70 layers = 14 quantize (input + 13 "dequantize_Add_*" casts) + 36 conv2d + 16 add + 4.
INSTANTIATE_TEST_SUITE_P(
    All, FrontendIrRealFile,
    ::testing::Values(RealFile{"int8_resnet50.sim_quantized_b1.json", 74, 1, 53, 1, 16},
                      RealFile{"int8_resnet50.sim_quantized_b4.json", 74, 4, 53, 1, 16},
                      RealFile{"int8_resnet50.sim_quantized_b16.json", 74, 16, 53, 1, 16},
                      RealFile{"int8_resnet50.sim_quantized_b64.json", 74, 64, 53, 1, 16},
                      RealFile{"int8_resnet34.sim_quantized_b1.json", 70, 1, 36, 14, 16},
                      RealFile{"int8_resnet34.sim_quantized_b4.json", 70, 4, 36, 14, 16},
                      RealFile{"int8_resnet34.sim_quantized_b16.json", 70, 16, 36, 14, 16},
                      RealFile{"int8_resnet34.sim_quantized_b64.json", 70, 64, 36, 14, 16}));

class FrontendIrResNet50 : public ::testing::Test {
 protected:
  static const ir::Graph& graph() {
    static const ir::Graph g = read_frontend_ir(frontend_ir_example(test::kResNet50B4));
    return g;
  }
  static const ir::Layer& layer(const std::string& name) {
    const ir::Layer* l = graph().find(name);
    if (!l) throw std::runtime_error("no layer " + name);
    return *l;
  }
  static std::vector<std::string> module_kinds(const ir::Layer& l) {
    std::vector<std::string> r;
    for (const auto& m : l.gemini.modules) r.push_back(m.kind);
    return r;
  }
};

TEST_F(FrontendIrResNet50, InputQuantize) {
  const ir::Layer& q = graph().layers[0];
  EXPECT_EQ(q.name, "src_quantize_1_1");
  EXPECT_EQ(q.pointer, "/src_quantize_1_1");
  EXPECT_EQ(q.op, ir::OpKind::Quantize);
  EXPECT_EQ(q.input_dtypes, std::vector<ir::DType>{ir::DType::Float16});
  EXPECT_EQ(q.output_dtypes, std::vector<ir::DType>{ir::DType::Int8});
  EXPECT_EQ(q.previous, std::vector<std::string>{"input1"});
  EXPECT_EQ(q.gemini.tensor_mode, 0);
  EXPECT_EQ(q.gemini.tensor0_lut, (std::array<int, 3>{1, 1, 1}));
  EXPECT_FALSE(q.gemini.tensor1_lut.has_value());
  EXPECT_FALSE(q.gemini.quant.present);
  EXPECT_EQ(module_kinds(q), (std::vector<std::string>{"pre_cal", "post_cal"}));
  const ir::VpStage* post = q.gemini.module("post_cal");
  ASSERT_NE(post, nullptr);
  EXPECT_DOUBLE_EQ(post->numbers.at("mul_k"), 29.057056427001953);
  EXPECT_DOUBLE_EQ(post->numbers.at("sum_b"), 6.0);
  EXPECT_EQ(post->strings.at("carry_sel"), "round");
  EXPECT_EQ(post->input_shapes, std::vector<ir::Shape>{(ir::Shape{4, 3, 224, 224})});
}

TEST_F(FrontendIrResNet50, FirstConv) {
  const ir::Layer& c = layer("Conv_0");
  EXPECT_EQ(c.index, 1);
  EXPECT_EQ(c.device, ir::Device::Npu);
  EXPECT_EQ(c.input_shapes[1], (ir::Shape{64, 3, 7, 7}));
  EXPECT_EQ(c.kernel, (std::array<int, 2>{7, 7}));
  EXPECT_EQ(c.stride, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(c.padding, (std::array<int, 4>{3, 3, 3, 3}));
  EXPECT_EQ(c.dilation, (std::array<int, 2>{1, 1}));
  EXPECT_EQ(c.groups, 1);
  EXPECT_EQ(c.activation, "relu");
  EXPECT_FALSE(c.activation_attr.has_value());
  EXPECT_TRUE(c.gemini.quant.present);
  EXPECT_DOUBLE_EQ(c.gemini.quant.input_scale1.value(), 0.034415047615766525);
  EXPECT_DOUBLE_EQ(c.gemini.quant.input_zero_point1.value(), -6.0);
  EXPECT_DOUBLE_EQ(c.gemini.quant.output_scale.value(), 43.62298146446928);
  EXPECT_DOUBLE_EQ(c.gemini.quant.output_zero_point.value(), -128.0);
  EXPECT_FALSE(c.gemini.quant.input_scale2.has_value());
  EXPECT_EQ(c.gemini.quant.round_type, "round");
  EXPECT_EQ(c.previous, (std::vector<std::string>{"src_quantize_1_1", "constant_497"}));
  EXPECT_EQ(c.next, std::vector<std::string>{"MaxPool_2_1"});
  EXPECT_EQ(c.files.at("k"), "Conv_0_k.npy");
  EXPECT_EQ(c.files.size(), 5u);
  // The file says [0] for two inputs; the weight (a constant) gets -1.
  EXPECT_EQ(c.input_batchdim, (std::vector<int>{0, -1}));
  EXPECT_EQ(c.gemini.ori_name, "Relu_1");
  EXPECT_TRUE(c.gemini.modules.empty());
  // 4*64*112*112 outputs, each 3*7*7 = 147 MACs: 3,211,264 * 147 = 472,055,808.
  EXPECT_EQ(c.macs(), 472055808);
}

TEST_F(FrontendIrResNet50, MaxPoolCeilModeZeroAndStageOrder) {
  const ir::Layer& p = layer("MaxPool_2_1");
  EXPECT_EQ(p.op, ir::OpKind::MaxPool2d);
  EXPECT_FALSE(p.ceil_mode);  // written as 0
  EXPECT_EQ(p.pool, (std::array<int, 2>{3, 3}));
  EXPECT_EQ(p.padding, (std::array<int, 4>{1, 1, 1, 1}));
  EXPECT_EQ(p.next, (std::vector<std::string>{"Conv_3", "Conv_8"}));
  EXPECT_EQ(module_kinds(p), (std::vector<std::string>{"pre_cal", "compare_group", "post_cal"}));
  EXPECT_EQ(p.gemini.module("compare_group")->strings.at("cmp_mode"), "cumulative");
  EXPECT_EQ(p.gemini.module("compare_group")->output_shapes[0], (ir::Shape{4, 64, 56, 56}));
}

TEST_F(FrontendIrResNet50, AddHasTwoTensorLutsAndSumSubStage) {
  const ir::Layer& a = layer("Add_9_1");
  EXPECT_EQ(a.index, 7);
  EXPECT_EQ(a.op, ir::OpKind::ElementWiseAdd);
  EXPECT_EQ(a.input_batchdim, (std::vector<int>{0, 0}));
  EXPECT_EQ(a.gemini.tensor1_lut, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(module_kinds(a), (std::vector<std::string>{"pre_cal", "fp32_sum_sub_group0", "relu_group", "post_cal"}));
  EXPECT_EQ(a.gemini.module("fp32_sum_sub_group0")->strings.at("sumsub_group_b_mux"), "vector");
  EXPECT_DOUBLE_EQ(a.gemini.module("pre_cal")->numbers.at("requan_scale_b"), 0.019235722720623016);
}

TEST_F(FrontendIrResNet50, GlobalAvgPoolWithConstantSecondInput) {
  const ir::Layer& p = layer("GlobalAveragePool_119_1");
  EXPECT_EQ(p.op, ir::OpKind::AvgPool2d);
  EXPECT_FALSE(p.ceil_mode);  // written as false
  EXPECT_EQ(p.pool, (std::array<int, 2>{7, 7}));
  EXPECT_EQ(p.previous[1], "GlobalAveragePool_119_1_constant1");
  EXPECT_EQ(p.input_dtypes[1], ir::DType::Float32);
  EXPECT_EQ(p.input_batchdim, (std::vector<int>{0, -1}));
  EXPECT_EQ(p.gemini.tensor1_lut, (std::array<int, 3>{0, 0, 0}));
  EXPECT_EQ(module_kinds(p), (std::vector<std::string>{"pre_cal", "fp32_mul_group", "acc_tree_group", "post_cal"}));
  EXPECT_DOUBLE_EQ(p.gemini.module("fp32_mul_group")->numbers.at("mul_group_k_scalar"), 0.020408162847161293);
  EXPECT_EQ(p.output_shapes[0], (ir::Shape{4, 2048, 1, 1}));
}

TEST_F(FrontendIrResNet50, DenseAndCpuReshape) {
  const ir::Layer& d = layer("Gemm_121");
  EXPECT_EQ(d.op, ir::OpKind::Dense);
  EXPECT_EQ(d.previous[1], "constant_fc.weight");
  EXPECT_TRUE(d.gemini.quant.present);
  EXPECT_DOUBLE_EQ(d.gemini.quant.input_scale1.value(), 0.015733197331428528);
  EXPECT_DOUBLE_EQ(d.gemini.quant.input_zero_point1.value(), 128.0);
  EXPECT_FALSE(d.gemini.quant.output_scale.has_value());
  EXPECT_EQ(d.gemini.quant.round_type, "");
  EXPECT_EQ(d.activation, "");  // null
  EXPECT_EQ(d.output_dtypes[0], ir::DType::Float16);
  // 4*1000 outputs, each 2048 MACs.
  EXPECT_EQ(d.macs(), 4 * 1000 * 2048);

  const ir::Layer& r = layer("Gemm_121_reshape_output0");
  EXPECT_EQ(r.op, ir::OpKind::Reshape);
  EXPECT_EQ(r.device, ir::Device::Cpu);
  EXPECT_EQ(r.gemini.nhwc_consistant, std::optional<bool>(true));
  EXPECT_EQ(r.next, std::vector<std::string>{"output1"});
  EXPECT_FALSE(layer("Conv_0").gemini.nhwc_consistant.has_value());
}

TEST(FrontendIrResNet34, DequantizeCastsAndExplicitWeightBatchdim) {
  ir::Graph g = read_frontend_ir(frontend_ir_example(test::kResNet34B4));
  const ir::Layer* dq = g.find("dequantize_Add_10_input_2_1");
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->index, 4);
  EXPECT_EQ(dq->op, ir::OpKind::Quantize);  // the producer calls the int8 -> float16 cast "quantize"
  EXPECT_EQ(dq->input_dtypes[0], ir::DType::Int8);
  EXPECT_EQ(dq->output_dtypes[0], ir::DType::Float16);
  EXPECT_EQ(dq->gemini.ori_name, "");  // no ori_name in the file
  const ir::Layer* conv = g.find("Conv_8");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->input_batchdim, (std::vector<int>{0, -1}));  // written out in this file
  EXPECT_FALSE(conv->gemini.quant.output_scale.has_value());
  EXPECT_EQ(g.find("MaxPool_4_1")->ceil_mode, false);
  EXPECT_EQ(g.find("GlobalAveragePool_123_1")->input_shapes[1], (ir::Shape{1, 1, 1, 1}));
}

}  // namespace
}  // namespace npusim::frontends
