// The sweep driver with a fake simulation (no SystemC): output files, failures, resume after
// a partial journal, determinism, shards and merge, and refusing a directory of another sweep.
#include "sim/sweep/sweep_run.h"

#include <sstream>

#include "sim/sweep/results.h"
#include "tests/unit/sweep/sweep_test_util.h"

using namespace npusim;
using namespace npusim::sweep;
using sweep_test::error_of;
using sweep_test::read;

namespace {
// 4 rows/cols x 3 L2 sizes = 12 points, one zoo workload (generated in-process).
SweepSpec small_sweep() {
  return sweep_from_flags({}, {"resnet18:1"}, sweep_test::npu_yaml(),
                          {"npu.pe_array.rows=8:64:x2", "npu.l2.size_kib=1024,2048,4096"}, {});
}

bool g_point4_fails = true;

Row fake(const run::Workload&, const std::string& hw, const std::vector<std::string>& overrides) {
  const config::HwConfig cfg = config::HwConfig::load(hw, overrides);
  if (g_point4_fails && cfg.get_int("npu.pe_array.rows") == 16 && cfg.get_int("npu.l2.size_kib") == 2048)
    throw InputError("mapper", "layer x", "L2 too small");  // point 4 fails
  return report::sweep_metrics(sweep_test::fake_report(cfg));
}

int run_fake(const std::string& dir, SweepRunOptions o = {}, const SweepSpec* spec = nullptr) {
  const SweepSpec s = small_sweep();
  o.out_dir = dir;
  o.quiet = true;
  o.jobs = o.jobs ? o.jobs : 2;
  std::ostringstream log;
  return run_sweep(spec ? spec : &s, o, fake, log);
}

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }
}  // namespace

TEST(SweepRun, WritesSortedResultsAndRecordsTheFailingPoint) {
  const std::string d = sweep_test::scratch("run");
  EXPECT_EQ(run_fake(d), 1);  // one point failed
  const std::string csv = read(d + "/results.csv");
  EXPECT_EQ(lines(csv), 13u);  // header + 12 points
  // Point 4 = rows 16 (second value) x L2 2048 (second value): 1 * 3 + 1.
  EXPECT_NE(csv.find("\n4,zoo:resnet18:b1,failed,16,2048,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("L2 too small"), std::string::npos);
  // Point 0: 1e6 / (8 * 64) + 1024 = 1953 + 1024 = 2977 cycles (fake_report).
  EXPECT_NE(csv.find("\n0,zoo:resnet18:b1,ok,8,1024,2977,"), std::string::npos) << csv;
  EXPECT_EQ(lines(read(d + "/journal.jsonl")), 12u);
  EXPECT_EQ(lines(read(d + "/timing.csv")), 13u);
}

TEST(SweepRun, ResumeRunsOnlyTheMissingPointsAndGivesTheSameBytes) {
  const std::string full = sweep_test::scratch("full"), part = sweep_test::scratch("part");
  run_fake(full);
  run_fake(part);
  // Keep 5 journal lines and a torn sixth, as a kill during a write would leave it.
  std::istringstream in(read(part + "/journal.jsonl"));
  std::string kept, line;
  for (int i = 0; i < 5 && std::getline(in, line); ++i) kept += line + "\n";
  std::getline(in, line);
  sweep_test::write(part + "/journal.jsonl", kept + line.substr(0, line.size() / 2));
  std::filesystem::remove(part + "/results.csv");
  SweepRunOptions o;
  EXPECT_NE(error_of([&] { run_fake(part, o); }).find("add --resume"), std::string::npos);
  o.resume = true;
  o.jobs = 1;  // another worker count: same results
  EXPECT_EQ(run_fake(part, o), 1);
  EXPECT_EQ(lines(read(part + "/journal.jsonl")), 12u);  // 5 kept + 7 run, none twice
  EXPECT_EQ(read(part + "/results.csv"), read(full + "/results.csv"));
  EXPECT_EQ(read(part + "/results.jsonl"), read(full + "/results.jsonl"));
  // Resume without the sweep: the manifest knows it. Nothing left to run.
  std::ostringstream log;
  o.out_dir = part;
  EXPECT_EQ(run_sweep(nullptr, o, fake, log), 1);
  EXPECT_EQ(lines(read(part + "/journal.jsonl")), 12u);
}

TEST(SweepRun, ADirectoryOfAnotherSweepIsRefused) {
  const std::string d = sweep_test::scratch("other");
  run_fake(d);
  SweepSpec other = sweep_from_flags({}, {"resnet18:1"}, sweep_test::npu_yaml(), {"npu.pe_array.rows=8,16"}, {});
  SweepRunOptions o;
  o.resume = true;
  EXPECT_NE(error_of([&] { run_fake(d, o, &other); }).find("holds a different sweep"), std::string::npos);
  o.shard = Shard::parse("1/2");
  EXPECT_NE(error_of([&] { run_fake(d, o); }).find("holds shard 0/1"), std::string::npos);
}

TEST(SweepRun, ShardsMergeToTheUnshardedResults) {
  const std::string full = sweep_test::scratch("m_full"), root = sweep_test::scratch("m_shards");
  run_fake(full);
  std::vector<std::string> dirs;
  for (int i = 0; i < 3; ++i) {
    SweepRunOptions o;
    o.shard = Shard::parse(std::to_string(i) + "/3");
    dirs.push_back(root + "/s" + std::to_string(i));
    run_fake(dirs.back(), o);
    EXPECT_EQ(lines(read(dirs.back() + "/journal.jsonl")), 4u);  // 12 points / 3 shards
  }
  std::ostringstream log;
  EXPECT_EQ(merge_sweeps({dirs[0], dirs[1]}, root + "/missing", log), 1);  // shard 2 absent
  EXPECT_NE(log.str().find("point 2 zoo:resnet18:b1 is missing"), std::string::npos) << log.str();
  EXPECT_FALSE(std::filesystem::exists(root + "/missing/results.csv"));
  log.str("");
  EXPECT_EQ(merge_sweeps({dirs[0], dirs[1], dirs[2], dirs[1]}, root + "/dup", log), 1);
  EXPECT_NE(log.str().find("is in both"), std::string::npos) << log.str();
  EXPECT_EQ(merge_sweeps(dirs, root + "/merged", log), 0);
  EXPECT_EQ(read(root + "/merged/results.csv"), read(full + "/results.csv"));
  EXPECT_EQ(read(root + "/merged/results.jsonl"), read(full + "/results.jsonl"));
  std::vector<std::string> keys;
  EXPECT_EQ(load_rows(root + "/merged", &keys).size(), 12u);
  EXPECT_EQ(keys, (std::vector<std::string>{"npu.pe_array.rows", "npu.l2.size_kib"}));
  // A directory of a different sweep cannot join.
  const std::string other = root + "/other";
  SweepSpec s2 = sweep_from_flags({}, {"resnet18:1"}, sweep_test::npu_yaml(), {"npu.pe_array.rows=8"}, {});
  run_fake(other, {}, &s2);
  EXPECT_NE(error_of([&] { merge_sweeps({dirs[0], other}, root + "/x", log); }).find("holds a different sweep"), std::string::npos);
}

TEST(SweepRun, RetryFailedRunsOnlyTheFailedPointsAgain) {
  const std::string d = sweep_test::scratch("retry");
  ASSERT_EQ(run_fake(d), 1);
  const std::string ok_before = read(d + "/results.csv");
  g_point4_fails = false;  // e.g. a timeout that was too short
  SweepRunOptions o;
  o.resume = true;
  o.retry_failed = true;
  const int rc = run_fake(d, o);
  g_point4_fails = true;
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(lines(read(d + "/journal.jsonl")), 12u);
  const std::string csv = read(d + "/results.csv");
  // Point 4: 1e6 / (16 * 64) + 2048 = 976 + 2048 = 3024 cycles.
  EXPECT_NE(csv.find("\n4,zoo:resnet18:b1,ok,16,2048,3024,"), std::string::npos) << csv;
  // Every other row is unchanged.
  EXPECT_EQ(csv.substr(0, csv.find("\n4,")), ok_before.substr(0, ok_before.find("\n4,")));
}
