// Hardware description: schema, YAML loading, overrides and every error class.
#include "sim/config/hw_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "sim/ir/error.h"

using namespace npusim;
using namespace npusim::config;

namespace {
std::string write_yaml(const std::string& name, const std::string& text) {
  const std::string p = "/tmp/npusim_cfg_" + name + "_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(p) << text;
  return p;
}
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(HwConfig, EveryCommittedConfigLoads) {
  for (const char* f : {"configs/npu.yaml", "configs/gemini_zebu.yaml"}) {
    const auto c = HwConfig::load(std::string(NPUSIM_SOURCE_DIR) + "/" + f);
    EXPECT_GT(c.get_int("npu.pe_array.rows"), 0) << f;
    EXPECT_GT(c.dram_bytes_per_cycle(), 0) << f;
  }
}

TEST(HwConfig, FileValuesOverrideDefaultsAndSetOverridesFile) {
  const auto p = write_yaml("ok", "clock_mhz: 500\nnpu:\n  pe_array:\n    rows: 16\n");
  auto c = HwConfig::load(p, {"npu.pe_array.rows=8"});
  EXPECT_EQ(c.get_double("clock_mhz"), 500);
  EXPECT_EQ(c.get_int("npu.pe_array.rows"), 8);
  EXPECT_EQ(c.get_int("npu.pe_array.cols"), 64);  // default
  // 32 GB/s at 0.5 GHz = 64 B/cycle.
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_cycle(), 64);
}

TEST(HwConfig, UnknownKeyNamesFileLineAndClosestKey) {
  const auto p = write_yaml("typo", "npu:\n  pe_array:\n    rowz: 16\n");
  const std::string e = error_of([&] { HwConfig::load(p); });
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("npu.pe_array.rowz"), std::string::npos) << e;
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'npu.pe_array.rows'"), std::string::npos) << e;
}

TEST(HwConfig, WrongTypeNegativeAndBadChoiceAreErrors) {
  EXPECT_NE(error_of([&] { HwConfig::load(write_yaml("t1", "clock_mhz: fast\n")); }).find("expected a number"), std::string::npos);
  EXPECT_NE(error_of([&] { HwConfig::load(write_yaml("t2", "npu: {pe_array: {rows: 2.5}}\n")); }).find("expected an integer"), std::string::npos);
  EXPECT_NE(error_of([&] { HwConfig::load(write_yaml("t3", "npu: {pe_array: {rows: -1}}\n")); }).find("negative"), std::string::npos);
  EXPECT_NE(error_of([&] { HwConfig::load(write_yaml("t4", "npu: {pe_array: {dataflow: diagonal}}\n")); }).find("not one of"), std::string::npos);
  EXPECT_NE(error_of([&] { HwConfig::load(write_yaml("t5", "npu: {pe_array: [1, 2]}\n")); }).find("not a list"), std::string::npos);
  EXPECT_NE(error_of([&] { HwConfig::load(write_yaml("t6", "npu: {pe_array: {rows: 0}}\n")); }).find("at least 1"), std::string::npos);
}

TEST(HwConfig, NpuAndGpuAreSeparateRoots) {
  const std::string e = error_of([&] { HwConfig::defaults({"gpu.num_sms=10"}); });
  EXPECT_NE(e.find("--set"), std::string::npos) << e;
  EXPECT_NE(e.find("gpu.num_sms is a GPU key, but this config's device is npu"), std::string::npos) << e;
  const std::string f = error_of([&] { HwConfig::load(write_yaml("g1", "device: gpu\nnpu:\n  l2: {size_kib: 4}\n")); });
  EXPECT_NE(f.find("line 3"), std::string::npos) << f;
  EXPECT_NE(f.find("NPU key"), std::string::npos) << f;
  const auto g = HwConfig::defaults({"device=gpu", "gpu.num_sms=10"});
  for (const auto& [k, v] : g.resolved()) EXPECT_TRUE(k.rfind("gpu.", 0) == 0 || k == "name" || k == "clock_mhz" || k == "device") << k;
}

TEST(HwConfig, ZeroRatesAndOutOfRangeValuesAreRefusedNamingKeyValueRangeAndSource) {
  // Each of these was once accepted and gave nonsense (1/0 rates, overflowing cycle counts).
  for (const char* set : {"npu.pe_array.macs_per_pe_cycle.int8=0", "npu.vector.stages.pre_cal.vectors_per_cycle=0",
                          "npu.vector.stages.lut_group.vectors_per_cycle=0", "npu.l2.bytes_per_cycle=0",
                          "npu.pe_array.channel_align=0", "memory.dram.bandwidth_gbps=1e-300",
                          "memory.dram.latency_ns=1e300", "clock_mhz=1e308", "npu.pe_array.rows=1000000000000",
                          "npu.l2.weight_share=1", "npu.dma.setup_cycles=4000000000000"}) {
    const std::string e = error_of([&] { HwConfig::defaults({set}); });
    const std::string key = std::string(set).substr(0, std::string(set).find('='));
    EXPECT_NE(e.find("--set"), std::string::npos) << set << ": " << e;
    EXPECT_NE(e.find(key), std::string::npos) << set << ": " << e;
    EXPECT_NE(e.find("allowed: ["), std::string::npos) << set << ": " << e;
  }
  // In a file: the file and its line.
  const std::string e = error_of([&] { HwConfig::load(write_yaml("t7", "name: x\nnpu:\n  l2: {bytes_per_cycle: 0}\n")); });
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("npu.l2.bytes_per_cycle = 0: must be greater than 0"), std::string::npos) << e;
  // Every number of every committed config is within its range (loads), and ranges are documented.
  for (const auto& p : schema()) {
    if (p.type == ParamType::Int || p.type == ParamType::Double) {
      EXPECT_NE(schema_markdown().find(p.range.text()), std::string::npos);
    }
  }
}

TEST(HwConfig, MalformedYamlAndMissingFileAreErrors) {
  const std::string e = error_of([&] { HwConfig::load(write_yaml("bad", "npu:\n  pe_array: {rows: 3\n")); });
  EXPECT_NE(e.find("malformed YAML"), std::string::npos) << e;
  EXPECT_NE(e.find("line"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { HwConfig::load("/nonexistent.yaml"); }).find("cannot open"), std::string::npos);
  EXPECT_NE(error_of([&] { HwConfig::load(write_yaml("empty", "")); }).find("empty"), std::string::npos);
}

TEST(HwConfig, SetNeedsKnownPathAndEquals) {
  EXPECT_NE(error_of([&] { HwConfig::defaults({"npu.pe_array.rows"}); }).find("path.to.key=value"), std::string::npos);
  EXPECT_NE(error_of([&] { HwConfig::defaults({"npu.nothing=1"}); }).find("unknown key"), std::string::npos);
}

TEST(HwConfig, ResolvedListsEverySchemaKeyOnceAndMarkdownDocumentsThem) {
  const auto c = HwConfig::defaults();
  size_t npu_keys = 0, multicore_keys = 0;
  for (const auto& p : schema()) npu_keys += param_applies(p.path, "npu"), multicore_keys += is_multicore_key(p.path);
  EXPECT_EQ(multicore_keys, 9u);  // npu.cores, npu.noc.* (5), mapping.multicore, mapping.multicore_layers,
                                  // mapping.pipeline_images
  // One core lists no multi-core key (its reports are those of a chip without cores); more do.
  EXPECT_EQ(c.resolved().size(), npu_keys - multicore_keys);
  EXPECT_EQ(HwConfig::defaults({"npu.cores=2"}).resolved().size(), npu_keys);
  for (const auto& [k, v] : c.resolved()) EXPECT_NE(k.rfind("gpu.", 0), 0u) << k;
  const std::string md = schema_markdown();
  for (const auto& p : schema()) EXPECT_NE(md.find("`" + p.path + "`"), std::string::npos) << p.path;
}
