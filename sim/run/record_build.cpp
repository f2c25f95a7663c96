// Each device's record built from what the mapper and the engine produced (sim/run/record_build.h).
#include "sim/run/record_build.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "models/gpu/gpu_power.h"
#include "sim/ir/dtype.h"
#include "sim/mapping/gpu_lower.h"

namespace npusim::run {

using mapping::Unit;

namespace {

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

void describe_hardware(report::RunReport& r, const config::HwConfig& cfg, const mapping::NpuParams& p) {
  r.hw_name = cfg.get_string("name");
  r.hw_source = cfg.source();
  r.clock_mhz = p.clock_mhz;
  r.dram_bytes_per_cycle = p.dram.bytes_per_cycle;
  r.config = cfg.resolved();
  r.energy_modelled = p.energy.modelled();
  r.pe_count = p.pe.rows * p.pe.cols * p.cores;  // the chip's: every core's
  r.l2_size_bytes = p.buffers.l2_bytes * p.cores;
}

void describe_hardware(report::RunReport& r, const config::HwConfig& cfg) {
  describe_hardware(r, cfg, mapping::NpuParams::read(cfg));
}

report::RunReport build_report(const std::string& workload, const mapping::Program& prog,
                       const std::vector<mapping::CommandTiming>& timings, const config::HwConfig& cfg,
                       const mapping::NpuParams& p, double noc_byte_hops) {
  report::RunReport r;
  r.workload = workload;
  describe_hardware(r, cfg, p);
  const models::EnergyParams& e = p.energy;

  const size_t n = prog.layers.size();
  std::vector<report::LayerRow> rows(n);
  std::vector<int64_t> finish(n, -1), first(n, INT64_MAX);
  std::vector<double> noc_bytes(n, 0), dma_bytes(n, 0);
  double all_noc_bytes = 0;
  for (const auto& c : prog.commands) {
    const auto& t = timings[c.id];
    report::LayerRow& row = rows[c.layer];
    noc_bytes[c.layer] += static_cast<double>(t.noc_bytes), all_noc_bytes += static_cast<double>(t.noc_bytes);
    if (c.unit == Unit::Dma) dma_bytes[c.layer] += static_cast<double>(t.dram_bytes);
    const int64_t d = t.end_cycle - t.start_cycle;
    switch (c.unit) {
      case Unit::PeArray: row.pe_busy_cycles += d; break;
      case Unit::Vector: row.vp_busy_cycles += d; break;
      case Unit::Host: row.pe_busy_cycles += 0; break;
      case Unit::Sync: break;
      case Unit::Dma:
        row.dma_busy_cycles += d;
        (c.dma.kind == models::DmaKind::StoreActivations ? row.dram_write_bytes : row.dram_read_bytes) += t.dram_bytes;
        row.dram_wait_cycles += t.dram_wait_cycles;
        break;
    }
    row.l2_bytes += t.l2_bytes;
    row.port_wait_cycles += t.port_wait_cycles;
    // A layer's time ends with its last compute, activation load or store; weight prefetch
    // is charged to the layer that waits for it.
    const bool prefetch = c.unit == Unit::Dma && c.dma.kind == models::DmaKind::LoadWeights;
    if (!prefetch) {
      finish[c.layer] = std::max(finish[c.layer], t.end_cycle);
      first[c.layer] = std::min(first[c.layer], t.start_cycle);
    }
  }
  // NPU time is charged as a ZeBu trace is measured (frontends/zebu_trace): compute commands
  // (PE, VP) sorted by end; each is charged from the previous compute end to its own end, and
  // the tail after the last one (final stores) goes to the last layer. Layers interleaved by
  // batch groups are charged correctly, and NPU layer cycles add up to the total.
  std::vector<int64_t> charged(n, 0);
  {
    std::vector<std::pair<int64_t, int>> ends;  // (end, command id)
    int64_t npu_end = 0;
    for (const auto& c : prog.commands) {
      if (prog.layers[c.layer].on_host) continue;
      npu_end = std::max(npu_end, timings[c.id].end_cycle);
      if (c.unit == Unit::PeArray || c.unit == Unit::Vector) ends.emplace_back(timings[c.id].end_cycle, c.id);
    }
    std::sort(ends.begin(), ends.end());
    int64_t frontier = 0;
    int last_layer = -1;
    for (const auto& [end, id] : ends) {
      charged[prog.commands[id].layer] += std::max<int64_t>(0, end - frontier);
      frontier = std::max(frontier, end);
      last_layer = prog.commands[id].layer;
    }
    if (last_layer >= 0) charged[last_layer] += std::max<int64_t>(0, npu_end - frontier);
    r.npu_cycles = npu_end;
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& lp = prog.layers[i];
    report::LayerRow& row = rows[i];
    row.layer_index = lp.layer_index;
    row.name = lp.name;
    row.op = lp.op;
    row.device = lp.on_host ? "cpu" : "npu";
    row.macs = lp.macs;
    row.row_tiles = lp.row_tiles;
    row.k_chunks = lp.k_chunks;
    row.batch_groups = lp.batch_groups;
    row.end_cycle = std::max<int64_t>(0, finish[i]);
    row.start_cycle = first[i] == INT64_MAX ? row.end_cycle : first[i];
    if (lp.on_host) {
      row.cycles = row.end_cycle - row.start_cycle;
      row.bound = "host";
      r.host_cycles += row.cycles;
    } else {
      row.cycles = charged[i];
      const int64_t busy = row.pe_busy_cycles + row.vp_busy_cycles;
      row.stall_cycles = std::max<int64_t>(0, row.cycles - busy);
      row.bound = mapping::bound_name(mapping::layer_bound(row.pe_busy_cycles, row.vp_busy_cycles, row.stall_cycles));
      // A layer's PE work may overlap another layer's charged time; never report above 100%.
      const int64_t span = std::max(row.cycles, row.pe_busy_cycles);
      // Of the whole chip's peak (every core's).
      if (span > 0 && lp.peak_macs_per_cycle > 0)
        row.pe_utilization = static_cast<double>(row.macs) / (static_cast<double>(span) * lp.peak_macs_per_cycle * p.cores);
    }
    // Energy (docs/energy.md): each unit's events at its cost, and the static power over the
    // time charged to the layer (NPU layers' times add up to the run, host layers' to host time).
    const double pe_uj = static_cast<double>(row.macs) * e.mac_pj(lp.dtype) * 1e-6;
    const double vector_uj = static_cast<double>(row.vp_busy_cycles) * static_cast<double>(p.vp.lanes) * e.pj_per_vector_lane_cycle * 1e-6;
    const double sram_uj = static_cast<double>(lp.in_bytes + lp.out_bytes) * e.pj_per_sram_byte * 1e-6;
    const double dram_uj = static_cast<double>(row.dram_read_bytes + row.dram_write_bytes) * e.pj_per_dram_byte * 1e-6;
    const double static_uj = p.clock_mhz > 0 ? e.static_w * static_cast<double>(row.cycles) / p.clock_mhz : 0;
    const double dma_uj = dma_bytes[i] * e.pj_per_dma_byte * 1e-6;
    // A layer's NoC bytes over the chip's mean hops per byte (every link's bytes / the transfers' bytes).
    const double noc_uj = all_noc_bytes > 0 ? noc_bytes[i] * (noc_byte_hops / all_noc_bytes) * e.pj_per_noc_byte_hop * 1e-6 : 0;
    row.energy_uj = pe_uj + vector_uj + sram_uj + dram_uj + dma_uj + noc_uj + static_uj;
    r.energy.pe_array_uj += pe_uj, r.energy.vector_uj += vector_uj, r.energy.sram_uj += sram_uj;
    r.energy.dram_uj += dram_uj, r.energy.static_uj += static_uj, r.energy.dma_uj += dma_uj, r.energy.noc_uj += noc_uj;
    r.total_macs += row.macs;
    r.dram_read_bytes += row.dram_read_bytes;
    r.dram_write_bytes += row.dram_write_bytes;
    r.energy_uj += row.energy_uj;
  }
  for (auto& row : rows)
    if (row.device == "npu" && r.npu_cycles > 0) row.share = static_cast<double>(row.cycles) / r.npu_cycles;
  // NPU layers first, then host layers (reported separately).
  std::stable_partition(rows.begin(), rows.end(), [](const report::LayerRow& x) { return x.device == "npu"; });
  for (report::LayerRow& row : rows) row.time_us = r.clock_mhz > 0 ? static_cast<double>(row.cycles) / r.clock_mhz : 0;
  r.layers = std::move(rows);
  if (!prog.layers.empty()) r.peak_macs_per_cycle = prog.layers[0].peak_macs_per_cycle;
  for (const auto& lp : prog.layers)
    if (lp.macs > 0) { r.peak_macs_per_cycle = lp.peak_macs_per_cycle; break; }
  r.peak_macs_per_cycle *= p.cores;  // the chip's
  if (r.npu_cycles > 0 && r.peak_macs_per_cycle > 0)
    r.pe_utilization = r.total_macs / (static_cast<double>(r.npu_cycles) * r.peak_macs_per_cycle);
  // Every command's span, for the trace (a join takes no time and has none).
  for (const auto& c : prog.commands) {
    if (c.unit == Unit::Sync) continue;
    const auto& t = timings[c.id];
    report::CommandSpan s;
    s.label = c.label;
    s.unit = mapping::unit_name(c.unit);
    s.layer = prog.layers[c.layer].name;
    s.core = c.core;
    s.channel = t.channel;
    s.start_cycle = t.start_cycle;
    s.end_cycle = t.end_cycle;
    if (c.unit == Unit::Dma) s.bytes = c.dma.bytes;
    if (c.unit == Unit::PeArray) s.macs = c.pe.macs();
    r.commands.push_back(std::move(s));
  }
  return r;
}

report::LibraryReport build_library_report(const std::string& workload, const mapping::LibraryPlan& plan,
                                   const std::vector<size_t>& chosen, const std::vector<mapping::KernelSim>& sims,
                                   const mapping::Timeline& timeline, const config::HwConfig& cfg,
                                   const models::GpuParams& params, int distinct_kernels) {
  report::LibraryReport r;
  r.workload = workload;
  r.hw_name = cfg.get_string("name");
  r.hw_source = cfg.source();
  r.launch = mapping::launch_mode_name(plan.options.launch);
  r.fusion = plan.options.fuse ? "on" : "off";
  r.row_kernels = plan.options.looped_rows ? "looped" : "one-pass";
  r.clock_mhz = params.clock_mhz;
  r.num_sms = params.num_sms;
  r.total_us = timeline.total_us;
  r.kernels = static_cast<int>(plan.kernels.size());
  r.distinct_kernels = distinct_kernels;
  r.free_ops = plan.free_ops;
  std::map<std::string, double> by_class;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const mapping::LibraryKernel& k = plan.kernels[i];
    const mapping::KernelSim& s = sims[i];
    report::LibraryKernelRow row;
    row.index = static_cast<int>(i);
    row.name = k.name;
    row.kernel_class = mapping::kernel_class_name(k.cls);
    row.ir_ops = joined(k.ir_ops, " ");
    row.shape = k.shape;
    row.schedule = k.candidates.at(chosen[i]).schedule;
    row.dtype = k.dtype;
    row.candidates = static_cast<int>(k.candidates.size());
    row.start_us = timeline.start_us[i];
    row.time_us = s.span_us;
    row.macs = k.macs;
    row.flops = k.flops;
    row.tflops = s.span_us > 0 ? k.flops / (s.span_us * 1e6) : 0;
    row.hbm_bytes = s.hbm_bytes;
    row.min_bytes = k.min_bytes;
    row.bound = s.bound;
    row.bound_share = s.bound_share;
    r.kernel_us += s.span_us;
    r.macs += k.macs;
    r.flops += k.flops;
    r.hbm_bytes += s.hbm_bytes;
    by_class[row.kernel_class] += s.span_us;
    r.rows.push_back(row);
  }
  for (report::LibraryKernelRow& row : r.rows) row.share = r.kernel_us > 0 ? row.time_us / r.kernel_us : 0;
  r.launch_us = r.total_us - r.kernel_us;
  // Board power (docs/energy.md#gpus): each kernel against the peak rates of its class and dtype.
  const models::GpuPowerParams power = models::GpuPowerParams::read(cfg);
  r.power_modelled = power.modelled();
  if (r.power_modelled) {
    const double hz = params.clock_ghz * 1e9, peak_bytes = params.hbm_bytes_per_cycle * hz;
    for (report::LibraryKernelRow& row : r.rows) {
      const bool matrix = row.kernel_class == "gemm" || row.kernel_class == "conv" || row.kernel_class == "attention";
      const auto t = ir::parse_dtype(row.dtype);
      const double per_sm = matrix ? params.tensor_flops_per_cycle(mapping::ark_data_type(t ? *t : ir::DType::Float16)) : params.vector_fpc;
      row.power_w = power.kernel_power_w(row.flops, per_sm * params.num_sms * hz, row.hbm_bytes, peak_bytes, row.time_us * 1e-6);
      row.energy_uj = row.power_w * row.time_us;  // W x us = uJ
      r.energy_uj += row.energy_uj;
    }
    r.energy_uj += power.idle_w * std::max(0.0, r.launch_us);
  }
  for (const auto& kv : by_class) r.time_by_class.push_back(kv);
  std::stable_sort(r.time_by_class.begin(), r.time_by_class.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& kv : cfg.resolved())
    if (kv.first.rfind("gpu.", 0) == 0 || kv.first == "name" || kv.first == "clock_mhz") r.config.push_back(kv);
  return r;
}

}  // namespace npusim::run
