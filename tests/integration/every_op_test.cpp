// Every operation of the workload IR, written by `sim zoo op`, simulates on an NPU and on a GPU
// config, and its row in the report names the op kind.
#include <gtest/gtest.h>

#include "sim/ir/graph.h"
#include "tests/integration/test_util.h"
#include "tests/unit/zoo/op_examples.h"

namespace npusim::test {
namespace {

class EveryOp : public ::testing::TestWithParam<int> {};

TEST_P(EveryOp, SimulatesOnNpuAndGpu) {
  const std::string op = ir::op_name(static_cast<ir::OpKind>(GetParam()));
  const auto it = op_examples().find(op);
  ASSERT_NE(it, op_examples().end()) << "no zoo op example for " << op;
  const std::string d = scratch_dir("every_op_" + op);
  std::string args;
  for (const auto& a : it->second) args += " '" + a + "'";
  const std::string file = d + "/" + op + ".json";
  const auto z = run_sim("zoo op " + op + args + " -o '" + file + "'");
  ASSERT_EQ(z.exit_code, 0) << z.output;
  for (const char* hw : {"npu", "gpu_h100"}) {
    const auto r = run_sim("--ir '" + file + "' --hw '" + source_dir() + "/configs/" + hw + ".yaml'");
    EXPECT_EQ(r.exit_code, 0) << hw << ": " << r.output;
    // NPU rows show the op kind; GPU rows name the op in the kernel's ops (a reshape is a view
    // on the GPU: no kernel of its own).
    if (std::string(hw) == "npu")
      EXPECT_NE(r.output.find(" " + op + " "), std::string::npos) << hw << ": " << r.output;
    else
      EXPECT_NE(r.output.find(op == "reshape" ? "time:" : " " + op), std::string::npos) << hw << ": " << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, EveryOp, ::testing::Range(0, ir::kNumOpKinds),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string(ir::op_name(static_cast<ir::OpKind>(i.param)));
                         });

}  // namespace
}  // namespace npusim::test
