// `sim --ir PIPELINE --hw SYSTEM`: the example pipelines run on NPU and GPU systems with
// per-device rows, per-link rows and a critical path; mismatched inputs are exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "tests/integration/test_util.h"

namespace npusim::test {
namespace {

std::string pipeline(const std::string& name) { return source_dir() + "/examples/pipelines/" + name + ".json"; }
std::string system(const std::string& name) { return source_dir() + "/configs/" + name + ".yaml"; }

TEST(SystemCli, ExamplesRunOnNpuAndGpuSystems) {
  for (const char* p : {"tp2_mlp", "pp4_transformer", "ag_rs8_layer"})
    for (const char* s : {"system_8x_gemini", "system_8x_h100", "system_8x_rngd", "system_8x_a100", "system_8x_mi300x"}) {
      const std::string d = scratch_dir(std::string("sys_") + p + "_" + s);
      const auto r = run_sim("--ir '" + pipeline(p) + "' --hw '" + system(s) + "' --report '" + d + "/r.json' --csv '" + d +
                             "/r.csv' --trace '" + d + "/t.json'");
      ASSERT_EQ(r.exit_code, 0) << p << " on " << s << ": " << r.output;
      EXPECT_NE(r.output.find("critical path:"), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("dev0 "), std::string::npos) << r.output;
      EXPECT_NE(r.output.find("links:"), std::string::npos) << r.output;
      const std::string json = read_text(d + "/r.json");
      EXPECT_NE(json.find("\"makespan_us\""), std::string::npos);
      EXPECT_NE(read_text(d + "/t.json").find("\"network\""), std::string::npos);
    }
}

TEST(SystemCli, SameInputsGiveByteIdenticalReports) {
  const std::string d = scratch_dir("sys_det");
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(run_sim("--ir '" + pipeline("pp4_transformer") + "' --hw '" + system("system_8x_gemini") + "' -q --report '" + d +
                      "/r" + std::to_string(i) + ".json'").exit_code, 0);
  EXPECT_EQ(read_text(d + "/r0.json"), read_text(d + "/r1.json"));
}

TEST(SystemCli, PipelineNeedsASystemAndASystemNeedsAPipeline) {
  auto r = run_sim("--ir '" + pipeline("tp2_mlp") + "' --hw '" + source_dir() + "/configs/npu.yaml'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a pipeline runs on a system"), std::string::npos) << r.output;
  r = run_sim("--ir '" + example("frontend_ir/int8_resnet50.sim_quantized_b1.json") + "' --hw '" + system("system_8x_gemini") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("a system config runs multi-device pipelines"), std::string::npos) << r.output;
  // More accelerator slots than devices.
  r = run_sim("--ir '" + pipeline("ag_rs8_layer") + "' --hw '" + system("system_2x_npu") + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the system has 2"), std::string::npos) << r.output;
}

// --set on a system: system.* keys as if the file held them, device keys on every device that has
// them; each moves the makespan the way the hardware would; bad ones name --set and the key.
TEST(SystemCli, SetOverridesSystemKeysAndDeviceKeys) {
  const std::string d = scratch_dir("sys_set");
  auto makespan = [&](const std::string& set) {
    const auto r = run_sim("--ir '" + pipeline("tp2_mlp") + "' --hw '" + system("system_8x_h100") + "' -q --report '" + d +
                           "/r.json'" + (set.empty() ? "" : " --set " + set));
    EXPECT_EQ(r.exit_code, 0) << set << ": " << r.output;
    return nlohmann::json::parse(read_text(d + "/r.json"))["totals"]["makespan_us"].get<double>();
  };
  const double base = makespan("");
  EXPECT_GT(makespan("system.link.bandwidth_gbps=50"), base);   // the all-reduce on slower links
  EXPECT_GT(makespan("gpu.hbm.bandwidth_gbps=1"), base);        // the GPUs' compute
  EXPECT_DOUBLE_EQ(makespan("system.link.bandwidth_gbps=450"), base);  // the file's own value
  for (const auto& [set, says] : std::vector<std::pair<std::string, std::string>>{
           {"system.link.bandwdth=3", "--set: system.link.bandwdth: not a system key"},
           {"system.link.bandwidth_gbps=-1", "--set: system.link.bandwidth_gbps: system.link.bandwidth_gbps = -1"},
           {"system.link.topology=mesh", "--set: system.link.topology: 'mesh' is not one of"},
           {"npu.pe_array.rows=8", "--set: npu.pe_array.rows: applies to none of the system's devices"},
           {"gpu.hbm.bandwidth_gbps=0", "--set: gpu.hbm.bandwidth_gbps"},
           {"gpu.hbm.bandwdth=1", "is neither a system key nor a device key"}}) {
    const auto r = run_sim("--ir '" + pipeline("tp2_mlp") + "' --hw '" + system("system_8x_h100") + "' -q --set " + set);
    EXPECT_EQ(r.exit_code, 2) << set << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << set << ": " << r.output;
  }
  // sim config shows a system as its points see it: the system keys, then each device config.
  const auto cfg = run_sim("config --hw '" + system("system_8x_h100") + "' --set system.link.bandwidth_gbps=900 --set "
                           "gpu.hbm.bandwidth_gbps=4800");
  ASSERT_EQ(cfg.exit_code, 0) << cfg.output;
  EXPECT_NE(cfg.output.find("system.link.bandwidth_gbps = 900\n"), std::string::npos) << cfg.output;
  EXPECT_NE(cfg.output.find("# gpu_h100.yaml: dev0 ... dev7 (8 devices)\n"), std::string::npos) << cfg.output;
  EXPECT_NE(cfg.output.find("gpu.hbm.bandwidth_gbps = 4800\n"), std::string::npos) << cfg.output;
  // sim collective takes them too: half the link bandwidth, a slower large all_reduce.
  const auto full = run_sim("collective all_reduce --hw '" + system("system_8x_a100") + "' --sizes 1073741824");
  const auto half = run_sim("collective all_reduce --hw '" + system("system_8x_a100") + "' --sizes 1073741824 --set "
                            "system.link.bandwidth_gbps=150");
  ASSERT_EQ(half.exit_code, 0) << half.output;
  EXPECT_NE(full.output, half.output);
}

}  // namespace
// `sim collective`: every shipped system answers an all_reduce sweep; the plan the tuner picks
// changes with size as NCCL's does; bad requests exit 2 naming the option or the file and key.
TEST(CollectiveCli, ShippedSystemsPrintTimeBandwidthAndPlan) {
  for (const char* s : {"system_8x_h100", "system_8x_h200", "system_8x_a100", "system_8x_mi300x", "system_2x8_h100",
                        "system_2x8_a100", "system_8x_gemini", "system_2x_npu"}) {
    const auto r = run_sim("collective all_reduce --hw '" + system(s) + "' -b 1024 -e 1073741824 -f 32");
    ASSERT_EQ(r.exit_code, 0) << s << ": " << r.output;
    EXPECT_NE(r.output.find("busbw"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("1073741824"), std::string::npos) << r.output;
  }
  const std::string d = scratch_dir("collective_cli");
  const auto r = run_sim("collective all_reduce --hw '" + system("system_8x_h100") + "' --sizes 1024,1073741824 --json '" + d + "/c.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string j = read_text(d + "/c.json");
  // Small: a ring with the low-latency protocol; large: NVLS, the switch reducing.
  EXPECT_NE(j.find("\"ring/ll\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"nvls/simple\""), std::string::npos) << j;
  // The A100's switch cannot reduce: the same sizes end on a ring with the Simple protocol.
  const auto a = run_sim("collective all_reduce --hw '" + system("system_8x_a100") + "' --sizes 1073741824");
  EXPECT_NE(a.output.find("ring/simple"), std::string::npos) << a.output;
  // Forcing: a protocol, an algorithm; two ranks across two nodes pass through the NICs.
  EXPECT_NE(run_sim("collective all_reduce --hw '" + system("system_8x_h100") + "' --sizes 1048576 --algo ring --protocol ll128")
                .output.find("ring/ll128"),
            std::string::npos);
  const auto inter = run_sim("collective send --hw '" + system("system_2x8_h100") + "' --ranks 2 --per-node 1 --sizes 67108864");
  const auto intra = run_sim("collective send --hw '" + system("system_2x8_h100") + "' --ranks 2 --sizes 67108864");
  ASSERT_EQ(inter.exit_code, 0) << inter.output;
  ASSERT_EQ(intra.exit_code, 0) << intra.output;
  EXPECT_NE(inter.output, intra.output);
}

TEST(CollectiveCli, BadRequestsAreRefusedByName) {
  auto r = run_sim("collective all_sum --hw '" + system("system_8x_h100") + "' --sizes 1024");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not a collective"), std::string::npos) << r.output;
  r = run_sim("collective all_reduce --hw '" + system("system_8x_a100") + "' --sizes 1024 --algo nvls");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("switch"), std::string::npos) << r.output;
  r = run_sim("collective all_reduce --hw '" + source_dir() + "/configs/gpu_h100.yaml' --sizes 1024");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not a system"), std::string::npos) << r.output;
  r = run_sim("collective all_reduce --hw '" + system("system_8x_h100") + "' --ranks 9 --sizes 1024");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--ranks"), std::string::npos) << r.output;
  r = run_sim("collective all_reduce --hw '" + system("system_8x_h100") + "' --sizes 0");
  EXPECT_EQ(r.exit_code, 2);
  r = run_sim("collective all_reduce --hw '" + system("system_8x_gemini") + "' --sizes 1024 --protocol ll");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("library model"), std::string::npos) << r.output;
}

TEST(CollectiveCli, SystemKeysOfTheLibraryModelAreChecked) {
  const std::string d = scratch_dir("collective_keys");
  const std::string head = "name: t\nsystem:\n  devices:\n    - {config: gpu_h100, count: 4}\n";
  struct Case {
    std::string body, needle;
  };
  for (const Case& c : std::vector<Case>{
           {"  link: {topology: ring, switch_reduction: true}\n", "system.link.switch_reduction"},
           {"  link: {topology: switch, efficiency: 1.5}\n", "system.link.efficiency"},
           {"  nodes: {devices_per_node: 3}\n", "system.nodes.devices_per_node"},
           {"  collectives: {model: mpi}\n", "system.collectives.model"},
           {"  collectives: {generation: hopper}\n", "system.collectives.generation"},
           {"  collectives: {model: nccl, generation: kepler}\n", "system.collectives.generation"},
           {"  collectives: {model: nccl, protocol: ll64}\n", "system.collectives.protocol"},
           {"  collectives: {model: nccl, channels: 2.5}\n", "system.collectives.channels"},
           {"  collectives: {model: nccl, generation: cdna3, protocol: ll128}\n", "system.collectives.protocol"},
           {"  link: {topology: switch, switch_reduction: true}\n  collectives: {model: nccl, generation: ampere}\n", "NVLS"},
           {"  collectives: {all_reduce: nvls}\n", "system.collectives.all_reduce"},
       }) {
    write_text(d + "/s.yaml", head + c.body);
    const auto r = run_sim("collective all_reduce --hw '" + d + "/s.yaml' --sizes 1024");
    EXPECT_EQ(r.exit_code, 2) << c.body << r.output;
    EXPECT_NE(r.output.find(c.needle), std::string::npos) << c.body << r.output;
    EXPECT_NE(r.output.find("s.yaml"), std::string::npos) << r.output;
  }
}

// `sim zoo llama2-* --tp T --pp P`: a Megatron-style pipeline that runs on NPU and GPU systems,
// every supertask lowered, with per-device compute / communication / waiting.
TEST(ZooPipelines, TensorAndPipelineParallelLlamaRunsOnNpuAndGpuSystems) {
  const std::string d = scratch_dir("zoo_tp_pp");
  auto r = run_sim("zoo llama2-7b --tp 2 --pp 2 --layers 4 --seq 64 -o '" + d + "/p.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string p = read_text(d + "/p.json");
  // Shards: q 32 heads / 2 x 128 = 2048 columns, gate 11008 / 2; K/V of llama2-70b at tp 8: one head.
  const auto pj = nlohmann::json::parse(p);
  EXPECT_EQ(pj["tensors"]["layers.0.tp1.wq"]["shape"], nlohmann::json({4096, 2048}));
  EXPECT_EQ(pj["tensors"]["layers.3.tp0.w_gate"]["shape"], nlohmann::json({4096, 5504}));
  ASSERT_EQ(run_sim("zoo llama2-7b --tp 2 --pp 2 --layers 4 --seq 64 -o '" + d + "/p2.json'").exit_code, 0);
  EXPECT_EQ(p, read_text(d + "/p2.json"));  // deterministic
  for (const char* s : {"system_8x_h100", "system_8x_a100", "system_8x_gemini"}) {
    r = run_sim("--ir '" + d + "/p.json' --hw '" + system(s) + "' -q --report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << s << ": " << r.output;
    const auto j = nlohmann::json::parse(read_text(d + "/r.json"));
    // input, output; stage 0 ranks: 2 layers x (attn, all_reduce, mlp, all_reduce) + residual + send;
    // stage 1 ranks: recv + 2 layers x 4 + head.
    EXPECT_EQ(j["supertasks"].size(), 2u + 2 * 10 + 2 * 10) << s;
    for (const auto& t : j["supertasks"]) {
      EXPECT_FALSE(t["estimated"].get<bool>()) << s << " " << t["id"];
      if (t["kind"] == "all_reduce") {
        EXPECT_FALSE(t["collective"].get<std::string>().empty()) << t;  // the plan, e.g. nvls/simple
      }
    }
    for (int dev = 0; dev < 4; ++dev) {
      EXPECT_GT(j["devices"][dev]["busy_us"].get<double>(), 0) << s << " dev" << dev;
      EXPECT_GT(j["devices"][dev]["comm_us"].get<double>(), 0) << s << " dev" << dev;
    }
    EXPECT_EQ(j["devices"][4]["busy_us"].get<double>(), 0) << s;  // 4 of the 8 devices are not used
  }
  // Stage 1 waits for stage 0: its devices idle or wait at least stage 0's compute.
  const auto j = nlohmann::json::parse(read_text(d + "/r.json"));
  EXPECT_GE(j["devices"][2]["comm_wait_us"].get<double>() + j["devices"][2]["idle_us"].get<double>(),
            j["devices"][0]["busy_us"].get<double>() * 0.99);
  r = run_sim("zoo llama2-70b --tp 8 --layers 1 --seq 16 -o '" + d + "/p70.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_text(d + "/p70.json"))["tensors"]["layers.0.tp7.wk"]["shape"], nlohmann::json({8192, 128}));
}

// --microbatches: the batch flows through the pipeline stages in microbatches, one after another
// (GPipe). A prefill of 8 sequences over 2 stages: stage 1 starts microbatch 0 while stage 0 runs
// microbatch 1, and the makespan falls; tp 1 (no all_reduce) writes a pipeline that runs.
TEST(ZooPipelines, MicrobatchesFlowThroughTheStages) {
  const std::string d = scratch_dir("zoo_microbatches");
  std::map<int, nlohmann::json> rep;
  for (int mb : {1, 2}) {
    const std::string p = d + "/p" + std::to_string(mb);
    auto r = run_sim("zoo llama2-7b --tp 1 --pp 2 --layers 4 --batch 8 --seq 128 --microbatches " + std::to_string(mb) + " -o '" + p + ".json'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = run_sim("--ir '" + p + ".json' --hw system_8x_h100 -q --report '" + p + ".r.json'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    rep[mb] = nlohmann::json::parse(read_text(p + ".r.json"));
  }
  EXPECT_LT(rep[2]["totals"]["time_us"].get<double>(), 0.9 * rep[1]["totals"]["time_us"].get<double>());
  double stage1_first = -1, stage0_last = 0;
  for (const auto& t : rep[2]["supertasks"]) {
    if (t["kind"] != "fx") continue;
    if (t["device"] == "dev1" && stage1_first < 0) stage1_first = t["start_us"].get<double>();
    if (t["device"] == "dev0") stage0_last = std::max(stage0_last, t["end_us"].get<double>());
  }
  EXPECT_GT(stage1_first, 0);
  EXPECT_LT(stage1_first, stage0_last);  // the stages overlap
  auto r = run_sim("zoo llama2-7b --tp 1 --pp 2 --layers 4 --batch 8 --microbatches 3 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--microbatches: must be at least 1 and divide the batch (8)"), std::string::npos) << r.output;
  r = run_sim("zoo llama2-7b --microbatches 2 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("applies to the pipelines of --tp / --pp"), std::string::npos) << r.output;
}

// FP8 tensor parallelism on Hopper (issue 42): the pipeline's tensors in fp8 (E4M3): faster
// GEMMs and half the bytes per all-reduce; served by sim llm too.
TEST(ZooPipelines, Fp8TensorParallelPipelinesRun) {
  const std::string d = scratch_dir("zoo_fp8_tp");
  double t[2];
  int i = 0;
  for (const char* dt : {"fp16", "fp8"}) {
    auto r = run_sim(std::string("zoo llama2-7b --tp 2 --layers 2 --batch 4 --seq 64 --dtype ") + dt + " -o '" + d + "/p.json'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    r = run_sim("--ir '" + d + "/p.json' --hw system_8x_h100 -q --report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto j = nlohmann::json::parse(read_text(d + "/r.json"));
    t[i] = j["totals"]["time_us"].get<double>();
    ++i;
  }
  EXPECT_LT(t[1], t[0]);
  const auto r = run_sim("llm llama2-7b --hw system_8x_h100 --tp 2 --dtype fp8 --layers 2 --batch 2 --input 64 --output 4 --buckets 2 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ZooPipelines, ShardsThatDoNotDivideAreRefused) {
  auto r = run_sim("zoo llama2-7b --tp 3 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--tp"), std::string::npos) << r.output;
  r = run_sim("zoo llama2-70b --tp 16 -o /dev/null");  // 8 K/V heads
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("K/V heads"), std::string::npos) << r.output;
  r = run_sim("zoo gpt2 --tp 2 -o /dev/null");  // GPT-2's layout runs, but its 50,257 tokens do not split in two
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("vocabulary (50257) do not divide by --tp 2"), std::string::npos) << r.output;
  r = run_sim("zoo bert-base --tp 2 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("Llama"), std::string::npos) << r.output;
  r = run_sim("zoo llama2-7b --pp 5 --layers 4 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("--pp"), std::string::npos) << r.output;
  r = run_sim("zoo op matmul m=4 n=4 k=4 --tp 2 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
  r = run_sim("zoo llama2-7b --tp 2 --dtype int8 -o /dev/null");
  EXPECT_EQ(r.exit_code, 2);
}

// `sim llm`: a static batch on a GPU and on an NPU; the report's totals, the memory plan
// (waves when the KV cache does not fit), the interpolation's check; bad requests exit 2.
// A request longer than the model's context (max_position_embeddings) is refused, unless
// --rope-scaling stretches a rotary model's; learned positions cannot be stretched.
TEST(LlmCli, RequestsLongerThanTheModelsContextAreRefused) {
  auto r = run_sim("llm llama2-7b --hw gpu_h100 --input 8000 --output 100 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("8100 tokens (prompt + output) exceed llama2-7b's context of 4096"), std::string::npos) << r.output;
  r = run_sim("llm gpt2 --hw gpu_h100 --input 100 --output 10 --rope-scaling 2 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("learned positions"), std::string::npos) << r.output;
  const std::string d = scratch_dir("llm_context");
  write_text(d + "/long.csv", "arrival_s,input_tokens,output_tokens\n0,64,4\n0.1,1000,100\n");
  r = run_sim("llm gpt2 --hw gpu_h100 --trace '" + d + "/long.csv' -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("the longest request of"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1100 tokens"), std::string::npos) << r.output;
  r = run_sim("llm llama2-7b --hw gpu_h100 --input 8000 --output 100 --rope-scaling 2 --layers 1 --buckets 2 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A Hugging Face config.json is served as the zoo entry of the same model is (Llama-3.1-8B and
// llama3-8b: one graph, so the same times); a mixture of experts (Qwen1.5-MoE) holds all its
// experts' weights in memory; `sim zoo hf` writes the graph; a config that cannot be read exits 2
// naming the field.
TEST(LlmCli, ServesHuggingFaceConfigs) {
  const std::string d = scratch_dir("llm_hf");
  const std::string hf = source_dir() + "/examples/hf/";
  const std::string run = " --hw gpu_h100 --batch 2 --input 64 --output 4 --layers 2 --buckets 2 -q --report '" + d;
  auto r = run_sim("llm '" + hf + "Llama-3.1-8B/config.json'" + run + "/hf.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_sim("llm llama3-8b" + run + "/zoo.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto a = nlohmann::json::parse(read_text(d + "/hf.json")), b = nlohmann::json::parse(read_text(d + "/zoo.json"));
  EXPECT_EQ(a["totals"], b["totals"]);
  EXPECT_EQ(a["memory"], b["memory"]);
  r = run_sim("llm '" + hf + "Qwen1.5-MoE-A2.7B/config.json' --hw gpu_h100 --batch 2 --input 64 --output 4 --buckets 2 -q --report '" + d + "/moe.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto m = nlohmann::json::parse(read_text(d + "/moe.json"));
  EXPECT_NEAR(m["memory"]["weights_gib"].get<double>(), 14315784192.0 * 2 / (1 << 30), 1e-6);  // every expert, fp16
  r = run_sim("zoo hf '" + hf + "Mixtral-8x7B-v0.1/config.json' --batch 4 --seq 1 --kv-len 16 --layers 1 -o '" + d + "/mx.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read_text(d + "/mx.json").find("block_sparse_moe.experts.w1"), std::string::npos);
  // DeepSeek's latent attention caches 512 + 64 values per token and layer: 2 layers, 68 tokens
  // in 5 blocks of 16, fp16 (not 2 x 16 heads x 192); on a system whole on every tp rank, each of
  // the 2 expert-parallel groups holding its half of the requests.
  r = run_sim("llm '" + hf + "DeepSeek-V2-Lite/config.json'" + run + "/ds.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto ds = nlohmann::json::parse(read_text(d + "/ds.json"));
  EXPECT_DOUBLE_EQ(ds["memory"]["kv_cache_gib_per_request"].get<double>(), 80.0 * 2 * 576 * 2 / (1 << 30));
  r = run_sim("llm '" + hf + "DeepSeek-V2-Lite/config.json' --hw system_8x_h100 --tp 2 --ep 2 --batch 2 --input 64 --output 4 --layers 2 "
              "--buckets 2 -q --report '" + d + "/ds_sys.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto dss = nlohmann::json::parse(read_text(d + "/ds_sys.json"));
  EXPECT_DOUBLE_EQ(dss["memory"]["kv_cache_gib_per_request"].get<double>(), 80.0 * 2 * 576 * 2 / 2 / (1 << 30));
  r = run_sim("llm '" + d + "/absent/config.json' --hw gpu_h100 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no such file"), std::string::npos) << r.output;
  // Tensor-parallel pipelines are built for every decoder layout: Qwen2 (q/k/v biases), OPT and
  // Gemma 2 serve over 2 GPUs; an encoder is refused.
  r = run_sim("llm '" + hf + "Qwen2.5-7B/config.json' --hw system_8x_h100 --tp 2 --batch 2 --input 64 --output 4 --layers 2 --buckets 2 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_sim("llm '" + hf + "opt-1.3b/config.json' --hw system_8x_h100 --tp 2 --batch 2 --input 64 --output 4 --layers 2 --buckets 2 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;  // OPT's LayerNorm layout
  r = run_sim("llm '" + hf + "gemma-2-9b/config.json' --hw system_8x_h100 --tp 2 --batch 2 --input 64 --output 4 --layers 2 --buckets 2 -q");
  EXPECT_EQ(r.exit_code, 0) << r.output;  // Gemma 2's post-norms, soft-capping and alternating windows
  r = run_sim("llm bert-base --hw system_8x_h100 --tp 2 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// Expert parallelism (issue 41): Mixtral as 2 groups of tp 2 on an HGX system, the report naming
// the experts' spread and load; a skewed router is slower (the busiest rank's experts); --ep on
// a dense model or without a system is refused.
TEST(LlmCli, ServesAMixtureOfExpertsWithExpertParallelism) {
  const std::string d = scratch_dir("llm_ep");
  const std::string run = "llm '" + source_dir() + "/examples/hf/Mixtral-8x7B-v0.1/config.json' --hw system_8x_h100 --tp 2 --ep 2 "
                          "--layers 2 --batch 8 --input 64 --output 4 --buckets 2 -q --report '" + d;
  auto r = run_sim(run + "/even.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_sim(run + "/skew.json' --expert-skew 3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto even = nlohmann::json::parse(read_text(d + "/even.json")), skew = nlohmann::json::parse(read_text(d + "/skew.json"));
  EXPECT_EQ(even["hardware"]["devices"], 4);
  EXPECT_EQ(even["hardware"]["ep"], 2);
  EXPECT_EQ(even["workload"]["experts"]["load"], "balanced");
  EXPECT_EQ(skew["workload"]["experts"]["load"], "skewed");
  EXPECT_GT(skew["totals"]["time_us"].get<double>(), even["totals"]["time_us"].get<double>());
  // A device's weights, fp16 over tp 2: the 2 layers' attention, router and norms
  // (2 x 41,984,000), the embedding, head and final norm (262,148,096), and half of the 2 layers'
  // experts (8 x 3 x 4096 x 14336 each) over the 2 groups.
  const double per_device = (2.0 * 41984000 + 262148096 + 2.0 * 8 * 3 * 4096 * 14336 / 2) * 2 / 2;
  EXPECT_NEAR(even["memory"]["weights_gib"].get<double>(), per_device / (1 << 30), 1e-9);
  r = run_sim("llm llama2-7b --hw system_8x_h100 --ep 2 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--ep: applies to mixture-of-experts models"), std::string::npos) << r.output;
  r = run_sim("llm gpt2 --hw gpu_h100 --expert-skew 2 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--expert-skew"), std::string::npos) << r.output;
}

// Disaggregated serving: prefills on one pool of a system's devices, decodes on another, each
// request's KV cache moved over the links in between; the pools' own configs (H100 prefill, RNGD
// decode on the mixed system). Refusals name the flag.
TEST(LlmCli, DisaggregatedServingRunsPrefillAndDecodePools) {
  const std::string d = scratch_dir("llm_disagg");
  // Two of gpt2's layers: the pools' scheduling is what is tested, and the sanitized suite runs it too.
  const std::string base = "llm gpt2 --layers 2 --arrival-rate 50 --requests 24 --input 256 --output 16 --max-seqs 8 --max-batch-tokens 1024 -q ";
  auto r = run_sim(base + "--hw system_8x_h100 --prefill-devices 0 --decode-devices 1-2 --report '" + d + "/a.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto a = nlohmann::json::parse(read_text(d + "/a.json"));
  const auto& dis = a["disaggregated"];
  EXPECT_EQ(dis["prefill"]["devices"], nlohmann::json::array({0}));
  EXPECT_EQ(dis["decode"]["devices"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(dis["kv_transfer"]["requests"], 24);
  // gpt2's KV cache: 2 x 2 layers (of its 12) x 768 x 2 bytes per token, 256 tokens each.
  EXPECT_DOUBLE_EQ(dis["kv_transfer"]["bytes_per_request"].get<double>(), 2.0 * 2 * 768 * 2 * 256);
  EXPECT_GT(dis["kv_transfer"]["mean_ms"].get<double>(), 0);
  EXPECT_GT(a["totals"]["ttft_ms"].get<double>(), 0);
  EXPECT_GT(a["totals"]["tpot_ms"].get<double>(), 0);
  EXPECT_TRUE(a["energy"]["modelled"].get<bool>());
  // Over time, for the picture: each device's busy share per bin averages to its pool's, and the
  // KV bytes moved over the bins add up to every request's.
  const auto& devs = dis["devices_over_time"];
  ASSERT_EQ(devs.size(), 3u);
  const size_t bins = a["timeline"].size();
  ASSERT_GT(bins, 1u);
  const double width_s = (a["timeline"][1]["t_ms"].get<double>() - a["timeline"][0]["t_ms"].get<double>()) / 1000;
  double decode_busy = 0;
  for (size_t k = 1; k < 3; ++k) {
    EXPECT_EQ(devs[k]["pool"], "decode");
    for (const auto& b : devs[k]["busy"]) decode_busy += b.get<double>() / static_cast<double>(bins) / 2;
  }
  EXPECT_NEAR(decode_busy, dis["decode"]["busy_share"].get<double>(), 1e-9);
  double moved = 0;
  for (const auto& g : dis["kv_transfer"]["gb_per_s_over_time"]) moved += g.get<double>() * 1e9 * width_s;
  EXPECT_NEAR(moved, 24 * dis["kv_transfer"]["bytes_per_request"].get<double>(), 1e-3 * moved);
  // Mixed kinds: the decode pool on the RNGD cards of the mixed system.
  r = run_sim(base + "--hw system_4x_h100_4x_rngd --prefill-devices 0 --decode-devices 4-5 --report '" + d + "/m.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto m = nlohmann::json::parse(read_text(d + "/m.json"));
  EXPECT_EQ(m["disaggregated"]["prefill"]["config"], "gpu-h100-sxm5");
  EXPECT_EQ(m["disaggregated"]["decode"]["config"], "rngd-like");
  EXPECT_NE(m["totals"]["tpot_ms"], a["totals"]["tpot_ms"]);
  // Tensor-parallel replicas: llama2-7b (2 of its layers) on 2 prefill GPUs as one tp-2 replica
  // and 4 decode GPUs as two; a request's K and V (2 x 2 layers x 4096 x 2 bytes x 128 tokens)
  // reach its decode replica half on each device. --decode-tp 1: four decode replicas holding
  // twice the weights a tp-2 device does.
  const std::string llama = "llm llama2-7b --layers 2 --arrival-rate 20 --requests 8 --input 128 --output 8 --max-seqs 4 -q "
                            "--hw system_8x_h100 --prefill-devices 0-1 --decode-devices 2-5 --tp 2 ";
  r = run_sim(llama + "--report '" + d + "/tp.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto tp = nlohmann::json::parse(read_text(d + "/tp.json"))["disaggregated"];
  EXPECT_EQ(tp["prefill"]["tp"], 2);
  EXPECT_EQ(tp["prefill"]["replicas"], 1);
  EXPECT_EQ(tp["decode"]["replicas"], 2);
  EXPECT_DOUBLE_EQ(tp["kv_transfer"]["bytes_per_request"].get<double>(), 2.0 * 2 * 4096 * 2 * 128);
  EXPECT_EQ(tp["devices_over_time"].size(), 6u);
  r = run_sim(llama + "--decode-tp 1 --report '" + d + "/tp1.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto tp1 = nlohmann::json::parse(read_text(d + "/tp1.json"))["disaggregated"];
  EXPECT_EQ(tp1["decode"]["replicas"], 4);
  EXPECT_NEAR(tp1["decode"]["weights_gib"].get<double>(), 2 * tp1["prefill"]["weights_gib"].get<double>(), 1e-9);
  EXPECT_DOUBLE_EQ(tp1["kv_transfer"]["bytes_per_request"], tp["kv_transfer"]["bytes_per_request"]);
  for (const auto& [args, words] : std::vector<std::pair<std::string, std::string>>{
           {"--hw system_8x_h100 --prefill-devices 0-2 --decode-devices 3 --prefill-tp 2", "do not split into replicas of --prefill-tp 2"},
           {"--hw system_8x_h100 --prefill-devices 0 --decode-devices 1 --pp 2", "--pp 1 --ep 1"},
           {"--hw gpu_h100 --prefill-devices 0 --decode-devices 1", "needs a system config"},
           {"--hw system_8x_h100 --prefill-devices 0-1 --decode-devices 1-2", "in both pools"},
           {"--hw system_8x_h100 --prefill-devices 0-9 --decode-devices 1", "--prefill-devices"},
           {"--hw system_8x_h100 --prefill-devices x --decode-devices 1", "expected device indices"},
           {"--hw system_4x_h100_4x_rngd --prefill-devices 3-4 --decode-devices 5", "share one config"},
           {"--hw system_8x_h100 --prefill-devices 0", "give both"}}) {
    r = run_sim(base + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(words), std::string::npos) << args << "\n" << r.output;
  }
}

TEST(LlmCli, ServesAStaticBatchOnAGpuAndAnNpu) {
  const std::string d = scratch_dir("llm_cli");
  for (const char* hw : {"gpu_h100", "npu"}) {
    const auto r = run_sim(std::string("llm gpt2 --hw '") + source_dir() + "/configs/" + hw + ".yaml' --batch 4 --input 64 --output 9 "
                           "--report '" + d + "/r.json'");
    ASSERT_EQ(r.exit_code, 0) << hw << ": " << r.output;
    EXPECT_NE(r.output.find("TTFT"), std::string::npos) << r.output;
    const auto j = nlohmann::json::parse(read_text(d + "/r.json"));
    const auto& t = j["totals"];
    // One wave: TTFT is the prefill; the end is the prefill and 8 decode steps at TPOT each.
    EXPECT_DOUBLE_EQ(t["ttft_ms"].get<double>(), j["steps"][0]["time_us"].get<double>() / 1000);
    EXPECT_NEAR(t["e2e_ms"].get<double>(), t["ttft_ms"].get<double>() + 8 * t["tpot_ms"].get<double>(), 1e-9);
    EXPECT_NEAR(t["output_tokens_per_s"].get<double>(), 4 * 9 / (t["e2e_ms"].get<double>() / 1000), 1e-6);
    EXPECT_EQ(j["memory"]["waves"], 1);
    // Decode steps slow down as the cache grows; the check point sits between its neighbours.
    EXPECT_EQ(j["steps"][1]["kv_len"], 64);
    EXPECT_GE(j["steps"][4]["time_us"].get<double>(), j["steps"][1]["time_us"].get<double>());
    EXPECT_LT(std::abs(j["interpolation"]["error_pct"].get<double>()), 5.0);
    // Each step's breakdown by class (GEMMs, attention, ...) sums to its time; on the GPU the
    // kernels' time, which launch gaps come between.
    for (const auto& step : j["steps"]) {
      double sum = 0;
      for (const auto& [k, v] : step["kernel_us_by_class"].items()) sum += v.get<double>();
      EXPECT_GT(step["kernel_us_by_class"]["gemm_us"].get<double>(), 0) << hw;
      EXPECT_GT(step["kernel_us_by_class"]["attention_us"].get<double>(), 0) << hw;
      if (std::string(hw) == "npu") EXPECT_NEAR(sum, step["time_us"].get<double>(), 1e-6 * sum) << hw;
      else EXPECT_LE(sum, step["time_us"].get<double>() * (1 + 1e-9)) << hw;
    }
  }
  // 0.33 GiB: 0.1 GiB beside GPT-2's weights (124 M parameters, 0.23 GiB), where 2 requests of
  // 992 tokens fit at once: waves.
  auto r = run_sim("llm gpt2 --hw gpu_h100 --set gpu.hbm.capacity_gib=0.33 --batch 4 --input 990 --output 2 -q --report '" + d + "/w.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto w = nlohmann::json::parse(read_text(d + "/w.json"));
  EXPECT_GT(w["memory"]["waves"].get<int>(), 1);
  EXPECT_TRUE(w["memory"]["split"].get<bool>());
  EXPECT_GT(w["latency_ms"]["ttft"]["p99"].get<double>(), w["latency_ms"]["ttft"]["p50"].get<double>() * 0.99);
}

TEST(LlmCli, RequestsThatCannotRunAreRefusedByName) {
  auto r = run_sim("llm bert-base --hw gpu_h100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("decoder"), std::string::npos) << r.output;
  r = run_sim("llm llama2-70b --hw gpu_h100 --batch 1 --input 16 --output 4");  // 129 GiB of weights
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("gpu.hbm.capacity_gib"), std::string::npos) << r.output;
  r = run_sim("llm llama2-7b --hw '" + system("system_8x_h100") + "' --tp 16");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("system.devices"), std::string::npos) << r.output;
  r = run_sim("llm llama2-7b --hw gpu_h100 --tp 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("system config"), std::string::npos) << r.output;
  r = run_sim("llm gpt2 --hw gpu_h100 --input 0");
  EXPECT_EQ(r.exit_code, 2);
}

// On a system: each pass is a tp x pp pipeline; the report counts the devices.
TEST(LlmCli, ServesOnASystemAsATensorAndPipelineParallelPipeline) {
  const std::string d = scratch_dir("llm_system");
  const auto r = run_sim("llm llama2-7b --hw '" + system("system_8x_h100") + "' --tp 2 --pp 2 --layers 4 --batch 2 --input 32 "
                         "--output 3 --report '" + d + "/r.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(read_text(d + "/r.json"));
  EXPECT_EQ(j["totals"]["device"], "system");
  EXPECT_EQ(j["hardware"]["devices"], 4);
  EXPECT_NEAR(j["totals"]["output_tokens_per_s_per_device"].get<double>(), j["totals"]["output_tokens_per_s"].get<double>() / 4, 1e-9);
  // Device 0 computes and takes part in all_reduces in every pass.
  for (const auto& s : j["steps"]) {
    EXPECT_GT(s["device0_us"]["compute_us"].get<double>(), 0) << s;
    EXPECT_GT(s["device0_us"]["communication_us"].get<double>(), 0) << s;
    EXPECT_GE(s["time_us"].get<double>(), s["device0_us"]["compute_us"].get<double>()) << s;
  }
  // A quarter of the weights per device (tp 2 x pp 2).
  const auto one = run_sim("llm llama2-7b --hw gpu_h100 --layers 4 --batch 2 --input 32 --output 3 -q --report '" + d + "/one.json'");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NEAR(j["memory"]["weights_gib"].get<double>() * 4,
              nlohmann::json::parse(read_text(d + "/one.json"))["memory"]["weights_gib"].get<double>(), 1e-9);
}

// Continuous batching: Poisson arrivals or a trace; a request trace that is wrong is refused
// by file and line.
// issue 30: chunked prefill. Prompts of 96 tokens with a 64-token step budget are refused
// without it and split over steps with it; decodes then never wait for a whole prefill.
TEST(LlmCli, ChunkedPrefillSplitsPromptsOverSteps) {
  const std::string d = scratch_dir("llm_chunked");
  const std::string base = "llm gpt2 --hw gpu_h100 --arrival-rate 200 --requests 30 --input 96 --output 16 --seed 5 "
                           "--max-batch-tokens 64 -q --report '" + d;
  auto r = run_sim(base + "/plain.json'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--chunked-prefill"), std::string::npos) << r.output;
  r = run_sim(base + "/c.json' --chunked-prefill");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto c = nlohmann::json::parse(read_text(d + "/c.json"));
  EXPECT_NE(c["scheduler"]["policy"].get<std::string>().find("chunked prefill"), std::string::npos);
  EXPECT_EQ(c["scheduler"]["prefill_steps"], 0);
  EXPECT_GE(c["scheduler"]["mixed_steps"].get<int>(), 30 * 96 / 64);  // every prompt token passes once
  EXPECT_GT(c["totals"]["tpot_ms"].get<double>(), 0);
  // Static batching has no steps to chunk: refused by name.
  r = run_sim("llm gpt2 --hw gpu_h100 --batch 4 --input 64 --output 4 --chunked-prefill -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--chunked-prefill: applies to continuous batching"), std::string::npos) << r.output;
}

// --preempt: KV blocks as tokens come, recompute preemption (vLLM). With a cache of 0.04 GiB
// beside GPT-2's weights, reserving whole lives runs 4 requests at once; on demand runs more,
// preempts some, and serves the same arrivals sooner.
TEST(LlmCli, PreemptionRunsMoreRequestsInTheSameCache) {
  const std::string d = scratch_dir("llm_preempt");
  const std::string base = "llm gpt2 --hw gpu_h100 --set gpu.hbm.capacity_gib=0.27 --arrival-rate 400 --requests 30 "
                           "--input 128 --output 128 --max-batch-tokens 512 --seed 2 -q --report '" + d;
  auto r = run_sim(base + "/reserve.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_sim(base + "/preempt.json' --preempt");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto w = nlohmann::json::parse(read_text(d + "/reserve.json"));
  const auto p = nlohmann::json::parse(read_text(d + "/preempt.json"));
  EXPECT_EQ(w["scheduler"]["preemptions"], 0);
  EXPECT_GT(p["scheduler"]["preemptions"].get<int>(), 0);
  EXPECT_NE(p["scheduler"]["policy"].get<std::string>().find("recompute preemption"), std::string::npos);
  EXPECT_GT(p["scheduler"]["peak_running"].get<int>(), w["scheduler"]["peak_running"].get<int>());
  EXPECT_LE(p["memory"]["peak_kv_cache_gib"].get<double>(), p["memory"]["kv_cache_capacity_gib"].get<double>());
  EXPECT_LT(p["totals"]["ttft_ms"].get<double>(), w["totals"]["ttft_ms"].get<double>());
  // Microbatches need pipeline stages on a system.
  r = run_sim("llm gpt2 --hw gpu_h100 --batch 4 --input 64 --output 4 --microbatches 2 -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--microbatches: applies to pipelines on a system"), std::string::npos) << r.output;
  // Static batches: refused by name.
  r = run_sim("llm gpt2 --hw gpu_h100 --batch 4 --input 64 --output 4 --preempt -q");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--preempt: applies to continuous batching"), std::string::npos) << r.output;
  // With chunked prefill too (vLLM v1): preempts in the same cache.
  r = run_sim(base + "/chunked.json' --preempt --chunked-prefill");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto c = nlohmann::json::parse(read_text(d + "/chunked.json"));
  EXPECT_GT(c["scheduler"]["preemptions"].get<int>(), 0);
  EXPECT_GT(c["scheduler"]["mixed_steps"].get<int>(), 0);
}

// vLLM's pipeline parallelism: on two stages, two virtual engines (the default with --pp 2)
// keep both stages busy, so a loaded server delivers more tokens per second than one scheduler
// whose step holds the whole pipeline.
TEST(LlmCli, VirtualEnginesKeepThePipelineStagesBusy) {
  const std::string d = scratch_dir("llm_virtual_engines");
  const std::string base = "llm llama2-7b --hw system_8x_h100 --pp 2 --layers 2 --arrival-rate 2000 --requests 24 --input 64 "
                           "--output 16 --max-seqs 4 --max-batch-tokens 128 -q --report '" + d;
  auto r = run_sim(base + "/one.json' --virtual-engines 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_sim(base + "/two.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto one = nlohmann::json::parse(read_text(d + "/one.json"));
  const auto two = nlohmann::json::parse(read_text(d + "/two.json"));
  EXPECT_EQ(one["scheduler"]["virtual_engines"], 1);
  EXPECT_EQ(two["scheduler"]["virtual_engines"], 2);
  double sum = 0;
  for (const auto& x : two["scheduler"]["stage_shares"]["decode"]) sum += x.get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-9);
  EXPECT_GT(two["totals"]["output_tokens_per_s"].get<double>(), one["totals"]["output_tokens_per_s"].get<double>());
  EXPECT_GT(two["scheduler"]["peak_running"].get<int>(), 4);  // each engine runs up to --max-seqs
  // Refused by name: without pipeline stages, for static batches, beside microbatches.
  for (const std::string& bad : {std::string("llm gpt2 --hw gpu_h100 --arrival-rate 10 --requests 4 --virtual-engines 2 -q"),
                                 std::string("llm llama2-7b --hw system_8x_h100 --pp 2 --layers 2 --batch 2 --virtual-engines 2 -q"),
                                 base + "/x.json' --microbatches 2 --virtual-engines 2"}) {
    r = run_sim(bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--virtual-engines"), std::string::npos) << r.output;
  }
}

TEST(LlmCli, ContinuousBatchingFromPoissonArrivalsAndATrace) {
  const std::string d = scratch_dir("llm_continuous");
  auto r = run_sim("llm gpt2 --layers 2 --hw gpu_h100 --arrival-rate 50 --requests 40 --input 64 --output 8 --seed 3 --max-seqs 8 -q --report '" + d + "/p.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto p = nlohmann::json::parse(read_text(d + "/p.json"));
  EXPECT_EQ(p["workload"]["batching"], "continuous");
  EXPECT_EQ(p["workload"]["requests"], 40);
  // Every prompt is prefilled once; 7 decode tokens each come from some decode step.
  EXPECT_LE(p["scheduler"]["prefill_steps"].get<int>(), 40);
  EXPECT_GE(p["scheduler"]["decode_steps"].get<int>(), 7);
  EXPECT_GT(p["totals"]["ttft_ms"].get<double>(), 0);
  EXPECT_GE(p["latency_ms"]["ttft"]["p99"].get<double>(), p["latency_ms"]["ttft"]["p50"].get<double>());
  // TPOT over the requests: arrivals that share their decode steps with prefills wait longer.
  const auto& tpot = p["latency_ms"]["tpot"];
  EXPECT_DOUBLE_EQ(tpot["mean"].get<double>(), p["totals"]["tpot_ms"].get<double>());
  EXPECT_GE(tpot["p90"].get<double>(), tpot["p50"].get<double>());
  EXPECT_GE(tpot["p99"].get<double>(), tpot["p90"].get<double>());
  EXPECT_GT(tpot["p99"].get<double>(), tpot["p50"].get<double>());
  // The same seed: the same report.
  ASSERT_EQ(run_sim("llm gpt2 --layers 2 --hw gpu_h100 --arrival-rate 50 --requests 40 --input 64 --output 8 --seed 3 --max-seqs 8 -q --report '" + d + "/p2.json'").exit_code, 0);
  EXPECT_EQ(read_text(d + "/p.json"), read_text(d + "/p2.json"));
  // A trace of three requests.
  write_text(d + "/t.csv", "arrival_s,input_tokens,output_tokens\n0,64,4\n0.001,32,8\n0.5,128,2\n");
  r = run_sim("llm gpt2 --layers 2 --hw gpu_h100 --max-seqs 4 --trace '" + d + "/t.csv' -q --report '" + d + "/t.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto t = nlohmann::json::parse(read_text(d + "/t.json"));
  EXPECT_EQ(t["workload"]["requests"], 3);
  EXPECT_EQ(t["workload"]["arrivals"], "trace");
  // The last arrives at 0.5 s when nothing else runs: the run ends after it.
  EXPECT_GT(t["totals"]["time_us"].get<double>(), 0.5e6);
  EXPECT_EQ(t["workload"]["trace_format"], "npusim");
  // An Azure LLM inference trace, its format told by the header, twice as fast: a failed row
  // (no output) left out, the last arrival 0.25 s after the first.
  write_text(d + "/azure.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.0000000,64,4\n"
                               "2023-11-16 18:15:46.0010000,32,0\n2023-11-16 18:15:46.5000000,128,2\n");
  r = run_sim("llm gpt2 --layers 2 --hw gpu_h100 --max-seqs 4 --trace '" + d + "/azure.csv' --trace-scale 2 -q --report '" + d + "/a.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto az = nlohmann::json::parse(read_text(d + "/a.json"));
  EXPECT_EQ(az["workload"]["trace_format"], "azure");
  EXPECT_EQ(az["workload"]["requests"], 2);
  EXPECT_EQ(az["workload"]["skipped_requests"], 1);
  EXPECT_GT(az["totals"]["time_us"].get<double>(), 0.25e6);
  EXPECT_LT(az["totals"]["time_us"].get<double>(), t["totals"]["time_us"].get<double>());
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"arrival,in,out\n0,1,1\n", "line 1"},
           {"arrival_s,input_tokens,output_tokens\n0,64\n", "line 2"},
           {"arrival_s,input_tokens,output_tokens\n0,64,x\n", "line 2"},
           {"arrival_s,input_tokens,output_tokens\n1,64,4\n0,64,4\n", "line 3"},
           {"arrival_s,input_tokens,output_tokens\n0,0,4\n", "line 2"}}) {
    write_text(d + "/bad.csv", text);
    r = run_sim("llm gpt2 --layers 2 --hw gpu_h100 --trace '" + d + "/bad.csv' -q");
    EXPECT_EQ(r.exit_code, 2) << text << r.output;
    EXPECT_NE(r.output.find("bad.csv"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << text << r.output;
  }
}

// --plot: the serving pictures (tokens/s, latency, KV cache over time) through plot_run.py.
TEST(LlmCli, PlotDrawsTheServingTimeline) {
  const std::string d = scratch_dir("llm_plot");
  const auto r = run_sim("llm gpt2 --hw gpu_h100 --arrival-rate 50 --requests 20 --input 64 --output 4 --max-seqs 4 -q --report '" + d +
                         "/r.json' --plot '" + d + "/p.png'");
  if (r.exit_code == 2 && r.output.find("matplotlib") != std::string::npos) GTEST_SKIP() << "no python3-matplotlib";
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(d + "/p.png").substr(1, 3), "PNG");
  const auto j = nlohmann::json::parse(read_text(d + "/r.json"));
  ASSERT_FALSE(j["timeline"].empty());
  // Every output token is counted once over the timeline's bins.
  double tokens = 0;
  const double width_s = (j["timeline"][1]["t_ms"].get<double>() - j["timeline"][0]["t_ms"].get<double>()) / 1000;
  for (const auto& b : j["timeline"]) tokens += b["output_tokens_per_s"].get<double>() * width_s;
  EXPECT_NEAR(tokens, 20 * 4, 1e-6);
}

// A runtime's own prefill and decode pipelines: TTFT is the prefill's makespan, every decode
// step the decode pipeline's.
TEST(LlmCli, ServesFromPrefillAndDecodePipelineFiles) {
  const std::string d = scratch_dir("llm_pipelines");
  ASSERT_EQ(run_sim("zoo llama2-7b --tp 2 --layers 2 --seq 64 -o '" + d + "/p.json'").exit_code, 0);
  ASSERT_EQ(run_sim("zoo llama2-7b --tp 2 --layers 2 --seq 1 --kv-len 64 -o '" + d + "/d.json'").exit_code, 0);
  const auto r = run_sim("llm --prefill '" + d + "/p.json' --decode '" + d + "/d.json' --hw '" + system("system_8x_h100") +
                         "' --output 5 -q --report '" + d + "/r.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(read_text(d + "/r.json"));
  const double pre = j["steps"][0]["time_us"].get<double>() / 1000, dec = j["steps"][1]["time_us"].get<double>() / 1000;
  EXPECT_DOUBLE_EQ(j["totals"]["ttft_ms"].get<double>(), pre);
  EXPECT_NEAR(j["totals"]["e2e_ms"].get<double>(), pre + 4 * dec, 1e-9);
  EXPECT_EQ(j["hardware"]["devices"], 2);
  EXPECT_NE(run_sim("llm --prefill '" + d + "/p.json' --hw '" + system("system_8x_h100") + "'").exit_code, 0);
  EXPECT_EQ(run_sim("llm --prefill '" + d + "/p.json' --decode '" + d + "/d.json' --hw gpu_h100").exit_code, 2);
}

}  // namespace npusim::test
