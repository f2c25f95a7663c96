// Multi-core NPU chips through the `sim` binary (docs/multicore.md): real workloads on several
// cores within their physical bounds, reports and traces per core, systems and serving on such
// chips, and bad multi-core keys refused by name.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "tests/integration/test_util.h"

using namespace npusim::test;
using nlohmann::json;

namespace {

json simulate(const std::string& args, const std::string& tag, const std::string& trace = "") {
  const std::string out = scratch_dir(tag) + "/report.json";
  const auto r = run_sim(args + " -q --report '" + out + "'" + (trace.empty() ? "" : " --trace '" + trace + "'"));
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  json j = json::parse(read_text(out), nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

std::string real_resnet50_b1() { return "--ir '" + example("frontend_ir/int8_resnet50.sim_quantized_b1.json") + "'"; }

}  // namespace

TEST(Multicore, RealResNet50OnFourCoresIsFasterAndWithinItsPhysicalBounds) {
  const json one = simulate(real_resnet50_b1() + " --hw gemini_zebu", "mc_one");
  for (const char* topo : {"crossbar", "mesh"}) {
    const std::string trace = scratch_dir(std::string("mc_trace_") + topo) + "/trace.json";
    const json four = simulate(real_resnet50_b1() + " --hw gemini_zebu --set npu.cores=4 --set npu.noc.topology=" +
                                   topo,
                               std::string("mc_four_") + topo, trace);
    const double cycles = four["totals"]["npu_cycles"].get<double>();
    EXPECT_LT(cycles, one["totals"]["npu_cycles"].get<double>()) << topo;
    // The chip's peak is four cores'; no run beats it or the DRAM's bandwidth.
    EXPECT_DOUBLE_EQ(four["hardware"]["peak_macs_per_cycle"].get<double>(),
                     4 * one["hardware"]["peak_macs_per_cycle"].get<double>());
    EXPECT_GE(cycles, std::floor(four["totals"]["macs"].get<double>() / four["hardware"]["peak_macs_per_cycle"].get<double>()));
    EXPECT_GE(cycles, std::floor(four["totals"]["dram_bytes"].get<double>() / four["hardware"]["dram_bytes_per_cycle"].get<double>()));
    int64_t sum = 0;
    for (const auto& l : four["layers"])
      if (l["device"] == "npu") sum += l["cycles"].get<int64_t>();
    EXPECT_EQ(sum, four["totals"]["npu_cycles"].get<int64_t>());
    // Every core worked; every NPU layer says how it was split; the NoC carried bytes.
    const json& mc = four["multicore"];
    ASSERT_EQ(mc["per_core"].size(), 4u) << topo;
    for (const auto& c : mc["per_core"]) EXPECT_GT(c["pe_busy_cycles"].get<int64_t>(), 0);
    int split_layers = 0;
    for (const auto& l : mc["layers"]) split_layers += l["cores"].get<int>() > 1;
    EXPECT_GT(split_layers, 40) << topo;
    int64_t noc_bytes = 0;
    for (const auto& l : mc["noc_links"]) noc_bytes += l["bytes"].get<int64_t>();
    EXPECT_GT(noc_bytes, four["totals"]["dram_bytes"].get<int64_t>()) << "every DRAM byte crosses two NoC links";
    EXPECT_EQ(mc["dram_channel_utilization"].size(), std::stoul(four["hardware"]["config"]["memory.dram.channels"].get<std::string>()));
    // The trace has a row per core's units.
    const std::string t = read_text(trace);
    EXPECT_NE(t.find("npu.core3.pe_array"), std::string::npos);
    EXPECT_NE(t.find("npu.core0.dma.ch0"), std::string::npos);
  }
}

TEST(Multicore, AOneCoreReportListsNoMultiCoreKeyAndNoMulticoreSection) {
  const json one = simulate(real_resnet50_b1() + " --hw npu", "mc_plain");
  EXPECT_FALSE(one.contains("multicore"));
  EXPECT_FALSE(one["hardware"]["config"].contains("npu.cores"));
  EXPECT_FALSE(one["hardware"]["config"].contains("npu.noc.topology"));
  // The same chip with the key written out at 1 reports the same bytes.
  const json same = simulate(real_resnet50_b1() + " --hw npu --set npu.cores=1 --set npu.noc.link_gbps=1",
                             "mc_plain_set");
  EXPECT_EQ(one.dump(), same.dump());
  const json two = simulate(real_resnet50_b1() + " --hw npu --set npu.cores=2", "mc_two");
  EXPECT_EQ(two["hardware"]["config"]["npu.cores"], "2");
}

TEST(Multicore, SlowerNocLinksNeverMakeAChipFaster) {
  const std::string base = real_resnet50_b1() + " --hw npu --set npu.cores=4 --set npu.noc.topology=mesh";
  double prev = 0;
  for (const char* gbps : {"512", "32", "4"}) {
    const json r = simulate(base + " --set npu.noc.link_gbps=" + gbps, std::string("mc_noc_") + gbps);
    const double cycles = r["totals"]["npu_cycles"].get<double>();
    EXPECT_GE(cycles, prev) << gbps << " GB/s";
    prev = cycles;
    if (std::string(gbps) == "4") EXPECT_GT(r["multicore"]["noc_wait_cycles"].get<int64_t>(), 0);
  }
}

TEST(Multicore, SystemsAndServingRunOnMultiCoreChips) {
  const auto sys = run_sim("--ir '" + source_dir() + "/examples/pipelines/tp2_mlp.json' --hw system_8x_rngd_8pe -q");
  EXPECT_EQ(sys.exit_code, 0) << sys.output;
  const auto llm = run_sim("llm gpt2 --hw rngd_8pe --batch 4 --input 64 --output 4 --buckets 2");
  EXPECT_EQ(llm.exit_code, 0) << llm.output;
  EXPECT_NE(llm.output.find("TTFT"), std::string::npos) << llm.output;
}

TEST(Multicore, BadMultiCoreKeysAreRefusedByName) {
  struct Bad {
    const char* set;
    const char* names;
  };
  for (const Bad& b : {Bad{"npu.cores=0", "npu.cores"}, Bad{"npu.cores=-2", "npu.cores"}, Bad{"npu.cores=1.5", "npu.cores"},
                       Bad{"npu.noc.topology=torus", "npu.noc.topology"}, Bad{"npu.noc.link_gbps=0", "npu.noc.link_gbps"},
                       Bad{"npu.noc.hop_latency_ns=-1", "npu.noc.hop_latency_ns"},
                       Bad{"npu.noc.injection_ports=0", "npu.noc.injection_ports"},
                       Bad{"mapping.multicore=diagonal", "mapping.multicore"}}) {
    const auto r = run_sim(real_resnet50_b1() + " --hw npu --set npu.cores=4 --set " + b.set + " -q");
    EXPECT_EQ(r.exit_code, 2) << b.set << "\n" << r.output;
    EXPECT_NE(r.output.find(b.names), std::string::npos) << b.set << "\n" << r.output;
  }
  // A mesh row wider than the chip's cores.
  const auto r = run_sim(real_resnet50_b1() + " --hw npu --set npu.cores=4 --set npu.noc.mesh_cols=8 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("npu.noc.mesh_cols"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("npu.cores"), std::string::npos) << r.output;
}

TEST(Multicore, EveryShippedMultiCoreChipRunsWithinItsBounds) {
  for (const char* hw : {"npu_4core_mesh", "rngd_8pe", "tpu_v4", "onnxim_ws_128x128_c4", "onnxim_ws_8x8_c4"}) {
    const json r = simulate(real_resnet50_b1() + " --hw " + hw, std::string("mc_chip_") + hw);
    const double cycles = r["totals"]["npu_cycles"].get<double>();
    EXPECT_GE(cycles, std::floor(r["totals"]["macs"].get<double>() / r["hardware"]["peak_macs_per_cycle"].get<double>())) << hw;
    EXPECT_GE(cycles, std::floor(r["totals"]["dram_bytes"].get<double>() / r["hardware"]["dram_bytes_per_cycle"].get<double>())) << hw;
    EXPECT_GT(r["multicore"]["cores"].get<int>(), 1) << hw;
  }
}

namespace {
// examples/pipelines/pp4_transformer.json (4 stages) with its device slots replaced.
std::string pp4_with_slots(const std::string& tag, const json& devices) {
  const std::string dir = scratch_dir(tag);
  json p = json::parse(read_text(source_dir() + "/examples/pipelines/pp4_transformer.json"));
  p["devices"] = devices;
  std::system(("cp '" + source_dir() + "/examples/pipelines/pp4_transformer.safetensors' '" + dir + "/'").c_str());
  std::ofstream(dir + "/pp4_transformer.json") << p.dump();
  return dir + "/pp4_transformer.json";
}
}  // namespace

TEST(Multicore, PipelineSlotsOfOneChipRunOnItsCores) {
  // Four stages on the halves of two 8-PE chips: two system devices busy, not four, each stage
  // on 4 cores; the pipeline's makespan is the same order as on four whole chips.
  const std::string halves = pp4_with_slots("mc_slots", {{"0", "npu:0:0-3"}, {"1", "npu:0:4-7"}, {"2", "npu:1:0-3"}, {"3", "npu:1:4-7"}});
  const std::string out = scratch_dir("mc_slots_report") + "/r.json";
  const auto r = run_sim("--ir '" + halves + "' --hw system_8x_rngd_8pe -q --report '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json rep = json::parse(read_text(out));
  std::set<std::string> used;
  for (const auto& t : rep["supertasks"])
    if (t["kind"] == "fx") used.insert(t["device"].get<std::string>());
  EXPECT_EQ(used, (std::set<std::string>{"dev0", "dev1"})) << rep["supertasks"].dump();
  // A slot beyond the chip's cores, or two slots on one core, is refused naming the slot.
  const auto beyond = run_sim("--ir '" + pp4_with_slots("mc_slots_beyond", {{"0", "npu:0:0-3"}, {"1", "npu:0:6-9"},
                                                                            {"2", "npu:1:*"}, {"3", "npu:2:*"}}) +
                              "' --hw system_8x_rngd_8pe -q");
  EXPECT_EQ(beyond.exit_code, 2) << beyond.output;
  EXPECT_NE(beyond.output.find("npu:0:6-9"), std::string::npos) << beyond.output;
  const auto overlap = run_sim("--ir '" + pp4_with_slots("mc_slots_overlap", {{"0", "npu:0:0-3"}, {"1", "npu:0:2-3"},
                                                                              {"2", "npu:1:*"}, {"3", "npu:2:*"}}) +
                               "' --hw system_8x_rngd_8pe -q");
  EXPECT_EQ(overlap.exit_code, 2) << overlap.output;
  EXPECT_NE(overlap.output.find("npu:0:2-3"), std::string::npos) << overlap.output;
}

// --plot: a multi-core chip's pictures gain a row per core; --only timeline draws just those.
TEST(Multicore, PlotDrawsEachCoresTimeline) {
  const std::string d = scratch_dir("mc_plot");
  const auto r = run_sim(real_resnet50_b1() + " --hw npu_4core_mesh -q --report '" + d + "/r.json' --plot '" + d + "/p.png'");
  if (r.exit_code == 2 && r.output.find("matplotlib") != std::string::npos) GTEST_SKIP() << "no python3-matplotlib";
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(read_text(d + "/p.png").size(), 1000u);
  const json rep = json::parse(read_text(d + "/r.json"));
  for (const auto& l : rep["multicore"]["layers"])
    for (const auto& s : l["spans"]) {
      EXPECT_LT(s[0].get<int>(), 4);
      EXPECT_LE(s[1].get<int64_t>(), s[2].get<int64_t>());
    }
  const int rc = std::system(("/usr/bin/python3 '" + source_dir() + "/scripts/plot_run.py' '" + d + "/r.json' --only timeline -o '" + d +
                              "/t.png' > /dev/null 2>&1").c_str());
  EXPECT_EQ(rc, 0);
  EXPECT_GT(read_text(d + "/t.png").size(), 1000u);
}

// RNGD's 8 PEs fused (mapping.multicore=fused on rngd_8pe) are the fused card rngd.yaml, whose
// figures are 8 x each PE's: the same simulated time.
TEST(Multicore, FusedRngdPesAreTheFusedCard) {
  const json fused = simulate(real_resnet50_b1() + " --hw rngd_8pe --set mapping.multicore=fused", "mc_fused");
  const json card = simulate(real_resnet50_b1() + " --hw rngd", "mc_fused_card");
  EXPECT_EQ(fused["totals"]["npu_cycles"], card["totals"]["npu_cycles"]);
  EXPECT_FALSE(fused.contains("multicore"));
  EXPECT_EQ(fused["hardware"]["peak_macs_per_cycle"], card["hardware"]["peak_macs_per_cycle"]);
}

// Two workloads at once on disjoint cores (sim --tenant): each stays on its cores, shares the
// DRAM and NoC (never faster than alone on the same cores), and bad core counts are refused.
TEST(Multicore, TwoWorkloadsRunAtOnceOnDisjointCores) {
  const std::string d = scratch_dir("mc_tenants");
  ASSERT_EQ(run_sim("zoo bert-base --layers 2 -o '" + d + "/bert.json'").exit_code, 0);
  const std::string bert = "'" + d + "/bert.json'";
  const json both = simulate(real_resnet50_b1() + " --tenant " + bert + " --tenant-cores 3,1 --hw npu_4core_mesh", "mc_tenants_both");
  const json& t = both["multicore"]["tenants"];
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0]["first_core"], 0);
  EXPECT_EQ(t[0]["cores"], 3);
  EXPECT_EQ(t[1]["first_core"], 3);
  for (const auto& l : both["multicore"]["layers"]) {
    const bool first = l["name"].get<std::string>().rfind("t0.", 0) == 0;
    for (const auto& s : l["spans"]) EXPECT_EQ(s[0].get<int>() < 3, first) << l["name"];
  }
  // Alone on the same cores: the chip's config with npu.cores = 3 (and 1).
  const json r50 = simulate(real_resnet50_b1() + " --hw npu_4core_mesh --set npu.cores=3", "mc_tenants_r50");
  const json b = simulate("--ir " + bert + " --hw npu_4core_mesh --set npu.cores=1 --set npu.noc.mesh_cols=0", "mc_tenants_bert");
  // Each tenant's program is the one it has alone: the same MACs and DRAM bytes, added up.
  EXPECT_EQ(both["totals"]["dram_bytes"].get<int64_t>(), r50["totals"]["dram_bytes"].get<int64_t>() + b["totals"]["dram_bytes"].get<int64_t>());
  // Neither beats its own cores' peak.
  const double peak_per_core = both["hardware"]["peak_macs_per_cycle"].get<double>() / 4;
  EXPECT_GE(t[0]["end_cycle"].get<double>(), t[0]["macs"].get<double>() / (3 * peak_per_core));
  EXPECT_GE(t[1]["end_cycle"].get<double>(), t[1]["macs"].get<double>() / peak_per_core);
  EXPECT_EQ(both["totals"]["macs"].get<int64_t>(), r50["totals"]["macs"].get<int64_t>() + b["totals"]["macs"].get<int64_t>());
  // Core counts that do not fit, or a one-core chip.
  const auto over = run_sim(real_resnet50_b1() + " --tenant " + bert + " --tenant-cores 3,3 --hw npu_4core_mesh -q");
  EXPECT_EQ(over.exit_code, 2) << over.output;
  EXPECT_NE(over.output.find("--tenant-cores"), std::string::npos) << over.output;
  const auto one = run_sim(real_resnet50_b1() + " --tenant " + bert + " --hw npu -q");
  EXPECT_EQ(one.exit_code, 2) << one.output;
  EXPECT_NE(one.output.find("npu.cores"), std::string::npos) << one.output;
}

// mapping.multicore=pipeline: ResNet-50 b16 streams through 8 stages on rngd_8pe, faster than
// one PE and within the chip's bounds; every core computes.
TEST(Multicore, PipelinedLayersStreamImagesThroughTheCores) {
  const std::string d = scratch_dir("mc_pipeline");
  ASSERT_EQ(run_sim("zoo resnet50 --batch 16 -o '" + d + "/r.json'").exit_code, 0);
  const std::string ir = "--ir '" + d + "/r.json'";
  const json pipe = simulate(ir + " --hw rngd_8pe --set mapping.multicore=pipeline", "mc_pipeline_8");
  const json one = simulate(ir + " --hw rngd_8pe --set npu.cores=1", "mc_pipeline_1");
  const double cycles = pipe["totals"]["npu_cycles"].get<double>();
  EXPECT_LT(cycles, one["totals"]["npu_cycles"].get<double>());
  EXPECT_GE(cycles, std::floor(pipe["totals"]["macs"].get<double>() / pipe["hardware"]["peak_macs_per_cycle"].get<double>()));
  for (const auto& c : pipe["multicore"]["per_core"]) EXPECT_GT(c["pe_busy_cycles"].get<int64_t>() + c["vp_busy_cycles"].get<int64_t>(), 0);
  // Stages overlap in time: the last core starts before the first one ends.
  int64_t first_end = 0, last_start = INT64_MAX;
  for (const auto& l : pipe["multicore"]["layers"])
    for (const auto& s : l["spans"]) {
      if (s[0] == 0) first_end = std::max(first_end, s[2].get<int64_t>());
      if (s[0] == 7) last_start = std::min(last_start, s[1].get<int64_t>());
    }
  EXPECT_LT(last_start, first_end);
}
