#include "sim/report/gpu_library_report.h"

#include "sim/report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace npusim::report {

namespace {
// The kernel bound with the most kernel time (ties to the earlier kernel).
std::string dominant_kernel_bound(const LibraryReport& r) {
  std::map<std::string, double> by;
  std::string best;
  for (const LibraryKernelRow& k : r.rows) {
    const double t = by[k.bound] += k.time_us;
    if (best.empty() || t > by[best]) best = k.bound;
  }
  return best;
}
}  // namespace

const std::vector<LibraryField>& library_fields() {
  using J = nlohmann::ordered_json;
  using R = LibraryReport;
  // The core keys every device's report has (device, time_us, cycles, macs, dram_bytes, bound),
  // then the GPU's own.
  static const std::vector<LibraryField> f = {
      {"device", "", "gpu (a core key: every device's report has it)", [](const R&) { return J("gpu"); }, kInTotals},
      {"time_us", "us", "first launch to the end of the last kernel (a core key)",
       [](const R& r) { return J(round3(r.total_us)); }, kInTotals},
      {"cycles", "cycles", "time_us at clock_mhz (a core key)", [](const R& r) { return J(std::llround(r.total_us * r.clock_mhz)); },
       kInTotals | kInSweep},
      {"macs", "MAC", "GEMM, convolution and attention multiply-accumulates (a core key)",
       [](const R& r) { return J(std::llround(r.macs)); }, kInTotals | kInSweep},
      {"workload_macs", "MAC", "the workload's MACs as its ops state them: equal on every device for one workload (a core key)",
       [](const R& r) { return J(std::llround(r.workload_macs)); }, kInTotals},
      {"executed_macs", "MAC", "the MACs the kernels execute: macs (FlashAttention skips a causal mask's blocks: about half the scores of a prefill) (a core key)",
       [](const R& r) { return J(std::llround(r.macs)); }, kInTotals},
      {"dram_bytes", "bytes", "HBM traffic of every kernel (a core key: off-chip bytes)",
       [](const R& r) { return J(std::llround(r.hbm_bytes)); }, kInTotals},
      {"bound", "", "the kernel bound with the most kernel time (ties to the earlier kernel)",
       [](const R& r) { return J(dominant_kernel_bound(r)); }, kInTotals | kInSweep},
      {"kernel_us", "us", "the kernels' own time, summed", [](const R& r) { return J(round3(r.kernel_us)); }, kInTotals | kInSweep},
      {"launch_us", "us", "launches, gaps and host-bound waits: time_us - kernel_us",
       [](const R& r) { return J(round3(r.launch_us)); }, kInTotals | kInSweep},
      {"flops", "FLOP", "useful flops of every kernel (element-wise work included)", [](const R& r) { return J(r.flops); },
       kInTotals},
      {"hbm_bytes", "bytes", "HBM traffic of every kernel", [](const R& r) { return J(std::round(r.hbm_bytes)); }, kInTotals},
      {"time_ms", "ms", "time_us in ms", [](const R& r) { return J(std::round(r.total_us * 1000) / 1e6); }, kInSweep},
      {"tflops", "TFLOPS", "flops / time", [](const R& r) { return J(r.total_us > 0 ? round3(r.flops / (r.total_us * 1e6)) : 0.0); },
       kInSweep},
      {"hbm_bytes", "bytes", "HBM traffic of every kernel", [](const R& r) { return J(std::llround(r.hbm_bytes)); }, kInSweep},
      {"kernels", "", "kernels launched", [](const R& r) { return J(r.kernels); }, kInSweep},
      {"num_sms", "SMs", "gpu.num_sms", [](const R& r) { return J(r.num_sms); }, kInSweep},
      {"energy_uj", "uJ", "each kernel's board power x its time, and idle power over the gaps (empty when gpu.power.tdp_w is unset; docs/energy.md#gpus)",
       [](const R& r) { return r.power_modelled ? J(r.energy_uj) : J(nullptr); }, kInTotals | kInSweep},
      {"average_power_w", "W", "energy_uj / time_us",
       [](const R& r) { return r.power_modelled && r.total_us > 0 ? J(r.energy_uj / r.total_us) : J(nullptr); }, kInTotals | kInSweep},
      {"inferences_per_j", "1/J", "the workload's batch / energy",
       [](const R& r) { return r.power_modelled && r.energy_uj > 0 ? J(r.batch / (r.energy_uj * 1e-6)) : J(nullptr); },
       kInTotals | kInSweep},
  };
  return f;
}

const std::vector<KernelField>& library_kernel_fields() {
  using J = nlohmann::ordered_json;
  using K = LibraryKernelRow;
  static const std::vector<KernelField> f = {
      {"index", "", "position of the kernel in launch order", [](const K& k) { return J(k.index); }},
      {"name", "", "the kernel's name (its first IR op)", [](const K& k) { return J(k.name); }},
      {"op", "", "the kernel class (a core key: an NPU layer's op)", [](const K& k) { return J(k.kernel_class); }},
      {"class", "", "gemm, conv, attention, rowwise, elementwise, pool, reduce, gather, copy...",
       [](const K& k) { return J(k.kernel_class); }},
      {"ir_ops", "", "the IR ops the kernel runs (fused ones included), space-separated", [](const K& k) { return J(k.ir_ops); }},
      {"shape", "", "the kernel's problem size", [](const K& k) { return J(k.shape); }},
      {"dtype", "", "its data type", [](const K& k) { return J(k.dtype); }},
      {"schedule", "", "the tile or schedule that runs (the best of the candidates)", [](const K& k) { return J(k.schedule); }},
      {"candidates", "", "schedules the library plan simulated for it", [](const K& k) { return J(k.candidates); }},
      {"start_us", "us", "launch of the kernel from the start of the run", [](const K& k) { return J(round3(k.start_us)); }},
      {"time_us", "us", "the kernel's time (a core key)", [](const K& k) { return J(round3(k.time_us)); }},
      {"share", "fraction", "time_us / the kernels' time", [](const K& k) { return J(round3(k.share)); }},
      {"macs", "MAC", "its GEMM, convolution or attention MACs (a core key)", [](const K& k) { return J(k.macs); }},
      {"flops", "FLOP", "its useful flops", [](const K& k) { return J(k.flops); }},
      {"tflops", "TFLOPS", "flops / time_us", [](const K& k) { return J(round3(k.tflops)); }},
      {"hbm_bytes", "bytes", "HBM bytes the GPU model moved for it", [](const K& k) { return J(std::round(k.hbm_bytes)); }},
      {"bytes", "bytes", "hbm_bytes (a core key: off-chip bytes)", [](const K& k) { return J(std::llround(k.hbm_bytes)); }},
      {"min_bytes", "bytes", "its compulsory bytes: every input read once, every output written once",
       [](const K& k) { return J(std::round(k.min_bytes)); }},
      {"bound", "", "the term that decided most of its time: math, smem, latency, l2, hbm... (a core key)",
       [](const K& k) { return J(k.bound); }},
      {"bound_share", "fraction", "the share of its time that term decided", [](const K& k) { return J(round3(k.bound_share)); }},
      {"power_w", "W", "board power while it runs: idle + (TDP - idle) x min(1, flops/peak + bytes/HBM rate) (0: not modelled)",
       [](const K& k) { return J(round3(k.power_w)); }},
      {"energy_uj", "uJ", "power_w x time_us", [](const K& k) { return J(round3(k.energy_uj)); }},
  };
  return f;
}

nlohmann::ordered_json library_sweep_metrics(const LibraryReport& r) {
  nlohmann::ordered_json m = fields_object(library_fields(), r, kInSweep);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LibraryKernelRow& k : r.rows)
    layers.push_back({{"name", k.name}, {"class", k.kernel_class}, {"time_us", round3(k.time_us)}, {"bound", k.bound}});
  m["layers"] = layers;
  return m;
}

std::string format_library_table(const LibraryReport& r) {
  std::ostringstream o;
  o << "workload: " << r.workload << "\n";
  o << "hardware: " << r.hw_name << " (" << r.hw_source << "), " << r.num_sms << " SMs at " << fmt("%.0f", r.clock_mhz)
    << " MHz\n";
  o << "plan: library kernels, fusion " << r.fusion << ", " << r.launch << " launch, " << r.row_kernels
    << " row kernels (" << r.kernels << " kernels, "
    << r.distinct_kernels << " distinct)\n";
  o << "time: " << fmt("%.2f", r.total_us) << " us (kernels " << fmt("%.2f", r.kernel_us) << " us + launch and gaps "
    << fmt("%.2f", r.launch_us) << " us)\n";
  if (r.power_modelled && r.total_us > 0)
    o << "energy: " << fmt("%.1f", r.energy_uj) << " uJ, " << fmt("%.1f", r.energy_uj / r.total_us) << " W average, "
      << fmt("%.1f", r.batch / (r.energy_uj * 1e-6)) << " inferences/J\n";
  o << "\n";
  o << "    #  class        start_us   time_us  share   TFLOPS   HBM_MB  bound    schedule                  ops\n";
  for (const LibraryKernelRow& k : r.rows) {
    char line[1024];
    std::string ops = k.ir_ops;
    if (ops.size() > 120) ops = ops.substr(0, 117) + "...";
    std::snprintf(line, sizeof line, "%5d  %-11s %9.2f  %8.2f  %5.1f%%  %7.1f  %7.2f  %-7s  %-24s  %s\n", k.index,
                  k.kernel_class.c_str(), k.start_us, k.time_us, 100 * k.share, k.tflops, k.hbm_bytes / 1e6,
                  k.bound.c_str(), k.schedule.substr(0, 24).c_str(), ops.c_str());
    o << line;
  }
  o << "\ntime by kernel class:";
  for (const auto& [c, us] : r.time_by_class)
    o << " " << c << " " << fmt("%.1f", r.kernel_us > 0 ? 100 * us / r.kernel_us : 0) << "%";
  o << "\ntotal: " << fmt("%.3f", r.macs / 1e9) << " GMAC, " << fmt("%.3f", r.flops / 1e12) << " TFLOP, "
    << fmt("%.1f", r.hbm_bytes / 1e6) << " MB HBM\n";
  return o.str();
}

nlohmann::ordered_json library_to_json(const LibraryReport& r) {
  nlohmann::ordered_json j;
  j["workload"] = r.workload;
  j["hw"] = {{"name", r.hw_name}, {"source", r.hw_source}, {"clock_mhz", r.clock_mhz}, {"num_sms", r.num_sms}};
  j["plan"] = {{"kind", "library"},         {"fusion", r.fusion},   {"launch", r.launch},
               {"row_kernels", r.row_kernels}, {"kernels", r.kernels},
               {"distinct_kernels", r.distinct_kernels}};
  j["totals"] = fields_object(library_fields(), r, kInTotals);
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  for (const auto& [c, us] : r.time_by_class) by[c] = round3(us);
  j["time_by_class_us"] = by;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const LibraryKernelRow& k : r.rows) rows.push_back(fields_object(library_kernel_fields(), k, kInRows));
  j["layers"] = rows;  // one row per kernel, with the core keys of every device's layers
  j["free_ops"] = r.free_ops;
  nlohmann::ordered_json c = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.config) c[k] = v;
  j["config"] = c;
  return j;
}

std::string library_to_csv(const LibraryReport& r) { return fields_csv(library_kernel_fields(), r.rows); }

nlohmann::ordered_json library_chrome_trace(const LibraryReport& r) {
  nlohmann::ordered_json ev = nlohmann::ordered_json::array();
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", r.hw_name}}}});
  ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0}, {"args", {{"name", "kernels"}}}});
  for (const LibraryKernelRow& k : r.rows)
    ev.push_back({{"name", k.kernel_class + " " + k.name}, {"ph", "X"}, {"pid", 0}, {"tid", 0}, {"ts", round3(k.start_us)},
                  {"dur", round3(k.time_us)},
                  {"args", {{"ops", k.ir_ops}, {"schedule", k.schedule}, {"bound", k.bound}, {"shape", k.shape}}}});
  nlohmann::ordered_json j;
  j["traceEvents"] = ev;
  j["displayTimeUnit"] = "ns";
  return j;
}

}  // namespace npusim::report
