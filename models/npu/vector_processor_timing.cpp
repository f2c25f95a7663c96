// Timing formulas of the vector processor (docs/timing.md#vector-processor).
#include "models/npu/vector_processor_timing.h"

#include <cctype>
#include <cmath>

#include "models/npu/pe_array_timing.h"
#include "sim/ir/error.h"

namespace npusim::models {

std::string vp_stage_family(const std::string& kind) {
  std::string k = kind;
  while (!k.empty() && std::isdigit(static_cast<unsigned char>(k.back()))) k.pop_back();
  return k;
}

VpParams VpParams::read(const config::HwConfig& c) {
  VpParams p;
  p.lanes = c.get_int("npu.vector.lanes");
  p.instr_overhead_cycles = c.get_int("npu.vector.instr_overhead_cycles");
  for (const char* k : {"pre_cal", "compare_group", "post_cal", "fp32_sum_sub_group", "relu_group",
                         "fp32_mul_group", "acc_tree_group", "lut_group"}) {
    std::string base = std::string("npu.vector.stages.") + k;
    p.stages[k] = {c.get_double(base + ".vectors_per_cycle"), c.get_int(base + ".latency_cycles")};
  }
  return p;
}

const VpStageParams& VpParams::stage(const std::string& kind) const {
  auto it = stages.find(vp_stage_family(kind));
  if (it == stages.end()) throw InternalError("no vector stage parameters for " + kind);
  return it->second;
}

VpTiming vp_tile_timing(const VpParams& p, const std::vector<VpStageWork>& stages) {
  VpTiming r;
  for (const auto& s : stages) {
    const auto& sp = p.stage(s.kind);
    const int64_t vectors = ceil_div(s.channels * s.elem_bytes, p.lanes) * s.pixels;
    const auto cycles = static_cast<int64_t>(std::ceil(vectors / sp.vectors_per_cycle));
    if (cycles > r.stream_cycles) r.stream_cycles = cycles, r.slowest_stage = s.kind;
    r.latency_cycles += sp.latency_cycles;
  }
  r.total_cycles = p.instr_overhead_cycles + r.stream_cycles + r.latency_cycles;
  return r;
}

}  // namespace npusim::models
