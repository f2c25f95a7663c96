// sim/check/regress: golden set discovery, report diffs, and the regress run with a stand-in
// simulation (no SystemC here: the callback returns a canned report from a forked child).
#include <gtest/gtest.h>

#include <sstream>

#include "sim/check/regress.h"
#include "tests/unit/check/tiny_set.h"

using namespace npusim;
using namespace check_test;
using nlohmann::json;

namespace {

json report(long long npu, const std::vector<std::pair<std::string, long long>>& layers) {
  json r;
  r["totals"] = {{"npu_cycles", npu}, {"host_cycles", 0}};
  r["layers"] = json::array();
  for (const auto& [n, c] : layers) r["layers"].push_back({{"name", n}, {"cycles", c}});
  return r;
}

// A GPU library report: cycles at the clock, one row per kernel with its time in us.
json gpu_report(long long cycles, const std::vector<std::pair<std::string, double>>& kernels) {
  json r;
  r["totals"] = {{"device", "gpu"}, {"cycles", cycles}};
  r["layers"] = json::array();
  for (const auto& [n, us] : kernels) r["layers"].push_back({{"name", n}, {"time_us", us}});
  return r;
}

// root/<name>/ with the tiny set, meta.json, and root/configs/hw.yaml for the hw lookup.
std::string make_set(const std::string& root, const std::string& name) {
  const std::string d = root + "/" + name;
  fs::create_directories(d);
  write_tiny_set(d);
  write_text(d + "/meta.json", R"({"ir": "tiny.json", "hw": "configs/hw.yaml"})");
  fs::create_directories(root + "/configs");
  write_text(root + "/configs/hw.yaml", "name: x\n");
  return d;
}

}  // namespace

TEST(DiffReports, IdenticalCyclesGiveNoLines) {
  const json a = report(300, {{"c1", 100}, {"r2", 200}});
  EXPECT_TRUE(check::diff_reports(a, a).empty());
}

TEST(DiffReports, NamesEveryChangedLayerAndTotal) {
  const json e = report(300, {{"c1", 100}, {"r2", 200}, {"gone", 5}});
  const json a = report(305, {{"c1", 105}, {"r2", 200}, {"new", 7}});
  const auto d = check::diff_reports(e, a);
  ASSERT_EQ(d.size(), 4u);
  // 100 -> 105: +5 cycles, +5.00 %.
  EXPECT_EQ(d[0], "totals.npu_cycles: 300 -> 305 (+5, +1.67%)");
  EXPECT_EQ(d[1], "layer c1 cycles: 100 -> 105 (+5, +5.00%)");
  EXPECT_EQ(d[2], "layer gone: missing from the new report");
  EXPECT_EQ(d[3], "layer new: not in the expected report (7 cycles)");
}

TEST(DiffReports, GpuKernelsCompareTheirTimeToTheNanosecondByNameAndOccurrence) {
  const json e = gpu_report(1000, {{"gemm", 1.5}, {"gemm", 2.0}, {"add", 0.25}});
  const json a = gpu_report(1001, {{"gemm", 1.5}, {"gemm", 2.001}, {"add", 0.25}});
  EXPECT_TRUE(check::diff_reports(e, e).empty());
  const auto d = check::diff_reports(e, a);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "totals.cycles: 1000 -> 1001 (+1, +0.10%)");
  // The second "gemm": 2.000 us -> 2.001 us.
  EXPECT_EQ(d[1], "layer gemm (2) ns: 2000 -> 2001 (+1, +0.05%)");
}

TEST(DiffReports, ABaselineOfAnotherDeviceIsOneLine) {
  const auto d = check::diff_reports(report(300, {{"c1", 100}}), gpu_report(1000, {{"gemm", 1.5}}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].rfind("device: the expected report is an NPU's, the simulation a GPU's", 0), 0u) << d[0];
}

TEST(GoldenSets, FindsSetsSortedAndResolvesHwUpwards) {
  const std::string root = scratch("sets");
  make_set(root, "b_set");
  make_set(root, "a_set");
  fs::create_directories(root + "/not_a_set");  // no meta.json: ignored
  const auto sets = check::find_golden_sets(root);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].name, "a_set");
  EXPECT_EQ(sets[1].name, "b_set");
  // configs/hw.yaml is not in the set folder but in the folder above it.
  EXPECT_EQ(sets[0].hw, (fs::absolute(root) / "configs/hw.yaml").lexically_normal().string());
  EXPECT_EQ(sets[0].hw_label, "configs/hw.yaml");
  EXPECT_EQ(sets[0].ir, root + "/a_set/tiny.json");
  // A set folder itself is one set.
  EXPECT_EQ(check::find_golden_sets(root + "/b_set").size(), 1u);
  // --hw replaces the lookup.
  EXPECT_EQ(check::find_golden_sets(root, "/x/y.yaml")[0].hw, "/x/y.yaml");
}

TEST(GoldenSets, BadMetaOrEmptyFolderIsAnInputError) {
  const std::string root = scratch("badmeta");
  std::string e = input_error_of([&] { check::find_golden_sets(root); });
  EXPECT_NE(e.find("holds no golden set"), std::string::npos) << e;
  const std::string d = make_set(root, "s");
  write_text(d + "/meta.json", R"({"hw": "configs/hw.yaml"})");
  e = input_error_of([&] { check::find_golden_sets(root); });
  EXPECT_NE(e.find("meta.json"), std::string::npos) << e;
  EXPECT_NE(e.find("/ir"), std::string::npos) << e;
  write_text(d + "/meta.json", R"({"ir": "tiny.json", "hw": "no/such.yaml"})");
  e = input_error_of([&] { check::find_golden_sets(root); });
  EXPECT_NE(e.find("no/such.yaml"), std::string::npos) << e;
  write_text(d + "/meta.json", "{");
  e = input_error_of([&] { check::find_golden_sets(root); });
  EXPECT_NE(e.find("meta.json: line 1, column 2: malformed JSON"), std::string::npos) << e;
}

TEST(Regress, UpdateThenMatchThenDetectAChangedBaseline) {
  const std::string root = scratch("regress");
  const std::string d = make_set(root, "s");
  long long cycles = 100;  // what the stand-in simulation reports (read in the child after fork)
  const check::SimulateFn sim = [&](const std::string& ir, const std::string& hw) {
    EXPECT_EQ(ir, d + "/tiny.json");
    return report(cycles + 50, {{"c1", cycles}, {"r2", 50}}).dump();
  };
  check::RegressOptions o;
  std::ostringstream out;
  // No baseline yet: a difference that says how to make one.
  EXPECT_EQ(check::run_regress(root, o, sim, out), 1);
  EXPECT_NE(out.str().find("no expected_report.json"), std::string::npos) << out.str();
  // --update writes it, with the hw as meta.json spells it.
  o.update = true;
  out.str("");
  EXPECT_EQ(check::run_regress(root, o, sim, out), 0) << out.str();
  ASSERT_TRUE(fs::exists(d + "/expected_report.json"));
  std::ifstream f(d + "/expected_report.json");
  const json stored = json::parse(f);
  EXPECT_EQ(stored["hardware"]["source"], "configs/hw.yaml");
  EXPECT_EQ(stored["totals"]["npu_cycles"], 150);
  o.update = false;
  out.str("");
  EXPECT_EQ(check::run_regress(root, o, sim, out), 0) << out.str();
  EXPECT_NE(out.str().find("s: numerics: 3 layers: 3 pass"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("s: timing: match"), std::string::npos) << out.str();
  // The simulation changes by 7 cycles on c1: exit 1 and the diff printed.
  cycles = 107;
  out.str("");
  EXPECT_EQ(check::run_regress(root, o, sim, out), 1);
  EXPECT_NE(out.str().find("layer c1 cycles: 100 -> 107 (+7, +7.00%)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("totals.npu_cycles: 150 -> 157"), std::string::npos) << out.str();
}

TEST(Regress, NumericFailureAndFailedSimulationAreDifferences) {
  const std::string root = scratch("regress_fail");
  const std::string d = make_set(root, "s");
  write_npy(d + "/c1_out.npy", make_npy(NpyType::I8, {1, 2, 1, 2}, {6, -3, -3, 1}));
  const check::SimulateFn sim = [](const std::string&, const std::string&) -> std::string {
    throw npusim::InputError("hw.yaml", "npu", "broken");
  };
  std::ostringstream out;
  EXPECT_EQ(check::run_regress(root, {}, sim, out), 1);
  EXPECT_NE(out.str().find("failed: c1"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("simulation failed"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("broken"), std::string::npos) << out.str();
}
