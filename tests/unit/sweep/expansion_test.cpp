// Sweep files, value lists and ranges, grid expansion, zipped axes, constraints, bad keys and
// shards: everything that happens before a point runs.
#include <set>

#include "sim/sweep/points.h"
#include "sim/sweep/sweep_spec.h"
#include "tests/unit/sweep/sweep_test_util.h"

using namespace npusim;
using namespace npusim::sweep;
using sweep_test::error_of;

namespace {
using Strings = std::vector<std::string>;

std::string sweep_file(const std::string& name, const std::string& body) {
  const std::string d = sweep_test::scratch(name);
  sweep_test::write(d + "/w.json", "{}");
  return sweep_test::write(d + "/s.yaml", "workloads:\n  - w.json\nhw: " + sweep_test::npu_yaml() + "\n" + body);
}

Expansion expand_file(const std::string& path) {
  const SweepSpec s = load_sweep_file(path);
  return expand(s, config::HwConfig::load(s.hw));
}
}  // namespace

TEST(SweepValues, ListsRangesAndGeometricSteps) {
  EXPECT_EQ(expand_values("16, 32,64", "f", "w"), (Strings{"16", "32", "64"}));
  EXPECT_EQ(expand_values("1:10:3", "f", "w"), (Strings{"1", "4", "7", "10"}));  // stop included when reached
  EXPECT_EQ(expand_values("1:9:3", "f", "w"), (Strings{"1", "4", "7"}));
  EXPECT_EQ(expand_values("2:5", "f", "w"), (Strings{"2", "3", "4", "5"}));     // step 1
  EXPECT_EQ(expand_values("8:64:x2", "f", "w"), (Strings{"8", "16", "32", "64"}));
  EXPECT_EQ(expand_values("8:100:\xC3\x97" "2", "f", "w"), (Strings{"8", "16", "32", "64"}));  // ×2, 128 > 100
  EXPECT_EQ(expand_values("0.5:2:0.5", "f", "w"), (Strings{"0.5", "1", "1.5", "2"}));
  EXPECT_EQ(expand_values("0.1:0.3:0.1", "f", "w"), (Strings{"0.1", "0.2", "0.3"}));  // no drift past 0.3
  EXPECT_EQ(expand_values("1, 4:8:x2", "f", "w"), (Strings{"1", "4", "8"}));
  EXPECT_EQ(expand_values("weight_stationary", "f", "w"), (Strings{"weight_stationary"}));
}

TEST(SweepValues, BadRangesAreInputErrors) {
  EXPECT_NE(error_of([] { expand_values("8:4", "s.yaml", "axes/x"); }).find("s.yaml: axes/x: bad range '8:4': start is above stop"), std::string::npos);
  EXPECT_NE(error_of([] { expand_values("1:8:x1", "f", "w"); }).find("factor above 1"), std::string::npos);
  EXPECT_NE(error_of([] { expand_values("1:8:0", "f", "w"); }).find("step must be above 0"), std::string::npos);
  EXPECT_NE(error_of([] { expand_values("a:8:1", "f", "w"); }).find("must be numbers"), std::string::npos);
  EXPECT_NE(error_of([] { expand_values("1:2:3:4", "f", "w"); }).find("bad range"), std::string::npos);
  EXPECT_NE(error_of([] { expand_values("1,,2", "f", "w"); }).find("empty value"), std::string::npos);
  EXPECT_NE(error_of([] { expand_values("0:1e9:1", "f", "w"); }).find("more than"), std::string::npos);
}

TEST(SweepExpansion, CartesianProductFirstAxisOutermost) {
  const Expansion ex = expand_file(sweep_file("grid", "axes:\n  npu.pe_array.rows: [16, 32]\n  npu.l2.size_kib: 1024:4096:x2\n"));
  // 2 x 3 = 6 points; the last axis steps fastest.
  ASSERT_EQ(ex.points.size(), 6u);
  EXPECT_EQ(ex.grid_size, 6);
  EXPECT_EQ(ex.points[0].values, (Strings{"16", "1024"}));
  EXPECT_EQ(ex.points[1].values, (Strings{"16", "2048"}));
  EXPECT_EQ(ex.points[3].values, (Strings{"32", "1024"}));
  EXPECT_EQ(ex.points[5].values, (Strings{"32", "4096"}));
  for (size_t i = 0; i < ex.points.size(); ++i) EXPECT_EQ(ex.points[i].id, static_cast<int>(i));
  EXPECT_EQ(ex.points[4].overrides({"npu.pe_array.rows", "npu.l2.size_kib"}),
            (Strings{"npu.pe_array.rows=32", "npu.l2.size_kib=2048"}));
}

TEST(SweepExpansion, ZippedAxesStepTogether) {
  const SweepSpec s = load_sweep_file(sweep_file("zip",
      "axes:\n  - zip:\n      npu.pe_array.rows: 8:32:x2\n      npu.pe_array.cols: [8, 16, 32]\n"
      "  - memory.dram.bandwidth_gbps: [8, 64]\n"));
  EXPECT_EQ(s.axis_keys(), (Strings{"npu.pe_array.rows", "npu.pe_array.cols", "memory.dram.bandwidth_gbps"}));
  const Expansion ex = expand(s, config::HwConfig::load(s.hw));
  // 3 zipped steps x 2 = 6, not 3 x 3 x 2 = 18; rows always equal cols.
  ASSERT_EQ(ex.points.size(), 6u);
  for (const auto& p : ex.points) EXPECT_EQ(p.values[0], p.values[1]);
  EXPECT_EQ(ex.points[5].values, (Strings{"32", "32", "64"}));
}

TEST(SweepExpansion, ConstraintsDropPointsAndIdsStayDense) {
  const Expansion ex = expand_file(sweep_file("constraint",
      "axes:\n  npu.pe_array.rows: [64, 128, 256]\n  npu.pe_array.cols: [64, 128]\n"
      "constraints:\n  - npu.pe_array.rows * npu.pe_array.cols <= 16384\n"
      "  - npu.pe_array.dataflow == 'weight_stationary'\n"));
  // Of 6: 128x128 = 16384 stays; 256x64 = 16384 stays; 256x128 = 32768 goes.
  EXPECT_EQ(ex.grid_size, 6);
  EXPECT_EQ(ex.dropped, 1);
  ASSERT_EQ(ex.points.size(), 5u);
  EXPECT_EQ(ex.points[4].values, (Strings{"256", "64"}));
  EXPECT_EQ(ex.points[4].id, 4);
  // A constraint on an unswept key reads the base config: clock_mhz is 1000 in npu.yaml.
  EXPECT_EQ(expand_file(sweep_file("base", "axes:\n  npu.pe_array.rows: [8, 16]\nconstraints: clock_mhz > 2000\n")).points.size(), 0u);
}

TEST(SweepExpansion, BadKeysNameFileLineAndClosestKey) {
  const std::string f = sweep_file("badkey", "axes:\n  npu.pe_array.rowz: [8, 16]\n");
  const std::string e = error_of([&] { load_sweep_file(f); });
  EXPECT_NE(e.find(f + ": axes/npu.pe_array.rowz (line 5)"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'npu.pe_array.rows'"), std::string::npos) << e;
  const std::string z = error_of([] { load_sweep_file(sweep_file("badzip", "axes:\n  zip:\n    npu.pe_array.rows: [8]\n    npu.l2.sise_kib: [1]\n")); });
  EXPECT_NE(z.find("did you mean 'npu.l2.size_kib'"), std::string::npos) << z;
  const std::string c = error_of([] { expand_file(sweep_file("badc", "axes:\n  npu.pe_array.rows: [8]\nconstraints:\n  - npu.pe_array.colz > 1\n")); });
  EXPECT_NE(c.find("constraints (line 7)"), std::string::npos) << c;
  EXPECT_NE(c.find("did you mean 'npu.pe_array.cols'"), std::string::npos) << c;
}

TEST(SweepExpansion, BadValuesAndShapesAreInputErrors) {
  auto err = [](const std::string& name, const std::string& body) { return error_of([&] { expand_file(sweep_file(name, body)); }); };
  EXPECT_NE(err("v1", "axes:\n  npu.pe_array.rows: [8, eight]\n").find("expected an integer, got 'eight'"), std::string::npos);
  EXPECT_NE(err("v2", "axes:\n  npu.pe_array.dataflow: [diagonal]\n").find("not one of"), std::string::npos);
  EXPECT_NE(err("v3", "axes:\n  zip:\n    npu.pe_array.rows: [8, 16]\n    npu.pe_array.cols: [8]\n").find("equal length"), std::string::npos);
  EXPECT_NE(err("v4", "axes:\n  npu.pe_array.rows: [8, 8]\n").find("appears twice"), std::string::npos);
  EXPECT_NE(err("v5", "axes:\n  - npu.pe_array.rows: [8]\n  - npu.pe_array.rows: [16]\n").find("more than one axis"), std::string::npos);
  EXPECT_NE(err("v6", "axes:\n  npu.pe_array.rows: [8]\nmystery: 1\n").find("unknown field"), std::string::npos);
  EXPECT_NE(err("v7", "").find("axes: missing"), std::string::npos);
  EXPECT_NE(err("v8", "axes: [\n").find("malformed YAML"), std::string::npos);
  EXPECT_NE(error_of([] { load_sweep_file("/nonexistent/s.yaml"); }).find("cannot open file"), std::string::npos);
}

TEST(SweepSpecFile, PathsResolveAgainstTheSweepFileAndZooEntriesAreNamed) {
  const std::string d = sweep_test::scratch("paths");
  const SweepSpec s = load_sweep_file(sweep_test::write(d + "/s.yaml",
      "workloads:\n  - ir: nets/a.json\n  - zoo: resnet50\n    batch: 4\nhw: ../hw.yaml\naxes:\n  npu.pe_array.rows: [8]\n"));
  ASSERT_EQ(s.workloads.size(), 2u);
  EXPECT_EQ(s.workloads[0].name, "nets/a.json");
  EXPECT_EQ(s.workloads[0].path, d + "/nets/a.json");
  EXPECT_EQ(s.workloads[1].name, "zoo:resnet50:b4");
  EXPECT_EQ(s.workloads[1].zoo_batch, 4);
  EXPECT_EQ(s.hw, std::filesystem::path(d).parent_path().string() + "/hw.yaml");
  // The manifest form reads back to the same sweep.
  const SweepSpec back = spec_from_json(spec_to_json(s), "m.json");
  EXPECT_EQ(back.axis_keys(), s.axis_keys());
  EXPECT_EQ(back.workloads[1].zoo_model, "resnet50");
  EXPECT_EQ(back.workloads[0].path, s.workloads[0].path);
}

TEST(SweepSpecFlags, SetOneLinersBuildOneAxisPerKey) {
  const SweepSpec s = sweep_from_flags({"a.json"}, {"resnet50:2"}, sweep_test::npu_yaml(),
                                       {"npu.pe_array.rows=16,32", "memory.dram.bandwidth_gbps=8:32:x2"}, {});
  EXPECT_EQ(s.axes.size(), 2u);
  EXPECT_EQ(s.axes[1].values.size(), 3u);  // 8, 16, 32
  EXPECT_EQ(s.workloads[1].name, "zoo:resnet50:b2");
  EXPECT_EQ(expand(s, config::HwConfig::load(s.hw)).points.size(), 6u);
  EXPECT_NE(error_of([] { sweep_from_flags({"a.json"}, {}, "x", {"npu.pe_array.rowz=1"}, {}); }).find("did you mean"), std::string::npos);
  EXPECT_NE(error_of([] { sweep_from_flags({"a.json"}, {}, "x", {"rows"}, {}); }).find("expected path.to.key="), std::string::npos);
  EXPECT_NE(error_of([] { sweep_from_flags({"a.json"}, {"resnet50:x"}, "x", {"npu.pe_array.rows=1"}, {}); }).find("model[:batch"), std::string::npos);
}

TEST(SweepShard, ShardsAreDisjointAndCoverEveryPoint) {
  const Shard s = Shard::parse("2/4");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  std::multiset<int> seen;
  for (int i = 0; i < 3; ++i)
    for (int p = 0; p < 10; ++p)
      if (Shard::parse(std::to_string(i) + "/3").contains(p)) seen.insert(p);
  ASSERT_EQ(seen.size(), 10u);  // each of 10 points in exactly one of 3 shards
  for (int p = 0; p < 10; ++p) EXPECT_EQ(seen.count(p), 1u);
  for (const char* bad : {"4/4", "-1/4", "1/0", "1", "a/b", "1/4x", "/4"})
    EXPECT_NE(error_of([&] { Shard::parse(bad); }).find("expected i/N"), std::string::npos) << bad;
}
