#include "sim/report/report.h"

#include "sim/report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace npusim::report {

namespace {
std::string human_bytes(int64_t b) {
  if (b >= (1 << 20)) return fmt("%.1f MiB", b / 1048576.0);
  if (b >= 1024) return fmt("%.1f KiB", b / 1024.0);
  return std::to_string(b) + " B";
}
std::string grouped(int64_t v) {
  std::string s = std::to_string(v), r;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (n && n % 3 == 0 && *it != '-') r.insert(r.begin(), ',');
    r.insert(r.begin(), *it);
    ++n;
  }
  return r;
}
}  // namespace

std::string format_multicore(const RunReport& r) {
  const MulticoreUse& m = r.multicore;
  std::ostringstream o;
  o << "cores: " << m.cores << " on a " << m.noc_topology << " NoC; busy PE/VP per core:";
  for (const CoreUse& c : m.per_core) o << " " << c.core << ":" << fmt("%.0f/", 100 * c.pe_utilization) << fmt("%.0f%%", 100 * c.vp_utilization);
  o << "\n";
  std::map<std::string, int> splits;
  for (const LayerCores& l : m.layers) splits[l.split]++;
  o << "layers split:";
  for (const auto& [k, v] : splits) o << " " << k << " " << v;
  o << "\n";
  const LinkUse* busiest = nullptr;
  for (const LinkUse& l : m.noc_links)
    if (!busiest || l.busy_cycles > busiest->busy_cycles) busiest = &l;
  if (busiest)
    o << "NoC: " << grouped(m.noc_transfers) << " transfers, busiest link " << busiest->link
      << fmt(" %.1f%%", 100 * busiest->utilization) << ", " << grouped(m.noc_wait_cycles) << " cycles waited for links\n";
  for (const TenantUse& t : m.tenants)
    o << "tenant " << t.workload << " on cores " << t.first_core << "-" << t.first_core + t.cores - 1 << ": "
      << grouped(t.end_cycle - t.start_cycle) << " cycles (ends at " << grouped(t.end_cycle) << ")\n";
  if (!m.dram_channel_utilization.empty()) {
    const auto [lo, hi] = std::minmax_element(m.dram_channel_utilization.begin(), m.dram_channel_utilization.end());
    o << "DRAM channels busy: " << fmt("%.1f%%", 100 * *lo) << " .. " << fmt("%.1f%%", 100 * *hi) << "\n";
  }
  return o.str();
}

std::string format_table(const RunReport& r) {
  std::ostringstream o;
  o << "workload: " << r.workload << "\nhardware: " << r.hw_name << " (" << r.hw_source << "), "
    << fmt("%.0f MHz", r.clock_mhz) << ", peak " << fmt("%.0f", r.peak_macs_per_cycle) << " MAC/cycle, DRAM "
    << fmt("%.2f", r.dram_bytes_per_cycle) << " B/cycle\n\n";
  size_t w = 5;
  for (const auto& l : r.layers) w = std::max(w, l.name.size());
  w = std::min<size_t>(w, 40);
  char line[512];
  std::snprintf(line, sizeof line, "%4s  %-*s  %-16s  %12s  %6s  %6s  %10s  %-7s\n", "idx", static_cast<int>(w), "layer",
                "op", "cycles", "share", "PE%", "DRAM", "bound");
  o << line;
  for (const auto& l : r.layers) {
    std::snprintf(line, sizeof line, "%4d  %-*s  %-16s  %12s  %5.1f%%  %5.1f%%  %10s  %-7s\n", l.layer_index,
                  static_cast<int>(w), l.name.substr(0, w).c_str(), l.op.c_str(), grouped(l.cycles).c_str(),
                  l.share * 100, l.pe_utilization * 100, human_bytes(l.dram_read_bytes + l.dram_write_bytes).c_str(),
                  l.bound.c_str());
    o << line;
  }
  o << "\ntotal NPU cycles: " << grouped(r.npu_cycles) << fmt(" (%.3f ms at ", r.npu_cycles / (r.clock_mhz * 1e3))
    << fmt("%.0f MHz)", r.clock_mhz) << "\n";
  if (r.host_cycles > 0) o << "host (cpu) layers: " << grouped(r.host_cycles) << " cycles, reported separately\n";
  o << "MACs: " << grouped(r.total_macs) << fmt(", PE utilization %.1f%%", r.pe_utilization * 100) << "\n";
  o << "DRAM traffic: read " << human_bytes(r.dram_read_bytes) << ", write " << human_bytes(r.dram_write_bytes) << "\n";
  if (!r.units.empty()) {
    o << "busy:";
    for (const UnitUse& u : r.units) o << " " << u.unit << fmt(" %.1f%%", 100 * u.utilization);
    o << " (of npu_cycles; dma over its channels)\n";
  }
  if (r.multicore.cores > 1) o << format_multicore(r);
  if (r.energy_uj > 0)
    o << fmt("energy: %.1f uJ, ", r.energy_uj) << fmt("%.2f W average, ", average_power_w(r))
      << fmt("%.1f inferences/J\n", r.batch / (r.energy_uj * 1e-6));
  // Ops the producer could only describe by FLOPs and bytes are estimates: say how much.
  int opaque = 0;
  int64_t opaque_cycles = 0;
  for (const auto& l : r.layers)
    if (l.op == "opaque") ++opaque, opaque_cycles += l.cycles;
  if (opaque > 0)
    o << "opaque ops (roofline estimates from given FLOPs and bytes): " << opaque << ", "
      << fmt("%.1f%% of NPU cycles", r.npu_cycles > 0 ? 100.0 * opaque_cycles / r.npu_cycles : 0.0) << "\n";
  return o.str();
}

nlohmann::ordered_json sweep_metrics(const RunReport& r) {
  nlohmann::ordered_json m;
  for (const auto& f : run_fields())
    if (f.in & kInSweep) m[f.name] = nlohmann::ordered_json::parse(f.value(r).dump());
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const auto& l : r.layers) layers.push_back({{"name", l.name}, {"op", l.op}, {"cycles", l.cycles}, {"bound", l.bound}});
  m["layers"] = layers;
  return m;
}

nlohmann::json multicore_json(const MulticoreUse& m) {
  nlohmann::json j = {{"cores", m.cores}, {"noc_topology", m.noc_topology}, {"noc_transfers", m.noc_transfers},
                      {"noc_wait_cycles", m.noc_wait_cycles}, {"dram_channel_utilization", m.dram_channel_utilization}};
  for (const CoreUse& c : m.per_core)
    j["per_core"].push_back({{"core", c.core}, {"pe_busy_cycles", c.pe_busy_cycles}, {"vp_busy_cycles", c.vp_busy_cycles},
                             {"dma_busy_cycles", c.dma_busy_cycles}, {"l2_bytes", c.l2_bytes},
                             {"pe_utilization", c.pe_utilization}, {"vp_utilization", c.vp_utilization}});
  for (const LinkUse& l : m.noc_links)
    j["noc_links"].push_back({{"link", l.link}, {"bytes", l.bytes}, {"busy_cycles", l.busy_cycles}, {"utilization", l.utilization}});
  for (const TenantUse& t : m.tenants)
    j["tenants"].push_back({{"workload", t.workload}, {"first_core", t.first_core}, {"cores", t.cores},
                            {"start_cycle", t.start_cycle}, {"end_cycle", t.end_cycle}, {"macs", t.macs}});
  for (const LayerCores& l : m.layers) {
    nlohmann::json spans = nlohmann::json::array();
    for (const CoreSpan& s : l.spans) spans.push_back({s.core, s.start_cycle, s.end_cycle});
    j["layers"].push_back({{"name", l.name}, {"split", l.split}, {"cores", l.cores}, {"noc_bytes", l.noc_bytes},
                           {"noc_wait_cycles", l.noc_wait_cycles}, {"spans", spans}});
  }
  return j;
}

nlohmann::json to_json(const RunReport& r) {
  nlohmann::json j;
  j["workload"] = r.workload;
  j["hardware"] = {{"name", r.hw_name}, {"source", r.hw_source}, {"clock_mhz", r.clock_mhz},
                   {"peak_macs_per_cycle", r.peak_macs_per_cycle}, {"dram_bytes_per_cycle", r.dram_bytes_per_cycle}};
  nlohmann::json cfg = nlohmann::json::object();
  for (const auto& [k, v] : r.config) cfg[k] = v;
  j["hardware"]["config"] = cfg;
  j["totals"] = fields_object(run_fields(), r, kInTotals);
  if (!r.units.empty()) {
    nlohmann::json units = nlohmann::json::array();
    for (const UnitUse& u : r.units) {
      units.push_back({{"unit", u.unit}, {"busy_cycles", u.busy_cycles}, {"utilization", u.utilization}});
      if (u.bytes >= 0) units.back()["bytes"] = u.bytes;
    }
    j["units"] = units;
  }
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : r.layers) layers.push_back(fields_object(layer_fields(), l, kInRows));
  j["layers"] = layers;
  if (r.multicore.cores > 1) j["multicore"] = multicore_json(r.multicore);
  return j;
}

std::string to_csv(const RunReport& r) { return fields_csv(layer_fields(), r.layers); }

const std::vector<LayerField>& layer_fields() {
  using J = nlohmann::json;
  static const std::vector<LayerField> f = {
      {"layer_index", "", "position of the op in the workload", [](const LayerRow& l) { return J(l.layer_index); }},
      {"name", "", "the op's name in the workload", [](const LayerRow& l) { return J(l.name); }},
      {"op", "", "the op kind (sim/ir/graph.h: conv2d, matmul, softmax, ...)", [](const LayerRow& l) { return J(l.op); }},
      {"device", "", "npu, or cpu for host layers", [](const LayerRow& l) { return J(l.device); }},
      {"start_cycle", "cycles", "first command of the layer starts", [](const LayerRow& l) { return J(l.start_cycle); }},
      {"end_cycle", "cycles", "last command of the layer ends", [](const LayerRow& l) { return J(l.end_cycle); }},
      {"cycles", "cycles", "NPU time charged to the layer (compute frontier; NPU layers add up to the total)", [](const LayerRow& l) { return J(l.cycles); }},
      {"time_us", "us", "cycles at clock_mhz (a core key: GPU reports' layers have it too)", [](const LayerRow& l) { return J(round3(l.time_us)); }},
      {"share", "fraction", "cycles / total NPU cycles", [](const LayerRow& l) { return J(l.share); }, kInRows, true},
      {"pe_busy_cycles", "cycles", "PE array busy on this layer (measured by the unit)", [](const LayerRow& l) { return J(l.pe_busy_cycles); }},
      {"vp_busy_cycles", "cycles", "vector processor busy on this layer", [](const LayerRow& l) { return J(l.vp_busy_cycles); }},
      {"dma_busy_cycles", "cycles", "DMA channels busy on this layer (summed over channels)", [](const LayerRow& l) { return J(l.dma_busy_cycles); }},
      {"stall_cycles", "cycles", "cycles minus PE and VP busy time (waiting on memory)", [](const LayerRow& l) { return J(l.stall_cycles); }},
      {"macs", "MAC", "multiply-accumulates", [](const LayerRow& l) { return J(l.macs); }},
      {"pe_utilization", "fraction", "macs / (cycles x peak MAC/cycle)", [](const LayerRow& l) { return J(l.pe_utilization); }, kInRows, true},
      {"dram_read_bytes", "bytes", "weights and activation loads, as served by the DRAM model", [](const LayerRow& l) { return J(l.dram_read_bytes); }},
      {"dram_write_bytes", "bytes", "stores and spills, as served by the DRAM model", [](const LayerRow& l) { return J(l.dram_write_bytes); }},
      {"bytes", "bytes", "dram_read_bytes + dram_write_bytes: off-chip bytes (a core key: HBM bytes on a GPU)", [](const LayerRow& l) { return J(l.dram_read_bytes + l.dram_write_bytes); }},
      {"l2_bytes", "bytes", "bytes moved through the L2 port by the layer's commands (counted by the L2 model)", [](const LayerRow& l) { return J(l.l2_bytes); }},
      {"port_wait_cycles", "cycles", "time the layer's commands waited for the shared L2 port beyond their own latency", [](const LayerRow& l) { return J(l.port_wait_cycles); }},
      {"dram_wait_cycles", "cycles", "DMA time waiting for DRAM (bandwidth shared, latency) beyond the channel's own rate", [](const LayerRow& l) { return J(l.dram_wait_cycles); }},
      {"row_tiles", "", "row tiles of the mapping (summed over batch groups)", [](const LayerRow& l) { return J(l.row_tiles); }},
      {"k_chunks", "", "output-channel chunks of the mapping", [](const LayerRow& l) { return J(l.k_chunks); }},
      {"batch_groups", "", "groups of images the layer ran on (docs/mapping.md (batch groups))", [](const LayerRow& l) { return J(l.batch_groups); }},
      {"bound", "", "compute, memory, vector or host", [](const LayerRow& l) { return J(l.bound); }},
      {"energy_uj", "uJ", "the layer's events at the energy.* costs and the static power over its cycles (0 when unset)", [](const LayerRow& l) { return J(l.energy_uj); }, kInRows, true},
  };
  return f;
}

double average_power_w(const RunReport& r) {
  const double us = r.clock_mhz > 0 ? static_cast<double>(r.npu_cycles + r.host_cycles) / r.clock_mhz : 0;
  return us > 0 ? r.energy_uj / us : 0;  // uJ / us = W
}

std::string dominant_bound(const RunReport& r) {
  static const char* order[] = {"compute", "memory", "vector", "host"};
  std::map<std::string, int64_t> by_bound;
  for (const auto& l : r.layers) by_bound[l.bound] += l.cycles;
  std::string bound;
  int64_t best = -1;
  for (const char* b : order)
    if (by_bound.count(b) && by_bound[b] > best) best = by_bound[b], bound = b;
  return bound;
}

const std::vector<RunField>& run_fields() {
  using J = nlohmann::json;
  static const std::vector<RunField> f = {
      {"device", "", "npu (a core key: every device's report has it)", [](const RunReport&) { return J("npu"); }, kInTotals},
      {"npu_cycles", "cycles", "end of the last NPU layer (the simulated time)",
       [](const RunReport& r) { return J(r.npu_cycles); }, kInTotals},
      {"cycles", "cycles", "npu_cycles (a core key: the simulated time at the device clock)",
       [](const RunReport& r) { return J(r.npu_cycles); }, kInTotals | kInSweep},
      {"time_us", "us", "npu_cycles at clock_mhz (a core key)",
       [](const RunReport& r) { return J(round3(r.npu_cycles / r.clock_mhz)); }, kInTotals},
      {"host_cycles", "cycles", "host (cpu) layers, summed; not in npu_cycles",
       [](const RunReport& r) { return J(r.host_cycles); }, kInTotals | kInSweep},
      {"time_ms", "ms", "npu_cycles at clock_mhz",
       [](const RunReport& r) { return J(r.npu_cycles / (r.clock_mhz * 1e3)); }, kInTotals | kInSweep},
      {"macs", "MAC", "multiply-accumulates of every layer", [](const RunReport& r) { return J(r.total_macs); }, kInTotals},
      {"workload_macs", "MAC", "the workload's MACs as its ops state them: equal on every device for one workload (a core key)",
       [](const RunReport& r) { return J(r.total_macs); }, kInTotals},
      {"executed_macs", "MAC", "the MACs the device executes: on the NPU every op's whole (a core key)",
       [](const RunReport& r) { return J(r.total_macs); }, kInTotals},
      {"pe_count", "PEs", "npu.pe_array.rows x cols x npu.cores", [](const RunReport& r) { return J(r.pe_count); }, kInSweep},
      {"l2_bytes", "bytes", "npu.l2.size_kib x 1024 x npu.cores", [](const RunReport& r) { return J(r.l2_size_bytes); }, kInSweep},
      {"pe_utilization", "fraction", "macs / (npu_cycles x peak MAC/cycle)",
       [](const RunReport& r) { return J(r.pe_utilization); }, kInTotals | kInSweep},
      {"dram_read_bytes", "bytes", "served by the DRAM model, all layers",
       [](const RunReport& r) { return J(r.dram_read_bytes); }, kInTotals | kInSweep},
      {"dram_write_bytes", "bytes", "served by the DRAM model, all layers",
       [](const RunReport& r) { return J(r.dram_write_bytes); }, kInTotals | kInSweep},
      {"dram_bytes", "bytes", "dram_read_bytes + dram_write_bytes (a core key: off-chip bytes)",
       [](const RunReport& r) { return J(r.dram_read_bytes + r.dram_write_bytes); }, kInTotals | kInSweep},
      {"bound", "", "the layer bound with the most cycles (compute, memory, vector, host; ties to the earlier)",
       [](const RunReport& r) { return J(dominant_bound(r)); }, kInTotals | kInSweep},
      {"energy_uj", "uJ", "every unit's events at the energy.* costs and the static power over the run (0 when none is set; docs/energy.md)",
       [](const RunReport& r) { return J(r.energy_uj); }, kInTotals},
      {"energy_uj", "uJ", "as in totals; empty when no energy.* cost is set",
       [](const RunReport& r) { return r.energy_modelled ? J(r.energy_uj) : J(nullptr); }, kInSweep},
      {"energy_pe_array_uj", "uJ", "MACs x energy.pj_per_mac (by dtype)", [](const RunReport& r) { return J(r.energy.pe_array_uj); }, kInTotals},
      {"energy_vector_uj", "uJ", "vector busy cycles x lanes x energy.pj_per_vector_lane_cycle",
       [](const RunReport& r) { return J(r.energy.vector_uj); }, kInTotals},
      {"energy_sram_uj", "uJ", "layer input and output bytes x energy.pj_per_sram_byte", [](const RunReport& r) { return J(r.energy.sram_uj); }, kInTotals},
      {"energy_dram_uj", "uJ", "DRAM bytes x energy.pj_per_dram_byte", [](const RunReport& r) { return J(r.energy.dram_uj); }, kInTotals},
      {"energy_dma_uj", "uJ", "bytes the DMA moved x energy.pj_per_dma_byte", [](const RunReport& r) { return J(r.energy.dma_uj); }, kInTotals},
      {"energy_noc_uj", "uJ", "multi-core: bytes x NoC links crossed x energy.pj_per_noc_byte_hop", [](const RunReport& r) { return J(r.energy.noc_uj); }, kInTotals},
      {"energy_static_uj", "uJ", "energy.static_w x (NPU + host time)", [](const RunReport& r) { return J(r.energy.static_uj); }, kInTotals},
      {"average_power_w", "W", "energy_uj / (NPU + host time) (empty when no energy is modelled)",
       [](const RunReport& r) { return r.energy_modelled ? J(average_power_w(r)) : J(nullptr); }, kInTotals | kInSweep},
      {"inferences_per_j", "1/J", "the workload's batch / energy (empty when no energy is modelled)",
       [](const RunReport& r) { return r.energy_modelled && r.energy_uj > 0 ? J(r.batch / (r.energy_uj * 1e-6)) : J(nullptr); },
       kInTotals | kInSweep},
  };
  return f;
}

std::string run_fields_markdown() { return fields_markdown(run_fields(), true); }

std::string layer_fields_markdown() { return fields_markdown(layer_fields()); }

nlohmann::json chrome_trace(const RunReport& r) {
  // Timestamps in microseconds (the format's unit) from cycles at the configured clock.
  const double us_per_cycle = 1.0 / r.clock_mhz;
  nlohmann::json ev = nlohmann::json::array();
  auto thread_name = [&](int tid, const std::string& name) {
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
    ev.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  };
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "npu: " + r.hw_name}}}});
  int max_channel = 0;
  for (const CommandSpan& c : r.commands)
    if (c.unit == "dma") max_channel = std::max(max_channel, c.channel);
  // One group of rows per core (tids core x 100 + 1, 2, 10 + channel); one core keeps the
  // plain names.
  const int cores = std::max(1, r.multicore.cores);
  thread_name(0, "layers");
  for (int core = 0; core < cores; ++core) {
    const std::string pre = cores > 1 ? "npu.core" + std::to_string(core) + "." : "npu.";
    thread_name(core * 100 + 1, pre + "pe_array");
    thread_name(core * 100 + 2, pre + "vector");
    if (core == 0) thread_name(3, "host");
    for (int ch = 0; ch <= max_channel; ++ch) thread_name(core * 100 + 10 + ch, pre + "dma.ch" + std::to_string(ch));
  }
  for (const auto& l : r.layers)
    ev.push_back({{"name", l.name}, {"cat", l.op}, {"ph", "X"}, {"pid", 1}, {"tid", l.device == "npu" ? 0 : 3},
                  {"ts", l.start_cycle * us_per_cycle}, {"dur", l.cycles * us_per_cycle},
                  {"args", {{"cycles", l.cycles}, {"bound", l.bound}}}});
  for (const CommandSpan& c : r.commands) {
    int tid = c.unit == "pe_array" ? 1 : c.unit == "vector" ? 2 : c.unit == "host" ? 3 : 10 + c.channel;
    if (c.unit != "host") tid += c.core * 100;
    nlohmann::json args = {{"layer", c.layer}, {"cycles", c.end_cycle - c.start_cycle}};
    if (c.unit == "dma") args["bytes"] = c.bytes;
    if (c.unit == "pe_array") args["macs"] = c.macs;
    ev.push_back({{"name", c.label}, {"cat", c.unit}, {"ph", "X"}, {"pid", 1}, {"tid", tid},
                  {"ts", c.start_cycle * us_per_cycle}, {"dur", (c.end_cycle - c.start_cycle) * us_per_cycle},
                  {"args", args}});
  }
  return {{"traceEvents", ev}, {"displayTimeUnit", "ns"}};
}

}  // namespace npusim::report
