// One graph on one device (sim/run/device_run.h).
#include "sim/run/device_run.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>

#include <cstdio>
#include <optional>
#include <sstream>

#include "models/gpu/gpu_power.h"
#include "models/npu/energy_params.h"
#include "sim/report/gpu_library_report.h"
#include "sim/report/report.h"
#include "sim/run/npu_run.h"
#include "sim/run/run.h"

namespace npusim::run {

namespace {

// An NPU layer under the GPU library's kernel class names, so that a pass's breakdown reads the
// same on both devices: GEMMs, attention (batched matmuls and softmax: a transformer's Q.K^T,
// softmax and P.V), row-wise norms, gathers, layout copies, element-wise ops, host (cpu) layers.
const char* npu_layer_class(const report::LayerRow& l) {
  if (l.device != "npu") return "host";
  const std::optional<ir::OpKind> k = ir::parse_op(l.op);
  if (!k) return "elementwise";
  switch (*k) {
    case ir::OpKind::MatMul: case ir::OpKind::Dense: case ir::OpKind::Conv2d: return "gemm";
    case ir::OpKind::BatchMatMul: case ir::OpKind::Softmax: return "attention";
    case ir::OpKind::LayerNorm: case ir::OpKind::RmsNorm: return "rowwise";
    case ir::OpKind::Gather: return "gather";
    case ir::OpKind::Reshape: case ir::OpKind::Transpose: case ir::OpKind::Concat: case ir::OpKind::Split:
    case ir::OpKind::Slice: case ir::OpKind::Pad: return "copy";
    default: return "elementwise";
  }
}

}  // namespace

namespace {
// A number at the printf resolution of `format` (what the text format carried).
double at(const char* format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return std::strtod(b, nullptr);
}
}  // namespace

std::string RunSummary::to_json() const {
  nlohmann::json j = {{"ns", at("%.6f", ns)}, {"memory_bytes", at("%.1f", memory_bytes)}, {"memory_rate", at("%.9g", memory_rate)}};
  nlohmann::json c = nlohmann::json::object();
  for (const auto& [k, v] : by_class_ns) c[k] = at("%.6f", v);
  j["by_class_ns"] = c;
  nlohmann::json st = nlohmann::json::array();
  for (double v : stage_ns) st.push_back(at("%.6f", v));
  j["stage_ns"] = st;
  j["bound"] = bound;
  j["bound_share"] = at("%.6f", bound_share);
  j["energy_uj"] = at("%.6f", energy_uj);
  return j.dump();
}

RunSummary RunSummary::from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  RunSummary r;
  r.ns = j.at("ns").get<double>();
  r.memory_bytes = j.at("memory_bytes").get<double>();
  r.memory_rate = j.at("memory_rate").get<double>();
  for (const auto& [k, v] : j.at("by_class_ns").items()) r.by_class_ns[k] = v.get<double>();
  for (const auto& v : j.at("stage_ns")) r.stage_ns.push_back(v.get<double>());
  r.bound = j.at("bound").get<std::string>();
  r.bound_share = j.at("bound_share").get<double>();
  r.energy_uj = j.at("energy_uj").get<double>();
  return r;
}

RunSummary simulate_on_device(const ir::Graph& g, const config::HwConfig& hw, const DeviceRunOptions& o) {
  run::Workload w;
  w.graph = &g;
  RunOptions ro;
  ro.library = o.library;
  ro.ark_plan = o.ark_plan;
  const RunRecord rec = run::run(w, Hardware::of(hw), ro);
  RunSummary r;
  if (rec.device() == "gpu") {  // the library plan, or ARK's DefaultPlanner
    const models::GpuParams params = models::GpuParams::read(hw);
    r.memory_rate = params.hbm_bytes_per_cycle * params.cycles_per_ns();
    if (const mapping::GpuSimResult* sim = rec.gpu_sim()) {
      r.ns = sim->end_cycles / sim->clock_mhz * 1000.0;
      return r;
    }
    const report::LibraryReport& rep = *rec.gpu_library();
    r.ns = rep.total_us * 1000.0;
    for (const report::LibraryKernelRow& k : rep.rows) {
      r.memory_bytes += k.hbm_bytes;
      r.by_class_ns[k.kernel_class] += k.time_us * 1000.0;
    }
    if (rep.power_modelled) r.energy_uj = rep.energy_uj;
    return r;
  }
  const mapping::NpuParams params = mapping::NpuParams::read(hw);
  const report::RunReport& rep = rec.npu()->report;
  r.ns = (rep.npu_cycles + rep.host_cycles) / params.clock_mhz * 1000.0;
  r.memory_bytes = static_cast<double>(rep.dram_read_bytes + rep.dram_write_bytes);
  r.memory_rate = params.dram.bytes_per_cycle * params.clock_mhz / 1000.0;
  for (const report::LayerRow& l : rep.layers) r.by_class_ns[npu_layer_class(l)] += l.time_us * 1000.0;
  if (rep.energy_modelled) r.energy_uj = rep.energy_uj;
  return r;
}

double idle_power_w(const config::HwConfig& hw) {
  return hw.get_string("device") == "gpu" ? models::GpuPowerParams::read(hw).idle_w : models::EnergyParams::read(hw).static_w;
}

}  // namespace npusim::run
