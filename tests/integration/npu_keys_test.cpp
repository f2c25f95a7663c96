// Every NPU-side key of the schema (npu.*, memory.*, mapping.*, energy.*) changes a result: one
// test per key runs a workload that depends on it with the key changed, and the report (all but
// the echo of the configuration) differs from the run at the config's own value. A new key
// without a case fails EveryNpuKeyOfTheSchemaHasACase. (The gpu.* keys: gpu_keys_test.cpp.)
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/test_util.h"

using namespace npusim::test;
using nlohmann::json;

namespace {

struct KeyCase {
  const char* key;
  const char* hw;        // shipped config the key is changed in
  const char* workload;  // see workload_args()
  const char* value;     // a value other than the config's own
};

const std::vector<KeyCase> kCases = {
    {"npu.pe_array.rows", "npu", "resnet50_b4", "128"},
    {"npu.pe_array.cols", "npu", "resnet50_b4", "128"},
    {"npu.pe_array.dataflow", "npu", "resnet50_b4", "output_stationary"},
    {"npu.pe_array.macs_per_pe_cycle.int8", "npu", "resnet50_b4", "2"},
    {"npu.pe_array.macs_per_pe_cycle.fp16", "npu", "bert", "1.0"},
    {"npu.pe_array.macs_per_pe_cycle.fp32", "npu", "resnet50_fp32", "0.25"},
    {"npu.pe_array.fold_overhead_cycles", "npu", "resnet50_b4", "1"},
    {"npu.pe_array.channel_align", "npu", "resnet50_b4", "16"},
    {"npu.pe_array.tile_setup_cycles", "npu", "resnet50_b4", "168"},
    {"npu.pe_array.act_read_bytes_per_cycle", "npu", "resnet50_b4", "32"},
    {"npu.pe_array.weight_read_bytes_per_cycle", "npu", "resnet50_b4", "64"},
    {"npu.pe_array.out_write_bytes_per_cycle", "npu", "resnet50_b4", "64"},
    {"npu.pe_array.pe_groups", "gemini_zebu", "resnet50_b4", "1"},
    {"npu.pe_array.c_split_min_cycles", "gemini_zebu", "resnet50_b4", "1"},
    {"npu.pe_array.window_packing", "npu", "resnet50_b4", "false"},
    {"npu.vector.lanes", "npu", "resnet50_b4", "64"},
    {"npu.vector.instr_overhead_cycles", "npu", "resnet50_b4", "1"},
    {"npu.vector.parallel_images", "npu", "resnet50_b4", "2"},
    {"npu.vector.stages.pre_cal.vectors_per_cycle", "npu", "resnet50_b4", "0.5"},
    {"npu.vector.stages.pre_cal.latency_cycles", "npu", "resnet50_b4", "12"},
    {"npu.vector.stages.compare_group.vectors_per_cycle", "npu", "resnet50_b4", "0.5"},
    {"npu.vector.stages.compare_group.latency_cycles", "npu", "resnet50_b4", "12"},
    {"npu.vector.stages.post_cal.vectors_per_cycle", "npu", "resnet50_b4", "0.5"},
    {"npu.vector.stages.post_cal.latency_cycles", "npu", "resnet50_b4", "12"},
    {"npu.vector.stages.fp32_sum_sub_group.vectors_per_cycle", "npu", "resnet50_b4", "0.5"},
    {"npu.vector.stages.fp32_sum_sub_group.latency_cycles", "npu", "resnet50_b4", "12"},
    {"npu.vector.stages.relu_group.vectors_per_cycle", "npu", "resnet50_b4", "0.5"},
    {"npu.vector.stages.relu_group.latency_cycles", "npu", "resnet50_b4", "4"},
    {"npu.vector.stages.fp32_mul_group.vectors_per_cycle", "npu", "resnet50_b4", "0.5"},
    {"npu.vector.stages.fp32_mul_group.latency_cycles", "npu", "resnet50_b4", "12"},
    {"npu.vector.stages.acc_tree_group.vectors_per_cycle", "npu", "resnet50_b4", "0.5"},
    {"npu.vector.stages.acc_tree_group.latency_cycles", "npu", "resnet50_b4", "16"},
    {"npu.vector.stages.lut_group.vectors_per_cycle", "npu", "bert", "1.0"},
    {"npu.vector.stages.lut_group.latency_cycles", "npu", "bert", "16"},
    {"npu.l2.size_kib", "npu", "resnet50_b4", "16384"},
    {"npu.l2.bytes_per_cycle", "npu", "resnet50_b4", "512"},
    {"npu.l2.weight_share", "npu", "resnet50_b4", "0.25"},
    {"npu.weight_buffer.size_kib", "npu", "resnet50_b4", "2304"},
    {"npu.dma.channels", "npu", "resnet50_b4", "6"},
    {"npu.dma.burst_bytes", "npu", "resnet50_b4", "128"},
    {"npu.dma.setup_cycles", "npu", "resnet50_b4", "42"},
    {"npu.dma.segment_overhead_cycles", "npu", "resnet50_b4", "2"},
    {"npu.dma.bytes_per_cycle", "npu", "resnet50_b4", "128"},
    {"npu.isa.issue_cycles", "gemini_zebu", "program", "42"},  // sim program: the compiled ResNet-50 b1
    {"npu.isa.control_cycles", "gemini_zebu", "program", "70"},
    {"npu.isa.pe_fixed_cycles", "gemini_zebu", "program", "200"},
    {"npu.isa.pe_stall_share", "gemini_zebu", "program", "0.032"},
    {"npu.isa.weight_stream_overlap", "gemini_zebu", "program", "0.5"},
    {"npu.isa.vp_pipeline_cycles", "gemini_zebu", "program", "34"},
    {"npu.cores", "npu", "resnet50_b4", "4"},
    {"npu.noc.topology", "npu_4core_mesh", "resnet50_b4", "crossbar"},
    {"npu.noc.link_gbps", "npu_4core_mesh", "resnet50_b4", "8"},
    {"npu.noc.hop_latency_ns", "npu_4core_mesh", "resnet50_b4", "40"},
    {"npu.noc.mesh_cols", "npu_4core_mesh", "resnet50_b4", "4"},
    {"npu.noc.injection_ports", "npu_4core_mesh", "resnet50_b4", "4"},
    {"mapping.weight_prefetch_layers", "npu", "resnet50_b4", "4"},
    {"mapping.staged_prefetch_layers", "npu", "resnet50_b4", "1"},
    {"mapping.serialize_layers", "npu", "resnet50_b4", "true"},
    {"mapping.keep_activations_on_chip", "npu", "resnet50_b4", "false"},
    {"mapping.activation_prefetch_layers", "gemini_zebu", "resnet50_b4", "8"},
    {"mapping.batch_groups_per_stage", "npu", "resnet50_b4", "true"},
    {"mapping.batch_group_fill", "gemini_zebu", "resnet50_b4", "0.4"},
    {"mapping.multicore", "npu_4core_mesh", "resnet50_b4", "rows"},
    {"mapping.multicore_layers", "npu_4core_mesh", "resnet50_b4", "Conv_0=channels"},
    {"mapping.pipeline_images", "rngd_8pe", "resnet50_b4_pipeline", "2"},
    {"memory.dram.bandwidth_gbps", "npu", "resnet50_b4", "64"},
    {"memory.dram.latency_ns", "npu", "resnet50_b4", "200"},
    {"memory.dram.channels", "npu", "resnet50_b4", "4"},
    {"memory.dram.capacity_gib", "npu", "llm", "0.5"},  // sim llm: the KV cache no longer fits 16 requests at once
    {"energy.pj_per_mac", "gemini_zebu", "resnet50_b4", "0.4"},  // no dtype's own figure there
    {"energy.pj_per_mac_int8", "npu", "resnet50_b4", "0.05"},
    {"energy.pj_per_mac_fp8", "npu", "bert_fp8", "0.1"},
    {"energy.pj_per_mac_fp16", "npu", "bert", "0.3"},
    {"energy.pj_per_mac_bf16", "npu", "bert_bf16", "0.3"},
    {"energy.pj_per_mac_fp32", "npu", "resnet50_fp32", "0.8"},
    {"energy.pj_per_vector_lane_cycle", "npu", "bert", "0.4"},
    {"energy.static_w", "npu", "resnet50_b4", "1.0"},
    {"energy.pj_per_dram_byte", "npu", "resnet50_b4", "40"},
    {"energy.pj_per_sram_byte", "npu", "resnet50_b4", "1.0"},
    {"energy.pj_per_dma_byte", "npu", "resnet50_b4", "1.0"},
    {"energy.pj_per_noc_byte_hop", "npu_4core_mesh", "resnet50_b4", "1.0"},
};

// Workloads written by the zoo once per test process.
std::string workload_args(const std::string& name) {
  if (name == "llm") return "llm gpt2 --batch 16 --input 1000 --output 4 --buckets 2";
  if (name == "program") return "program --program '" + example("gemini_npu/int8_resnet50.sim_quanti_b1_c1_bw16_asm.txt") + "'";
  static std::map<std::string, std::string> made;
  if (made.count(name)) return made[name];
  const std::string d = scratch_dir("npu_key_workloads");
  if (name == "resnet50_b4_pipeline")  // the pipeline split, where mapping.pipeline_images applies
    return made[name] = workload_args("resnet50_b4") + " --set mapping.multicore=pipeline";
  std::string zoo = name == "resnet50_b4"     ? "resnet50 --batch 4"
                    : name == "resnet50_fp16" ? "resnet50 --dtype fp16"
                    : name == "resnet50_fp32" ? "resnet50 --dtype fp32"
                    : name == "bert_fp8"      ? "bert-base --seq 128 --layers 1 --dtype fp8"
                    : name == "bert_bf16"     ? "bert-base --seq 128 --layers 1 --dtype bf16"
                                              : "bert-base --seq 128 --layers 1";
  const std::string f = d + "/" + name + ".json";
  const auto r = run_sim("zoo " + zoo + " -o '" + f + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return made[name] = "--ir '" + f + "'";
}

// The JSON report without its "hardware" section (which echoes every resolved key).
std::string report_without_config(const std::string& args, const std::string& tag) {
  const std::string f = scratch_dir("npu_key_reports") + "/" + tag + ".json";
  const auto r = run_sim(args + " -q --report '" + f + "'");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  json j = json::parse(read_text(f), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "unreadable report";
  j.erase("hardware");
  return j.dump();
}

std::string case_tag(const KeyCase& c) {
  std::string t = c.key;
  for (char& ch : t)
    if (ch == '.') ch = '_';
  return t;
}

class NpuKey : public ::testing::TestWithParam<KeyCase> {};

TEST_P(NpuKey, ChangesAReport) {
  const KeyCase& c = GetParam();
  const std::string base = workload_args(c.workload) + " --hw " + c.hw;
  const std::string at_default = report_without_config(base, case_tag(c) + "_default");
  const std::string changed = report_without_config(base + " --set " + c.key + "=" + c.value, case_tag(c) + "_changed");
  EXPECT_NE(at_default, changed) << c.key << "=" << c.value << " changed nothing on " << c.workload << " (" << c.hw << ")";
}

INSTANTIATE_TEST_SUITE_P(Schema, NpuKey, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<KeyCase>& i) { return case_tag(i.param); });

TEST(NpuKeys, EveryNpuKeyOfTheSchemaHasACase) {
  const auto r = run_sim("config --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> declared, covered;
  for (const char* prefix : {"| `npu.", "| `memory.", "| `mapping.", "| `energy."})
    for (size_t p = 0; (p = r.output.find(prefix, p)) != std::string::npos; ++p)
      declared.insert(r.output.substr(p + 3, r.output.find('`', p + 3) - p - 3));
  for (const KeyCase& c : kCases) covered.insert(c.key);
  EXPECT_EQ(declared, covered);
}

}  // namespace
