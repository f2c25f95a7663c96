// The system engine on the three example pipelines (examples/pipelines/), with compute times
// given and an idle fully connected network of 10 GB/s links and 1 us latency: the makespan
// equals the one computed by hand from the pipeline's structure. One SystemC run per test
// (each test is its own process under ctest).
#include <gtest/gtest.h>

#include "frontends/pipeline/pipeline_reader.h"
#include "sim/engine/system_engine.h"
#include "tests/integration/test_util.h"

namespace npusim::test {
namespace {

constexpr double kComputeNs = 1000, kBytesPerNs = 10, kAlphaNs = 1000;

struct Sim {
  ir::System sys;
  engine::SystemSimResult r;
};

Sim run(const std::string& name, int devices) {
  Sim x;
  x.sys = frontends::pipeline::read_pipeline(source_dir() + "/examples/pipelines/" + name + ".json");
  config::SystemConfig cfg;
  for (int i = 0; i < devices; ++i) cfg.devices.push_back({"dev" + std::to_string(i), "npu", config::HwConfig::defaults(), false});
  cfg.network.topology = models::Topology::FullyConnected;
  cfg.network.bytes_per_ns = kBytesPerNs;
  cfg.network.latency_ns = kAlphaNs;
  std::vector<int> slots;
  for (size_t i = 0; i < x.sys.devices.size(); ++i) slots.push_back(static_cast<int>(i));
  std::vector<double> compute(x.sys.supertasks.size(), 0);
  for (size_t t = 0; t < x.sys.supertasks.size(); ++t)
    if (x.sys.supertasks[t].kind == ir::SuperTaskKind::Compute) compute[t] = kComputeNs;
  x.r = engine::simulate_system(x.sys, cfg, slots, 0, compute);
  return x;
}

// Bytes of the first communication supertask of a kind.
double bytes_of(const ir::System& s, ir::CollectiveKind k) {
  for (const auto& t : s.supertasks)
    if (t.comm && t.comm->kind == k) return static_cast<double>(t.comm->bytes);
  ADD_FAILURE() << "no collective of that kind";
  return 0;
}

TEST(SystemEngine, TensorParallelMlpByHand) {
  const Sim x = run("tp2_mlp", 2);
  // fx | ring all_reduce of S over 2: 2(n-1)/n S/B + 2(n-1) alpha = S/B + 2 alpha | fx
  const double S = bytes_of(x.sys, ir::CollectiveKind::AllReduce);
  EXPECT_DOUBLE_EQ(x.r.makespan_ns, kComputeNs + S / kBytesPerNs + 2 * kAlphaNs + kComputeNs);
  EXPECT_GE(x.r.critical_path.size(), 3u);
}

TEST(SystemEngine, PipelineParallelTransformerByHand) {
  const Sim x = run("pp4_transformer", 4);
  // 4 stages of compute joined by 3 send/recv of S/B + alpha.
  const double S = bytes_of(x.sys, ir::CollectiveKind::Send);
  EXPECT_DOUBLE_EQ(x.r.makespan_ns, 4 * kComputeNs + 3 * (S / kBytesPerNs + kAlphaNs));
  // The critical path runs through every stage: 4 computes and 3 transfers at least.
  int computes = 0;
  for (int t : x.r.critical_path) computes += x.sys.supertasks[static_cast<size_t>(t)].kind == ir::SuperTaskKind::Compute;
  EXPECT_EQ(computes, 4);
  // Stage k waits k * (compute + transfer) for its input: waiting on communication.
  EXPECT_DOUBLE_EQ(x.r.devices[3].comm_wait_ns, 3 * (kComputeNs + S / kBytesPerNs + kAlphaNs));
}

TEST(SystemEngine, AllGatherReduceScatterLayerByHand) {
  const Sim x = run("ag_rs8_layer", 8);
  // ring all_gather of 8 parts (S = 8 x part) and ring reduce_scatter of the per-device buffer:
  // each (n-1)/n S/B + (n-1) alpha.
  const double ag = 8 * bytes_of(x.sys, ir::CollectiveKind::AllGather);
  const double rs = bytes_of(x.sys, ir::CollectiveKind::ReduceScatter);
  const auto ring = [](double s) { return 7.0 / 8.0 * s / kBytesPerNs + 7 * kAlphaNs; };
  double expect = ring(ag) + ring(rs);
  // Compute supertasks between (and around) them run once per device, in parallel.
  int stages = 0;
  for (const auto& t : x.sys.supertasks) stages += t.kind == ir::SuperTaskKind::Compute && t.device_index == 0;
  expect += stages * kComputeNs;
  EXPECT_NEAR(x.r.makespan_ns, expect, 1e-6 * expect);
}

}  // namespace
// Memory contention (docs/system.md#contention): device 0 runs a memory-bound supertask while
// its all_reduce with device 1 crosses the links. Compute payloads are opaque ("dfg"): the
// times and bytes are given.
struct Overlap {
  ir::System sys;
  config::SystemConfig cfg;
  std::vector<double> ns, bytes;
  int m0 = -1;
};

Overlap overlap_system() {
  Overlap o;
  const std::string text = R"({"name": "overlap", "devices": {"0": "npu:0:*", "1": "npu:1:*"},
    "tensors": {"x0": {"shape": [50000], "dtype": "f32"}, "x1": {"shape": [50000], "dtype": "f32"},
                "y0": {"shape": [4], "dtype": "f32"}, "p0": {"shape": [50000], "dtype": "f32"},
                "p1": {"shape": [50000], "dtype": "f32"}, "r0": {"shape": [50000], "dtype": "f32"},
                "r1": {"shape": [50000], "dtype": "f32"}, "z0": {"shape": [4], "dtype": "f32"}},
    "supertasks": {
      "in": {"kind": "input", "inputs": [], "outputs": ["x0", "x1", "y0"]},
      "c0": {"kind": "dfg", "inputs": ["x0"], "outputs": ["p0"], "device": "0", "data": "AA=="},
      "c1": {"kind": "dfg", "inputs": ["x1"], "outputs": ["p1"], "device": "1", "data": "AA=="},
      "ar0": {"kind": "all_reduce", "inputs": ["p0"], "outputs": ["r0"], "device": "0", "group": "g", "device_idx": 0, "metadata": {"reduce_op": "sum"}},
      "ar1": {"kind": "all_reduce", "inputs": ["p1"], "outputs": ["r1"], "device": "1", "group": "g", "device_idx": 1, "metadata": {"reduce_op": "sum"}},
      "m0": {"kind": "dfg", "inputs": ["y0"], "outputs": ["z0"], "device": "0", "data": "AA=="},
      "out": {"kind": "output", "inputs": ["r0", "r1", "z0"], "outputs": []}}})";
  o.sys = frontends::pipeline::read_pipeline_text(text, "overlap.json", ".");
  for (int i = 0; i < 2; ++i) o.cfg.devices.push_back({"dev" + std::to_string(i), "npu", config::HwConfig::defaults(), false});
  o.cfg.network.topology = models::Topology::FullyConnected;
  o.cfg.network.bytes_per_ns = 10;
  o.cfg.network.latency_ns = 0;
  o.ns.assign(o.sys.supertasks.size(), 0), o.bytes.assign(o.sys.supertasks.size(), 0);
  o.m0 = o.sys.find_supertask("m0");
  o.ns[static_cast<size_t>(o.sys.find_supertask("c0"))] = 500, o.ns[static_cast<size_t>(o.sys.find_supertask("c1"))] = 1000;
  o.ns[static_cast<size_t>(o.m0)] = 100000, o.bytes[static_cast<size_t>(o.m0)] = 100.0 * 100000;  // all memory: 100 B/ns throughout
  return o;
}

TEST(SystemEngine, ComputeSharesItsMemoryWithAConcurrentCollectiveByHand) {
  const Overlap o = overlap_system();
  // The all_reduce of S = 200,000 B over 2 waits for c1: two steps of 100,000 B at 10 B/ns,
  // [1000, 11000] and [11000, 21000]; device 0 sends and receives in each, so its memory
  // carries 20 B/ns. m0 starts at 500 in 16 slices of 6,250 ns and 625,000 B; a slice sees the
  // transfers under way when it starts: the ones starting at 6,750 and 14,562.5 get 80 B/ns
  // and take 7,812.5 ns, the other 14 take 6,250: m0 ends at 500 + 2 x 7812.5 + 14 x 6250.
  const engine::SystemSimResult r = engine::simulate_system(o.sys, o.cfg, {0, 1}, 0, o.ns, o.bytes, {100, 100});
  EXPECT_DOUBLE_EQ(r.tasks[static_cast<size_t>(o.sys.find_supertask("ar0"))].end_ns, 21000);
  EXPECT_DOUBLE_EQ(r.tasks[static_cast<size_t>(o.m0)].end_ns, 500 + 2 * 7812.5 + 14 * 6250);
  EXPECT_DOUBLE_EQ(r.devices[0].mem_stall_ns, 2 * (7812.5 - 6250));
}

TEST(SystemEngine, WithoutAMemoryRateComputeTakesItsOwnTime) {
  const Overlap o = overlap_system();
  const engine::SystemSimResult r = engine::simulate_system(o.sys, o.cfg, {0, 1}, 0, o.ns, o.bytes);
  EXPECT_DOUBLE_EQ(r.tasks[static_cast<size_t>(o.m0)].end_ns, 100500);
  EXPECT_DOUBLE_EQ(r.devices[0].mem_stall_ns, 0);
}

}  // namespace npusim::test
