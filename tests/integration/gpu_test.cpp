// Whole GPU simulations through the `sim` binary (one SystemC elaboration per process): every
// real ARK example on the GPU it was written for, plan semantics visible in the reports, bad
// plans, determinism, and the calibration against measured H100 GEMMs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "tests/integration/test_util.h"

using namespace npusim::test;
using nlohmann::json;

namespace {

std::string hw(const std::string& name) { return "--hw '" + source_dir() + "/configs/" + name + ".yaml'"; }
std::string ark(const std::string& rel) { return "'" + example("ark/" + rel) + "'"; }
std::string ranks(const std::string& dir) {
  std::string s;
  for (int r = 0; r < 8; ++r) s += " --plan " + ark(dir + "/plan_gpu" + std::to_string(r) + ".json");
  return s;
}

// Runs sim with args plus a JSON report; fails the test on a non-zero exit.
json run_report(const std::string& args, const std::string& tag) {
  const std::string d = scratch_dir("gpu_" + tag);
  const auto r = run_sim(args + " -q --report '" + d + "/r.json'");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
  if (r.exit_code != 0) return json::object();
  return json::parse(read_text(d + "/r.json"));
}

double time_us(const json& rep) { return rep.contains("totals") ? rep["totals"]["time_us"].get<double>() : -1; }

}  // namespace

TEST(GpuSim, TutorialPlansRunOnTheA100TheyWereWrittenFor) {
  std::map<std::string, double> t;
  for (const char* dir : {"tutorial", "tutorial_v2"})
    for (const char* plan : {"default_plan", "plan", "plan_1_larger_tile", "plan_2_split_k", "plan_3_overwrite"}) {
      const std::string rel = std::string(dir) + "/" + plan + ".json";
      // With the model alongside, the reader cross-checks the two.
      const json rep = run_report("--model " + ark(std::string(dir) + "/model.json") + " --plan " + ark(rel) + " " + hw("gpu_a100"),
                                  std::string(dir) + plan);
      t[rel] = time_us(rep);
      EXPECT_GT(t[rel], 0) << rel;
    }
  // The tutorial's point: 1-warp 1x64 element-wise tiles (default) are far slower than
  // 8-warp 128x256 tiles, and splitting the last Matmul's K over all 108 SMs helps further.
  EXPECT_GT(t["tutorial/default_plan.json"], 2 * t["tutorial/plan_1_larger_tile.json"]);
  EXPECT_LT(t["tutorial/plan_2_split_k.json"], t["tutorial/plan_1_larger_tile.json"]);
  EXPECT_EQ(t["tutorial/plan.json"], t["tutorial_v2/plan.json"]);  // same plan, two file layouts
}

// --check compares a workload's layers with golden .npy files: an ARK plan run has none, so the
// option is refused rather than ignored.
TEST(GpuSim, CheckWithAnArkPlanIsRefused) {
  const auto r = run_sim("--plan " + ark("tutorial/plan_1_larger_tile.json") + " " + hw("gpu_a100") + " --check");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--check"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing to check"), std::string::npos) << r.output;
}

TEST(GpuSim, SplitKMatmulsRunConcurrentlyAndTheAddWaitsForBoth) {
  const json rep = run_report("--plan " + ark("tutorial/plan_2_split_k.json") + " " + hw("gpu_a100"), "splitk");
  const json& pgs = rep["ranks"][0]["processor_groups"];
  ASSERT_EQ(pgs.size(), 8u);
  const double s5 = pgs[5]["start_us"], e5 = pgs[5]["end_us"], s6 = pgs[6]["start_us"], e6 = pgs[6]["end_us"];
  const double s7 = pgs[7]["start_us"];
  // Both halves start together after the barrier that ends PG4, and overlap in time.
  EXPECT_DOUBLE_EQ(s5, s6);
  EXPECT_GT(pgs[5]["start_us"].get<double>(), pgs[4]["end_us"].get<double>());
  EXPECT_LT(s6, e5);
  EXPECT_LT(s5, e6);
  // The Add starts after the later of the two (plus the barrier).
  EXPECT_GE(s7, std::max(e5, e6));
  EXPECT_TRUE(pgs[7]["critical"].get<bool>());
}

TEST(GpuSim, LlamaPlansRunOnTheMi300x) {
  for (const char* plan : {"llama/plan_llama2_7b_b1_s2048.json", "llama/plan_llama_layer_gpu0.json"}) {
    const json rep = run_report("--plan " + ark(plan) + " " + hw("gpu_mi300x"), "llama");
    EXPECT_GT(time_us(rep), 0) << plan;
    EXPECT_EQ(rep["hw"]["num_sms"], 304);
    // Every processor group ran: the 304-processor plan fits the 304 CUs.
    for (const auto& pg : rep["ranks"][0]["processor_groups"]) EXPECT_GT(pg["tasks"].get<int64_t>(), 0) << plan;
  }
}

TEST(GpuSim, EachAllReduceSetIsOneEightRankRun) {
  for (const char* dir : {"allreduce-sm", "allreduce-packet"})
    for (const char* gpu : {"gpu_mi300x", "gpu_h100"}) {
      const json rep = run_report(ranks(dir) + " " + hw(gpu), dir);
      ASSERT_EQ(rep["ranks"].size(), 8u) << dir << " on " << gpu;
      for (const auto& r : rep["ranks"]) {
        // Every rank sends its share to the 7 others.
        EXPECT_GT(r["link_out_bytes"].get<double>(), 0) << dir << " rank " << r["rank"];
        EXPECT_GT(r["end_us"].get<double>(), rep["totals"]["launch_us"].get<double>());
      }
    }
  // 16 MiB over 64 GB/s peer links (MI300X) cannot beat 2 MiB per peer / 64 GB/s = 33 us.
  const json sm = run_report(ranks("allreduce-sm") + " " + hw("gpu_mi300x"), "arsm");
  EXPECT_GT(time_us(sm) - sm["totals"]["launch_us"].get<double>(), 2.0 * 1048576 / 64e3);
}

TEST(GpuSim, ModelAloneRunsArksDefaultPlanAndCanWriteIt) {
  const std::string d = scratch_dir("gpu_default");
  const json mine = run_report("--model " + ark("tutorial/model.json") + " " + hw("gpu_a100") + " --write-plan '" + d +
                                   "/plan.json'",
                               "default");
  const json written = json::parse(read_text(d + "/plan.json"));
  EXPECT_EQ(written["NumProcessors"], 108);
  EXPECT_EQ(written["TaskInfos"].size(), 6u);
  EXPECT_EQ(written["ProcessorGroups"][1]["ResourceGroups"][0]["TaskGroups"][0]["TaskRange"], json({0, 88064}));
  // Same plan as ARK's own default_plan.json: same simulated time; the written file runs too.
  const json arks = run_report("--plan " + ark("tutorial/default_plan.json") + " " + hw("gpu_a100"), "arkdefault");
  EXPECT_DOUBLE_EQ(time_us(mine), time_us(arks));
  const json again = run_report("--plan '" + d + "/plan.json' " + hw("gpu_a100"), "written");
  EXPECT_DOUBLE_EQ(time_us(again), time_us(arks));
}

TEST(GpuSim, PlansThatDoNotFitTheGpuAreInputErrors) {
  const std::string plan = "--plan " + ark("tutorial/plan.json") + " " + hw("gpu_a100");
  auto r = run_sim(plan + " --set gpu.num_sms=64");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("plan.json: /NumProcessors: plan uses 108 processors, the device has 64"), std::string::npos)
      << r.output;
  r = run_sim(plan + " --set gpu.max_warps_per_block=4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/NumWarpsPerProcessor"), std::string::npos) << r.output;
  r = run_sim(plan + " --set gpu.smem_per_block_kib=100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/TaskInfos/0/SramBytes: task needs 147456 bytes"), std::string::npos) << r.output;
  // A rank missing from a multi-rank run.
  std::string seven;
  for (int k = 0; k < 7; ++k) seven += " --plan " + ark("allreduce-sm/plan_gpu" + std::to_string(k) + ".json");
  r = run_sim(seven + " " + hw("gpu_mi300x"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no plan of rank 7"), std::string::npos) << r.output;
  // A model that is not the plan's.
  r = run_sim("--model " + ark("tutorial/model.json") + " --plan " + ark("llama/plan_llama_layer_gpu0.json") + " " + hw("gpu_mi300x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // NPU and GPU inputs at once.
  r = run_sim("--ir x.json " + plan);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("not both"), std::string::npos) << r.output;
}

TEST(GpuSim, APlanThatWaitsForeverIsAnInputErrorNamingTheWait) {
  // Two ranks: rank 0 runs a DeviceSync (signal and wait for rank 1); rank 1 never syncs.
  const std::string d = scratch_dir("gpu_deadlock");
  auto tensor = [](int id, int buf) {
    return "{\"Id\":" + std::to_string(id) + ",\"DataType\":\"FP16\",\"Shape\":[64],\"Strides\":[64],\"Offsets\":[0],"
           "\"PaddedShape\":[64],\"Buffer\":{\"Id\":" + std::to_string(buf) + ",\"Rank\":-1,\"SendTags\":[],\"RecvTags\":[]}}";
  };
  auto plan = [&](int rank, const std::string& op) {
    return "{\"Rank\":" + std::to_string(rank) + ",\"WorldSize\":2,\"NumProcessors\":1,\"NumWarpsPerProcessor\":1,"
           "\"TaskInfos\":[{\"Id\":0,\"NumWarps\":1,\"SramBytes\":0,\"Ops\":[" + op + "]}],"
           "\"ProcessorGroups\":[{\"ProcessorRange\":[0,1],\"ResourceGroups\":[{\"ProcessorRange\":[0,1],"
           "\"WarpRange\":[0,1],\"SramRange\":[0,0],\"TaskGroups\":[{\"TaskId\":0,\"TaskRange\":[0,1],\"Granularity\":1}]}]}]}";
  };
  const std::string sync = "{\"Type\":\"DeviceSync\",\"Name\":\"device_sync\",\"IsVirtual\":false,\"ReadTensors\":[" +
                           tensor(0, 0) + "],\"WriteTensors\":[" + tensor(1, 0) + "],\"ResultTensors\":[" + tensor(2, 0) +
                           "],\"Args\":{\"Rank\":{\"INT\":0},\"PeerNum\":{\"INT\":1}},\"Config\":{\"ChannelType\":\"Sm\","
                           "\"NumTasks\":1,\"NumWarps\":1,\"SramBytes\":0}}";
  const std::string copy = "{\"Type\":\"Copy\",\"Name\":\"copy\",\"IsVirtual\":false,\"ReadTensors\":[" + tensor(0, 0) +
                           "],\"WriteTensors\":[" + tensor(1, 1) + "],\"ResultTensors\":[" + tensor(2, 1) +
                           "],\"Args\":{},\"Config\":{\"NumTasks\":1,\"NumWarps\":1,\"SramBytes\":0,\"Tile\":[1,64]}}";
  {
    std::ofstream(d + "/r0.json") << plan(0, sync);
    std::ofstream(d + "/r1.json") << plan(1, copy);
  }
  const auto r = run_sim("--plan '" + d + "/r0.json' --plan '" + d + "/r1.json' " + hw("gpu_h100"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("r0.json: the plan deadlocks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 0 processor 0 warp 0 waits for a DeviceSync signal from rank 1"), std::string::npos)
      << r.output;
}

TEST(GpuSim, ReportsAreDeterministicAndTracesGroupManySms) {
  const std::string d = scratch_dir("gpu_determinism");
  const std::string args = "--plan " + ark("tutorial/plan_2_split_k.json") + " " + hw("gpu_a100") + " -q";
  for (const char* run : {"a", "b"}) {
    const std::string p = d + "/" + run;
    ASSERT_EQ(run_sim(args + " --report '" + p + ".json' --csv '" + p + ".csv' --trace '" + p + ".trace'").exit_code, 0);
  }
  for (const char* ext : {".json", ".csv", ".trace"}) {
    EXPECT_EQ(read_text(d + "/a" + ext), read_text(d + "/b" + ext)) << ext;
    EXPECT_FALSE(read_text(d + "/a" + ext).empty()) << ext;
  }
  // 108 processors > 32: tracks of ceil(108/32) = 4 SMs -> 27 tracks plus the group track.
  auto tracks = [](const json& trace) {
    int n = 0;
    for (const auto& e : trace["traceEvents"])
      if (e["name"] == "thread_name") ++n;
    return n;
  };
  const json t = json::parse(read_text(d + "/a.trace"));
  EXPECT_EQ(tracks(t), 28);
  // The CSV has a row per processor group and per op.
  const std::string csv = read_text(d + "/a.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 8 + 8);
  // 8 processors: one track per SM.
  ASSERT_EQ(run_sim(ranks("allreduce-packet") + " " + hw("gpu_mi300x") + " -q --trace '" + d + "/p.trace'").exit_code, 0);
  const json pt = json::parse(read_text(d + "/p.trace"));
  EXPECT_EQ(tracks(pt), 8 * (8 + 1));
}

// The CSV of `sim gpu-calibrate --csv`, as rows of fields (header first).
std::vector<std::vector<std::string>> calibration_csv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream csv(read_text(path));
  for (std::string line; std::getline(csv, line);) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    rows.push_back(f);
  }
  return rows;
}

// One 4-warp program over one fp32 row of 1024 (4 KiB in, 4 KiB out) on the H100 config, by
// hand: launch 5 us = 9150 cycles; task overhead 200; the load latency 600 ns = 1098 cycles;
// 8 KiB at what 4 warps keep in flight (4 x 2048 B per 1098 cycles): 1098 cycles.
// (9150 + 200 + 1098 + 1098) / 1830 MHz = 6.309 us.
TEST(GpuCalibrate, OneRowKernelPaysLaunchLatencyAndItsBytesAtWhatItsWarpsKeepInFlight) {
  const std::string d = scratch_dir("gpu_calibrate_one_row");
  const std::string f = d + "/one.json";
  std::ofstream(f) << R"({"rows":[{"kind":"copy","M":1,"N":1024,"dtype":"fp32","row_inputs":1,"col_vectors":0,)"
                      R"("row_outputs":1,"row_stats":0,"flops_per_element":1,"warps":4,"ms":0.01}]})";
  const auto r = run_sim("gpu-calibrate " + hw("gpu_h100") + " --ops '" + f + "' --csv '" + d + "/c.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = calibration_csv(d + "/c.csv");
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0][6], "predicted_us");
  EXPECT_NEAR(std::stod(rows[1][6]), (9150.0 + 200 + 1098 + 1098) / 1830, 1e-4);
}

// Thread-block clusters: 64x64x64 tiles of an 8192^3 GEMM on the H100, in grouped order (in
// row-major order HBM bounds them), are bound by the L2 (16384 tiles x 2 MiB of A and B slices =
// 34.4 GB at 10 TB/s: 3.44 ms). A 2x1 cluster reads
// the B slices once per pair (0.75 of the bytes), 2x2 both (0.5); every SM's port still gets
// all its bytes: 34.5 GB / 132 SMs at 64 B per cycle of 1830 MHz = 2.23 ms, the new bound.
TEST(GpuCalibrate, ClustersMulticastSlicesFromTheL2ButNotThroughTheSmPort) {
  const std::string d = scratch_dir("gpu_calibrate_cluster");
  const std::string f = d + "/g.json";
  const std::string row = R"({"M":8192,"N":8192,"K":8192,"ms":1,"tile":"64x64x64:4:4","group_m":8)";
  std::ofstream(f) << "{\"rows\":[" << row << "}," << row << R"(,"cluster":"2x1"},)" << row << R"(,"cluster":"2x2"}]})";
  const auto r = run_sim("gpu-calibrate " + hw("gpu_h100") + " --gemm '" + f + "' --csv '" + d + "/c.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cluster 2x2"), std::string::npos) << r.output;
  const auto rows = calibration_csv(d + "/c.csv");
  ASSERT_EQ(rows.size(), 4u);
  const double none = std::stod(rows[1][4]), pair = std::stod(rows[2][4]), quad = std::stod(rows[3][4]);
  EXPECT_GT(none, 3440);
  EXPECT_LT(pair, none);
  EXPECT_LT(quad, pair);
  const double port_us = 16384.0 * (128 * 8192 * 2 + 64 * 64 * 2) / 132 / 64 / 1830;
  EXPECT_GE(quad, port_us);
  EXPECT_LT(quad, 1.1 * port_us);
}

// Each row's bound: the term that decided most of its tasks' time, as in the reports. At 8192^3
// in grouped order a 128x256x64 tile on 8 warps spends 1280 cycles a K step on math (2 x 128 x
// 256 x 64 flop at 0.8 x 4096 flop a cycle) against 768 through its L2 port and 512 reading
// shared memory; 64x64x64 tiles need the L2 slices at 10 TB/s for 3.44 ms (the cluster test
// above) where their math takes 2.6 ms.
TEST(GpuCalibrate, EachRowNamesTheTermThatBoundsItsKernel) {
  const std::string d = scratch_dir("gpu_calibrate_bound");
  const std::string f = d + "/g.json";
  std::ofstream(f) << R"({"rows":[{"M":8192,"N":8192,"K":8192,"ms":1.5,"tile":"128x256x64:8:3","group_m":8},)"
                      R"({"M":8192,"N":8192,"K":8192,"ms":3.5,"tile":"64x64x64:4:4","group_m":8}]})";
  const auto r = run_sim("gpu-calibrate " + hw("gpu_h100") + " --gemm '" + f + "' --csv '" + d + "/c.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = calibration_csv(d + "/c.csv");
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(rows[0].size(), 11u);
  EXPECT_EQ(rows[0][9], "bound");
  EXPECT_EQ(rows[1][9], "math");
  EXPECT_EQ(rows[2][9], "l2");
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GT(std::stod(rows[i][10]), 50) << i;
    EXPECT_LE(std::stod(rows[i][10]), 100) << i;
  }
  EXPECT_NE(r.output.find("math "), std::string::npos) << r.output;
}

// Stream-K candidates (docs/gpu.md#stream-k): 3072^3 in 128x256 tiles is 288 tiles on 132 SMs,
// 2.18 waves; the persistent kernel shares the third wave out by K steps, so it beats the same
// tile data-parallel (3 waves) by about a quarter, and stays above the flops at the peak. Only
// on Hopper, and only where the tiles fill the SMs (256x4096x4096: 64 tiles of 128x128).
TEST(GpuCalibrate, StreamKSharesTheLastWaveOnHopperWhereTheTilesFillTheSms) {
  const std::string d = scratch_dir("gpu_calibrate_stream_k");
  const std::string f = d + "/g.json";
  std::ofstream(f) << R"({"rows":[{"M":3072,"N":3072,"K":3072,"ms":0.08},{"M":256,"N":4096,"K":4096,"ms":0.03}]})";
  const auto r = run_sim("gpu-calibrate " + hw("gpu_h100") + " --gemm '" + f + "' --csv '" + d + "/c.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rows = calibration_csv(d + "/c.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][6], "128x256x64:8:3 stream-K") << r.output;
  EXPECT_EQ(rows[2][6].find("stream-K"), std::string::npos) << r.output;
  const auto dp = run_sim("gpu-calibrate " + hw("gpu_h100") + " --gemm '" + f + "' --tile 128x256x64:8:3 --csv '" + d +
                          "/dp.csv'");
  ASSERT_EQ(dp.exit_code, 0) << dp.output;
  const double sk_us = std::stod(rows[1][4]), dp_us = std::stod(calibration_csv(d + "/dp.csv")[1][4]);
  EXPECT_LT(sk_us, 0.85 * dp_us);
  EXPECT_GT(sk_us, 2.0 * 3072 * 3072 * 3072 / 989.4e6);
  const auto a100 = run_sim("gpu-calibrate " + hw("gpu_a100_80gb") + " --gemm '" + f + "' --csv '" + d + "/a.csv'");
  ASSERT_EQ(a100.exit_code, 0) << a100.output;
  EXPECT_EQ(calibration_csv(d + "/a.csv")[1][6].find("stream-K"), std::string::npos) << a100.output;
}

// Median and worst |error| of a `gpu-calibrate --csv` file (error column `col`).
std::pair<double, double> median_and_worst(const std::vector<std::vector<std::string>>& rows, size_t col) {
  std::vector<double> err;
  for (size_t i = 1; i < rows.size(); ++i) err.push_back(std::fabs(std::stod(rows[i].at(col))));
  std::sort(err.begin(), err.end());
  const size_t n = err.size();
  return {n ? (err[(n - 1) / 2] + err[n / 2]) / 2 : 1e9, n ? err.back() : 1e9};
}

// Held-out row-wise kernels (configs/calibration/*_rowwise_ops.json: Liger-Kernel's published
// times of its norm, activation and softmax kernels; no key was fitted to them): median and worst
// |error| within the targets, and no kernel faster than its bytes at the memory's peak.
void expect_rowwise_targets(const std::string& config, const std::string& data_file, double peak_gbps, size_t min_rows,
                            double median_target = 10.0, double worst_target = 30.0) {
  const std::string d = scratch_dir("gpu_calibrate_ops_" + config);
  const std::string data = source_dir() + "/configs/calibration/" + data_file;
  const auto r = run_sim("gpu-calibrate " + hw(config) + " --ops '" + data + "' --csv '" + d + "/c.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = json::parse(read_text(data));
  const auto rows = calibration_csv(d + "/c.csv");
  ASSERT_EQ(rows.size(), doc["rows"].size() + 1);
  ASSERT_GE(doc["rows"].size(), min_rows);
  for (size_t i = 1; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 11u);
    const json& row = doc["rows"][i - 1];
    const double elem = row["dtype"] == "fp32" ? 4 : 2;
    const double bytes = (row["row_inputs"].get<double>() + row["row_outputs"].get<double>()) * row["M"].get<double>() *
                         row["N"].get<double>() * elem;
    EXPECT_GE(std::stod(rows[i][6]), bytes / (peak_gbps * 1e3)) << rows[i][0] << " " << rows[i][2];  // us
  }
  const auto [median, worst] = median_and_worst(rows, 7);
  EXPECT_LE(median, median_target) << r.output;
  EXPECT_LE(worst, worst_target) << r.output;
}

TEST(GpuCalibrate, HeldOutRowwiseKernelsOnH100MedianWithin10PercentWorstWithin30) {
  expect_rowwise_targets("gpu_h100", "h100_rowwise_ops.json", 3350, 30);
}

// The A100 80GB's HBM efficiency comes from a STREAM-like kernel (0.85 of 2,039 GB/s); Liger's
// norms reach 69-82% of the peak on their largest rows, so the held-out rows lean fast: 13.4%
// today (docs/validation_gpu_kernels.md). The bound keeps the model from drifting further.
TEST(GpuCalibrate, HeldOutRowwiseKernelsOnA100MedianWithin15PercentWorstWithin30) {
  expect_rowwise_targets("gpu_a100_80gb", "a100_rowwise_ops.json", 2039, 11, 15.0, 30.0);
}

// The RTX 3090 has no key measured on it (configs/gpu_rtx3090.yaml: datasheet sizes and rates,
// the H100's efficiencies and overheads), so its softmax rows check what a datasheet-only
// configuration predicts: 14.4% / 30.0% today, every row slow (docs/gpu.md). Looser bounds than
// the issue-11 targets, which apply to calibrated GPUs.
TEST(GpuCalibrate, HeldOutSoftmaxOnDatasheetOnlyRtx3090MedianWithin20PercentWorstWithin40) {
  expect_rowwise_targets("gpu_rtx3090", "rtx3090_rowwise_ops.json", 936, 12, 20.0, 40.0);
}

// The issue-11 targets: median |error| <= 10%, worst <= 30% (on the rows the fitted keys were
// fitted on: docs/gpu.md#calibration says which).
TEST(GpuCalibrate, MedianErrorAgainstMeasuredH100GemmsIsWithin10PercentWorstWithin30) {
  const std::string d = scratch_dir("gpu_calibrate");
  const auto r = run_sim("gpu-calibrate " + hw("gpu_h100") + " --gemm '" + example("gpu/h100_gemm.json") + "' --csv '" +
                         d + "/cal.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream csv(read_text(d + "/cal.csv"));
  std::string line;
  std::getline(csv, line);  // header
  std::vector<double> err;
  while (std::getline(csv, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 11u) << line;
    err.push_back(std::fabs(std::stod(f[5])));
  }
  ASSERT_EQ(err.size(), 17u);
  std::sort(err.begin(), err.end());
  EXPECT_LE(err[8], 10.0) << r.output;
  EXPECT_LE(err.back(), 30.0) << r.output;
  EXPECT_NE(r.output.find("median |error| over 17 rows"), std::string::npos);
}

// configs/gpu_h200.yaml is the H100 configuration with the H200's HBM3e and L2 (datasheet and
// device properties); no key was fitted to the kernels measured on an H200 by
// configs/calibration/measure_hopper.py, so all three files below are held out.
TEST(GpuCalibrate, HeldOutRowwiseKernelsOnH200MedianWithin10PercentWorstWithin30) {
  expect_rowwise_targets("gpu_h200", "h200_triton_rowwise.json", 4800, 48);
}

// Runs `gpu-calibrate --gemm/--conv` on configs/calibration/<data_file> on the H200 (or, for
// h100_* files, the H100): every row no faster than the chip (flops at the fp16 peak, inputs and
// output at the HBM peak), and the median and worst |error| of the rows of `kind` (all when
// empty) within the targets.
void expect_gemm_like_targets(const std::string& flag, const std::string& data_file, size_t expected_rows,
                              double median_target, double worst_target, const std::string& kind = "") {
  const bool h100 = data_file.rfind("h100_", 0) == 0;
  const double hbm_gbps = h100 ? 3350 : 4800;
  const std::string d = scratch_dir("gpu_calibrate_" + data_file);
  const std::string data = source_dir() + "/configs/calibration/" + data_file;
  const auto r = run_sim("gpu-calibrate " + hw(h100 ? "gpu_h100" : "gpu_h200") + " --" + flag + " '" + data + "' --csv '" +
                         d + "/c.csv'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = json::parse(read_text(data));
  const auto rows = calibration_csv(d + "/c.csv");
  ASSERT_EQ(rows.size(), expected_rows + 1);
  ASSERT_EQ(doc["rows"].size(), expected_rows);
  const bool conv = flag == "conv";
  const size_t pred_col = conv ? 15 : 4, err_col = conv ? 16 : 5, hbm_col = conv ? 18 : 8;
  std::vector<std::vector<std::string>> kept{rows[0]};
  for (size_t i = 1; i < rows.size(); ++i) {
    const json& row = doc["rows"][i - 1];
    double m, n, k, in_bytes;
    if (conv) {
      m = std::stod(rows[i][11]), n = std::stod(rows[i][12]), k = std::stod(rows[i][13]);
      // The input once, or only the pixels a strided 1x1 kernel samples (im2col is smaller then).
      const double input = row["N"].get<double>() * row["C"].get<double>() * row["H"].get<double>() * row["W"].get<double>();
      in_bytes = 2 * (std::min(input, m * k) + k * n);
    } else {
      m = row["M"].get<double>(), n = row["N"].get<double>(), k = row["K"].get<double>();
      in_bytes = 2 * (m * k + k * n);
    }
    const double bound_us = std::max(2 * m * n * k / 989.4e6, (in_bytes + 2 * m * n) / (hbm_gbps * 1e3));
    EXPECT_GE(std::stod(rows[i][pred_col]), bound_us) << i;
    // The L2 starts empty: every input byte is read from HBM at least once and every output byte
    // written (within 1%: the L2 pass spreads an op's bytes over its tasks in whole bytes).
    EXPECT_GE(std::stod(rows[i][hbm_col]) * 1e6, 0.99 * (in_bytes + 2 * m * n)) << i;
    if (kind.empty() || row.value("kind", "") == kind) kept.push_back(rows[i]);
  }
  ASSERT_GT(kept.size(), 1u);
  // With rows of several kinds the console gives each kind's summary before the overall one.
  if (!kind.empty()) {
    const std::string line = "kind " + kind + ": median |error| over " + std::to_string(kept.size() - 1) + " rows";
    EXPECT_NE(r.output.find(line), std::string::npos) << r.output;
  }
  const auto [median, worst] = median_and_worst(kept, err_col);
  EXPECT_LE(median, median_target) << r.output;
  EXPECT_LE(worst, worst_target) << r.output;
}

// Triton GEMMs with fixed tiles (BM/BN/BK, warps, stages, row-major and grouped tile order) and
// cuBLAS on the same shapes; dev: 8 shapes x 10 tiles, heldout: 7 other shapes x 8 other tiles.
// Today (docs/gpu.md#measured-on-an-h200-held-out): Triton dev 8.1% / 31.3% (the loaded-latency
// factor was fitted on it), heldout 9.3% / 38.9%: the median meets issue 11's 10%, the worst not
// its 30%.
TEST(GpuCalibrate, HeldOutTritonTileGemmsOnH200MedianWithin10PercentWorstWithin40) {
  expect_gemm_like_targets("gemm", "h200_triton_gemm.json", 118, 10.0, 35.0, "gemm_triton");
  expect_gemm_like_targets("gemm", "h200_triton_gemm_heldout.json", 95, 10.0, 40.0, "gemm_triton");
}

// cuBLAS rows: the best of the candidate tiles (split-K and stream-K ones included) stands for
// cuBLAS's choice. Today dev 5.7% / 14.4%, heldout 8.5% / 9.2%; before the stream-K candidates
// 3072^3 (+34%) and 1536 x 1536 x 12288 (+34%, split-K 4) were the heldout worst.
TEST(GpuCalibrate, CublasGemmsOnH200MedianWithin10PercentWorstWithin30) {
  expect_gemm_like_targets("gemm", "h200_triton_gemm.json", 118, 10.0, 20.0, "gemm_cublas");
  expect_gemm_like_targets("gemm", "h200_triton_gemm_heldout.json", 95, 10.0, 30.0, "gemm_cublas");
}

// cuDNN convolutions as implicit GEMMs with the tile, MMA and cluster cuDNN's kernel names give
// (configs/calibration/cudnn_tiles.py). Heldout (VGG-16 and ResNet-50's strided layers at batch
// 4/16/64): 5.6% / 30.8%; dev (ResNet-50 at batch 1/8/32): 11.8% / 63.6%, its worst the 7x7 first
// layer (cuDNN's special first-layer kernels) and the small-batch layers, all too fast.
TEST(GpuCalibrate, CudnnConvsOnH200HeldOutMedianWithin10PercentWorstWithin35) {
  expect_gemm_like_targets("conv", "h200_cudnn_conv_heldout.json", 30, 10.0, 35.0);
  expect_gemm_like_targets("conv", "h200_cudnn_conv.json", 36, 20.0, 70.0);
}

TEST(GpuCalibrate, HeldOutRowwiseKernelsOfOtherSizesOnH200MedianWithin10PercentWorstWithin30) {
  expect_rowwise_targets("gpu_h200", "h200_triton_rowwise_heldout.json", 4800, 64);
}

// The same programs measured on an "NVIDIA H100 80GB HBM3" (configs/calibration/h100_*: both sets
// are held out for configs/gpu_h100.yaml, whose loaded-latency factor was fitted on the H200's
// dev rows). Today: Triton heldout 9.4% / 27.6%, dev 8.8% / 40.7% (row-major small tiles at
// 8192^3, too fast); cuBLAS dev 4.7% / 15.1%, heldout 9.2% / 11.1% (with stream-K); convolutions
// heldout 6.6% / 26.4%, dev 12.0% / 65.4%; row-wise 1.5% / 13.3% and 1.3% / 10.0%: every heldout
// set of GEMM tiles, convolutions and row-wise kernels within issue 11's 10% / 30%.
TEST(GpuCalibrate, KernelsMeasuredOnTheH100AgainstItsConfiguration) {
  expect_gemm_like_targets("gemm", "h100_triton_gemm_heldout.json", 95, 10.0, 30.0, "gemm_triton");
  expect_gemm_like_targets("gemm", "h100_triton_gemm.json", 118, 10.0, 45.0, "gemm_triton");
  expect_gemm_like_targets("gemm", "h100_triton_gemm.json", 118, 10.0, 20.0, "gemm_cublas");
  expect_gemm_like_targets("gemm", "h100_triton_gemm_heldout.json", 95, 10.0, 30.0, "gemm_cublas");
  expect_gemm_like_targets("conv", "h100_cudnn_conv_heldout.json", 30, 10.0, 30.0);
  expect_gemm_like_targets("conv", "h100_cudnn_conv.json", 36, 15.0, 70.0);
  expect_rowwise_targets("gpu_h100", "h100_triton_rowwise.json", 3350, 48);
  expect_rowwise_targets("gpu_h100", "h100_triton_rowwise_heldout.json", 3350, 64);
}

// Hopper's warp-level MMA (configs/calibration/h100_triton_mma_probe.json, kernel_probe.py mma):
// the same Triton tiles at 8192^3 as wgmma and, with DISABLE_MMA_V3=1, as mma.sync, 1.6-1.85x
// slower where the math bounds them. gpu.matmul.warp_mma_share (0.5) was fitted on these rows:
// 8.8% / 18.0% with it, 13.9% / 46.0% without (every mma.sync row too fast).
TEST(GpuCalibrate, TritonTilesAsWarpLevelMmaOnTheH100) {
  expect_gemm_like_targets("gemm", "h100_triton_mma_probe.json", 16, 10.0, 20.0);
}

// cuDNN convolutions at batch 8 and 32 (VGG-16, ResNet-50 strided layers: kernel_probe.py, dev
// data beside Nsight Compute's view of each kernel) and cuBLAS on five square-ish shapes.
// PROBE=strided: ResNet-50's strided 1x1 layers beside the same layer on the subsampled input
// (the same implicit GEMM at stride 1) and beside that GEMM in cuBLAS.
TEST(GpuCalibrate, KernelProbeRowsOnTheH100) {
  expect_gemm_like_targets("conv", "h100_kernel_probe_conv.json", 12, 15.0, 30.0);
  expect_gemm_like_targets("gemm", "h100_kernel_probe_gemm.json", 5, 10.0, 15.0);
  expect_gemm_like_targets("conv", "h100_kernel_probe_strided_conv.json", 12, 15.0, 30.0);
  expect_gemm_like_targets("gemm", "h100_kernel_probe_strided_gemm.json", 6, 10.0, 20.0);
}
