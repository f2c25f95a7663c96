// Timing formulas of the vector processor (docs/timing.md#vector-processor).
#include "models/npu/vector_processor_timing.h"

#include <algorithm>
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
  config::read_bound(p, c, params());  // lanes, parallel_images, instr_overhead_cycles; the stages below
  for (const char* k : kStageKinds) {
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
    // Several images of a batch go through the pipeline side by side (parallel_images).
    const int64_t side_by_side = std::max<int64_t>(1, std::min(p.parallel_images, s.images));
    const int64_t vectors = ceil_div(ceil_div(s.channels * s.elem_bytes, p.lanes) * s.pixels, side_by_side);
    const auto cycles = static_cast<int64_t>(std::ceil(vectors / sp.vectors_per_cycle));
    if (cycles > r.stream_cycles) r.stream_cycles = cycles, r.slowest_stage = s.kind;
    r.latency_cycles += sp.latency_cycles;
  }
  r.total_cycles = p.instr_overhead_cycles + r.stream_cycles + r.latency_cycles;
  return r;
}

int64_t vp_command_cycles(const VpParams& p, const VpTile& t) {
  return vp_tile_timing(p, t.stages).total_cycles + t.fixed_cycles;
}

std::vector<VpPass> vp_op_passes(ir::OpKind op) {
  using K = ir::OpKind;
  auto one = [](std::vector<std::string> stages) { return std::vector<VpPass>{{std::move(stages), false}}; };
  switch (op) {
    // The Frontend IR's own ops (the stages the Gemini compiler emits for them).
    case K::Quantize:
    case K::Dequantize:
    case K::Requantize: return one({"pre_cal", "post_cal"});
    case K::MaxPool2d:
    case K::GlobalMaxPool2d: return one({"pre_cal", "compare_group", "post_cal"});
    case K::AvgPool2d:
    case K::GlobalAvgPool2d: return one({"pre_cal", "fp32_mul_group", "acc_tree_group", "post_cal"});
    case K::ElementWiseAdd: return one({"pre_cal", "fp32_sum_sub_group0", "post_cal"});
    // Element-wise.
    case K::Sub: return one({"pre_cal", "fp32_sum_sub_group0", "post_cal"});
    case K::Mul:
    case K::Neg: return one({"pre_cal", "fp32_mul_group", "post_cal"});
    case K::Div: return one({"pre_cal", "lut_group", "fp32_mul_group", "post_cal"});  // x * (1/y)
    case K::Maximum:
    case K::Minimum: return one({"pre_cal", "compare_group", "post_cal"});
    case K::Relu: return one({"pre_cal", "relu_group", "post_cal"});
    case K::Relu6:
    case K::Clip: return one({"pre_cal", "relu_group", "compare_group", "post_cal"});
    case K::Gelu:
    case K::Sigmoid:
    case K::Tanh:
    case K::Exp:
    case K::Sqrt:
    case K::Rsqrt: return one({"pre_cal", "lut_group", "post_cal"});
    case K::Silu: return one({"pre_cal", "lut_group", "fp32_mul_group", "post_cal"});  // x * sigmoid(x)
    // Normalizations: statistics passes, a per-row lookup, then the normalizing pass.
    case K::Softmax:
      return {{{"pre_cal", "compare_group"}, false},                              // row max
              {{"fp32_sum_sub_group0", "lut_group", "acc_tree_group"}, false},    // exp(x - max), row sum
              {{"lut_group"}, true},                                              // 1 / sum
              {{"fp32_mul_group", "post_cal"}, false}};                           // scale
    case K::LayerNorm:
      return {{{"pre_cal", "acc_tree_group"}, false},                             // mean
              {{"fp32_sum_sub_group0", "fp32_mul_group", "acc_tree_group"}, false},  // variance
              {{"lut_group"}, true},                                              // rsqrt(var + eps)
              {{"fp32_sum_sub_group0", "fp32_mul_group", "fp32_mul_group", "fp32_sum_sub_group1", "post_cal"}, false}};
    case K::RmsNorm:
      return {{{"pre_cal", "fp32_mul_group", "acc_tree_group"}, false},           // mean of squares
              {{"lut_group"}, true},                                              // rsqrt
              {{"fp32_mul_group", "fp32_mul_group", "post_cal"}, false}};         // x * r * gamma
    case K::ReduceSum: return one({"pre_cal", "acc_tree_group", "post_cal"});
    case K::ReduceMean: return one({"pre_cal", "acc_tree_group", "fp32_mul_group", "post_cal"});
    case K::ReduceMax: return one({"pre_cal", "compare_group", "post_cal"});
    default: return {};
  }
}

}  // namespace npusim::models
