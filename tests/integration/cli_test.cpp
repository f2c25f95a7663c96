// The `sim` command's subcommands: zoo, config, and usage errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/integration/test_util.h"

using namespace npusim::test;

TEST(Cli, ConfigDocIsGeneratedFromTheSchema) {
  auto r = run_sim("config --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string doc = read_text(source_dir() + "/docs/config.md");
  EXPECT_NE(doc.find(r.output), std::string::npos) << "docs/config.md is stale: regenerate with `build/sim config --markdown`";
}

TEST(Cli, ServingOptionsDocIsGeneratedFromTheOptionTable) {
  const auto r = run_sim("config --serving-options");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| `tp` | `--tp` | `serving.tp` | int | `1` | 1 .. 4096 |"), std::string::npos) << r.output;
  const std::string doc = read_text(source_dir() + "/docs/llm.md");
  EXPECT_NE(doc.find(r.output), std::string::npos) << "docs/llm.md is stale: paste `build/sim config --serving-options` under Options";
}

TEST(Cli, ReportFieldsDocIsGeneratedFromTheFieldTable) {
  auto r = run_sim("config --report-fields");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| `l2_bytes` |"), std::string::npos) << r.output;
  const std::string doc = read_text(source_dir() + "/docs/reports.md");
  EXPECT_NE(doc.find(r.output), std::string::npos) << "docs/reports.md is stale: regenerate with `build/sim config --report-fields`";
}

TEST(Cli, ConfigListsResolvedValuesWithOverrides) {
  auto r = run_sim("config --hw '" + source_dir() + "/configs/gemini_zebu.yaml' --set npu.pe_array.rows=32");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("npu.pe_array.rows = 32"), std::string::npos);
  EXPECT_NE(r.output.find("memory.dram.bandwidth_gbps = 17.18"), std::string::npos);
}

TEST(Cli, ZooWritesAnIrThatSimulates) {
  const std::string d = scratch_dir("zoo");
  for (const char* model : {"resnet18", "vgg16", "mobilenetv2"}) {
    const std::string ir = d + "/" + model + ".json";
    auto r = run_sim(std::string("zoo ") + model + " --batch 2 --input 112x112 -o '" + ir + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = run_sim("--ir '" + ir + "' --hw '" + source_dir() + "/configs/npu.yaml' -q --report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << model << ": " << r.output;
    const auto rep = nlohmann::json::parse(read_text(d + "/r.json"));
    EXPECT_GT(rep["totals"]["npu_cycles"].get<int64_t>(), 0) << model;
  }
  const std::string fp16 = d + "/r50_fp16.json";
  ASSERT_EQ(run_sim("zoo resnet50 --dtype fp16 -o '" + fp16 + "'").exit_code, 0);
  const std::string i8 = d + "/r50_int8.json";
  ASSERT_EQ(run_sim("zoo resnet50 -o '" + i8 + "'").exit_code, 0);
  // fp16 runs at half the MAC rate of int8 on the default NPU: it must take longer.
  ASSERT_EQ(run_sim("--ir '" + fp16 + "' --hw '" + source_dir() + "/configs/npu.yaml' -q --report " + d + "/f.json").exit_code, 0);
  ASSERT_EQ(run_sim("--ir '" + i8 + "' --hw '" + source_dir() + "/configs/npu.yaml' -q --report " + d + "/i.json").exit_code, 0);
  const auto f = nlohmann::json::parse(read_text(d + "/f.json")), i = nlohmann::json::parse(read_text(d + "/i.json"));
  EXPECT_GT(f["totals"]["npu_cycles"].get<int64_t>(), i["totals"]["npu_cycles"].get<int64_t>());
}

TEST(Cli, ZooRejectsBadOptions) {
  auto r = run_sim("zoo resnet5 --batch 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("resnet50"), std::string::npos) << r.output;  // lists valid names
  EXPECT_EQ(run_sim("zoo resnet50 --batch 0").exit_code, 2);
  EXPECT_EQ(run_sim("zoo resnet50 --input 22").exit_code, 2);
  // --shard: a transformer's rank, dividing its heads, FFN and vocabulary, not with --tp/--pp.
  for (const char* args : {"llama3-8b --shard 3", "resnet50 --shard 2", "llama2-7b --tp 2 --shard 2", "op matmul m=1 n=1 k=1 --shard 2"}) {
    r = run_sim(std::string("zoo ") + args + " -o /dev/null");
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.output.find("shard"), std::string::npos) << args << ": " << r.output;
  }
}

TEST(Cli, NoInputIsAUsageError) { EXPECT_EQ(run_sim("").exit_code, 2); }
