// run_layer: quant_info handling of the PE array, dispatch to module_list, errors; then every
// layer of the real int8 ResNet-34 / ResNet-50 Frontend IR files on synthetic data.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "models/functional/layer.h"
#include "sim/ir/error.h"

namespace npusim::functional {
namespace {

using ir::DType;

// A 1-channel int8 conv layer with quant_info, as Conv_0 of the real files spells it.
ir::Layer int8_conv(ir::Shape x, ir::Shape w, ir::Shape y) {
  ir::Layer l;
  l.name = "C";
  l.pointer = "/C";
  l.op = ir::OpKind::Conv2d;
  l.input_dtypes = {DType::Int8, DType::Int8};
  l.output_dtypes = {DType::Int8};
  l.input_shapes = {x, w};
  l.output_shapes = {y};
  l.kernel = {static_cast<int>(w[2]), static_cast<int>(w[3])};
  l.files = {{"input_activation1", "C_input_activation1.npy"}, {"k", "C_k.npy"}};
  l.gemini.quant.present = true;
  l.gemini.quant.input_scale1 = 0.5;
  l.gemini.quant.input_zero_point1 = 2;  // real = (q + 2) * 0.5: the real 0 is q = -2
  l.gemini.quant.output_scale = 10;
  l.gemini.quant.output_zero_point = -128;
  l.gemini.quant.round_type = "round";
  return l;
}

TEST(RunLayer, Int8ConvPadsWithTheRealZero) {
  // q = [[0,2],[4,6]] -> real [[1,2],[3,4]]; 2x2 ones, padding top/left 1; bias 1; relu.
  // y = [[1, 1+2], [1+3, 10]] + 1 = [[2,4],[5,11]] -> *10 - 128 = [[-108,-88],[-78,-18]].
  // (Padding with q = 0, i.e. real 1, would add 1 per padded tap.)
  ir::Layer l = int8_conv({1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 2, 2});
  l.padding = {1, 0, 1, 0};
  l.activation = "relu";
  Tensor x({1, 1, 2, 2}, {0, 2, 4, 6}, DType::Int8);
  ParamMap params{{"k", Tensor::full({1, 1, 2, 2}, 1.0f)}, {"b", Tensor({1}, {1.0f})}};
  Tensor y = run_layer(l, {x}, params);
  EXPECT_EQ(y.dtype, DType::Int8);
  EXPECT_EQ(y.data, (std::vector<float>{-108, -88, -78, -18}));
}

TEST(RunLayer, Int8WeightsNeedTheirScale) {
  // k = 2 (int8) with k_scale 0.5 is the real weight 1; int32 bias 4 is 4 * 0.5 * 0.5 = 1.
  ir::Layer l = int8_conv({1, 1, 1, 2}, {1, 1, 1, 1}, {1, 1, 1, 2});
  Tensor x({1, 1, 1, 2}, {0, 8}, DType::Int8);  // real 1, 5
  ParamMap params{{"k", Tensor({1, 1, 1, 1}, {2.0f}, DType::Int8)},
                  {"b", Tensor({1}, {4.0f}, DType::Int32)},
                  {"k_scale", Tensor({1}, {0.5f})}};
  // y = [2, 6] -> *10 - 128 = [-108, -68]
  EXPECT_EQ(run_layer(l, {x}, params).data, (std::vector<float>{-108, -68}));
  params.erase("k_scale");
  try {
    run_layer(l, {x}, params);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "C_input_activation1.npy");
    EXPECT_EQ(e.where(), "/C/file_list/k");
  }
}

TEST(RunLayer, ConvToFloat16AndRelu6) {
  // Conv_8 of int8_resnet34 style: int8 in, float16 out, no output_scale. y = 3 * 1/3 -> fp16.
  ir::Layer l = int8_conv({1, 1, 1, 2}, {1, 1, 1, 1}, {1, 1, 1, 2});
  l.output_dtypes = {DType::Float16};
  l.gemini.quant.output_scale.reset();
  l.activation = "relu6";
  Tensor x({1, 1, 1, 2}, {4, 100}, DType::Int8);  // real 3, 51
  Tensor y = run_layer(l, {x}, {{"k", Tensor({1, 1, 1, 1}, {1.0f / 3.0f})}});
  EXPECT_EQ(y.dtype, DType::Float16);
  EXPECT_EQ(y.data, (std::vector<float>{1.0f, 6.0f}));  // fl32(3 * fl32(1/3)) = 1 exactly; 17 -> 6
}

TEST(RunLayer, DenseLikeGemm121) {
  // int8 [N,C,1,1] x [K,C,1,1] -> float16 [N,K,1,1]; real x = (q + 128) * 0.25.
  ir::Layer l;
  l.name = "G";
  l.op = ir::OpKind::Dense;
  l.input_dtypes = {DType::Int8, DType::Int8};
  l.output_dtypes = {DType::Float16};
  l.input_shapes = {{1, 2, 1, 1}, {3, 2, 1, 1}};
  l.output_shapes = {{1, 3, 1, 1}};
  l.gemini.quant.input_scale1 = 0.25;
  l.gemini.quant.input_zero_point1 = 128;
  Tensor x({1, 2, 1, 1}, {-124, -120}, DType::Int8);  // real [1, 2]
  Tensor w({3, 2, 1, 1}, {1, 1, 1, -1, 0.1f, 0});
  // y = [3, -1, 0.1 + 0.5] -> fp16(0.6) = 0.60009765625
  Tensor y = run_layer(l, {x}, {{"k", w}, {"b", Tensor({3}, {0, 0, 0.5f})}});
  EXPECT_EQ(y.shape, (ir::Shape{1, 3, 1, 1}));
  EXPECT_EQ(y.data, (std::vector<float>{3, -1, 0.60009765625f}));
}

TEST(RunLayer, ReshapeAndPlainPooling) {
  ir::Layer r;
  r.name = "R";
  r.op = ir::OpKind::Reshape;
  r.input_dtypes = r.output_dtypes = {DType::Float16};
  r.input_shapes = {{2, 3, 1, 1}};
  r.output_shapes = {{2, 3}};
  Tensor x({2, 3, 1, 1}, {1, 2, 3, 4, 5, 6}, DType::Float16);
  Tensor y = run_layer(r, {x}, {});
  EXPECT_EQ(y.shape, (ir::Shape{2, 3}));
  EXPECT_EQ(y.data, x.data);
  // A max_pool2d without module_list works on the values directly.
  ir::Layer p;
  p.name = "P";
  p.op = ir::OpKind::MaxPool2d;
  p.input_dtypes = p.output_dtypes = {DType::Float16};
  p.input_shapes = {{1, 1, 2, 2}};
  p.output_shapes = {{1, 1, 1, 1}};
  p.pool = {2, 2};
  EXPECT_EQ(run_layer(p, {Tensor({1, 1, 2, 2}, {1, 4, 3, 2}, DType::Float16)}, {}).data, (std::vector<float>{4}));
}

std::string error_place(const ir::Layer& l, const std::vector<Tensor>& in, const ParamMap& params) {
  try {
    run_layer(l, in, params);
  } catch (const InputError& e) {
    return e.where();
  }
  return "no error";
}

TEST(RunLayer, BadInputNamesThePlace) {
  ir::Layer l = int8_conv({1, 1, 2, 2}, {1, 1, 1, 1}, {1, 1, 2, 2});
  ParamMap k{{"k", Tensor::full({1, 1, 1, 1}, 1.0f)}};
  Tensor x = Tensor::full({1, 1, 2, 2}, 0.0f, DType::Int8);
  EXPECT_EQ(error_place(l, {Tensor::full({1, 1, 3, 2}, 0.0f, DType::Int8)}, k), "/C/input_shape/0");
  EXPECT_EQ(error_place(l, {x}, {}), "/C/file_list/k");
  // Weights from their own file (file_list k): that file's header is what is wrong.
  EXPECT_EQ(error_place(l, {x}, {{"k", Tensor::full({1, 1, 2, 2}, 1.0f)}}), "header: shape");
  EXPECT_EQ(error_place(l, {x}, {{"k", Tensor::full({1, 1, 1, 1}, 1.0f)}, {"b", Tensor({2})}}), "/C/file_list/b");
  EXPECT_EQ(error_place(l, {}, k), "/C/file_list");
  ir::Layer a = l;
  a.activation = "gelu";
  EXPECT_EQ(error_place(a, {x}, k), "/C/activation_type");
  ir::Layer q = l;
  q.gemini.quant.output_scale.reset();
  EXPECT_EQ(error_place(q, {x}, k), "/C/quant_info/output_scale");
  q = l;
  q.gemini.quant.input_scale1.reset();
  EXPECT_EQ(error_place(q, {x}, k), "/C/quant_info/input_scale1");
  q = l;
  q.gemini.quant.round_type = "banker";
  EXPECT_EQ(error_place(q, {x}, k), "/C/quant_info/round_type");
  q = l;
  q.output_shapes = {{1, 1, 1, 1}};
  EXPECT_EQ(error_place(q, {x}, k), "/C/output_shape/0");
}

// Runs every layer of a real Frontend IR file in order on synthetic data: int8-ish random
// inputs, He-initialised float weights, zero biases. Returns the seconds spent in run_layer.
double run_real_file(const std::string& name, Tensor* final_out = nullptr) {
  ir::Graph g = frontends::read_frontend_ir(std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/frontend_ir/" + name);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::map<std::string, Tensor> produced;
  double seconds = 0.0;
  for (const ir::Layer& l : g.layers) {
    std::vector<Tensor> in;
    ParamMap params;
    for (size_t i = 0; i < l.previous.size(); ++i) {
      const std::string& src = l.previous[i];
      const bool weights = ir::runs_on_pe_array(l.op) && i == 1;
      if (produced.count(src)) {
        in.push_back(produced.at(src));
      } else if (weights) {
        Tensor w(l.input_shapes[1]);
        float fan_in = static_cast<float>(w.size() / w.shape[0]);
        for (float& v : w.data) v = normal(rng) * std::sqrt(2.0f / fan_in);
        params["k"] = w;
        params["b"] = Tensor::full({w.shape[0]}, 0.0f);
      } else {  // graph input or constant: fp16-representable values in [-2, 2]
        Tensor t(l.input_shapes[i], l.input_dtypes[i]);
        for (float& v : t.data) v = std::round(std::fmax(-2.0f, std::fmin(2.0f, normal(rng))) * 256.0f) / 256.0f;
        in.push_back(t);
      }
    }
    auto t0 = std::chrono::steady_clock::now();
    Tensor y = run_layer(l, in, params);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(y.shape, l.output_shapes[0]) << l.name;
    EXPECT_EQ(y.dtype, l.output_dtypes[0]) << l.name;
    int64_t bad = 0;  // non-finite, or not an int8 value where the layer says int8
    for (float v : y.data)
      bad += !std::isfinite(v) || (l.output_dtypes[0] == DType::Int8 && !(v >= -128 && v <= 127 && v == std::round(v)));
    EXPECT_EQ(bad, 0) << l.name;
    produced[l.name] = std::move(y);
  }
  if (final_out) *final_out = produced.at(g.layers.back().name);
  return seconds;
}

TEST(RunLayer, EveryLayerOfResNet50AndResNet34) {
  Tensor out;
  double s50 = run_real_file("int8_resnet50.sim_quantized_b1.json", &out);
  EXPECT_EQ(out.shape, (ir::Shape{1, 1000}));
  EXPECT_EQ(out.dtype, DType::Float16);
  double s34 = run_real_file("int8_resnet34.sim_quantized_b1.json", &out);
  EXPECT_EQ(out.shape, (ir::Shape{1, 1000}));
  // Speed sanity, not asserted.
  std::printf("[ speed ] ResNet-50 b1 %.2f s, ResNet-34 b1 %.2f s in run_layer\n", s50, s34);
}

// Run with --gtest_also_run_disabled_tests: the batch-4 figure quoted in docs/functional.md.
TEST(RunLayer, DISABLED_SpeedResNet50Batch4) {
  double s = run_real_file("int8_resnet50.sim_quantized_b4.json");
  std::printf("[ speed ] ResNet-50 b4 %.2f s in run_layer\n", s);
}

}  // namespace
}  // namespace npusim::functional
