// Every output for every device kind and plan (NPU, GPU library plan, GPU ARK plan, system,
// serving): the report, CSV, trace and picture are written, read what the record holds, and
// the picture's script knows each report (scripts/plot_run.py tells kinds by totals.device).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "sim/run/device_run.h"
#include "tests/integration/test_util.h"

namespace {

using json = nlohmann::json;
using namespace npusim::test;


TEST(Outputs, EveryDeviceKindWritesItsReportCsvTraceAndPicture) {
  const std::string d = scratch_dir("outputs_every_kind");
  ASSERT_EQ(run_sim("zoo bert-base --seq 64 --layers 1 -o '" + d + "/bert.json'").exit_code, 0);
  const std::string bert = "--ir '" + d + "/bert.json'";
  const std::string pipe = "--ir '" + source_dir() + "/examples/pipelines/tp2_mlp.json'";
  bool drawn = true;
  for (const auto& [name, workload, hw, device] :
       {std::tuple<std::string, std::string, std::string, std::string>{"npu", bert, "npu", "npu"},
        {"gpu_library", bert, "gpu_h100", "gpu"},
        {"gpu_ark", bert, "gpu_h100 --gpu-plan ark", "gpu"},
        {"system", pipe, "system_8x_h100", "system"}}) {
    SCOPED_TRACE(name);
    const std::string base = d + "/" + name;
    const auto r = run_sim(workload + " --hw " + hw + " -q --report '" + base + ".json' --csv '" + base + ".csv' --trace '" + base +
                           "_trace.json' --plot '" + base + ".png'");
    if (r.exit_code == 2 && r.output.find("matplotlib") != std::string::npos) {
      drawn = false;
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json rep = json::parse(read_text(base + ".json"));
    EXPECT_EQ(rep["totals"]["device"], device);
    EXPECT_NE(read_text(base + ".csv").find('\n'), std::string::npos);
    EXPECT_TRUE(json::parse(read_text(base + "_trace.json")).contains("traceEvents"));
    EXPECT_EQ(read_text(base + ".png").substr(0, 4), "\x89PNG");
  }
  // Serving: its report and picture.
  const auto r = run_sim("llm gpt2 --hw gpu_h100 --batch 2 --input 32 --output 4 --buckets 2 --layers 1 -q --report '" + d +
                         "/serving.json' --plot '" + d + "/serving.png'");
  if (r.exit_code == 2 && r.output.find("matplotlib") != std::string::npos) GTEST_SKIP() << "no python3-matplotlib";
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(d + "/serving.png").substr(0, 4), "\x89PNG");
  if (!drawn) GTEST_SKIP() << "no python3-matplotlib";
}

}  // namespace

namespace {

// What a forked worker sends back: every field survives the trip, at the stated resolution.
TEST(RunSummary, GoesToJsonAndBackWithEveryField) {
  npusim::run::RunSummary s;
  s.ns = 1234.56789012345;
  s.memory_bytes = 1e9 + 0.25;
  s.memory_rate = 3.35123456789;
  s.by_class_ns = {{"gemm", 1000.0000004}, {"attention", 2.5}};
  s.stage_ns = {10.5, 20.25};
  s.bound = "hbm";
  s.bound_share = 0.8765432;
  const auto r = npusim::run::RunSummary::from_json(s.to_json());
  EXPECT_DOUBLE_EQ(r.ns, 1234.56789);
  EXPECT_DOUBLE_EQ(r.memory_bytes, 1e9 + 0.2);  // %.1f: 0.25 -> 0.2 (round to even)
  EXPECT_DOUBLE_EQ(r.memory_rate, 3.35123457);
  EXPECT_DOUBLE_EQ(r.by_class_ns.at("gemm"), 1000.0);
  EXPECT_DOUBLE_EQ(r.by_class_ns.at("attention"), 2.5);
  EXPECT_EQ(r.stage_ns, (std::vector<double>{10.5, 20.25}));
  EXPECT_EQ(r.bound, "hbm");
  EXPECT_DOUBLE_EQ(r.bound_share, 0.876543);
  EXPECT_THROW(npusim::run::RunSummary::from_json("{\"ns\": 1}"), std::exception);
}

}  // namespace
