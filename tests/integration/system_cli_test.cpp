// `sim --ir PIPELINE --hw SYSTEM`: the example pipelines run on NPU and GPU systems with
// per-device rows, per-link rows and a critical path; mismatched inputs are exit 2.
#include <gtest/gtest.h>

#include "tests/integration/test_util.h"

namespace npusim::test {
namespace {

std::string pipeline(const std::string& name) { return source_dir() + "/examples/pipelines/" + name + ".json"; }
std::string system(const std::string& name) { return source_dir() + "/configs/" + name + ".yaml"; }

TEST(SystemCli, ExamplesRunOnNpuAndGpuSystems) {
  for (const char* p : {"tp2_mlp", "pp4_transformer", "ag_rs8_layer"})
    for (const char* s : {"system_8x_gemini", "system_8x_h100", "system_8x_rngd"}) {
      const std::string d = scratch_dir(std::string("sys_") + p + "_" + s);
      const auto r = run_sim("--ir '" + pipeline(p) + "' --hw '" + system(s) + "' --report '" + d + "/r.json' --csv '" + d +
                             "/r.csv' --trace '" + d + "/t.json'");
      ASSERT_EQ(r.exit_code, 0) << p << " on " << s << ": " << r.output;
      EXPECT_NE(r.output.find("critical path:"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("dev0 "), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("links:"), std::string::npos) << r.output;
      const std::string json = read_text(d + "/r.json");
      EXPECT_NE(json.find("\"makespan_us\""), std::string::npos);
      EXPECT_NE(read_text(d + "/t.json").find("\"network\""), std::string::npos);
    }
}

TEST(SystemCli, SameInputsGiveByteIdenticalReports) {
  const std::string d = scratch_dir("sys_det");
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run_sim("--ir '" + pipeline("pp4_transformer") + "' --hw '" + system("system_8x_gemini") + "' -q --report '" + d +
                      "/r" + std::to_string(i) + ".json'").exit_code, 0);
  EXPECT_EQ(read_text(d + "/r0.json"), read_text(d + "/r1.json"));
}

TEST(SystemCli, PipelineNeedsASystemAndASystemNeedsAPipeline) {
  auto r = run_sim("--ir '" + pipeline("tp2_mlp") + "' --hw '" + source_dir() + "/configs/npu.yaml'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a pipeline runs on a system"), std::string::npos) << r.output;
  r = run_sim("--ir '" + example("frontend_ir/int8_resnet50.sim_quantized_b1.json") + "' --hw '" + system("system_8x_gemini") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a system config runs multi-device pipelines"), std::string::npos) << r.output;
  // More accelerator slots than devices.
  r = run_sim("--ir '" + pipeline("ag_rs8_layer") + "' --hw '" + system("system_2x_npu") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the system has 2"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace npusim::test
