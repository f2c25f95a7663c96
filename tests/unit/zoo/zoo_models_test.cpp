// Every zoo model: consistent shapes, known MAC counts, options, determinism, dtypes.
#include <cmath>
#include <string>

#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"
#include "tests/unit/zoo/zoo_test_util.h"

namespace {

using npusim::InputError;
using npusim::frontends::zoo::make_frontend_ir;
using npusim::frontends::zoo::model_names;
using npusim::frontends::zoo::ZooOptions;
using zoo_test::ordered_json;

ZooOptions opts(const std::string& model, int batch = 1, const std::string& dtype = "int8",
                int h = 224, int w = 224) {
  ZooOptions o;
  o.model = model;
  o.batch = batch;
  o.dtype = dtype;
  o.height = h;
  o.width = w;
  return o;
}

TEST(ZooModels, ListsTheBriefsModels) {
  const auto names = model_names();
  for (const char* m : {"resnet18", "resnet34", "resnet50", "resnet101", "vgg16", "mobilenetv2"})
    EXPECT_NE(std::find(names.begin(), names.end(), m), names.end()) << m;
}

TEST(ZooModels, EveryModelHasConsistentShapesAtBatch1And2InBothDtypes) {
  for (const std::string& m : model_names())
    for (int batch : {1, 2})
      for (const char* dtype : {"int8", "fp16"}) {
        SCOPED_TRACE(m + " batch " + std::to_string(batch) + " " + dtype);
        const ordered_json d = make_frontend_ir(opts(m, batch, dtype));
        EXPECT_EQ(zoo_test::check_shapes(d, batch), 0);
        // Ends in the compiler's cpu reshape of the logits to [N, 1000].
        const ordered_json& last = d.back();
        EXPECT_EQ(last["device"], "cpu");
        EXPECT_EQ(last["output_shape"][0], ordered_json({batch, 1000}));
        EXPECT_EQ(last["next_layer"], ordered_json({"output1"}));
      }
}

// Reference MACs at 224x224 (torchvision model cards, "GFLOPS" there = multiply-adds):
// ResNet-50 4.09 G, ResNet-18 1.81 G, VGG-16 15.47 G, MobileNetV2 0.30 G.
TEST(ZooModels, MacCountsMatchKnownNetworksWithin2Percent) {
  const std::pair<const char*, double> known[] = {
      {"resnet18", 1.81e9}, {"resnet50", 4.09e9}, {"vgg16", 15.5e9}, {"mobilenetv2", 0.30e9}};
  for (const auto& [m, ref] : known) {
    const double macs = static_cast<double>(zoo_test::count_macs(make_frontend_ir(opts(m))));
    EXPECT_NEAR(macs / ref, 1.0, 0.02) << m << " has " << macs << " MACs";
  }
  // Batch scales every layer's work linearly.
  EXPECT_EQ(zoo_test::count_macs(make_frontend_ir(opts("resnet50", 3))),
            3 * zoo_test::count_macs(make_frontend_ir(opts("resnet50", 1))));
}

TEST(ZooModels, SameOptionsGiveIdenticalDumps) {
  for (const std::string& m : model_names()) {
    const std::string a = make_frontend_ir(opts(m, 2)).dump(4);
    const std::string b = make_frontend_ir(opts(m, 2)).dump(4);
    EXPECT_EQ(a, b) << m;
    EXPECT_EQ(a.find("-0.0,"), std::string::npos) << m << " dumps a negative zero";
  }
}

TEST(ZooModels, InputSizeChangesEverySpatialShape) {
  // 320x256: conv1 s2 -> 160x128, maxpool -> 80x64, then /2 three times -> 10x8 at the pool.
  const ordered_json d = make_frontend_ir(opts("resnet50", 2, "int8", 320, 256));
  EXPECT_EQ(zoo_test::check_shapes(d, 2), 0);
  EXPECT_EQ(d["Conv_0"]["output_shape"][0], ordered_json({2, 64, 160, 128}));
  const ordered_json& gap = d["GlobalAveragePool_119_1"];
  EXPECT_EQ(gap["pool_size"], ordered_json({10, 8}));
  EXPECT_EQ(gap["module_list"]["fp32_mul_group"]["mul_group_k_scalar"].get<double>(),
            static_cast<double>(static_cast<float>(1.0 / 80)));
  // VGG keeps the whole final map: 448x448 -> 14x14x512 = 100352 inputs to fc6.
  const ordered_json v = make_frontend_ir(opts("vgg16", 1, "int8", 448, 448));
  EXPECT_EQ(zoo_test::check_shapes(v, 1), 0);
  EXPECT_EQ(v["Gemm_32"]["input_shape"][1], ordered_json({4096, 100352, 1, 1}));
}

TEST(ZooModels, Fp16HasNoQuantizationAnywhere) {
  const ordered_json d = make_frontend_ir(opts("resnet34", 1, "fp16"));
  EXPECT_EQ(d.begin().key(), "Conv_1");  // no src_quantize, no dequantize layers
  EXPECT_EQ(d["Conv_1"]["previous_layer"][0], "input1");
  for (auto it = d.begin(); it != d.end(); ++it) {
    const ordered_json& l = *it;
    EXPECT_NE(l["operation"], "quantize") << it.key();
    EXPECT_FALSE(l.contains("quant_info")) << it.key();
    for (const auto& t : l["input_dtype"]) EXPECT_EQ(t, "float16") << it.key();
    EXPECT_EQ(l["output_dtype"][0], "float16") << it.key();
    if (l.contains("module_list")) {
      // Integer 1 / 0 exactly as the spec's fp16 MaxPool example writes them.
      const ordered_json& post = l["module_list"]["post_cal"];
      EXPECT_TRUE(post["mul_k"].is_number_integer() && post["mul_k"] == 1) << it.key();
      EXPECT_TRUE(post["sum_b"].is_number_integer() && post["sum_b"] == 0) << it.key();
      EXPECT_FALSE(post.contains("carry_sel")) << it.key();
    }
  }
}

TEST(ZooModels, Int8StartsWithSrcQuantizeAndEndsInFloatLogits) {
  const ordered_json d = make_frontend_ir(opts("mobilenetv2", 1));
  const ordered_json& q = d["src_quantize_1_1"];
  EXPECT_EQ(q["layer_index"], 0);
  EXPECT_EQ(q["input_dtype"][0], "float16");
  EXPECT_EQ(q["output_dtype"][0], "int8");
  EXPECT_EQ(d["Gemm_99"]["output_dtype"][0], "float16");
  EXPECT_EQ(d["Gemm_99"]["previous_layer"][1], "constant_classifier.1.weight");
}

TEST(ZooModels, MobileNetV2HasDepthwiseRelu6ConvsAndLinearResidualAdds) {
  const ordered_json d = make_frontend_ir(opts("mobilenetv2", 2));
  int depthwise = 0, adds = 0;
  for (auto it = d.begin(); it != d.end(); ++it) {
    const ordered_json& l = *it;
    if (l.contains("groups")) {
      ++depthwise;
      const int64_t c = l["input_shape"][0][1];
      EXPECT_EQ(l["groups"], c) << it.key();
      EXPECT_EQ(l["input_shape"][1], ordered_json({c, 1, 3, 3})) << it.key();
      EXPECT_EQ(l["activation_type"], "relu6") << it.key();
    }
    if (l["operation"] == "element_wise_add") {
      ++adds;
      EXPECT_FALSE(l["module_list"].contains("relu_group")) << it.key();
    }
  }
  EXPECT_EQ(depthwise, 17);  // one per inverted residual block
  EXPECT_EQ(adds, 10);       // blocks with stride 1 and equal in/out channels
}

TEST(ZooModels, VggHas13ConvsFiveMaxPoolsAndThreeDense) {
  const ordered_json d = make_frontend_ir(opts("vgg16", 1));
  int conv = 0, pool = 0, dense = 0;
  for (const auto& l : d) {
    conv += l["operation"] == "conv2d";
    pool += l["operation"] == "max_pool2d";
    dense += l["operation"] == "dense";
  }
  EXPECT_EQ(conv, 13);
  EXPECT_EQ(pool, 5);
  EXPECT_EQ(dense, 3);
  EXPECT_EQ(d["Flatten_31"]["output_shape"][0], ordered_json({1, 25088, 1, 1}));
}

void expect_input_error(const ZooOptions& o, const std::string& where, const std::string& text) {
  try {
    make_frontend_ir(o);
    ADD_FAILURE() << "no error for " << where;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "zoo");
    EXPECT_EQ(e.where(), where);
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(ZooModels, BadOptionsAreInputErrors) {
  expect_input_error(opts("resnet49"), "model", "resnet50");  // lists the valid names
  expect_input_error(opts(""), "model", "mobilenetv2");
  expect_input_error(opts("resnet50", 0), "batch", "got 0");
  expect_input_error(opts("resnet50", -3), "batch", "got -3");
  expect_input_error(opts("resnet50", 1, "fp8"), "dtype", "fp8");  // int8, fp16 and fp32 exist
  expect_input_error(opts("resnet50", 1, "int8", 0, 224), "input", "0x224");
  // VGG halves five times with 2x2 pools: 16 -> 8 -> 4 -> 2 -> 1 -> no window fits.
  expect_input_error(opts("vgg16", 1, "int8", 16, 16), "input", "too small for vgg16");
  // The boundary: 32 is the smallest side that still leaves a 1x1 map.
  EXPECT_EQ(make_frontend_ir(opts("vgg16", 1, "int8", 32, 32))["Flatten_31"]["output_shape"][0],
            ordered_json({1, 512, 1, 1}));
}

}  // namespace
