// Result rows, CSV quoting, the journal (torn last line, damage), sorted result files, the
// Pareto front and the text report.
#include "sim/sweep/results.h"

#include "sim/sweep/sweep_report.h"
#include "tests/unit/sweep/sweep_test_util.h"

using namespace npusim;
using namespace npusim::sweep;
using sweep_test::error_of;

namespace {
const std::vector<std::string> kKeys = {"npu.pe_array.rows", "memory.dram.bandwidth_gbps"};

Row ok_row(int id, const std::string& rows, int64_t cycles, const std::string& workload = "w") {
  Point p;
  p.id = id;
  p.values = {rows, "12.5"};
  const auto cfg = config::HwConfig::load(sweep_test::npu_yaml(), {"npu.pe_array.rows=" + rows});
  auto rep = sweep_test::fake_report(cfg);
  rep.npu_cycles = cycles;
  const Row m = report::sweep_metrics(rep);
  return make_row(p, workload, kKeys, &m, "");
}
}  // namespace

TEST(SweepResults, RowHoldsAxesMetricsAndLayers) {
  const Row r = ok_row(3, "32", 2000);
  EXPECT_EQ(r["point"], 3);
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["npu.pe_array.rows"], 32);     // numbers stay numbers
  EXPECT_EQ(r["memory.dram.bandwidth_gbps"], 12.5);
  EXPECT_EQ(r["cycles"], 2000);
  EXPECT_DOUBLE_EQ(r["time_ms"].get<double>(), 0.002);  // 2000 cycles at 1000 MHz
  EXPECT_EQ(r["pe_count"], 32 * 64);                     // cols 64 from npu.yaml
  EXPECT_EQ(r["l2_bytes"], 8192 * 1024);
  EXPECT_EQ(r["bound"], "compute");
  EXPECT_FALSE(r["energy_uj"].is_null());  // npu.yaml has energy figures
  EXPECT_EQ(r["layers"][0]["op"], "conv2d");
  const auto no_energy = config::HwConfig::load(sweep_test::npu_yaml(),
      {"energy.pj_per_mac=0", "energy.pj_per_mac_int8=0", "energy.pj_per_mac_fp8=0", "energy.pj_per_mac_fp16=0",
       "energy.pj_per_mac_bf16=0", "energy.pj_per_mac_fp32=0", "energy.pj_per_vector_lane_cycle=0", "energy.pj_per_dram_byte=0",
       "energy.pj_per_sram_byte=0", "energy.pj_per_dma_byte=0", "energy.static_w=0"});
  const auto unpowered = report::sweep_metrics(sweep_test::fake_report(no_energy));
  EXPECT_TRUE(unpowered["energy_uj"].is_null());
  EXPECT_TRUE(unpowered["average_power_w"].is_null());
  EXPECT_TRUE(unpowered["inferences_per_j"].is_null());
}

TEST(SweepResults, DominantBoundIsTheOneWithMostCycles) {
  const auto cfg = config::HwConfig::load(sweep_test::npu_yaml());
  auto rep = sweep_test::fake_report(cfg);  // one compute layer of 1000000/4096 + 8192 = 8436 cycles
  report::LayerRow a, b;
  a.bound = b.bound = "memory";
  a.cycles = 5000;
  b.cycles = 4000;  // memory 9000 > compute 8436
  rep.layers.push_back(a);
  rep.layers.push_back(b);
  EXPECT_EQ(report::sweep_metrics(rep)["bound"], "memory");
}

TEST(SweepResults, FailedRowsKeepTheErrorAndQuoteItInCsv) {
  Point p;
  p.id = 7;
  p.values = {"8", "16"};
  const Row r = make_row(p, "w", kKeys, nullptr, "bad value, \"really\"");
  EXPECT_EQ(r["status"], "failed");
  EXPECT_TRUE(r["cycles"].is_null());
  const std::string line = csv_line(r, kKeys);
  // point,workload,status,2 axes,13 empty metrics,error (commas inside quotes, quotes doubled)
  EXPECT_EQ(line, "7,w,failed,8,16,,,,,,,,,,,,,,\"bad value, \"\"really\"\"\"\n");
  EXPECT_EQ(csv_header(kKeys).substr(0, 56), "point,workload,status,npu.pe_array.rows,memory.dram.band");
}

TEST(SweepJournal, TornLastLineIsIgnoredAndCutOff) {
  const std::string d = sweep_test::scratch("journal");
  {
    Journal j(d + "/journal.jsonl");
    j.append(ok_row(0, "8", 10));
    j.append(ok_row(1, "16", 20));
  }
  std::ofstream(d + "/journal.jsonl", std::ios::app) << "{\"point\":2,\"work";  // killed mid-write
  EXPECT_EQ(Journal::read(d + "/journal.jsonl", false).size(), 2u);
  EXPECT_EQ(Journal::read(d + "/journal.jsonl", true).size(), 2u);
  const std::string text = sweep_test::read(d + "/journal.jsonl");
  EXPECT_EQ(text.back(), '\n');  // repaired: ends after the last complete line
  EXPECT_EQ(text.find("\"point\":2"), std::string::npos);
  Journal(d + "/journal.jsonl").append(ok_row(2, "32", 30));
  EXPECT_EQ(Journal::read(d + "/journal.jsonl", false).size(), 3u);
  // Damage before the last line is not a torn write: refuse rather than guess.
  sweep_test::write(d + "/bad.jsonl", "garbage\n" + ok_row(0, "8", 1).dump() + "\n");
  EXPECT_NE(error_of([&] { Journal::read(d + "/bad.jsonl", false); }).find("line 1"), std::string::npos);
  EXPECT_TRUE(Journal::read(d + "/none.jsonl", false).empty());
}

TEST(SweepResults, FilesAreSortedByPointThenWorkloadAndTimingIsApart) {
  std::vector<Row> finish_order = {ok_row(1, "16", 20, "b"), ok_row(0, "8", 10, "b"), ok_row(1, "16", 21, "a"),
                                   ok_row(0, "8", 11, "a")};
  for (size_t i = 0; i < finish_order.size(); ++i) finish_order[i]["wall_s"] = 0.5 + i;
  auto write_all = [&](const std::string& d) {
    {
      Journal j(d + "/journal.jsonl");
      for (const auto& r : finish_order) j.append(r);
    }
    const auto entries = Journal::index(d + "/journal.jsonl", 0, false);
    EXPECT_EQ(entries.size(), 4u);
    write_results(d, {d + "/journal.jsonl"}, entries, kKeys, {"a", "b"});
  };
  const std::string d = sweep_test::scratch("files");
  write_all(d);
  const std::string csv = sweep_test::read(d + "/results.csv");
  // Rows: (0,a) (0,b) (1,a) (1,b), whatever the finish order.
  EXPECT_LT(csv.find("\n0,a,"), csv.find("\n0,b,"));
  EXPECT_LT(csv.find("\n0,b,"), csv.find("\n1,a,"));
  EXPECT_LT(csv.find("\n1,a,"), csv.find("\n1,b,"));
  EXPECT_EQ(sweep_test::read(d + "/results.jsonl").find("wall_s"), std::string::npos);
  EXPECT_EQ(sweep_test::read(d + "/timing.csv"), "point,workload,status,wall_s\n0,a,ok,3.5\n0,b,ok,1.5\n1,a,ok,2.5\n1,b,ok,0.5\n");
  // Another finish order gives the same bytes.
  std::swap(finish_order[0], finish_order[3]);
  const std::string d2 = sweep_test::scratch("files2");
  write_all(d2);
  EXPECT_EQ(sweep_test::read(d2 + "/results.csv"), csv);
  EXPECT_EQ(sweep_test::read(d2 + "/results.jsonl"), sweep_test::read(d + "/results.jsonl"));
}

TEST(SweepPareto, FrontKeepsOnlyUndominatedRows) {
  // (cycles, pe): row 2 (5,4) is dominated by row 1 (4,4); row 3 ties row 0 exactly: both stay.
  const std::vector<std::vector<double>> v = {{10, 1}, {4, 4}, {5, 4}, {10, 1}, {1, 16}, {2, 16}};
  EXPECT_EQ(pareto_front(v), (std::vector<size_t>{0, 1, 3, 4}));
  EXPECT_TRUE(pareto_front({}).empty());
}

TEST(SweepReport, BestPointsAndParetoFrontPerWorkload) {
  std::vector<Row> rows = {ok_row(0, "8", 900), ok_row(1, "16", 500), ok_row(2, "32", 600)};
  Point p;
  p.id = 3;
  p.values = {"64", "1"};
  rows.push_back(make_row(p, "w", kKeys, nullptr, "boom"));
  ReportOptions o;
  o.best = {"cycles", "max:pe_count"};
  o.pareto = {"cycles", "pe_count"};
  o.top = 1;
  const std::string text = sweep_report(rows, kKeys, o);
  EXPECT_NE(text.find("4 rows, 3 ok, 1 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("best by cycles (min)"), std::string::npos) << text;
  EXPECT_NE(text.find("best by pe_count (max)"), std::string::npos) << text;
  // Point 2 (32 rows: 600 cycles, 2048 PEs) is beaten by point 1 (500 cycles, 1024 PEs).
  EXPECT_NE(text.find("Pareto front (min cycles, min pe_count): 2 of 3 points"), std::string::npos) << text;
  EXPECT_NE(error_of([&] { o.pareto = {"cycels"}; sweep_report(rows, kKeys, o); }).find("not a result column"), std::string::npos);
}

// Sweep result columns and the JSON report's totals are both read off report::run_fields():
// the sweep columns keep the order results.csv has always had, and every totals key is a field.
TEST(SweepResults, ColumnsAndReportTotalsComeFromTheRunFieldTable) {
  const std::vector<std::string> expected = {"cycles", "host_cycles", "time_ms", "pe_count", "l2_bytes",
                                             "pe_utilization", "dram_read_bytes", "dram_write_bytes", "dram_bytes",
                                             "bound", "energy_uj", "average_power_w", "inferences_per_j"};
  EXPECT_EQ(metric_columns(), expected);
  const auto cfg = config::HwConfig::load(sweep_test::npu_yaml());
  const auto rep = sweep_test::fake_report(cfg);
  const auto totals = report::to_json(rep)["totals"];
  size_t in_totals = 0;
  for (const auto& f : report::run_fields()) {
    if (!(f.in & report::kInTotals)) continue;
    ++in_totals;
    ASSERT_TRUE(totals.contains(f.name)) << f.name;
    EXPECT_EQ(totals[f.name], f.value(rep)) << f.name;
  }
  EXPECT_EQ(totals.size(), in_totals);
  EXPECT_EQ(totals["npu_cycles"], rep.npu_cycles);
  EXPECT_EQ(report::sweep_metrics(rep)["cycles"], rep.npu_cycles);
}
