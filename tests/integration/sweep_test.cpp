// `sim sweep` as a process: a sweep killed with SIGKILL and resumed gives the same bytes as an
// uninterrupted one, shards merge to the unsharded results, a failing point gives exit 1, a
// bad sweep file exit 2, and the report prints a Pareto front.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/integration/test_util.h"

using namespace npusim::test;

namespace {
// ResNet-18 b1 on 4 zipped array sizes x 4 L2 sizes x 4 DRAM bandwidths = 64 points.
std::string write_sweep(const std::string& dir, const std::string& extra = "") {
  const std::string path = dir + "/s.yaml";
  std::ofstream(path) << "workloads:\n  - zoo: resnet18\n    batch: 1\nhw: " << source_dir() << "/configs/npu.yaml\n"
                      << "axes:\n  - zip:\n      npu.pe_array.rows: 8:64:x2\n      npu.pe_array.cols: 8:64:x2\n"
                      << "  - npu.l2.size_kib: 1024:8192:x2\n  - memory.dram.bandwidth_gbps: [8, 16, 32, 64]\n"
                      << extra;
  return path;
}

size_t line_count(const std::string& path) {
  const std::string t = read_text(path);
  return static_cast<size_t>(std::count(t.begin(), t.end(), '\n'));
}

off_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// The uninterrupted reference run, shared by the tests below.
const std::string& reference_dir() {
  static const std::string dir = [] {
    const std::string d = scratch_dir("sweep_ref");
    std::system(("rm -rf '" + d + "/out'").c_str());
    const auto r = run_sim("sweep '" + write_sweep(d) + "' -o '" + d + "/out' -j 2");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return d + "/out";
  }();
  return dir;
}
}  // namespace

TEST(SweepCli, RunWritesOneRowPerPointWithPerLayerCycles) {
  const std::string out = reference_dir();
  EXPECT_EQ(line_count(out + "/results.csv"), 65u);  // header + 64
  std::istringstream in(read_text(out + "/results.jsonl"));
  std::string line;
  int expect_id = 0;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    EXPECT_EQ(row["point"], expect_id++);  // ordered by point id
    EXPECT_EQ(row["status"], "ok") << line.substr(0, 300);
    EXPECT_EQ(row["npu.pe_array.rows"], row["npu.pe_array.cols"]);  // zipped
    EXPECT_GT(row["cycles"].get<int64_t>(), 0);
    int64_t sum = 0;
    for (const auto& l : row["layers"]) sum += l["cycles"].get<int64_t>();
    EXPECT_EQ(sum, row["cycles"].get<int64_t>() + row["host_cycles"].get<int64_t>());
  }
  EXPECT_EQ(expect_id, 64);
}

TEST(SweepCli, KilledSweepResumesWithoutLosingOrRepeatingAPoint) {
  const std::string d = scratch_dir("sweep_kill");
  std::system(("rm -rf '" + d + "/out'").c_str());
  const std::string sweep = write_sweep(d), out = d + "/out", journal = out + "/journal.jsonl";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1), ::dup2(null, 2);
    const std::string bin = sim_binary();
    ::execl(bin.c_str(), bin.c_str(), "sweep", sweep.c_str(), "-o", out.c_str(), "-j", "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait (bounded) until a few points are journalled, then kill -9 mid-sweep. The journal
  // grows by one line of ~2 KB per point: 4 KB means two or more points are done.
  bool started = false;
  for (int i = 0; i < 200000 && !started; ++i) {
    started = file_size(journal) > 4096;
    if (!started) {
      const timespec tick{0, 100000};  // poll every 0.1 ms
      ::nanosleep(&tick, nullptr);
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(started) << "the sweep never wrote its journal";
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it was killed";
  const size_t before = line_count(journal);
  EXPECT_LT(before, 64u);
  EXPECT_FALSE(std::ifstream(out + "/results.csv").good());  // results are written at the end

  auto r = run_sim("sweep '" + sweep + "' -o '" + out + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // without --resume the directory is not reused
  EXPECT_NE(r.output.find("--resume"), std::string::npos) << r.output;
  r = run_sim("sweep '" + sweep + "' -o '" + out + "' --resume -j 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("already done"), std::string::npos) << r.output;

  // Complete and duplicate-free: 64 journal lines, each point once.
  std::istringstream in(read_text(journal));
  std::set<int> points;
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) points.insert(nlohmann::json::parse(line)["point"].get<int>()), ++n;
  EXPECT_EQ(n, 64u);
  EXPECT_EQ(points.size(), 64u);
  // Byte-identical to the uninterrupted run (which used another worker count).
  EXPECT_EQ(read_text(out + "/results.csv"), read_text(reference_dir() + "/results.csv"));
  EXPECT_EQ(read_text(out + "/results.jsonl"), read_text(reference_dir() + "/results.jsonl"));
}

TEST(SweepCli, ShardsMergeToTheUnshardedRun) {
  const std::string d = scratch_dir("sweep_shards");
  std::system(("rm -rf '" + d + "/s0' '" + d + "/s1' '" + d + "/merged' '" + d + "/partial'").c_str());
  const std::string sweep = write_sweep(d);
  for (int i = 0; i < 2; ++i) {
    const auto r = run_sim("sweep '" + sweep + "' --shard " + std::to_string(i) + "/2 -o '" + d + "/s" + std::to_string(i) + "' -q");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(line_count(d + "/s" + std::to_string(i) + "/results.csv"), 33u);  // header + 32
  }
  auto r = run_sim("sweep merge '" + d + "/s0' -o '" + d + "/partial'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("is missing"), std::string::npos) << r.output;
  r = run_sim("sweep merge '" + d + "/s0' '" + d + "/s1' -o '" + d + "/merged'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(d + "/merged/results.csv"), read_text(reference_dir() + "/results.csv"));
  EXPECT_EQ(read_text(d + "/merged/results.jsonl"), read_text(reference_dir() + "/results.jsonl"));
}

TEST(SweepCli, FailingPointGivesExitOneAndTheOthersStillRun) {
  const std::string d = scratch_dir("sweep_fail");
  std::system(("rm -rf '" + d + "/out'").c_str());
  // An L2 of 1 KiB cannot hold a row of resnet18's activations: those points fail in their worker.
  const auto r = run_sim("sweep --zoo resnet18:1 --hw '" + source_dir() + "/configs/npu.yaml' --set npu.l2.size_kib=8192,1 "
                         "--set npu.pe_array.rows=16,32 -o '" + d + "/out'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string csv = read_text(d + "/out/results.csv");
  EXPECT_EQ(line_count(d + "/out/results.csv"), 5u);
  EXPECT_NE(csv.find("\n0,zoo:resnet18:b1,ok,8192,16,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n2,zoo:resnet18:b1,failed,1,16,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("L2 buffer too small"), std::string::npos) << csv;
}

// A workload entry the zoo cannot build is named by the sweep file and its line, not only by the
// zoo's own message.
TEST(SweepCli, ABadZooEntryNamesTheSweepFileAndLine) {
  const std::string d = scratch_dir("sweep_bad_zoo");
  for (const char* entry : {"  - zoo: resnet18\n    batch: 0\n", "  - zoo: resnet7\n"}) {
    const std::string path = d + "/s.yaml";
    std::ofstream(path) << "workloads:\n" << entry << "hw: " << source_dir() << "/configs/npu.yaml\n"
                        << "axes:\n  - npu.l2.size_kib: [8192]\n";
    std::system(("rm -rf '" + d + "/out'").c_str());
    const auto r = run_sim("sweep '" + path + "' -o '" + d + "/out'");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("s.yaml: workloads (line 2)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(std::string(entry).find("batch") != std::string::npos ? "batch" : "resnet7"), std::string::npos)
        << r.output;
  }
}

// A negative worker count or a negative / NaN timeout means nothing: refused by name.
TEST(SweepCli, MeaninglessJobsOrTimeoutAreRefused) {
  const std::string d = scratch_dir("sweep_bad_opts");
  const std::string base = "sweep --zoo resnet18:1 --hw '" + source_dir() + "/configs/npu.yaml' --set npu.l2.size_kib=8192 -o '" + d;
  for (const auto& [opt, name] : {std::make_pair("-j -1", "--jobs"), std::make_pair("--timeout -5", "--timeout"),
                                  std::make_pair("--timeout nan", "--timeout")}) {
    const auto r = run_sim(base + "/o" + std::to_string(std::hash<std::string>{}(opt)) + "' " + opt);
    EXPECT_EQ(r.exit_code, 2) << opt << "\n" << r.output;
    EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
  }
}

// A GPU config sweeps the GPU (the library plan), with the GPU's columns; the HBM bandwidth
// moves the time. A zoo network on a system config is refused, not swept as something else.
TEST(SweepCli, AGpuConfigSweepsTheGpu) {
  const std::string d = scratch_dir("sweep_gpu");
  const auto r = run_sim("sweep --zoo resnet18:1 --hw '" + source_dir() +
                         "/configs/gpu_h100.yaml' --set gpu.hbm.bandwidth_gbps=200,3350 -q -j 2 -o '" + d + "/out'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read_text(d + "/out/results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,workload,status,gpu.hbm.bandwidth_gbps,cycles,macs,bound,kernel_us,launch_us,time_ms,tflops,hbm_bytes,"
            "kernels,num_sms,energy_uj,average_power_w,inferences_per_j,error");
  std::vector<nlohmann::json> rows;
  std::istringstream jl(read_text(d + "/out/results.jsonl"));
  for (std::string line; std::getline(jl, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_GT(rows[0]["kernel_us"].get<double>(), 1.2 * rows[1]["kernel_us"].get<double>());  // 200 GB/s is slower
  EXPECT_EQ(rows[0]["macs"], rows[1]["macs"]);
  EXPECT_FALSE(rows[0]["layers"].empty());
  EXPECT_TRUE(rows[0]["layers"][0].contains("class"));
  // The report ranks by the GPU's columns unless told otherwise.
  const auto rep = run_sim("sweep report '" + d + "/out'");
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  EXPECT_NE(rep.output.find("best by time_ms"), std::string::npos) << rep.output;
  EXPECT_NE(rep.output.find("min cycles, min num_sms"), std::string::npos) << rep.output;
  const auto sys = run_sim("sweep --zoo resnet18:1 --hw '" + source_dir() + "/configs/system_8x_h100.yaml' --set "
                           "gpu.num_sms=66,132 -q -o '" + d + "/sys'");
  EXPECT_EQ(sys.exit_code, 2) << sys.output;
  EXPECT_NE(sys.output.find("a system runs multi-device pipeline files"), std::string::npos) << sys.output;
}

// issue 27: a system config sweeps the system: a link bandwidth (system.*) and every GPU's HBM
// bandwidth (a device key) as axes of a pipeline, with the system's columns; each moves the time
// the way the hardware would. A system key on a device config and a bad system value exit 2.
// A serving sweep (llm: workloads): each point is a `sim llm` run; serving.<option> axes and
// hardware keys together. With GPT-2's KV cache squeezed to 0.04 GiB, --preempt lowers the TTFT.
TEST(SweepCli, AServingSweepRunsSimLlmPerPoint) {
  const std::string d = scratch_dir("sweep_serving");
  std::ofstream(d + "/s.yaml") << "hw: gpu_h100\nworkloads:\n  - llm: gpt2\n    input: 128\n    output: 128\n"
                               << "    requests: 30\n    arrival_rate: 400\n    max_batch_tokens: 512\n    seed: 2\n"
                               << "axes:\n  gpu.hbm.capacity_gib: [0.27]\n  serving.preempt: [false, true]\n";
  auto r = run_sim("sweep '" + d + "/s.yaml' -q -j 2 -o '" + d + "/out'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read_text(d + "/out/results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,workload,status,gpu.hbm.capacity_gib,serving.preempt,time_us,ttft_ms,ttft_p90_ms,ttft_p99_ms,tpot_ms,tpot_p90_ms,e2e_ms,"
            "e2e_p99_ms,output_tokens_per_s,output_tokens_per_s_per_device,error");
  std::vector<nlohmann::json> rows;
  std::istringstream jl(read_text(d + "/out/results.jsonl"));
  for (std::string line; std::getline(jl, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["workload"], "llm:gpt2:input=128:output=128:requests=30:arrival_rate=400:max_batch_tokens=512:seed=2");
  EXPECT_GT(rows[0]["ttft_ms"].get<double>(), rows[1]["ttft_ms"].get<double>());  // preemption runs more at once
  // The same run as `sim llm` with the point's options gives the same TTFT.
  r = run_sim("llm gpt2 --hw gpu_h100 --set gpu.hbm.capacity_gib=0.27 --input 128 --output 128 --requests 30 --arrival-rate 400 "
              "--max-batch-tokens 512 --seed 2 --preempt -q --report '" + d + "/one.json'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(read_text(d + "/one.json"))["totals"]["ttft_ms"], rows[1]["ttft_ms"]);
  // Its report ranks by TTFT, TPOT and tokens/s.
  r = run_sim("sweep report '" + d + "/out'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("best by ttft_ms"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("output_tokens_per_s (max)"), std::string::npos) << r.output;
  // Bad serving options, serving axes without llm: workloads and mixed workloads: exit 2, named.
  std::ofstream(d + "/bad.yaml") << "hw: gpu_h100\nworkloads:\n  - llm: gpt2\n    inputs: 128\n";
  r = run_sim("sweep '" + d + "/bad.yaml' -q -o '" + d + "/bad'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("workloads/inputs (line 4): unknown serving option"), std::string::npos) << r.output;
  std::ofstream(d + "/axis.yaml") << "hw: gpu_h100\nworkloads:\n  - zoo: resnet18\naxes:\n  serving.preempt: [false, true]\n";
  r = run_sim("sweep '" + d + "/axis.yaml' -q -o '" + d + "/axis'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("serving options need llm: workloads"), std::string::npos) << r.output;
  std::ofstream(d + "/mixed.yaml") << "hw: gpu_h100\nworkloads:\n  - zoo: resnet18\n  - llm: gpt2\naxes:\n  gpu.num_sms: [66]\n";
  r = run_sim("sweep '" + d + "/mixed.yaml' -q -o '" + d + "/mixed'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("sweep them apart"), std::string::npos) << r.output;
  std::ofstream(d + "/val.yaml") << "hw: gpu_h100\nworkloads:\n  - llm: gpt2\naxes:\n  serving.preempt: [maybe]\n";
  r = run_sim("sweep '" + d + "/val.yaml' -q -o '" + d + "/val'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("expected true or false, got 'maybe'"), std::string::npos) << r.output;
  // Out of the option's range: refused before any point runs (tp 0 once divided by zero).
  std::ofstream(d + "/tp0.yaml") << "hw: system_8x_h100\nworkloads:\n  - llm: llama2-7b\naxes:\n  serving.tp: [0, 2]\n";
  r = run_sim("sweep '" + d + "/tp0.yaml' -q -o '" + d + "/tp0'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("axes/serving.tp (line 5): must be in 1..4096, got 0"), std::string::npos) << r.output;
}

TEST(SweepCli, ASystemConfigSweepsLinkAndDeviceKeys) {
  const std::string d = scratch_dir("sweep_system");
  std::ofstream(d + "/s.yaml") << "workloads:\n  - ir: " << source_dir() << "/examples/pipelines/tp2_mlp.json\nhw: "
                               << source_dir() << "/configs/system_8x_h100.yaml\naxes:\n"
                               << "  system.link.bandwidth_gbps: [50, 450]\n  gpu.hbm.bandwidth_gbps: [1, 3350]\n";
  const auto r = run_sim("sweep '" + d + "/s.yaml' -q -j 2 -o '" + d + "/out'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read_text(d + "/out/results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,workload,status,system.link.bandwidth_gbps,gpu.hbm.bandwidth_gbps,time_ms,makespan_us,busy_us,comm_us,"
            "comm_wait_us,mem_stall_us,link_bytes,devices,workload_macs,energy_uj,average_power_w,link_energy_uj,error");
  std::vector<nlohmann::json> rows;
  std::istringstream jl(read_text(d + "/out/results.jsonl"));
  for (std::string line; std::getline(jl, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 4u);  // (50, 1), (50, 3350), (450, 1), (450, 3350)
  auto t = [&](size_t i) { return rows[i]["makespan_us"].get<double>(); };
  EXPECT_GT(t(0), t(2));  // slower links: longer collectives
  EXPECT_GT(t(1), t(3));
  EXPECT_GT(rows[0]["comm_us"].get<double>(), rows[2]["comm_us"].get<double>());
  EXPECT_GT(t(0), t(1));  // 1 GB/s HBM: longer compute
  EXPECT_GT(rows[0]["busy_us"].get<double>(), rows[1]["busy_us"].get<double>());
  EXPECT_EQ(rows[0]["comm_us"], rows[1]["comm_us"]);  // the HBM leaves the links alone
  EXPECT_FALSE(rows[0]["layers"].empty());
  const auto rep = run_sim("sweep report '" + d + "/out'");
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  EXPECT_NE(rep.output.find("best by time_ms"), std::string::npos) << rep.output;
  // The same from flags, with a constraint on a system key: only 450 GB/s is left.
  const auto f = run_sim("sweep --ir '" + source_dir() + "/examples/pipelines/tp2_mlp.json' --hw system_8x_h100 --set "
                         "system.link.bandwidth_gbps=50,450 --constraint 'system.link.bandwidth_gbps > 100' -q -o '" + d + "/flags'");
  ASSERT_EQ(f.exit_code, 0) << f.output;
  const std::string fcsv = read_text(d + "/flags/results.csv");
  EXPECT_EQ(std::count(fcsv.begin(), fcsv.end(), '\n'), 2) << fcsv;
  EXPECT_NE(fcsv.find(",ok,450,"), std::string::npos) << fcsv;
  // Refused by name.
  auto bad = run_sim("sweep --zoo resnet18:1 --hw npu --set system.link.bandwidth_gbps=50,450 -q -o '" + d + "/npu'");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("system keys need a system config"), std::string::npos) << bad.output;
  bad = run_sim("sweep --ir '" + source_dir() + "/examples/pipelines/tp2_mlp.json' --hw system_8x_h100 --set "
                "system.link.bandwidth_gbps=-5,450 -q -o '" + d + "/neg'");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("system.link.bandwidth_gbps = -5"), std::string::npos) << bad.output;
}

// A directory name the file system refuses (longer than NAME_MAX) is no sweep directory: exit 2
// naming it, not an internal error from std::filesystem.
TEST(SweepCli, ANameTooLongForTheFileSystemIsNoSweepDirectory) {
  const std::string dir = scratch_dir("sweep_long") + "/" + std::string(300, 'x');
  for (const char* cmd : {"sweep report", "sweep status"}) {
    const auto r = run_sim(std::string(cmd) + " '" + dir + "'");
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("not a sweep output directory"), std::string::npos) << r.output;
  }
}

TEST(SweepCli, BadSweepFileIsExitTwoNamingFileAndLine) {
  const std::string d = scratch_dir("sweep_bad");
  const auto r = run_sim("sweep '" + write_sweep(d, "constraints:\n  - npu.pe_array.rowz <= 64\n") + "' -o '" + d + "/out'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("s.yaml: constraints (line 12)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("did you mean 'npu.pe_array.rows'"), std::string::npos) << r.output;
}

TEST(SweepCli, ReportPrintsBestPointsAndTheParetoFront) {
  const auto r = run_sim("sweep report '" + reference_dir() + "' --top 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("64 rows, 64 ok, 0 failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best by time_ms (min)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Pareto front (min cycles, min pe_count, min l2_bytes)"), std::string::npos) << r.output;
  EXPECT_EQ(run_sim("sweep report '" + reference_dir() + "' --pareto nonsense").exit_code, 2);
}
