// One graph on an NPU (sim/run/npu_run.h).
#include "sim/run/npu_run.h"
#include "sim/run/record_build.h"

#include "sim/mapping/mapper.h"
#include "sim/ir/error.h"

#include <algorithm>

namespace npusim::run {

namespace {

// Each unit's busy cycles as its own model counted them, over the NPU's run (DMA: over all its
// channels); L2 and DRAM with the bytes they moved.
std::vector<report::UnitUse> unit_uses(const engine::SimResult& s) {
  const double end = static_cast<double>(std::max<int64_t>(1, s.end_cycle));
  auto use = [&](const char* name, int64_t busy, double capacity, int64_t bytes) {
    return report::UnitUse{name, busy, static_cast<double>(busy) / (end * capacity), bytes};
  };
  // Multi-core: each unit over all cores (per core: RunReport::multicore).
  const int cores = std::max<int>(1, static_cast<int>(s.cores.size()));
  return {use("pe_array", s.pe_busy_cycles, cores, -1),
          use("vector", s.vp_busy_cycles, cores, -1),
          use("dma", s.dma_busy_cycles, std::max(1, s.dma_channels) * cores, -1),
          use("l2", s.l2_busy_cycles, cores, s.l2_bytes),
          use("dram", s.dram_busy_cycles, 1, s.dram_bytes_read + s.dram_bytes_written)};
}

// Bytes over every NoC link, summed: each is a byte crossing one hop.
double noc_byte_hops(const engine::SimResult& s) {
  double b = 0;
  for (const auto& l : s.noc_links) b += static_cast<double>(l.bytes);
  return b;
}

// A multi-core chip's cores, NoC links, DRAM channels and each layer's split
// (docs/multicore.md#reports).
report::MulticoreUse multicore_use(const mapping::Program& prog, const engine::SimResult& s, const mapping::NpuParams& p) {
  report::MulticoreUse m;
  m.cores = p.cores;
  m.noc_topology = p.noc.topology == models::NocTopology::Mesh ? "mesh" : "crossbar";
  const double end = static_cast<double>(std::max<int64_t>(1, s.end_cycle));
  for (size_t c = 0; c < s.cores.size(); ++c) {
    const auto& x = s.cores[c];
    m.per_core.push_back({static_cast<int>(c), x.pe_busy_cycles, x.vp_busy_cycles, x.dma_busy_cycles, x.l2_bytes,
                          static_cast<double>(x.pe_busy_cycles) / end, static_cast<double>(x.vp_busy_cycles) / end});
  }
  for (const auto& l : s.noc_links) m.noc_links.push_back({l.name, l.bytes, l.busy_cycles, l.busy_cycles / end});
  m.noc_transfers = s.noc_transfers;
  m.noc_wait_cycles = s.noc_wait_cycles;
  for (double b : s.dram_channel_busy_cycles) m.dram_channel_utilization.push_back(b / end);
  std::vector<report::LayerCores> layers;
  for (const auto& lp : prog.layers) layers.push_back({lp.name, lp.split, lp.cores, 0, 0, {}});
  // Each layer's compute span on each core (the per-core timeline).
  std::vector<std::vector<report::CoreSpan>> spans(prog.layers.size());
  for (auto& per_layer : spans)
    for (size_t c = 0; c < s.cores.size(); ++c) per_layer.push_back({static_cast<int>(c), -1, -1});
  for (const auto& c : prog.commands) {
    const auto& t = s.timings[static_cast<size_t>(c.id)];
    layers[static_cast<size_t>(c.layer)].noc_bytes += t.noc_bytes;
    layers[static_cast<size_t>(c.layer)].noc_wait_cycles += t.noc_wait_cycles;
    if (c.unit != mapping::Unit::PeArray && c.unit != mapping::Unit::Vector) continue;
    report::CoreSpan& sp = spans[static_cast<size_t>(c.layer)][static_cast<size_t>(c.core)];
    sp.start_cycle = sp.start_cycle < 0 ? t.start_cycle : std::min(sp.start_cycle, t.start_cycle);
    sp.end_cycle = std::max(sp.end_cycle, t.end_cycle);
  }
  for (size_t i = 0; i < layers.size(); ++i)
    for (const auto& sp : spans[i])
      if (sp.start_cycle >= 0) layers[i].spans.push_back(sp);
  for (size_t i = 0; i < layers.size(); ++i)
    if (!prog.layers[i].on_host) m.layers.push_back(layers[i]);
  return m;
}

}  // namespace

config::HwConfig sub_chip(const config::HwConfig& hw, int64_t cores) {
  config::HwConfig c = hw;
  if (c.get_int("npu.noc.mesh_cols") > cores) c.set("npu.noc.mesh_cols=0");
  c.set("npu.cores=" + std::to_string(cores));
  return c;
}

NpuRun simulate_npu_tenants(const std::vector<const ir::Graph*>& graphs, const config::HwConfig& hw,
                            const mapping::NpuParams& params, std::vector<int> cores) {
  const int chip = params.cores, n = static_cast<int>(graphs.size());
  if (cores.empty())
    for (int i = 0; i < n; ++i) cores.push_back(chip / n + (i < chip % n ? 1 : 0));
  int used = 0;
  for (int c : cores) used += c;
  if (static_cast<int>(cores.size()) != n || used > chip || *std::min_element(cores.begin(), cores.end()) < 1)
    throw InputError("--tenant-cores", "",
                     std::to_string(n) + " workloads need " + std::to_string(n) + " core counts of at least 1 adding up to at most " +
                         hw.source() + "'s npu.cores = " + std::to_string(chip) + " (given " + std::to_string(cores.size()) +
                         " counts, " + std::to_string(used) + " cores)");
  NpuRun r;
  std::string name;
  int first_core = 0;
  for (int i = 0; i < n; ++i) {
    const config::HwConfig sub = sub_chip(hw, cores[static_cast<size_t>(i)]);
    mapping::NpuParams p = mapping::NpuParams::read(sub);
    p.max_program_bytes = params.max_program_bytes;
    mapping::Program prog = mapping::map_graph(*graphs[static_cast<size_t>(i)], sub, p);
    const int id0 = static_cast<int>(r.prog.commands.size()), layer0 = static_cast<int>(r.prog.layers.size());
    for (auto& c : prog.commands) {
      c.id += id0;
      for (int& d : c.deps) d += id0;
      c.layer += layer0;
      c.core += first_core;
      // Remote input stays among the tenant's own cores.
      if (c.remote_from.core >= 0) c.remote_from.core += first_core;
      else c.remote_from = {-1, first_core, cores[static_cast<size_t>(i)]};
      r.prog.commands.push_back(std::move(c));
    }
    for (auto& l : prog.layers) {
      l.name = "t" + std::to_string(i) + "." + l.name;
      if (l.split.empty()) l.split = "one";  // a tenant of one core
      r.prog.layers.push_back(std::move(l));
    }
    r.tenants.push_back({graphs[static_cast<size_t>(i)]->name, first_core, cores[static_cast<size_t>(i)], layer0,
                         static_cast<int>(r.prog.layers.size())});
    name += (i ? " + " : "") + graphs[static_cast<size_t>(i)]->name;
    first_core += cores[static_cast<size_t>(i)];
  }
  r.sim = engine::simulate_npu(r.prog, params);
  r.report = run::build_report(name, r.prog, r.sim.timings, hw, params, noc_byte_hops(r.sim));
  r.report.batch = 0;
  for (const ir::Graph* g : graphs) r.report.batch += g->batch();
  r.report.units = unit_uses(r.sim);
  r.report.multicore = multicore_use(r.prog, r.sim, params);
  for (const auto& t : r.tenants) {
    report::TenantUse u{t.workload, t.first_core, t.cores, INT64_MAX, 0, 0};
    for (const auto& c : r.prog.commands)
      if (c.layer >= t.first_layer && c.layer < t.end_layer) {
        u.start_cycle = std::min(u.start_cycle, r.sim.timings[static_cast<size_t>(c.id)].start_cycle);
        u.end_cycle = std::max(u.end_cycle, r.sim.timings[static_cast<size_t>(c.id)].end_cycle);
      }
    for (int l = t.first_layer; l < t.end_layer; ++l) u.macs += r.prog.layers[static_cast<size_t>(l)].macs;
    if (u.start_cycle == INT64_MAX) u.start_cycle = 0;
    r.report.multicore.tenants.push_back(u);
  }
  return r;
}

NpuRun simulate_npu_workload(const ir::Graph& g, const config::HwConfig& hw, const mapping::NpuParams& params) {
  NpuRun r;
  r.prog = mapping::map_graph(g, hw, params);
  r.sim = engine::simulate_npu(r.prog, params);
  r.report = run::build_report(g.name, r.prog, r.sim.timings, hw, params, noc_byte_hops(r.sim));
  r.report.batch = g.batch();
  r.report.units = unit_uses(r.sim);
  if (params.cores > 1) r.report.multicore = multicore_use(r.prog, r.sim, params);
  return r;
}

}  // namespace npusim::run
