// Energy in the reports (docs/energy.md): an NPU run's parts add up to its total and follow
// the per-event costs and the static power; a GPU run stays between idle and TDP power; sim llm
// reports tokens per joule from the same passes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/test_util.h"

namespace {

using npusim::test::read_text;
using npusim::test::run_sim;
using npusim::test::scratch_dir;
using json = nlohmann::json;

TEST(Energy, NpuPartsFollowTheCostsAndAddUp) {
  const std::string d = scratch_dir("energy_npu");
  ASSERT_EQ(run_sim("zoo resnet18 --batch 2 -o '" + d + "/mm.json'").exit_code, 0);  // int8
  const auto r = run_sim("--ir '" + d + "/mm.json' --hw npu -q --report '" + d + "/r.json' --set energy.pj_per_mac_int8=0.5 "
                         "--set energy.static_w=2 --set energy.pj_per_dram_byte=10 --set energy.pj_per_dma_byte=3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json t = json::parse(read_text(d + "/r.json"))["totals"];
  const double macs = t["macs"].get<double>(), us = t["time_us"].get<double>() + t["host_cycles"].get<double>() / 1000.0;
  EXPECT_NEAR(t["energy_pe_array_uj"].get<double>(), macs * 0.5e-6, 1e-9 * macs);
  EXPECT_NEAR(t["energy_dram_uj"].get<double>(), t["dram_bytes"].get<double>() * 10e-6, 1e-6);
  EXPECT_NEAR(t["energy_static_uj"].get<double>(), 2 * us, 1e-3 * us);  // W x us = uJ (npu.yaml: 1000 MHz)
  EXPECT_NEAR(t["energy_dma_uj"].get<double>(), t["dram_bytes"].get<double>() * 3e-6, 1e-6);  // the DMA moves every DRAM byte
  EXPECT_EQ(t["energy_noc_uj"].get<double>(), 0);  // one core: no NoC
  double parts = 0;
  for (const char* k : {"energy_pe_array_uj", "energy_vector_uj", "energy_sram_uj", "energy_dram_uj", "energy_dma_uj", "energy_noc_uj", "energy_static_uj"})
    parts += t[k].get<double>();
  EXPECT_NEAR(t["energy_uj"].get<double>(), parts, 1e-9 * parts);
  EXPECT_NEAR(t["average_power_w"].get<double>(), t["energy_uj"].get<double>() / us, 1e-3);
  EXPECT_NEAR(t["inferences_per_j"].get<double>(), 2 / (t["energy_uj"].get<double>() * 1e-6), 1e-6);  // 2 images
}

TEST(Energy, GpuPowerStaysBetweenIdleAndTdp) {
  const std::string d = scratch_dir("energy_gpu");
  ASSERT_EQ(run_sim("zoo bert-base --batch 8 --seq 128 --layers 2 -o '" + d + "/b.json'").exit_code, 0);
  const auto r = run_sim("--ir '" + d + "/b.json' --hw gpu_h100 -q --report '" + d + "/r.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(read_text(d + "/r.json"));
  const double w = j["totals"]["average_power_w"].get<double>();
  EXPECT_GT(w, 70.0);   // configs/gpu_h100.yaml: idle 70 W
  EXPECT_LE(w, 700.0);  // TDP 700 W
  double sum = 0;
  for (const auto& k : j["layers"]) {
    EXPECT_GE(k["power_w"].get<double>(), 70.0 - 1e-9);
    EXPECT_LE(k["power_w"].get<double>(), 700.0 + 1e-9);
    sum += k["energy_uj"].get<double>();
  }
  EXPECT_GE(j["totals"]["energy_uj"].get<double>(), sum * (1 - 1e-6));  // the kernels' and the gaps' idle
}

// One graph, the same work on every device: workload MACs equal on the NPU and the GPU; the
// GPU executes fewer (FlashAttention skips the causal mask's blocks).
TEST(Energy, WorkloadMacsAreTheSameOnEveryDevice) {
  const std::string d = scratch_dir("workload_macs");
  ASSERT_EQ(run_sim("zoo gpt2 --seq 64 --layers 2 --logits last -o '" + d + "/g.json'").exit_code, 0);
  json t[2];
  int i = 0;
  for (const char* hw : {"npu", "gpu_h100"}) {
    const auto r = run_sim("--ir '" + d + "/g.json' --hw " + hw + " -q --report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    t[i++] = json::parse(read_text(d + "/r.json"))["totals"];
  }
  EXPECT_EQ(t[0]["workload_macs"], t[1]["workload_macs"]);
  EXPECT_EQ(t[0]["executed_macs"], t[0]["workload_macs"]);
  EXPECT_LT(t[1]["executed_macs"].get<double>(), t[1]["workload_macs"].get<double>());
  // A model on one device and as a tensor- and pipeline-parallel pipeline on a system: one workload.
  ASSERT_EQ(run_sim("zoo llama2-7b --seq 32 --layers 2 -o '" + d + "/l.json'").exit_code, 0);
  ASSERT_EQ(run_sim("zoo llama2-7b --seq 32 --layers 2 --tp 2 --pp 2 -o '" + d + "/p.json'").exit_code, 0);
  json u[3];
  i = 0;
  for (const auto& [ir, hw] : {std::pair<std::string, std::string>{"l", "npu"}, {"l", "gpu_h100"}, {"p", "system_8x_h100"}}) {
    const auto r = run_sim("--ir '" + d + "/" + ir + ".json' --hw " + hw + " -q --report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    u[i++] = json::parse(read_text(d + "/r.json"))["totals"];
  }
  EXPECT_GT(u[0]["workload_macs"].get<double>(), 0);
  EXPECT_EQ(u[0]["workload_macs"], u[1]["workload_macs"]);
  EXPECT_EQ(u[0]["workload_macs"], u[2]["workload_macs"]);
}

// A multi-core chip's NoC: every byte each link carried (a hop) at energy.pj_per_noc_byte_hop;
// the layers' shares add up to it.
TEST(Energy, NocEnergyIsBytesTimesHops) {
  const std::string d = scratch_dir("energy_noc");
  ASSERT_EQ(run_sim("zoo resnet18 --batch 2 -o '" + d + "/r18.json'").exit_code, 0);
  const auto r = run_sim("--ir '" + d + "/r18.json' --hw npu_4core_mesh -q --report '" + d + "/r.json' --set energy.pj_per_noc_byte_hop=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(read_text(d + "/r.json"));
  double link_bytes = 0, layers = 0;
  for (const auto& l : j["multicore"]["noc_links"]) link_bytes += l["bytes"].get<double>();
  ASSERT_GT(link_bytes, 0);
  EXPECT_NEAR(j["totals"]["energy_noc_uj"].get<double>(), link_bytes * 2e-6, 1e-9 * link_bytes);
  for (const auto& l : j["layers"]) layers += l["energy_uj"].get<double>();
  EXPECT_NEAR(layers, j["totals"]["energy_uj"].get<double>(), 1e-6 * layers);
}

// A system: the pipeline's devices, between their idle power and their TDP, and its links.
TEST(Energy, SystemRunsCountThePipelinesDevices) {
  const std::string d = scratch_dir("energy_system");
  ASSERT_EQ(run_sim("zoo llama2-7b --tp 2 --layers 2 --batch 2 --seq 64 -o '" + d + "/p.json'").exit_code, 0);
  const auto r = run_sim("--ir '" + d + "/p.json' --hw system_8x_h100 -q --report '" + d + "/r.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json t = json::parse(read_text(d + "/r.json"))["totals"];
  const double w = t["average_power_w"].get<double>();
  EXPECT_GT(w, 2 * 70.0);  // two H100s: above their idle power, at most their TDP
  EXPECT_LE(w, 2 * 700.0);
  EXPECT_NEAR(t["energy_uj"].get<double>(), w * t["makespan_us"].get<double>(), 1e-6 * t["energy_uj"].get<double>());
  // The links: every byte they carried at configs/system_8x_h100.yaml's 2.6 pJ a bit, part of the total.
  EXPECT_NEAR(t["link_energy_uj"].get<double>(), t["link_bytes"].get<double>() * 8 * 2.6e-6, 1e-6 * t["link_energy_uj"].get<double>());  // bytes rounded in the report
  EXPECT_GT(t["link_energy_uj"].get<double>(), 0);
  const auto off = run_sim("--ir '" + d + "/p.json' --hw system_8x_h100 -q --report '" + d + "/off.json' --set system.link.pj_per_bit=0");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  const json o = json::parse(read_text(d + "/off.json"))["totals"];
  EXPECT_TRUE(o["link_energy_uj"].is_null());
  EXPECT_NEAR(t["energy_uj"].get<double>() - o["energy_uj"].get<double>(), t["link_energy_uj"].get<double>(), 1e-6 * t["energy_uj"].get<double>());
  // The MI300X platform's Infinity Fabric links at its 6.5 pJ a bit (their head-dim-128 attention
  // runs as Composable Kernel's tiles, which fit the 64 KB of LDS).
  const auto m = run_sim("--ir '" + d + "/p.json' --hw system_8x_mi300x -q --report '" + d + "/m.json'");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const json mt = json::parse(read_text(d + "/m.json"))["totals"];
  EXPECT_GT(mt["link_energy_uj"].get<double>(), 0);
  EXPECT_NEAR(mt["link_energy_uj"].get<double>(), mt["link_bytes"].get<double>() * 8 * 6.5e-6, 1e-6 * mt["link_energy_uj"].get<double>());
}

TEST(Energy, ServingReportsTokensPerJoule) {
  const std::string d = scratch_dir("energy_llm");
  const auto r = run_sim("llm gpt2 --layers 2 --hw gpu_h100 --batch 4 --input 64 --output 8 --buckets 2 -q --report '" + d + "/s.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(read_text(d + "/s.json"));
  const json& e = j["energy"];
  ASSERT_TRUE(e["modelled"].get<bool>());
  EXPECT_NEAR(e["output_tokens_per_j"].get<double>(), 4 * 8 / e["energy_j"].get<double>(), 1e-9);
  EXPECT_NEAR(e["average_power_w"].get<double>(), e["energy_j"].get<double>() / (j["totals"]["time_us"].get<double>() * 1e-6), 1e-6);
  EXPECT_GT(e["average_power_w"].get<double>(), 70.0);
  EXPECT_LE(e["average_power_w"].get<double>(), 700.0);
  // Continuous batching: idle power between arrivals counts too; a slow trickle of requests
  // spends more energy per token than the same requests at once.
  const auto slow = run_sim("llm gpt2 --layers 2 --hw gpu_h100 --arrival-rate 2 --requests 6 --input 64 --output 8 -q --report '" + d + "/c.json'");
  ASSERT_EQ(slow.exit_code, 0) << slow.output;
  const json c = json::parse(read_text(d + "/c.json"));
  EXPECT_LT(c["energy"]["output_tokens_per_j"].get<double>(), e["output_tokens_per_j"].get<double>());
  // An NPU without energy figures: not modelled.
  const auto z = run_sim("llm gpt2 --hw gemini_zebu --batch 1 --input 16 --output 2 --buckets 2 -q --report '" + d + "/z.json'");
  ASSERT_EQ(z.exit_code, 0) << z.output;
  EXPECT_FALSE(json::parse(read_text(d + "/z.json"))["energy"]["modelled"].get<bool>());
}

}  // namespace
