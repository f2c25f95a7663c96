// TVM Model Library Format through the CLI: every metadata version, as a folder and an archive,
// simulates on an NPU and a GPU config with the storage-plan footprint line; modules are picked
// with --module; the real graph.json simulates.
#include <gtest/gtest.h>

#include "tests/integration/test_util.h"

namespace npusim::test {
namespace {

std::string mlf(const std::string& name) { return source_dir() + "/tests/data/tvm_mlf/" + name; }

TEST(TvmCli, EveryMetadataVersionSimulatesOnNpuAndGpu) {
  for (const std::string v : {"v5", "v5.tar.gz", "v6", "v6.tar.gz"})
    for (const char* hw : {"npu", "gpu_h100"}) {
      const auto r = run_sim("--ir '" + mlf(v) + "' --hw " + hw);
      EXPECT_EQ(r.exit_code, 0) << v << " on " << hw << ": " << r.output;
      EXPECT_NE(r.output.find("memory footprint (TVM storage_id plan): "), std::string::npos) << r.output;
    }
  auto r = run_sim("--ir '" + mlf("v7.tar.gz") + "' --hw npu");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("choose one with --module NAME"), std::string::npos) << r.output;
  r = run_sim("--ir '" + mlf("v7.tar.gz") + "' --module cnn --hw npu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("conv2d"), std::string::npos) << r.output;
  r = run_sim("--ir '" + example("tvm/graph_executor_test.graph.json") + "' --hw npu");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace npusim::test
