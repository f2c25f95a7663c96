// --hw values by file or by the name of a shipped config (sim/config/hw_paths.h), and
// HwConfig::load resolving them.
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/config/hw_config.h"
#include "sim/config/hw_paths.h"
#include "tests/unit/expect_input_error.h"

namespace npusim::config {
namespace {

namespace fs = std::filesystem;
using test::expect_input_error;

std::string source_configs() { return std::string(NPUSIM_SOURCE_DIR) + "/configs"; }

// The resolved path names an existing file called `file`.
void expect_config(const std::string& resolved, const std::string& file) {
  EXPECT_TRUE(fs::is_regular_file(resolved)) << resolved;
  EXPECT_EQ(fs::path(resolved).filename().string(), file) << resolved;
}

TEST(HwPaths, AnExistingFileIsUsedAsIs) {
  const std::string p = source_configs() + "/npu.yaml";
  EXPECT_EQ(resolve_hw(p), p);
  const std::string rel = fs::relative(p).string();  // relative to the working directory
  EXPECT_EQ(resolve_hw(rel), rel);
}

TEST(HwPaths, FileNamesAndShortNamesFindShippedConfigs) {
  expect_config(resolve_hw("npu.yaml"), "npu.yaml");
  expect_config(resolve_hw("npu"), "npu.yaml");
  expect_config(resolve_hw("gemini_zebu"), "gemini_zebu.yaml");
  expect_config(resolve_hw("gpu_h100"), "gpu_h100.yaml");
  expect_config(resolve_hw("gpu_mi300x.yaml"), "gpu_mi300x.yaml");
  // The CLI's defaults ("configs/npu.yaml") work from any folder.
  expect_config(resolve_hw("configs/npu.yaml"), "npu.yaml");
  expect_config(resolve_hw("configs/gpu_a100"), "gpu_a100.yaml");
}

TEST(HwPaths, ShippedNamesAndFolders) {
  const auto names = shipped_config_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "npu");
  for (const char* n : {"gemini_zebu", "gpu_a100", "gpu_h100", "gpu_mi300x"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  const auto dirs = shipped_config_dirs();
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), fs::path(source_configs()).lexically_normal().string()), dirs.end());
}

TEST(HwPaths, AMissNamesTheValueAndListsTheShippedConfigs) {
  std::string msg = expect_input_error([] { resolve_hw("npu9"); }, "",
                                       "cannot open: no such file, and not a shipped config; shipped: npu, ");
  EXPECT_EQ(msg.rfind("npu9: ", 0), 0u) << msg;
  for (const char* n : {"gemini_zebu", "gpu_h100"}) EXPECT_NE(msg.find(n), std::string::npos) << msg;
  // A path into another folder is not a name: the file is missing.
  expect_input_error([] { resolve_hw("/nonexistent/npu.yaml"); }, "", "not a shipped config");
  expect_input_error([] { resolve_hw("other/npu"); }, "", "not a shipped config");
  expect_input_error([] { resolve_hw(""); }, "", "not a shipped config");
  expect_input_error([] { resolve_hw(::testing::TempDir()); }, "", "is a directory");
}

TEST(HwPaths, HwConfigLoadTakesNames) {
  const HwConfig gpu = HwConfig::load("gpu_h100");
  EXPECT_EQ(gpu.get_string("device"), "gpu");
  expect_config(gpu.source(), "gpu_h100.yaml");
  const HwConfig npu = HwConfig::load("npu", {"npu.pe_array.rows=32"});
  EXPECT_EQ(npu.get_int("npu.pe_array.rows"), 32);
  // A miss names what was typed.
  std::string msg = expect_input_error([] { HwConfig::load("gpu_b300"); }, "", "not a shipped config");
  EXPECT_EQ(msg.rfind("gpu_b300: ", 0), 0u) << msg;
}

}  // namespace
}  // namespace npusim::config
