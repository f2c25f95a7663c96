// `sim --ir X --hw <gpu config>`: the library plan (docs/gpu_library.md), simulated:
// reports, physical bounds, launch modes and fusion, precisions, and agreement of single ops with
// `sim gpu-calibrate --ops` on the same shapes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/integration/test_util.h"

using namespace npusim::test;
using nlohmann::json;

namespace {

std::string hw(const std::string& name) { return " --hw '" + source_dir() + "/configs/" + name + ".yaml'"; }

std::string zoo(const std::string& dir, const std::string& name, const std::string& args) {
  const std::string f = dir + "/" + name + ".json";
  const auto r = run_sim("zoo " + args + " -o '" + f + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return f;
}

json report(const std::string& dir, const std::string& ir, const std::string& gpu, const std::string& flags = "") {
  const std::string out = dir + "/r" + std::to_string(std::hash<std::string>{}(ir + gpu + flags)) + ".json";
  const auto r = run_sim("--ir '" + ir + "'" + hw(gpu) + " -q --report '" + out + "' " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return json::parse(read_text(out));
}

double cfg(const json& rep, const std::string& key) { return std::stod(rep["config"][key].get<std::string>()); }

}  // namespace

// AMD's FlashAttention (Composable Kernel) keeps Q in registers and streams K and V through LDS
// in 32-wide slices: a head-dim-128 prefill and decode fit the MI300X's 64 KB of LDS, where
// FlashAttention-2's CUDA tiles (Q and two stages of K and V in shared memory) do not.
TEST(GpuLibrary, Mi300xRunsHeadDim128AttentionAsComposableKernelTiles) {
  const std::string d = scratch_dir("gpu_lib_mi300x");
  for (const char* shape : {"--batch 1 --seq 2048", "--batch 8 --seq 1 --kv-len 1024"}) {
    const std::string f = zoo(d, "l", std::string("llama3-8b --layers 1 ") + shape);
    const auto r = run_sim("--ir '" + f + "' --hw gpu_mi300x -q --csv '" + d + "/k.csv'");
    ASSERT_EQ(r.exit_code, 0) << shape << "\n" << r.output;
    const std::string csv = read_text(d + "/k.csv");
    EXPECT_NE(csv.find("(CK)"), std::string::npos) << shape << "\n" << csv;
    EXPECT_EQ(csv.find("(FA2)"), std::string::npos) << shape;
  }
}

TEST(GpuLibrary, BertRunsAsFusedKernelsAboveEveryKernelsPhysicalBound) {
  const std::string d = scratch_dir("gpu_library_bert");
  const std::string ir = zoo(d, "bert", "bert-base --batch 4 --layers 2");
  const auto r = run_sim("--ir '" + ir + "'" + hw("gpu_a100") + " --report '" + d + "/r.json' --csv '" + d +
                         "/r.csv' --trace '" + d + "/r.trace'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plan: library kernels, fusion on, graph launch"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("time by kernel class:"), std::string::npos) << r.output;
  const json rep = json::parse(read_text(d + "/r.json"));
  EXPECT_EQ(rep["plan"]["kind"], "library");
  const json& kernels = rep["layers"];
  ASSERT_EQ(kernels.size(), 3u + 2u * 7u);  // embeddings; 7 kernels a layer
  // Both layers' kernels run alike, and every layer norm is the same kernel: gather, position add,
  // layer norm, QKV, attention, output projection, FC1, FC2.
  EXPECT_EQ(rep["plan"]["distinct_kernels"], 8);
  const double tensor_peak = cfg(rep, "gpu.tensor_tflops.fp16") * 1e12, hbm_peak = cfg(rep, "gpu.hbm.bandwidth_gbps") * 1e9;
  double kernel_us = 0;
  for (const json& k : kernels) {
    const double t = k["time_us"].get<double>() * 1e-6;
    EXPECT_GE(t, 2 * k["macs"].get<double>() / tensor_peak) << k.dump();
    EXPECT_GE(t, k["min_bytes"].get<double>() / hbm_peak) << k.dump();
    EXPECT_GT(k["time_us"].get<double>(), 0) << k.dump();
    kernel_us += k["time_us"].get<double>();
  }
  EXPECT_NEAR(rep["totals"]["kernel_us"].get<double>(), kernel_us, 0.01);
  // Graph launch: the first kernel after the launch, every other one gap_us after the previous.
  const double gap = cfg(rep, "gpu.launch.graph_gap_us"), launch = cfg(rep, "gpu.launch_overhead_us");
  EXPECT_NEAR(rep["totals"]["time_us"].get<double>(), launch + kernel_us + gap * (kernels.size() - 1), 0.05);
  // CSV and trace rows per kernel.
  std::istringstream csv(read_text(d + "/r.csv"));
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 1 + static_cast<int>(kernels.size()));
  EXPECT_EQ(json::parse(read_text(d + "/r.trace"))["traceEvents"].size(), 2 + kernels.size());
  // Same inputs, same bytes.
  const auto again = run_sim("--ir '" + ir + "'" + hw("gpu_a100") + " -q --report '" + d + "/r2.json'");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_text(d + "/r.json"), read_text(d + "/r2.json"));
}

TEST(GpuLibrary, EagerLaunchAndNoFusionAreSlowerAndFusionFewerKernels) {
  const std::string d = scratch_dir("gpu_library_modes");
  const std::string ir = zoo(d, "gpt2", "gpt2 --batch 1 --seq 64 --layers 2");
  const json graph = report(d, ir, "gpu_h100"), eager = report(d, ir, "gpu_h100", "--launch eager");
  const json unfused = report(d, ir, "gpu_h100", "--fusion off --launch eager");
  EXPECT_EQ(eager["plan"]["launch"], "eager");
  EXPECT_GT(eager["totals"]["time_us"].get<double>(), graph["totals"]["time_us"].get<double>());
  // Small kernels: eager is host-bound, one launch per eager_host_us.
  const double host = cfg(eager, "gpu.launch.eager_host_us");
  EXPECT_GE(eager["totals"]["time_us"].get<double>(), host * (eager["layers"].size() - 1));
  EXPECT_GT(unfused["layers"].size(), eager["layers"].size());
  EXPECT_GT(unfused["totals"]["time_us"].get<double>(), eager["totals"]["time_us"].get<double>());
  // The ARK DefaultPlanner stays available.
  const auto ark = run_sim("--ir '" + ir + "'" + hw("gpu_h100") + " --gpu-plan ark");
  ASSERT_EQ(ark.exit_code, 0) << ark.output;
  EXPECT_NE(ark.output.find("(lowered to ARK ops, default plan)"), std::string::npos);
  EXPECT_EQ(run_sim("--ir '" + ir + "'" + hw("gpu_h100") + " --launch sometimes").exit_code, 2);
  // On an NPU the GPU plan's options would change nothing: refused, naming the option.
  const auto npu = run_sim("--ir '" + ir + "'" + hw("npu") + " --launch eager");
  EXPECT_EQ(npu.exit_code, 2) << npu.output;
  EXPECT_NE(npu.output.find("--launch: applies to GPU configs"), std::string::npos) << npu.output;
  EXPECT_EQ(run_sim("--ir '" + ir + "'" + hw("npu") + " --row-kernels looped").exit_code, 2);
}

// Softmax and norms as the framework's looped kernels (docs/gpu_library.md#looped-row-kernels):
// the default without fusion, or asked for; each step waits a load, so they take longer.
TEST(GpuLibrary, LoopedRowKernelsAreTheDefaultWithoutFusion) {
  const std::string d = scratch_dir("gpu_library_looped");
  const std::string ir = zoo(d, "rms", "op rms_norm shape=512x4096 --dtype fp16");
  const json one = report(d, ir, "gpu_h100"), looped = report(d, ir, "gpu_h100", "--row-kernels looped");
  const json eager = report(d, ir, "gpu_h100", "--fusion off");
  EXPECT_EQ(one["plan"]["row_kernels"], "one-pass");
  EXPECT_EQ(looped["plan"]["row_kernels"], "looped");
  EXPECT_EQ(eager["plan"]["row_kernels"], "looped");
  EXPECT_EQ(report(d, ir, "gpu_h100", "--fusion off --row-kernels one-pass")["plan"]["row_kernels"], "one-pass");
  ASSERT_EQ(looped["layers"].size(), 1u);
  EXPECT_NE(looped["layers"][0]["schedule"].get<std::string>().find("looped rows 2 passes, 32 warps"), std::string::npos)
      << looped["layers"][0].dump();
  // The same bytes leave HBM; the chain of round trips makes it slower than the one-pass kernel.
  EXPECT_GT(looped["totals"]["kernel_us"].get<double>(), 1.5 * one["totals"]["kernel_us"].get<double>());
  EXPECT_EQ(run_sim("--ir '" + ir + "'" + hw("gpu_h100") + " --row-kernels twice").exit_code, 2);
}

TEST(GpuLibrary, PrecisionsRunAtTheirOwnRates) {
  const std::string d = scratch_dir("gpu_library_dtypes");
  auto us = [&](const std::string& dtype, const std::string& flags = "") {
    const std::string ir = zoo(d, "mm_" + dtype, "op matmul m=4096 n=4096 k=4096 --dtype " + dtype);
    return report(d, ir, "gpu_a100", flags)["layers"][0]["time_us"].get<double>();
  };
  const double fp16 = us("fp16"), int8 = us("int8"), ffma = us("fp32"), tf32 = us("fp32", "--tf32");
  // A100: 624 int8 TOPS (of which int8 GEMMs reach int8_mma_share 0.56 beside fp16's share of its
  // own), 312 fp16 TFLOPS, 156 TF32 TFLOPS, 19.5 FP32 TFLOPS on the CUDA cores.
  EXPECT_LT(int8, 0.95 * fp16);
  EXPECT_GT(int8, 0.5 * fp16);
  EXPECT_LT(fp16, 0.7 * tf32);
  EXPECT_GT(ffma, 5 * tf32);
  EXPECT_GE(ffma * 1e-6, 2.0 * 4096 * 4096 * 4096 / 19.5e12);
}

// fp8 (E4M3 / E5M2): Hopper's fp8 tensor rate (1979 TFLOPS on the H100, 2x fp16's) with 128-byte K
// steps; a GPU without fp8 tensor cores refuses the workload, naming its config key and the op.
TEST(GpuLibrary, Fp8RunsOnHopperAndIsRefusedWhereThereAreNoFp8TensorCores) {
  const std::string d = scratch_dir("gpu_library_fp8");
  const std::string fp8 = zoo(d, "mm_fp8", "op matmul m=4096 n=4096 k=4096 --dtype fp8");
  const std::string e5m2 = zoo(d, "mm_e5m2", "op matmul m=4096 n=4096 k=4096 --dtype fp8_e5m2");
  const std::string fp16 = zoo(d, "mm_fp16", "op matmul m=4096 n=4096 k=4096 --dtype fp16");
  const json r8 = report(d, fp8, "gpu_h100"), r16 = report(d, fp16, "gpu_h100");
  const json& k8 = r8["layers"][0];
  EXPECT_EQ(k8["dtype"], "fp8_e4m3");
  EXPECT_NE(k8["schedule"].get<std::string>().find("x128:"), std::string::npos) << k8.dump();  // TK = 128 elements
  const double t8 = k8["time_us"].get<double>(), t16 = r16["layers"][0]["time_us"].get<double>();
  EXPECT_LT(t8, 0.7 * t16);
  EXPECT_GT(t8, 0.4 * t16);
  EXPECT_GE(t8 * 1e-6, 2.0 * 4096 * 4096 * 4096 / (cfg(r8, "gpu.tensor_tflops.fp8") * 1e12));
  EXPECT_EQ(report(d, e5m2, "gpu_h100")["layers"][0]["dtype"], "fp8_e5m2");
  const auto a100 = run_sim("--ir '" + fp8 + "'" + hw("gpu_a100") + " -q");
  EXPECT_EQ(a100.exit_code, 2) << a100.output;
  EXPECT_NE(a100.output.find("gpu.tensor_tflops.fp8: is 0"), std::string::npos) << a100.output;
  EXPECT_NE(a100.output.find("'matmul'"), std::string::npos) << a100.output;
  // A transformer in fp8 runs whole on the H100; the NPU runs fp8 at its int8 rate.
  const std::string gpt = zoo(d, "gpt2_fp8", "gpt2 --layers 1 --seq 64 --dtype fp8");
  EXPECT_GT(report(d, gpt, "gpu_h100")["totals"]["time_us"].get<double>(), 0);
  const auto npu = run_sim("--ir '" + fp8 + "'" + hw("npu") + " -q");
  EXPECT_EQ(npu.exit_code, 0) << npu.output;
}

// One op through `sim --ir` and through `sim gpu-calibrate --ops` on the same shape: row-wise
// kernels are the same plan (equal to 0.01 us); element-wise ones run as a streaming kernel in the
// library and as one program per row in gpu-calibrate, and agree within 5%.
TEST(GpuLibrary, SingleOpsAgreeWithGpuCalibrate) {
  const std::string d = scratch_dir("gpu_library_ops");
  struct Case {
    std::string zoo_args, row;
    double tolerance_us = 0.01, tolerance_share = 0;
  };
  const std::vector<Case> cases = {
      {"op softmax shape=4096x4096", R"({"kind": "softmax", "M": 4096, "N": 4096, "dtype": "fp16", "row_inputs": 1,
        "col_vectors": 0, "row_outputs": 1, "row_stats": 0, "flops_per_element": 4, "transcendentals_per_element": 1,
        "warps": 8, "ms": 1})"},
      {"op layer_norm shape=2048x1024", R"({"kind": "layer_norm", "M": 2048, "N": 1024, "dtype": "fp16",
        "row_inputs": 1, "col_vectors": 2, "row_outputs": 1, "row_stats": 0, "flops_per_element": 7,
        "transcendentals_per_element": 0, "warps": 4, "ms": 1})"},
      {"op rms_norm shape=512x8192", R"({"kind": "rms_norm", "M": 512, "N": 8192, "dtype": "fp16", "row_inputs": 1,
        "col_vectors": 1, "row_outputs": 1, "row_stats": 0, "flops_per_element": 4, "transcendentals_per_element": 0,
        "warps": 16, "ms": 1})"},
      {"op element_wise_add shape=4096x4096 shape2=4096x4096", R"({"kind": "add", "M": 4096, "N": 4096, "dtype": "fp16",
        "row_inputs": 2, "col_vectors": 0, "row_outputs": 1, "row_stats": 0, "flops_per_element": 1,
        "transcendentals_per_element": 0, "warps": 8, "ms": 1})", 0, 0.05},
      {"op gelu shape=4096x4096", R"({"kind": "gelu", "M": 4096, "N": 4096, "dtype": "fp16", "row_inputs": 1,
        "col_vectors": 0, "row_outputs": 1, "row_stats": 0, "flops_per_element": 2, "transcendentals_per_element": 2,
        "warps": 8, "ms": 1})", 0, 0.05},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string ir = zoo(d, "op" + std::to_string(i), cases[i].zoo_args + " --dtype fp16");
    const json rep = report(d, ir, "gpu_h100");
    ASSERT_EQ(rep["layers"].size(), 1u);
    EXPECT_EQ(rep["layers"][0]["class"], cases[i].tolerance_share > 0 ? "elementwise" : "rowwise");
    const std::string rows = d + "/rows" + std::to_string(i) + ".json";
    std::ofstream(rows) << R"({"rows": [)" << cases[i].row << "]}";
    const auto cal = run_sim("gpu-calibrate" + hw("gpu_h100") + " --ops '" + rows + "' --csv '" + rows + ".csv' -j 1");
    ASSERT_EQ(cal.exit_code, 0) << cal.output;
    std::istringstream csv(read_text(rows + ".csv"));
    std::string header, line;
    std::getline(csv, header);
    std::getline(csv, line);
    // kind,M,N,dtype,warps,measured_us,predicted_us,...
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 7u) << line;
    const double cal_us = std::stod(f[6]);
    EXPECT_NEAR(cal_us, rep["totals"]["time_us"].get<double>(), cases[i].tolerance_us + cases[i].tolerance_share * cal_us)
        << cases[i].zoo_args;
  }
}

// docs/reports.md: an NPU report and a GPU report of the same workload share the core totals and
// per-layer keys, and count the same MACs.
TEST(ReportKeys, NpuAndGpuShareTheCoreKeysAndTheirMacs) {
  const std::string d = scratch_dir("report_keys");
  const std::string ir = zoo(d, "r18", "resnet18 --batch 1 --dtype fp16");
  const json npu = report(d, ir, "npu"), gpu = report(d, ir, "gpu_h100");
  EXPECT_EQ(npu["totals"]["device"], "npu");
  EXPECT_EQ(gpu["totals"]["device"], "gpu");
  for (const json* r : {&npu, &gpu}) {
    for (const char* k : {"time_us", "cycles", "macs", "dram_bytes", "bound"})
      EXPECT_TRUE((*r)["totals"].contains(k)) << k << " in " << (*r)["totals"].dump();
    ASSERT_FALSE((*r)["layers"].empty());
    int64_t macs = 0;
    double time_us = 0;
    for (const json& l : (*r)["layers"]) {
      for (const char* k : {"name", "op", "time_us", "macs", "bytes", "bound"}) EXPECT_TRUE(l.contains(k)) << k << " in " << l.dump();
      macs += l["macs"].get<int64_t>();
      if (l.value("device", "") != "cpu") time_us += l["time_us"].get<double>();  // host layers are not in the total
    }
    EXPECT_EQ(macs, (*r)["totals"]["macs"].get<int64_t>());
    EXPECT_LE(time_us, (*r)["totals"]["time_us"].get<double>() + 0.01 * static_cast<double>((*r)["layers"].size()));
  }
  EXPECT_EQ(npu["totals"]["macs"], gpu["totals"]["macs"]);
  EXPECT_EQ(npu["totals"]["macs"].get<int64_t>(), 1814073344);  // ResNet-18 at 224x224: 1.814 GMAC
}

namespace {

// A reduction over the last axis (issue 42): a row-wise kernel for long rows (a block per
// row), a thread per row for short ones, whichever is faster; at the HBM bound either way, not
// one thread per output walking an 8192-element row (55x the bound before). Bound by hand:
// 8192 x 8192 fp16 = 134,217,728 B at 3,350 GB/s x 0.9 = 44.5 us.
TEST(GpuLibrary, LastAxisReductionsRunAtTheHbmBound) {
  const std::string d = scratch_dir("gpu_reduce");
  for (const auto& [shape, schedule] : std::vector<std::pair<std::string, std::string>>{
           {"8192x8192", "rows"}, {"64x1048576", "rows"}, {"1048576x64", "thread per row"}}) {
    const json r = report(d, zoo(d, "rs" + shape, "op reduce_sum shape=" + shape + " axes=-1"), "gpu_h100");
    const json& k = r["layers"][0];
    const double bound_us = 8192.0 * 8192 * 2 / (3350e9 * 0.9) * 1e6;  // every shape: 2^26 elements
    EXPECT_GE(k["time_us"].get<double>(), bound_us * 0.999) << shape;
    EXPECT_LE(k["time_us"].get<double>(), bound_us * 1.1) << shape;
    EXPECT_EQ(k["schedule"].get<std::string>().rfind(schedule, 0), 0u) << shape << ": " << k["schedule"];
  }
}

// Norms of short rows (fewer bytes than a warp loads at once) run as rows of a few lanes each,
// many rows a program, at the HBM bound; a program per row waits on each row in turn (3x slower
// for 131,072 rows of 128). Long rows keep a program per row.
TEST(GpuLibrary, ShortRowNormsRunManyRowsAProgram) {
  const std::string d = scratch_dir("gpu_short_rows");
  const json k = report(d, zoo(d, "rms", "op rms_norm shape=131072x128 --dtype bf16"), "gpu_h200")["layers"][0];
  EXPECT_EQ(k["schedule"], "rows of a few lanes each, 4 warps");
  // In and out once (2 x 32 MiB) and the weight row, at the H200's 4.8 TB/s x 0.885 (gpu_h200.yaml).
  const double bound_us = (2.0 * 131072 * 128 * 2 + 128 * 2) / (4800e9 * 0.885) * 1e6;
  EXPECT_GE(k["time_us"].get<double>(), bound_us * 0.999);
  EXPECT_LE(k["time_us"].get<double>(), bound_us * 1.2);
  const json l = report(d, zoo(d, "long", "op rms_norm shape=2048x4096 --dtype bf16"), "gpu_h200")["layers"][0];
  EXPECT_EQ(l["schedule"].get<std::string>().rfind("rows ", 0), 0u) << l["schedule"];
}

}  // namespace

// docs/gpu.md (`--gemm` candidates): a decode step's GEMM of one row runs a 16-row tile split over
// K rather than padding its row to 64. On an RTX 3090 (71 fp16 tensor TFLOPS over 82 SMs at
// mma_efficiency 0.8) a 64 x 64 tile's MMAs over K = 4096 take 64 x 64 x 4096 x 2 / (0.87e12 x 0.8)
// = 48 us; reading the 1024 x 4096 fp16 weights takes at least 8 MiB / the HBM rate.
TEST(GpuLibrary, AFewRowsRunSixteenRowTiles) {
  const std::string d = scratch_dir("gpu_few_rows");
  const json r = report(d, zoo(d, "mm1", "op matmul m=1 n=1024 k=4096 --dtype fp16"), "gpu_rtx3090");
  const json& k = r["layers"][0];
  EXPECT_EQ(k["schedule"].get<std::string>().rfind("16x", 0), 0u) << k["schedule"];
  const double bound_us = 1024.0 * 4096 * 2 / (936e9 * cfg(r, "gpu.hbm.efficiency")) * 1e6;
  EXPECT_GE(k["time_us"].get<double>(), bound_us * 0.999);
  EXPECT_LT(k["time_us"].get<double>(), 0.5 * 64.0 * 64 * 4096 * 2 / (71e12 / 82 * 0.8) * 1e6);
}
