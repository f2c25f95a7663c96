// `sim --ir` through the reader registry: ARK models on the NPU, the same ARK model by --ir
// and by --model on a GPU config, --format, unrecognised inputs, and --hw by name.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_util.h"

using namespace npusim::test;

namespace {

std::string ark_model() { return example("ark/tutorial_v2/model.json"); }

}  // namespace

TEST(Registry, ArkModelRunsOnTheNpu) {
  for (const char* rel : {"ark/tutorial/model.json", "ark/tutorial_v2/model.json"}) {
    const std::string d = scratch_dir("reg_npu");
    auto r = run_sim("--ir '" + example(rel) + "' --hw '" + source_dir() + "/configs/npu.yaml' --report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << rel << ": " << r.output;
    // One table row per ARK op.
    EXPECT_NE(r.output.find("matmul "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("sigmoid"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("element_wise_mul"), std::string::npos) << r.output;
    const auto rep = nlohmann::json::parse(read_text(d + "/r.json"));
    EXPECT_EQ(rep["layers"].size(), 6u);
    EXPECT_GT(rep["totals"]["npu_cycles"].get<int64_t>(), 0);
  }
}

TEST(Registry, ArkModelOnAGpuConfigIsExactlyTheModelRun) {
  const std::string d = scratch_dir("reg_gpu");
  const std::string hw = " --hw '" + source_dir() + "/configs/gpu_h100.yaml'";
  auto by_ir = run_sim("--ir '" + ark_model() + "'" + hw + " --report '" + d + "/ir.json' --csv '" + d + "/ir.csv'");
  ASSERT_EQ(by_ir.exit_code, 0) << by_ir.output;
  auto by_model = run_sim("--model '" + ark_model() + "'" + hw + " --report '" + d + "/model.json' --csv '" + d + "/model.csv'");
  ASSERT_EQ(by_model.exit_code, 0) << by_model.output;
  EXPECT_EQ(by_ir.output, by_model.output);
  EXPECT_EQ(read_text(d + "/ir.json"), read_text(d + "/model.json"));
  EXPECT_EQ(read_text(d + "/ir.csv"), read_text(d + "/model.csv"));
  EXPECT_NE(by_ir.output.find("(default plan)"), std::string::npos) << by_ir.output;
}

TEST(Registry, FormatOptionAndUnreadableInputs) {
  const std::string hw = " --hw '" + source_dir() + "/configs/npu.yaml' -q";
  EXPECT_EQ(run_sim("--ir '" + ark_model() + "' --format ark_model" + hw).exit_code, 0);
  auto r = run_sim("--ir '" + ark_model() + "' --format caffe" + hw);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--format: caffe: unknown workload format; valid: frontend_ir, ark_model, onnx, tvm_mlf, pipeline"), std::string::npos) << r.output;
  r = run_sim("--ir '" + ark_model() + "' --format frontend_ir" + hw);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/Rank"), std::string::npos) << r.output;
  r = run_sim("--ir '" + example("ark/tutorial/plan.json") + "'" + hw);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not a workload format npusim reads; tried: frontend_ir ("), std::string::npos) << r.output;
  r = run_sim("--ir /nonexistent/model.json" + hw);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent/model.json: cannot open: no such file"), std::string::npos) << r.output;
}

// The test runs in the build folder, where there is no configs/: names and the default --hw
// are found among the shipped configs.
TEST(Registry, HwByNameFromAnyFolder) {
  const std::string d = scratch_dir("reg_hw");
  const std::string ir = d + "/resnet50_b4.json";
  ASSERT_EQ(run_sim("zoo resnet50 --batch 4 -o '" + ir + "'").exit_code, 0);
  auto r = run_sim("--ir '" + ir + "' --hw npu.yaml -q --report '" + d + "/a.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_sim("--ir '" + ir + "' -q --report '" + d + "/b.json'");  // default --hw configs/npu.yaml
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto a = nlohmann::json::parse(read_text(d + "/a.json")), b = nlohmann::json::parse(read_text(d + "/b.json"));
  EXPECT_EQ(a["totals"], b["totals"]);
  r = run_sim("--ir '" + ark_model() + "' --hw gpu_h100 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_sim("config --hw gemini_zebu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("name = gemini-zebu-core"), std::string::npos) << r.output;
  r = run_sim("--ir '" + ir + "' --hw npu9 -q");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("npu9: cannot open: no such file, and not a shipped config; shipped: npu, "), std::string::npos)
      << r.output;
}
