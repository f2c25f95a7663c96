// `sim --ir PIPELINE --hw SYSTEM`: a multi-device pipeline (docs/system.md). Each distinct
// compute supertask is simulated once on its device's own model, in a forked child (SystemC
// elaborates once per process); then one SystemC run plays the whole system: supertasks in
// the pipeline's order, collectives as their steps over the links.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "sim/cli/commands.h"
#include "sim/config/system_config.h"
#include "sim/engine/gpu_engine.h"
#include "sim/engine/npu_engine.h"
#include "sim/engine/system_engine.h"
#include "sim/ir/error.h"
#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_library.h"
#include "sim/mapping/gpu_lower.h"
#include "sim/mapping/mapper.h"
#include "sim/report/report.h"
#include "sim/report/system_report.h"
#include "sim/sweep/runner.h"

namespace npusim::cli {

namespace {

// What decides a compute supertask's time on a device: its ops with shapes, dtypes and
// attributes, not their names (a transformer's 32 layers are one simulation).
std::string structure_key(const ir::Graph& g) {
  std::ostringstream k;
  // Edges by the producer's position, not its name: every layer and device names its ops apart.
  std::map<std::string, size_t> position;
  for (size_t i = 0; i < g.layers.size(); ++i) position.emplace(g.layers[i].name, i);
  for (const ir::Layer& l : g.layers) {
    k << ir::op_name(l.op) << (l.device == ir::Device::Cpu ? "@cpu" : "") << "|";
    for (size_t i = 0; i < l.input_shapes.size(); ++i)
      k << ir::shape_str(l.input_shapes[i]) << ir::dtype_name(l.input_dtypes[i]) << (l.inputs.size() > i && g.tensor(l.inputs[i]).is_parameter() ? "p" : "") << ",";
    for (size_t i = 0; i < l.output_shapes.size(); ++i) k << ir::shape_str(l.output_shapes[i]) << ir::dtype_name(l.output_dtypes[i]) << ",";
    k << l.kernel[0] << l.kernel[1] << l.stride[0] << l.stride[1] << l.padding[0] << l.padding[1] << l.padding[2] << l.padding[3]
      << l.dilation[0] << l.groups << l.transpose_a << l.transpose_b << l.keepdims << l.opaque_flops << "/" << l.opaque_bytes;
    for (auto a : l.axes) k << "a" << a;
    for (auto p : l.perm) k << "p" << p;
    for (const auto& p : l.previous) {
      const auto it = position.find(ir::edge_layer(p));
      k << "<" << (it == position.end() ? std::string("in") : std::to_string(it->second)) << ":" << ir::edge_port(p);
    }
    k << ";";
  }
  return k.str();
}

// One device simulation in this (child) process.
struct DeviceRun {
  double ns = 0;           // the supertask's time
  double memory_bytes = 0; // its DRAM / HBM traffic (0: not known, no memory contention)
  double memory_rate = 0;  // the device's memory bytes per ns
};
DeviceRun simulate_on_device(const ir::Graph& g, const config::HwConfig& hw, bool gpu, const RunOptions& o) {
  DeviceRun r;
  if (gpu) {  // the library plan, or ARK's DefaultPlanner (--gpu-plan ark)
    const models::GpuParams params = models::GpuParams::read(hw);
    mapping::require_gpu_dtypes(g, params, hw.source());
    r.memory_rate = params.hbm_bytes_per_cycle * params.cycles_per_ns();
    if (o.gpu_plan == "ark") {
      const mapping::ArkLowering low = mapping::lower_workload(g);
      const mapping::GpuSimResult sim =
          engine::simulate_gpu({mapping::default_plan(low.model, params.num_sms, params.arch)}, params);
      r.ns = sim.end_cycles / sim.clock_mhz * 1000.0;
      return r;
    }
    const engine::LibraryRun run = engine::simulate_library(mapping::library_plan(g, params, library_options(o)), params);
    r.ns = run.timeline.total_us * 1000.0;
    for (const mapping::KernelSim& k : run.sims) r.memory_bytes += k.hbm_bytes;
    return r;
  }
  const mapping::NpuParams params = mapping::NpuParams::read(hw);  // once per run
  const mapping::Program prog = mapping::map_graph(g, hw, params);
  const engine::SimResult sim = engine::simulate_npu(prog, params);
  const report::RunReport rep = report::build_report(g.name, prog, sim.timings, hw, params);
  r.ns = (rep.npu_cycles + rep.host_cycles) / params.clock_mhz * 1000.0;
  r.memory_bytes = static_cast<double>(rep.dram_read_bytes + rep.dram_write_bytes);
  r.memory_rate = params.dram.bytes_per_cycle * params.clock_mhz / 1000.0;
  return r;
}

}  // namespace

int run_system(const ir::System& sys, const RunOptions& o) {
  if (!config::is_system_config(o.hw))
    throw InputError(o.hw, "", "a pipeline runs on a system: give --hw a YAML with a `system:` section (docs/system.md), "
                               "e.g. configs/system_2x_npu.yaml");
  const config::SystemConfig cfg = config::SystemConfig::load(o.hw);
  // Device slots: accelerators in file order onto the system's devices; cpu slots on host lanes.
  std::vector<int> slot_device(sys.devices.size(), -1);
  int next = 0, lanes = 0;
  for (size_t i = 0; i < sys.devices.size(); ++i) {
    if (sys.devices[i].is_cpu()) {
      slot_device[i] = -2 - lanes++;
      continue;
    }
    if (next >= static_cast<int>(cfg.devices.size()))
      throw InputError(o.hw, "system.devices", "the pipeline places work on " + std::to_string(next + 1) + "+ accelerators ('" +
                                                   sys.devices[i].id + "' is one too many) but the system has " +
                                                   std::to_string(cfg.devices.size()));
    slot_device[i] = next++;
  }
  const int n_dev = static_cast<int>(cfg.devices.size());
  for (auto& s : slot_device)
    if (s <= -2) s = n_dev + (-2 - s);
  for (const ir::SuperTask& t : sys.supertasks)
    if (t.kind == ir::SuperTaskKind::Communication && t.device_index >= 0 && slot_device[static_cast<size_t>(t.device_index)] >= n_dev)
      throw InputError(sys.source, t.pointer, "a collective on the host device '" + t.device + "': collectives need accelerators");

  // Compute times: one simulation per distinct (device config, supertask structure).
  std::vector<double> compute_ns(sys.supertasks.size(), 0), compute_bytes(sys.supertasks.size(), 0);
  std::vector<double> memory_rate(cfg.devices.size(), 0);
  std::vector<int> estimated;
  std::map<std::pair<std::string, std::string>, std::vector<int>> jobs;  // -> supertasks
  for (size_t t = 0; t < sys.supertasks.size(); ++t) {
    const ir::SuperTask& st = sys.supertasks[t];
    if (st.kind != ir::SuperTaskKind::Compute) continue;
    if (st.compute->estimated) estimated.push_back(static_cast<int>(t));
    const int lane = slot_device[static_cast<size_t>(st.device_index)];
    if (lane >= n_dev) {  // host: overhead + its bytes at the host's rate
      compute_ns[t] = cfg.host_overhead_ns + static_cast<double>(st.input_bytes + st.output_bytes) / cfg.host_bytes_per_ns;
      continue;
    }
    jobs[{cfg.devices[static_cast<size_t>(lane)].source + "#" + std::to_string(cfg.devices[static_cast<size_t>(lane)].gpu),
          structure_key(st.compute->graph)}]
        .push_back(static_cast<int>(t));
  }
  std::vector<std::vector<int>> groups;
  for (auto& [k, v] : jobs) groups.push_back(v);
  sweep::PoolOptions pool;
  pool.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string failure;
  sweep::run_forked(
      groups.size(), pool,
      [&](size_t i) {
        const ir::SuperTask& st = sys.supertasks[static_cast<size_t>(groups[i].front())];
        const auto& dev = cfg.devices[static_cast<size_t>(slot_device[static_cast<size_t>(st.device_index)])];
        const DeviceRun r = simulate_on_device(st.compute->graph, dev.hw, dev.gpu, o);
        char b[128];
        std::snprintf(b, sizeof b, "%.6f %.1f %.9g", r.ns, r.memory_bytes, r.memory_rate);
        return std::string(b);
      },
      [&](const sweep::TaskOutcome& out) {
        if (!out.ok) {
          if (failure.empty())
            failure = sys.supertasks[static_cast<size_t>(groups[out.index].front())].id + ": " + out.payload;
          return;
        }
        std::istringstream in(out.payload);
        double ns = 0, bytes = 0, rate = 0;
        in >> ns >> bytes >> rate;
        for (int t : groups[out.index]) {
          compute_ns[static_cast<size_t>(t)] = ns, compute_bytes[static_cast<size_t>(t)] = bytes;
          memory_rate[static_cast<size_t>(slot_device[static_cast<size_t>(sys.supertasks[static_cast<size_t>(t)].device_index)])] = rate;
        }
      });
  if (!failure.empty()) throw InputError(sys.source, "", "simulating supertask " + failure);

  const engine::SystemSimResult sim = engine::simulate_system(sys, cfg, slot_device, lanes, compute_ns, compute_bytes, memory_rate);
  report::SystemReport rep;
  rep.workload = sys.name.empty() ? sys.source : sys.name;
  rep.hw_name = cfg.name;
  rep.hw_source = cfg.source;
  rep.sys = &sys;
  rep.sim = &sim;
  rep.estimated = estimated;
  for (const ir::SuperTask& t : sys.supertasks)
    rep.lane_of_task.push_back(t.device_index < 0 ? "" : sim.devices[static_cast<size_t>(slot_device[static_cast<size_t>(t.device_index)])].name);
  if (!o.quiet) std::cout << report::format_system_table(rep);
  if (!o.report_json.empty()) write_output(o.report_json, report::system_to_json(rep).dump(2) + "\n");
  if (!o.csv.empty()) write_output(o.csv, report::system_to_csv(rep));
  if (!o.trace.empty()) write_output(o.trace, report::system_chrome_trace(rep).dump() + "\n");
  return kOk;
}

}  // namespace npusim::cli
