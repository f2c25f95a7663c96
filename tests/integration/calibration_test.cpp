// Calibration against the real NPU (ZeBu trace of int8 ResNet-50 b1, ../shared/examples/gemini_npu):
// `sim compare-trace` prints per-layer measured vs simulated cycles and the total.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "tests/integration/test_util.h"

using namespace npusim::test;

TEST(Calibration, GeminiResNet50B1TotalWithinFivePercentOfZebu) {
  const std::string d = scratch_dir("calib");
  auto r = run_sim("compare-trace --trace '" + example("gemini_npu/int8_resnet50.sim_quantized_b1_c1_bw16_sim.txt") +
                   "' --ir '" + example("frontend_ir/int8_resnet50.sim_quantized_b1.json") + "' --hw '" + source_dir() +
                   "/configs/gemini_zebu.yaml' --csv '" + d + "/c.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // TOTAL row: measured 2,545,655 (the run's last instruction end), simulated, error.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("TOTAL\\s+([0-9]+)\\s+([0-9]+)\\s+([-+0-9.]+)%"))) << r.output;
  EXPECT_EQ(std::stoll(m[1]), 2545655);
  const double sim = std::stod(m[2]);
  EXPECT_LT(std::fabs(sim - 2545655.0) / 2545655.0, 0.05) << r.output;
  // One CSV row per measured layer (73 NPU layers; the host reshape is not in the trace).
  const std::string csv = read_text(d + "/c.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 73);
}

// A ZeBu trace is an NPU's: a GPU or system config is refused, not replaced by an NPU of defaults.
TEST(Calibration, ATraceAgainstAGpuOrSystemConfigIsRefused) {
  for (const char* cfg : {"gpu_h100", "system_8x_h100"}) {
    auto r = run_sim("compare-trace --trace '" + example("gemini_npu/int8_resnet50.sim_quantized_b1_c1_bw16_sim.txt") +
                     "' --ir '" + example("frontend_ir/int8_resnet50.sim_quantized_b1.json") + "' --hw '" + source_dir() +
                     "/configs/" + cfg + ".yaml'");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(std::string(cfg) + ".yaml"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("give an NPU config"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("TOTAL"), std::string::npos) << r.output;
  }
}

TEST(Calibration, MismatchedTraceAndIrIsAnInputError) {
  // ResNet-34's IR has fewer layers than the ResNet-50 trace references.
  auto r = run_sim("compare-trace --trace '" + example("gemini_npu/int8_resnet50.sim_quantized_b1_c1_bw16_sim.txt") +
                   "' --ir '" + example("frontend_ir/int8_resnet34.sim_quantized_b1.json") + "' --hw '" + source_dir() +
                   "/configs/gemini_zebu.yaml'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("not a layer_index"), std::string::npos) << r.output;
}
