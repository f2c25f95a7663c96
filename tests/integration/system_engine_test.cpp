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
}  // namespace npusim::test
