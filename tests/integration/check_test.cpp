// `sim --check` and `sim regress` on the committed golden sets (golden/, docs/golden.md), run
// through the sim binary: exit codes, the per-layer table, --dump, --chain, corrupted copies.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

#include "models/functional/compare.h"
#include "models/functional/npy.h"
#include "tests/integration/test_util.h"

using namespace npusim::test;
namespace fs = std::filesystem;
namespace fn = npusim::functional;

namespace {

const char* kInt8 = "resnet18_int8_b2_64";
const char* kFp16 = "resnet18_fp16_b2_64";

std::string golden() { return source_dir() + "/golden"; }
std::string npu_yaml() { return source_dir() + "/configs/npu.yaml"; }

std::string ir_of(const std::string& set_dir) {
  return set_dir + "/" + nlohmann::json::parse(read_text(set_dir + "/meta.json"))["ir"].get<std::string>();
}

// A copy of one set under a fresh folder, with the shared weights linked beside it (the set's
// file_list names them as ../resnet18_weights/...).
std::string copy_set(const std::string& set, const std::string& test) {
  const fs::path root = scratch_dir(test);
  fs::remove_all(root / set);
  fs::copy(golden() + "/" + set, root / set, fs::copy_options::recursive);
  if (!fs::exists(root / "resnet18_weights")) fs::create_directory_symlink(golden() + "/resnet18_weights", root / "resnet18_weights");
  return (root / set).string();
}

// Removes a scratch folder when the test ends.
struct RemoveAtEnd {
  std::string dir;
  ~RemoveAtEnd() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// Lines of the check table that end in FAIL.
std::vector<std::string> failing_lines(const std::string& out) {
  std::vector<std::string> v;
  std::istringstream s(out);
  for (std::string l; std::getline(s, l);)
    if (l.size() >= 4 && l.compare(l.size() - 4, 4, "FAIL") == 0) v.push_back(l);
  return v;
}

}  // namespace

TEST(CheckCli, PassesOnEveryCommittedSet) {
  int sets = 0;
  for (const auto& e : fs::directory_iterator(golden())) {
    if (!fs::exists(e.path() / "meta.json")) continue;
    ++sets;
    const auto r = run_sim("--ir '" + ir_of(e.path().string()) + "' --hw '" + npu_yaml() + "' --check -q");
    EXPECT_EQ(r.exit_code, 0) << e.path() << "\n" << r.output;
    EXPECT_NE(r.output.find(" pass, 0 fail, 0 skipped"), std::string::npos) << r.output;
    EXPECT_TRUE(failing_lines(r.output).empty()) << r.output;
  }
  EXPECT_GE(sets, 2);  // int8 and fp16 ResNet-18
}

TEST(CheckCli, ChainedRunOfTheInt8SetPasses) {
  // Each layer reads its producers' computed outputs: errors would compound, none do.
  const auto r = run_sim("--ir '" + ir_of(golden() + "/" + kInt8) + "' --check-only --chain");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("chained"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("38 layers: 38 pass"), std::string::npos) << r.output;
}

TEST(CheckCli, CorruptedActivationFailsOnThatLayerOnly) {
  const std::string d = copy_set(kInt8, "check_corrupt");
  RemoveAtEnd cleanup{fs::path(d).parent_path().string()};
  const std::string f = d + "/Conv_12_output_activation1.npy";
  fn::NpyArray a = fn::read_npy(f);
  ASSERT_EQ(a.type, fn::NpyType::I8);
  for (int64_t i = 0; i < a.size(); i += 3) a.data[i] = static_cast<uint8_t>(~a.data[i]);  // q -> -q-1
  fn::write_npy(f, a);
  const auto r = run_sim("--ir '" + ir_of(d) + "' --check-only");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const auto fails = failing_lines(r.output);
  ASSERT_EQ(fails.size(), 1u) << r.output;
  EXPECT_NE(fails[0].find(" Conv_12 "), std::string::npos) << fails[0];
  EXPECT_NE(r.output.find("1 fail"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("failed: Conv_12\n"), std::string::npos) << r.output;
}

TEST(CheckCli, MissingGoldenFileExitsTwoNamingIt) {
  const std::string d = copy_set(kInt8, "check_missing");
  RemoveAtEnd cleanup{fs::path(d).parent_path().string()};
  fs::remove(d + "/Add_10_1_input_activation2.npy");
  const auto r = run_sim("--ir '" + ir_of(d) + "' --check-only");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("Add_10_1_input_activation2.npy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("missing golden file"), std::string::npos) << r.output;
}

TEST(CheckCli, DumpWritesOutputsEqualToTheGoldenOnes) {
  const std::string dump = scratch_dir("check_dump");
  RemoveAtEnd cleanup{dump};
  const std::string set = golden() + "/" + kFp16;
  const auto r = run_sim("--ir '" + ir_of(set) + "' --check-only --npy-dir '" + set + "' --dump '" + dump + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  int files = 0;
  for (const auto& e : fs::directory_iterator(set)) {
    const std::string name = e.path().filename().string();
    if (name.find("_output_activation1.npy") == std::string::npos) continue;
    ++files;
    const fn::NpyArray g = fn::read_npy(e.path().string()), c = fn::read_npy(dump + "/" + name);
    ASSERT_EQ(c.type, g.type) << name;
    const auto t = *fn::npy_ir_dtype(g.type);
    const fn::Tensor gt(g.shape, g.to_float(), t), ct(c.shape, c.to_float(), t);
    EXPECT_TRUE(fn::compare_tensors(ct, gt, t).pass) << name;
  }
  EXPECT_EQ(files, 32);  // one output per layer of the fp16 ResNet-18
}

TEST(RegressCli, CommittedGoldenSetsMatch) {
  // What CI runs (scripts/test): numerics and cycles of every set against its stored report.
  const auto r = run_sim("regress '" + golden() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output << "\nIf the timing change is intended: build/sim regress --update golden/";
  EXPECT_NE(r.output.find("all match"), std::string::npos) << r.output;
}

// NPU baselines re-run on a GPU config: one line says the devices differ (no per-layer noise);
// a system config is refused by name.
TEST(RegressCli, AnotherDeviceThanTheBaselinesIsNamed) {
  auto r = run_sim("regress '" + golden() + "/" + kFp16 + "' --hw '" + source_dir() + "/configs/gpu_h100.yaml'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("device: the expected report is an NPU's, the simulation a GPU's"), std::string::npos) << r.output;
  r = run_sim("regress '" + golden() + "/" + kFp16 + "' --hw '" + source_dir() + "/configs/system_8x_h100.yaml'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("system_8x_h100.yaml: system: regress re-checks one device's golden sets"), std::string::npos) << r.output;
}

// issue 27: a GPU golden set (the fp16 ResNet-18 on the H100 config) is re-checked like an NPU one:
// numerics, then its kernels' times against the stored GPU report; a changed kernel is named.
TEST(RegressCli, AGpuSetDetectsAChangedKernel) {
  const fs::path root = scratch_dir("regress_gpu");
  RemoveAtEnd cleanup{root.string()};
  for (const std::string& set : {std::string(kFp16), std::string(kFp16) + "_h100"})
    fs::copy(golden() + "/" + set, root / set, fs::copy_options::recursive);
  fs::create_directory_symlink(golden() + "/resnet18_weights", root / "resnet18_weights");
  const std::string d = (root / (std::string(kFp16) + "_h100")).string();
  auto rep = nlohmann::json::parse(read_text(d + "/expected_report.json"));
  EXPECT_EQ(rep["totals"]["device"], "gpu");
  const std::string kernel = rep["layers"][2]["name"];
  rep["layers"][2]["time_us"] = rep["layers"][2]["time_us"].get<double>() + 0.5;
  std::ofstream(d + "/expected_report.json") << rep.dump(2);
  const std::string hw = " --hw '" + source_dir() + "/configs/gpu_h100.yaml'";
  auto r = run_sim("regress '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("numerics: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("layer " + kernel), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" ns: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(-500"), std::string::npos) << r.output;  // 0.5 us more stored than simulated
  r = run_sim("regress --update '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("GPU cycles"), std::string::npos) << r.output;
  r = run_sim("regress '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("kernels)"), std::string::npos) << r.output;
}

// A stored report with a value of the wrong type is a file error naming the JSON pointer (exit 2),
// not an internal error from the compare.
TEST(RegressCli, AWrongTypeInTheStoredReportNamesItsPlace) {
  const std::string d = copy_set(kFp16, "regress_wrong_type");
  RemoveAtEnd cleanup{fs::path(d).parent_path().string()};
  auto rep = nlohmann::json::parse(read_text(d + "/expected_report.json"));
  rep["layers"][3]["cycles"] = "many";
  std::ofstream(d + "/expected_report.json") << rep.dump(2);
  const std::string hw = " --hw '" + npu_yaml() + "'";
  auto r = run_sim("regress '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("expected_report.json: /layers/3/cycles: expected an integer"), std::string::npos) << r.output;
  rep["layers"][3]["cycles"] = 1;
  rep["totals"]["npu_cycles"] = nlohmann::json::array();
  std::ofstream(d + "/expected_report.json") << rep.dump(2);
  r = run_sim("regress '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/totals/npu_cycles"), std::string::npos) << r.output;
}

TEST(RegressCli, DetectsAChangedBaselineAndUpdateRewritesIt) {
  const std::string d = copy_set(kFp16, "regress_changed");
  RemoveAtEnd cleanup{fs::path(d).parent_path().string()};
  auto rep = nlohmann::json::parse(read_text(d + "/expected_report.json"));
  const std::string layer = rep["layers"][3]["name"];
  const int64_t cycles = rep["layers"][3]["cycles"];
  rep["layers"][3]["cycles"] = cycles + 11;
  std::ofstream(d + "/expected_report.json") << rep.dump(2);
  const std::string hw = " --hw '" + npu_yaml() + "'";
  auto r = run_sim("regress '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // The stored value was 11 more than the simulation gives: the diff goes down by 11.
  const std::string want = "layer " + layer + " cycles: " + std::to_string(cycles + 11) + " -> " + std::to_string(cycles) + " (-11";
  EXPECT_NE(r.output.find(want), std::string::npos) << r.output;
  r = run_sim("regress --update '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_sim("regress '" + d + "'" + hw);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}
