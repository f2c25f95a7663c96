// The zoo's ResNet-34/50 against the real Gemini front-end files (examples/frontend_ir/):
// everything but the quantization numbers must be identical, key order included.
#include <cmath>
#include <map>
#include <utility>

#include "frontends/zoo/zoo.h"
#include "tests/unit/zoo/zoo_test_util.h"

namespace {

using npusim::frontends::zoo::make_frontend_ir;
using npusim::frontends::zoo::ZooOptions;
using zoo_test::ordered_json;

// A ZooOptions from model and batch (every other option at its default).
ZooOptions zoo_opts(const std::string& model, int batch) {
  ZooOptions o;
  o.model = model;
  o.batch = batch;
  return o;
}


// Walks both documents; floats only need to be floats on both sides (values are synthetic),
// everything else (strings, ints, bools, null, key order, list lengths) must be equal.
void expect_same_structure(const ordered_json& ours, const ordered_json& real,
                           const std::string& path, int& budget) {
  if (budget <= 0) return;
  auto fail = [&](const std::string& what) {
    ADD_FAILURE() << path << ": " << what;
    --budget;
  };
  if (ours.is_number_float() && real.is_number_float()) return;
  if (ours.is_number_integer() && real.is_number_integer()) {  // signed vs unsigned storage
    if (ours != real) fail(ours.dump() + " vs " + real.dump());
    return;
  }
  if (ours.type() != real.type()) return fail("type " + ours.dump() + " vs " + real.dump());
  if (ours.is_object()) {
    std::vector<std::string> ko, kr;
    for (auto it = ours.begin(); it != ours.end(); ++it) ko.push_back(it.key());
    for (auto it = real.begin(); it != real.end(); ++it) kr.push_back(it.key());
    if (ko != kr) fail("keys differ: " + ordered_json(ko).dump() + " vs " + ordered_json(kr).dump());
    for (auto it = ours.begin(); it != ours.end(); ++it)
      if (real.contains(it.key()))
        expect_same_structure(*it, real[it.key()], path + "/" + it.key(), budget);
  } else if (ours.is_array()) {
    if (ours.size() != real.size()) return fail("length " + ours.dump() + " vs " + real.dump());
    for (size_t i = 0; i < ours.size(); ++i)
      expect_same_structure(ours[i], real[i], path + "/" + std::to_string(i), budget);
  } else if (ours != real) {
    fail(ours.dump() + " vs " + real.dump());
  }
}

class RealFileTest : public ::testing::TestWithParam<std::pair<std::string, int>> {};

TEST_P(RealFileTest, MatchesLayerByLayerExceptQuantValues) {
  const auto& [model, batch] = GetParam();
  ZooOptions o;
  o.model = model;
  o.batch = batch;
  const ordered_json ours = make_frontend_ir(o);
  const ordered_json real =
      zoo_test::read_real("int8_" + model + ".sim_quantized_b" + std::to_string(batch) + ".json");
  // Names in order first: the clearest message when the topology drifts.
  ASSERT_EQ(zoo_test::layer_names(ours), zoo_test::layer_names(real));
  int budget = 20;
  expect_same_structure(ours, real, "", budget);
}

INSTANTIATE_TEST_SUITE_P(Int8ResNets, RealFileTest,
                         ::testing::Values(std::make_pair("resnet34", 1),
                                           std::make_pair("resnet34", 4),
                                           std::make_pair("resnet34", 16),
                                           std::make_pair("resnet34", 64),
                                           std::make_pair("resnet50", 1),
                                           std::make_pair("resnet50", 4),
                                           std::make_pair("resnet50", 16),
                                           std::make_pair("resnet50", 64)));

TEST(RealFile, ResNet50SpotValues) {
  const ordered_json d = make_frontend_ir(zoo_opts("resnet50", 1));
  // Folded weights: constant_497 + 3 per conv in ONNX order (Conv_8 is the 5th conv -> 509).
  EXPECT_EQ(d["Conv_0"]["previous_layer"][1], "constant_497");
  EXPECT_EQ(d["Conv_8"]["previous_layer"][1], "constant_509");
  EXPECT_EQ(d["Conv_116"]["previous_layer"][1], "constant_653");
  EXPECT_EQ(d["Gemm_121"]["previous_layer"][1], "constant_fc.weight");
  EXPECT_EQ(d["Conv_8"]["ori_name"], "fake_bn_4");
  EXPECT_EQ(d["Gemm_121_reshape_output0"]["device"], "cpu");
  EXPECT_EQ(d["Gemm_121"]["output_dtype"][0], "float16");
  // Global pool over 7x7: 1/49 rounded to float32, exactly as in the real file.
  EXPECT_EQ(d["GlobalAveragePool_119_1"]["module_list"]["fp32_mul_group"]["mul_group_k_scalar"],
            0.020408162847161293);
}

TEST(RealFile, ResNet34HasDequantizeOnIdentityShortcutsOnly) {
  const ordered_json d = make_frontend_ir(zoo_opts("resnet34", 1));
  // 16 blocks, 3 with a downsample conv: 13 identity shortcuts pass a dequantize layer.
  int dequant = 0;
  for (const auto& name : zoo_test::layer_names(d)) dequant += name.rfind("dequantize_Add_", 0) == 0;
  EXPECT_EQ(dequant, 13);
  EXPECT_EQ(d["Add_33_1"]["previous_layer"], ordered_json({"Conv_29", "Conv_31"}));
  EXPECT_EQ(d["Add_40_1"]["previous_layer"],
            ordered_json({"Conv_38", "dequantize_Add_40_input_2_1"}));
  EXPECT_EQ(d["Conv_31"]["previous_layer"][1], "constant_layer2_0_downsample_0_weight");
}

// Quantization bookkeeping of the files: a consumer's input scale is 1/(producer's mul_k or
// output_scale) and its zero point the negated producer sum_b / output_zero_point; VP pre_cal
// requantizes with scale 1/m and zp -z/m. Returns the number of violations.
int quant_chain_violations(const ordered_json& doc) {
  std::map<std::string, std::pair<double, double>> out;  // int8 outputs: m, z
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const ordered_json& l = *it;
    if (l["output_dtype"][0] != "int8") continue;
    if (l.contains("quant_info") && l["quant_info"].contains("output_scale"))
      out[it.key()] = {l["quant_info"]["output_scale"], l["quant_info"]["output_zero_point"]};
    else if (l.contains("module_list"))
      out[it.key()] = {l["module_list"]["post_cal"]["mul_k"], l["module_list"]["post_cal"]["sum_b"]};
    else if (l["operation"] == "reshape" && out.count(l["previous_layer"][0].get<std::string>()))
      out[it.key()] = out[l["previous_layer"][0].get<std::string>()];  // a view keeps the scale
    else
      out[it.key()] = {0, 0};  // int8 output without a scale: counted below
  }
  int bad = 0;
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); };
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const ordered_json& l = *it;
    if (out.count(it.key()) && out[it.key()].first <= 0) ++bad;
    const ordered_json& prev = l["previous_layer"];
    for (size_t i = 0; i < prev.size(); ++i) {
      auto p = out.find(prev[i].get<std::string>());
      if (p == out.end()) continue;
      const double m = p->second.first, z = p->second.second;
      if (l.contains("quant_info") && i == 0) {
        bad += !near(l["quant_info"]["input_scale1"], 1.0 / m);
        bad += !near(l["quant_info"]["input_zero_point1"], -z);
      }
      if (l.contains("module_list")) {
        const ordered_json& pre = l["module_list"]["pre_cal"];
        const std::string s(1, static_cast<char>('a' + i));
        bad += !near(pre["requan_scale_" + s], 1.0 / m);
        bad += !near(pre["requan_zp_" + s], -z / m);
      }
    }
  }
  return bad;
}

TEST(RealFile, QuantChainHoldsInRealFilesAndInZoo) {
  EXPECT_EQ(quant_chain_violations(zoo_test::read_real("int8_resnet34.sim_quantized_b1.json")), 0);
  EXPECT_EQ(quant_chain_violations(zoo_test::read_real("int8_resnet50.sim_quantized_b1.json")), 0);
  for (const char* m : {"resnet18", "resnet34", "resnet50", "resnet101", "vgg16", "mobilenetv2"})
    EXPECT_EQ(quant_chain_violations(make_frontend_ir(zoo_opts(m, 2))), 0) << m;
}

TEST(RealFile, ShapeCheckerAcceptsRealFiles) {
  // The checker used on every zoo model must itself pass the real compiler output.
  EXPECT_EQ(zoo_test::check_shapes(zoo_test::read_real("int8_resnet34.sim_quantized_b4.json"), 4), 0);
  EXPECT_EQ(zoo_test::check_shapes(zoo_test::read_real("int8_resnet50.sim_quantized_b64.json"), 64), 0);
}

}  // namespace
