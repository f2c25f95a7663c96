// A pipeline on a system (sim/run/system_run.h).
#include "sim/run/system_run.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

#include "sim/ir/error.h"
#include "sim/run/fork_pool.h"
#include "sim/run/npu_run.h"

namespace npusim::run {

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

// The cores of a device's chip (1: a one-core NPU or a GPU).
int64_t chip_cores(const config::SystemDeviceConfig& d) { return d.gpu ? 1 : d.hw.get_int("npu.cores"); }


}  // namespace

SystemRun simulate_pipeline(const ir::System& sys, const config::SystemConfig& cfg, const DeviceRunOptions& ro) {
  SystemRun r;
  // Device slots: accelerators in file order onto the system's devices; cpu slots on host lanes.
  // Slots naming processing elements of one chip ("npu:1:0-3", "npu:1:4-7") share that chip's
  // device when it is a multi-core NPU with those cores: each runs on its own cores
  // (docs/multicore.md#pipeline-slots); on a one-core device each slot takes a device.
  std::vector<int> slot_device(sys.devices.size(), -1);
  std::vector<int64_t> slot_cores(sys.devices.size(), 0);  // > 0: a slot of that many cores of its chip
  std::map<std::string, int> group_device;
  std::map<int, std::vector<std::pair<int64_t, size_t>>> taken;  // device -> (first core, slot) of its slots
  int next = 0, lanes = 0;
  for (size_t i = 0; i < sys.devices.size(); ++i) {
    if (sys.devices[i].is_cpu()) {
      slot_device[i] = -2 - lanes++;
      continue;
    }
    const ir::SystemDevice& sd = sys.devices[i];
    if (sd.pe_count > 0 && group_device.count(sd.group)) {
      const int d = group_device.at(sd.group);
      if (chip_cores(cfg.devices[static_cast<size_t>(d)]) > 1) {
        slot_device[i] = d;
        slot_cores[i] = sd.pe_count;
        taken[d].emplace_back(sd.pe_first, i);
        continue;
      }
    }
    if (next >= static_cast<int>(cfg.devices.size()))
      throw InputError(cfg.source, "system.devices", "the pipeline places work on " + std::to_string(next + 1) + "+ accelerators ('" +
                                                   sys.devices[i].id + "' is one too many) but the system has " +
                                                   std::to_string(cfg.devices.size()));
    if (sd.pe_count > 0 && chip_cores(cfg.devices[static_cast<size_t>(next)]) > 1) {
      group_device[sd.group] = next;
      slot_cores[i] = sd.pe_count;
      taken[next].emplace_back(sd.pe_first, i);
    }
    slot_device[i] = next++;
  }
  // The slots of one chip name cores it has, each core once.
  for (auto& [d, slots] : taken) {
    std::sort(slots.begin(), slots.end());
    const int64_t cores = chip_cores(cfg.devices[static_cast<size_t>(d)]);
    for (size_t k = 0; k < slots.size(); ++k) {
      const ir::SystemDevice& sd = sys.devices[slots[k].second];
      if (sd.pe_first + sd.pe_count > cores)
        throw InputError(sys.source, sd.pointer, "slot '" + sd.spec + "' names cores " + std::to_string(sd.pe_first) + "-" +
                                                     std::to_string(sd.pe_first + sd.pe_count - 1) + " but " +
                                                     cfg.devices[static_cast<size_t>(d)].source + " (npu.cores) has " +
                                                     std::to_string(cores));
      if (k > 0) {
        const ir::SystemDevice& prev = sys.devices[slots[k - 1].second];
        if (prev.pe_first + prev.pe_count > sd.pe_first)
          throw InputError(sys.source, sd.pointer, "slot '" + sd.spec + "' shares cores with slot '" + prev.spec +
                                                       "': each core of a chip runs one slot");
      }
    }
  }
  const int n_dev = static_cast<int>(cfg.devices.size());
  for (auto& s : slot_device)
    if (s <= -2) s = n_dev + (-2 - s);
  for (const ir::SuperTask& t : sys.supertasks)
    if (t.kind == ir::SuperTaskKind::Communication && t.device_index >= 0 && slot_device[static_cast<size_t>(t.device_index)] >= n_dev)
      throw InputError(sys.source, t.pointer, "a collective on the host device '" + t.device + "': collectives need accelerators");

  // Compute times: one simulation per distinct (device config, supertask structure).
  std::vector<double> compute_ns(sys.supertasks.size(), 0), compute_bytes(sys.supertasks.size(), 0);
  std::vector<double> compute_uj(sys.supertasks.size(), 0);  // < 0: the device's power not modelled
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
    const int64_t cores = slot_cores[static_cast<size_t>(st.device_index)];
    jobs[{cfg.devices[static_cast<size_t>(lane)].source + "#" + std::to_string(cfg.devices[static_cast<size_t>(lane)].gpu) +
              (cores > 0 ? "#cores" + std::to_string(cores) : ""),
          structure_key(st.compute->graph)}]
        .push_back(static_cast<int>(t));
  }
  std::vector<std::vector<int>> groups;
  for (auto& [k, v] : jobs) groups.push_back(v);
  run::PoolOptions pool;
  pool.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string failure;
  run::run_forked(
      groups.size(), pool,
      [&](size_t i) {
        const ir::SuperTask& st = sys.supertasks[static_cast<size_t>(groups[i].front())];
        const auto& dev = cfg.devices[static_cast<size_t>(slot_device[static_cast<size_t>(st.device_index)])];
        const int64_t cores = slot_cores[static_cast<size_t>(st.device_index)];
        return simulate_on_device(st.compute->graph, cores > 0 ? sub_chip(dev.hw, cores) : dev.hw, ro).to_json();
      },
      [&](const run::TaskOutcome& out) {
        if (!out.ok) {
          if (failure.empty())
            failure = sys.supertasks[static_cast<size_t>(groups[out.index].front())].id + ": " + out.payload;
          return;
        }
        const RunSummary dr = RunSummary::from_json(out.payload);
        for (int t : groups[out.index]) {
          compute_ns[static_cast<size_t>(t)] = dr.ns, compute_bytes[static_cast<size_t>(t)] = dr.memory_bytes;
          compute_uj[static_cast<size_t>(t)] = dr.energy_uj;
          memory_rate[static_cast<size_t>(slot_device[static_cast<size_t>(sys.supertasks[static_cast<size_t>(t)].device_index)])] =
              dr.memory_rate;
        }
      });
  if (!failure.empty()) throw InputError(sys.source, "", "simulating supertask " + failure);

  std::vector<bool> on_cores(slot_cores.size());
  for (size_t i = 0; i < slot_cores.size(); ++i) on_cores[i] = slot_cores[i] > 0;
  r.sim = engine::simulate_system(sys, cfg, slot_device, lanes, compute_ns, compute_bytes, memory_rate, on_cores);
  r.slot_device = slot_device;
  r.estimated = estimated;
  // Energy: every compute supertask's own, each used device's idle power (a GPU's idle_w, an
  // NPU's static_w) while it computes nothing (collectives, waits, idle), and every bit the links
  // and NICs carried at their pJ per bit (a switch port's bytes cross the switch to their peer).
  std::vector<char> used(cfg.devices.size(), 0);
  for (int d : slot_device)
    if (d >= 0 && d < n_dev) used[static_cast<size_t>(d)] = 1;
  double uj = 0;
  bool modelled = true;
  for (size_t t = 0; t < sys.supertasks.size(); ++t) {
    const ir::SuperTask& st = sys.supertasks[t];
    if (st.kind != ir::SuperTaskKind::Compute || slot_device[static_cast<size_t>(st.device_index)] >= n_dev) continue;
    if (compute_uj[t] < 0 || st.compute->estimated) modelled = false;
    uj += compute_uj[t];
  }
  for (int d = 0; d < n_dev && modelled; ++d) {
    if (!used[static_cast<size_t>(d)]) continue;
    const auto& dev = cfg.devices[static_cast<size_t>(d)];
    uj += idle_power_w(dev.hw) * std::max(0.0, r.sim.makespan_ns - r.sim.devices[static_cast<size_t>(d)].busy_ns) / 1000;  // W x us
  }
  if (cfg.link_pj_per_bit > 0 || cfg.nic_pj_per_bit > 0) {
    double link_uj = 0;
    for (const auto& l : r.sim.links)
      link_uj += l.bytes * 8 * (l.to == -2 ? cfg.nic_pj_per_bit : cfg.link_pj_per_bit) * 1e-6;
    r.link_energy_uj = link_uj;
    uj += link_uj;
  }
  r.energy_uj = modelled ? uj : -1;
  return r;
}

}  // namespace npusim::run
