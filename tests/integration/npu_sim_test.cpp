// Whole NPU simulations through the `sim` binary: real Frontend IR files, reports, bounds.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "tests/integration/test_util.h"

using namespace npusim::test;

namespace {

const char* kRealFiles[] = {
    "int8_resnet34.sim_quantized_b1.json", "int8_resnet34.sim_quantized_b4.json",
    "int8_resnet34.sim_quantized_b16.json", "int8_resnet34.sim_quantized_b64.json",
    "int8_resnet50.sim_quantized_b1.json", "int8_resnet50.sim_quantized_b4.json",
    "int8_resnet50.sim_quantized_b16.json", "int8_resnet50.sim_quantized_b64.json"};

nlohmann::json simulate(const std::string& ir, const std::string& hw, const std::string& tag,
                        const std::string& extra = "") {
  const std::string dir = scratch_dir(tag);
  const std::string out = dir + "/report.json";
  auto r = run_sim("--ir '" + ir + "' --hw '" + source_dir() + "/" + hw + "' -q --report '" + out + "' " + extra);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(read_text(out));
}

// No layer may beat its physical bounds: MACs / peak rate and DRAM bytes / DRAM bandwidth.
void expect_physical_bounds(const nlohmann::json& rep) {
  const double peak = rep["hardware"]["peak_macs_per_cycle"];
  const double bw = rep["hardware"]["dram_bytes_per_cycle"];
  int64_t total_dram = 0;
  for (const auto& l : rep["layers"]) {
    if (l["device"] != "npu") continue;
    const double cycles = l["cycles"].get<double>();
    const double pe_busy = l["pe_busy_cycles"].get<double>();
    EXPECT_GE(pe_busy + 1e-9, std::floor(l["macs"].get<double>() / peak)) << l["name"];
    total_dram += l["dram_read_bytes"].get<int64_t>() + l["dram_write_bytes"].get<int64_t>();
    EXPECT_GE(cycles, 0) << l["name"];
  }
  EXPECT_GE(rep["totals"]["npu_cycles"].get<double>(), std::floor(total_dram / bw));
  EXPECT_GE(rep["totals"]["npu_cycles"].get<double>(), std::floor(rep["totals"]["macs"].get<double>() / peak));
}

}  // namespace

class RealFrontendIr : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(RealFrontendIr, SimulatesWithinPhysicalBounds) {
  const auto [file, hw] = GetParam();
  const auto rep = simulate(example(std::string("frontend_ir/") + file), hw, "real");
  EXPECT_GT(rep["totals"]["npu_cycles"].get<int64_t>(), 0);
  EXPECT_GE(rep["layers"].size(), 70u);
  expect_physical_bounds(rep);
  // Per-layer cycles of NPU layers add up to the total.
  int64_t sum = 0;
  for (const auto& l : rep["layers"])
    if (l["device"] == "npu") sum += l["cycles"].get<int64_t>();
  EXPECT_EQ(sum, rep["totals"]["npu_cycles"].get<int64_t>());
}

INSTANTIATE_TEST_SUITE_P(AllEight, RealFrontendIr,
                         ::testing::Combine(::testing::ValuesIn(kRealFiles),
                                            ::testing::Values("configs/npu.yaml", "configs/gemini_zebu.yaml")),
                         [](const auto& info) {
                           std::string n = std::string(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Vector, pool and layout ops larger than L2 stream through it in slices (docs/mapping.md): a
// 16 Mi-element relu, ResNet-50 at 1024x1024 (its global average pool) and Llama-2-7B at 8,192
// tokens (the reshape of q_proj) run on npu.yaml within their physical bounds; the relu moves each
// byte once, at the same efficiency as a relu that fits.
TEST(NpuSim, OpsLargerThanL2StreamThroughIt) {
  const std::string d = scratch_dir("npu_stream");
  auto zoo = [&](const std::string& name, const std::string& args) {
    const std::string f = d + "/" + name + ".json";
    EXPECT_EQ(run_sim("zoo " + args + " -o '" + f + "'").exit_code, 0);
    return f;
  };
  const nlohmann::json big = simulate(zoo("relu16m", "op relu shape=16777216"), "configs/npu.yaml", "npu_stream_relu");
  const nlohmann::json small = simulate(zoo("relu1m", "op relu shape=1048576"), "configs/npu.yaml", "npu_stream_relu1m");
  expect_physical_bounds(big);
  EXPECT_EQ(big["totals"]["dram_bytes"].get<int64_t>(), 2 * 2 * 16777216);  // fp16 in and out, once
  EXPECT_GT(big["layers"][0]["row_tiles"].get<int64_t>(), 1);
  const double per_byte_big = big["totals"]["npu_cycles"].get<double>() / big["totals"]["dram_bytes"].get<double>();
  const double per_byte_small = small["totals"]["npu_cycles"].get<double>() / small["totals"]["dram_bytes"].get<double>();
  EXPECT_NEAR(per_byte_big / per_byte_small, 1.0, 0.1);
  expect_physical_bounds(simulate(zoo("r50_1024", "resnet50 --input 1024x1024"), "configs/npu.yaml", "npu_stream_r50"));
  expect_physical_bounds(simulate(zoo("llama8k", "llama2-7b --seq 8192 --layers 1"), "configs/npu.yaml", "npu_stream_llama"));
}

// --max-memory: a mapping that outgrows the budget is refused while it is built, naming the
// option and the budget; 0 is not a budget.
TEST(NpuSim, AMappingBeyondMaxMemoryIsRefused) {
  const std::string d = scratch_dir("npu_max_memory");
  const std::string ir = d + "/r50.json";
  ASSERT_EQ(run_sim("zoo resnet50 --batch 256 -o '" + ir + "'").exit_code, 0);
  auto r = run_sim("--ir '" + ir + "' -q --max-memory 4");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--max-memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("more than 4 MiB"), std::string::npos) << r.output;
  EXPECT_EQ(run_sim("--ir '" + ir + "' -q --max-memory 0").exit_code, 2);
  EXPECT_EQ(run_sim("--ir '" + ir + "' -q --max-memory 64").exit_code, 0);
}

// issue 28: ResNet-50 at batch 2^20 is refused after its first two batch groups, from the
// projection (not after mapping up to the budget), naming the option and the group count.
TEST(NpuSim, AHugeBatchIsRefusedFromItsFirstGroups) {
  const std::string d = scratch_dir("npu_huge_batch");
  // The zoo stops at 65,536 images: write batch 3, then make every shape's batch 2^20 (no
  // channel count of ResNet-50 is 3 in the first place of a shape).
  ASSERT_EQ(run_sim("zoo resnet50 --batch 3 -o '" + d + "/r50_b3.json'").exit_code, 0);
  nlohmann::json ir = nlohmann::json::parse(read_text(d + "/r50_b3.json"));
  std::function<void(nlohmann::json&)> widen = [&](nlohmann::json& o) {
    if (!o.is_structured()) return;
    for (auto it = o.begin(); it != o.end(); ++it) {
      if (o.is_object() && it.key().size() >= 5 && it.key().substr(it.key().size() - 5) == "shape" && it->is_array()) {
        for (auto& shape : *it)
          if (shape.is_array() && !shape.empty() && shape[0] == 3) shape[0] = 1048576;
      } else {
        widen(*it);
      }
    }
  };
  widen(ir);
  std::ofstream(d + "/r50.json") << ir.dump();
  const auto r = run_sim("--ir '" + d + "/r50.json' -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--max-memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("projected after 2 groups"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("more than 8192 MiB"), std::string::npos) << r.output;
}

// issue 27: the units' own statistics reach the report: each unit's busy share of the run is a
// fraction, the PE array is busy at least as long as its MACs need at the peak rate, and the DRAM
// model's bytes are the report's DRAM bytes.
TEST(NpuSim, ReportsEachUnitsBusyShareFromItsModel) {
  for (const char* hw : {"configs/npu.yaml", "configs/gemini_zebu.yaml"}) {
    const nlohmann::json rep = simulate(example("frontend_ir/int8_resnet50.sim_quantized_b4.json"), hw, "npu_units");
    ASSERT_TRUE(rep.contains("units")) << hw;
    std::map<std::string, nlohmann::json> by;
    for (const auto& u : rep["units"]) by[u["unit"].get<std::string>()] = u;
    for (const char* unit : {"pe_array", "vector", "dma", "l2", "dram"}) {
      ASSERT_TRUE(by.count(unit)) << hw << " " << unit;
      const double share = by[unit]["utilization"].get<double>();
      EXPECT_GT(share, 0.0) << hw << " " << unit;
      EXPECT_LE(share, 1.0) << hw << " " << unit;
    }
    const auto& t = rep["totals"];
    EXPECT_GE(by["pe_array"]["busy_cycles"].get<double>(),
              t["pe_utilization"].get<double>() * t["npu_cycles"].get<double>()) << hw;
    EXPECT_EQ(by["dram"]["bytes"].get<int64_t>(), t["dram_bytes"].get<int64_t>()) << hw;
    EXPECT_GT(by["l2"]["bytes"].get<int64_t>(), 0) << hw;
  }
}

TEST(NpuSim, TotalsGrowWithBatch) {
  for (const char* net : {"resnet34", "resnet50"}) {
    int64_t prev = 0;
    for (int b : {1, 4, 16, 64}) {
      const auto rep = simulate(example(std::string("frontend_ir/int8_") + net + ".sim_quantized_b" +
                                        std::to_string(b) + ".json"),
                                "configs/gemini_zebu.yaml", "batch");
      const int64_t t = rep["totals"]["npu_cycles"];
      EXPECT_GT(t, prev) << net << " b" << b;
      prev = t;
    }
  }
}

TEST(NpuSim, ReportsAreByteIdentical) {
  const std::string ir = example("frontend_ir/int8_resnet50.sim_quantized_b4.json");
  std::string outs[2][3];
  for (int i = 0; i < 2; ++i) {
    const std::string d = scratch_dir("det" + std::to_string(i));
    auto r = run_sim("--ir '" + ir + "' --hw '" + source_dir() + "/configs/npu.yaml' -q --report " + d +
                     "/r.json --csv " + d + "/r.csv --trace " + d + "/t.json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    outs[i][0] = read_text(d + "/r.json");
    outs[i][1] = read_text(d + "/r.csv");
    outs[i][2] = read_text(d + "/t.json");
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_FALSE(outs[0][k].empty());
    EXPECT_EQ(outs[0][k], outs[1][k]) << "output " << k;
  }
  // The trace is Chrome trace event format with one track per unit.
  const auto trace = nlohmann::json::parse(outs[0][2]);
  std::set<std::string> tracks;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"]);
  EXPECT_TRUE(tracks.count("npu.pe_array"));
  EXPECT_TRUE(tracks.count("npu.vector"));
  EXPECT_TRUE(tracks.count("npu.dma.ch0"));
}

TEST(NpuSim, PrintsTableWithEveryLayer) {
  auto r = run_sim("--ir '" + example("frontend_ir/int8_resnet50.sim_quantized_b1.json") + "' --hw '" +
                   source_dir() + "/configs/npu.yaml'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Conv_0"), std::string::npos);
  EXPECT_NE(r.output.find("Gemm_121"), std::string::npos);
  EXPECT_NE(r.output.find("total NPU cycles"), std::string::npos);
  EXPECT_NE(r.output.find("host (cpu) layers"), std::string::npos);  // the reshape on device cpu
}

TEST(NpuSim, SetOverridesChangeTheResult) {
  const std::string ir = example("frontend_ir/int8_resnet50.sim_quantized_b1.json");
  const auto base = simulate(ir, "configs/npu.yaml", "set0");
  const auto slow = simulate(ir, "configs/npu.yaml", "set1", "--set memory.dram.bandwidth_gbps=4");
  EXPECT_GT(slow["totals"]["npu_cycles"].get<int64_t>(), base["totals"]["npu_cycles"].get<int64_t>());
  // A narrow L2 port makes PE, VP and DMA contend for it.
  const auto narrow = simulate(ir, "configs/npu.yaml", "set2", "--set npu.l2.bytes_per_cycle=8");
  EXPECT_GT(narrow["totals"]["npu_cycles"].get<int64_t>(), base["totals"]["npu_cycles"].get<int64_t>());
}

TEST(NpuSim, BadInputsExitWithCode2AndNameThePlace) {
  auto r = run_sim("--ir /nonexistent/x.json --hw '" + source_dir() + "/configs/npu.yaml'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent/x.json"), std::string::npos) << r.output;
  r = run_sim("--ir '" + example("frontend_ir/int8_resnet50.sim_quantized_b1.json") + "' --hw '" + source_dir() +
              "/configs/npu.yaml' --set npu.pe_array.rowz=3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("npu.pe_array.rows"), std::string::npos) << r.output;  // did-you-mean
  r = run_sim("--bogus-flag");
  EXPECT_EQ(r.exit_code, 2);
}
