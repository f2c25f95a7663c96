// ARK files of May 2024 through the `sim` binary (docs/format_ark.md#format-history): each
// historical form of tests/data/ark_history/ simulates to exactly the report of the same
// workload in the PaddedShape form, on the GPU and (model files) on the NPU; the forms ARK
// refused exit 2 with the file and the JSON pointer.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "tests/integration/test_util.h"

using namespace npusim::test;
using nlohmann::json;

namespace {

std::string data(const std::string& name) { return "'" + source_dir() + "/tests/data/ark_history/" + name + "'"; }
std::string h100() { return "--hw '" + source_dir() + "/configs/gpu_h100.yaml'"; }

// The report of a run, less the names of the input files.
json report(const std::string& args, const std::string& tag) {
  const std::string d = scratch_dir("ark_history_" + tag);
  const auto r = run_sim(args + " -q --report '" + d + "/r.json'");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  if (r.exit_code != 0) return json::object();
  json j = json::parse(read_text(d + "/r.json"));
  j.erase("workload");
  if (j.contains("ranks"))
    for (json& rank : j["ranks"]) rank.erase("plan");
  return j;
}

}  // namespace

TEST(ArkHistorySim, HistoricalPlansSimulateLikeThePaddedShapeForm) {
  const json modern = report("--model " + data("model_paddedshape.json") + " --plan " + data("plan_paddedshape.json") +
                                 " " + h100(), "modern");
  ASSERT_TRUE(modern.contains("totals"));
  EXPECT_GT(modern["totals"]["time_us"].get<double>(), 0);
  for (const char* plan : {"plan_2024-05-18_pads.json", "plan_2024-05-16_worldsize0.json"}) {
    const json old = report("--model " + data("model_2024-05-18_pads.json") + " --plan " + data(plan) + " " + h100(),
                            plan);
    EXPECT_EQ(old, modern) << plan;
  }
}

TEST(ArkHistorySim, HistoricalModelsLowerToTheSameNpuWorkload) {
  const json modern = report("--ir " + data("model_paddedshape.json"), "npu_modern");
  ASSERT_TRUE(modern.contains("totals"));
  EXPECT_EQ(report("--ir " + data("model_2024-05-18_pads.json"), "npu_pads"), modern);
}

TEST(ArkHistorySim, WritePlanTurnsAWorldSizeZeroPlanIntoTheLaterForm) {
  const std::string d = scratch_dir("ark_history_write");
  const auto r = run_sim("--plan " + data("plan_2024-05-16_worldsize0.json") + " " + h100() + " -q --write-plan '" + d +
                         "/plan.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json w = json::parse(read_text(d + "/plan.json"));
  EXPECT_EQ(w["WorldSize"], 1);
  const json& mm = w["TaskInfos"][0]["Ops"][0];
  EXPECT_FALSE(mm["ReadTensors"][0].contains("Pads"));
  EXPECT_EQ(mm["ReadTensors"][0]["PaddedShape"], mm["ReadTensors"][0]["Shape"]);
  EXPECT_EQ(mm["Args"]["TransposeOther"]["BOOL"], true);
  EXPECT_FALSE(mm["Args"].contains("IsOtherColumnMajor"));
  EXPECT_EQ(report("--plan '" + d + "/plan.json' " + h100(), "rewritten"),
            report("--plan " + data("plan_paddedshape.json") + " " + h100(), "modern_plan"));
}

TEST(ArkHistorySim, FormsArkRefusedExitTwoNamingTheFileAndPlace) {
  const std::string d = scratch_dir("ark_history_bad");
  json ws0 = json::parse(read_text(source_dir() + "/tests/data/ark_history/plan_2024-05-16_worldsize0.json"));
  ws0["Rank"] = 2;  // a WorldSize-0 plan ran as one process
  std::ofstream(d + "/rank2.json") << ws0.dump();
  auto r = run_sim("--plan '" + d + "/rank2.json' " + h100());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("rank2.json: /Rank: Rank 2 with WorldSize 0"), std::string::npos) << r.output;

  json pads = json::parse(read_text(source_dir() + "/tests/data/ark_history/plan_2024-05-18_pads.json"));
  pads["TaskInfos"][1]["Ops"][0]["ReadTensors"][0].erase("Pads");  // neither Pads nor PaddedShape
  std::ofstream(d + "/nopads.json") << pads.dump();
  r = run_sim("--plan '" + d + "/nopads.json' " + h100());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nopads.json: /TaskInfos/1/Ops/0/ReadTensors/0/PaddedShape: missing required field"),
            std::string::npos)
      << r.output;
}
