// `sim --ir X --hw <gpu config> --gpu-plan ark`: a workload of the IR lowered to ARK ops, planned
// by ARK's DefaultPlanner and simulated on the GPU model (docs/gpu_ark.md).
// The default library plan: tests/integration/gpu_library_test.cpp.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "tests/integration/test_util.h"

using namespace npusim::test;
using nlohmann::json;

namespace {

std::string resnet50() { return example("frontend_ir/int8_resnet50.sim_quantized_b1.json"); }
std::string hw(const std::string& name) {
  return "--gpu-plan ark --hw '" + source_dir() + "/configs/" + name + ".yaml'";
}

}  // namespace

TEST(GpuWorkload, ResNet50FromTheFrontendIrRunsOnTheH100) {
  const std::string d = scratch_dir("gpu_workload");
  const auto r = run_sim("--ir '" + resnet50() + "' " + hw("gpu_h100") + " --report '" + d + "/r.json' --csv '" + d +
                         "/r.csv' --trace '" + d + "/r.trace'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The console table names the IR op and its kind on every row.
  EXPECT_NE(r.output.find("(lowered to ARK ops, default plan)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("T1 Matmul Conv_0 (conv2d)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ir_op"), std::string::npos) << r.output;

  const json rep = json::parse(read_text(d + "/r.json"));
  const json& ops = rep["ranks"][0]["ops"];
  const npusim::ir::Graph g = npusim::frontends::read_frontend_ir(resnet50());
  std::map<std::string, int> per_kind;
  double matmul_flops = 0;
  for (const json& op : ops) {
    ASSERT_TRUE(op.contains("ir_op")) << op.dump();
    ++per_kind[op["ir_op"].get<std::string>()];
    const std::string name = op["name"];
    EXPECT_NE(g.find(name.substr(0, name.find('/'))), nullptr) << name;
    if (op["type"] == "Matmul") matmul_flops += op["flops"].get<double>();
  }
  EXPECT_EQ(per_kind["dense"], 1);
  EXPECT_EQ(per_kind["element_wise_add"], 16);
  EXPECT_EQ(per_kind["max_pool2d"], 1);
  int convs = 0;
  for (const auto& l : g.layers)
    if (l.op == npusim::ir::OpKind::Conv2d) convs += l.activation.empty() ? 1 : 2;  // Matmul (+ fused relu)
  EXPECT_EQ(per_kind["conv2d"], convs);
  EXPECT_EQ(per_kind.count("reshape"), 0u);  // a view: no task, no row
  EXPECT_GT(rep["ranks"][0]["processor_groups"].size(), 100u);

  // Above the physical bound: all MACs at the GPU's best tensor rate.
  int64_t macs = 0;
  for (const auto& l : g.layers) macs += l.macs();
  EXPECT_GE(matmul_flops, 2.0 * static_cast<double>(macs));  // edge tiles are counted whole
  double peak_tflops = 0;
  for (const char* t : {"fp16", "bf16", "fp32"})
    peak_tflops = std::max(peak_tflops, std::stod(rep["config"]["gpu.tensor_tflops." + std::string(t)].get<std::string>()));
  const double bound_us = 2.0 * static_cast<double>(macs) / (peak_tflops * 1e12) * 1e6;
  const double total_us = rep["totals"]["time_us"];
  EXPECT_GT(total_us, bound_us + rep["totals"]["launch_us"].get<double>());
  EXPECT_LT(total_us, 1e5);  // and not absurd: under 100 ms

  // CSV rows carry the IR op kind; the trace exists.
  const std::string csv = read_text(d + "/r.csv");
  EXPECT_NE(csv.find("critical,ir_op\n"), std::string::npos);
  EXPECT_NE(csv.find(",conv2d\n"), std::string::npos);
  EXPECT_FALSE(read_text(d + "/r.trace").empty());
}

TEST(GpuWorkload, TheSameWorkloadRunsOnEveryGpuConfiguration) {
  std::map<std::string, double> t;
  for (const char* gpu : {"gpu_a100", "gpu_mi300x"}) {
    const std::string d = scratch_dir(std::string("gpu_workload_") + gpu);
    const auto r = run_sim("--ir '" + resnet50() + "' " + hw(gpu) + " -q --report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << gpu << "\n" << r.output;
    t[gpu] = json::parse(read_text(d + "/r.json"))["totals"]["time_us"];
    EXPECT_GT(t[gpu], 0) << gpu;
  }
}

TEST(GpuWorkload, AWorkloadTooBigForTheGpusSharedMemoryIsAnInputError) {
  // The Matmuls' default tile needs 144 KiB of shared memory.
  const auto r = run_sim("--ir '" + resnet50() + "' " + hw("gpu_h100") + " --set gpu.smem_per_block_kib=64");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("SramBytes"), std::string::npos) << r.output;
}
