// Vector processor timing: pure formulas, no SystemC. See docs/timing.md#vector-processor.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/ir/graph.h"

namespace npusim::models {

struct VpStageParams {
  double vectors_per_cycle = 1;
  int64_t latency_cycles = 6;
};

struct VpParams {
  int64_t lanes = 32;
  int64_t parallel_images = 1;  // images processed side by side when a batch has several
  int64_t instr_overhead_cycles = 0;
  std::map<std::string, VpStageParams> stages;  // by module kind (fp32_sum_sub_group0 -> fp32_sum_sub_group)

  // The module_list stage kinds, each with a throughput/latency pair of keys.
  static constexpr const char* kStageKinds[] = {"pre_cal", "compare_group", "post_cal", "fp32_sum_sub_group",
                                                "relu_group", "fp32_mul_group", "acc_tree_group", "lut_group"};
  // The npu.vector.* keys: the one place their defaults and ranges are written.
  static const std::vector<config::ParamDecl>& params();
  static VpParams read(const config::HwConfig& c);  // reads only the keys of params()
  const VpStageParams& stage(const std::string& kind) const;  // InternalError if unknown
};

// In the header: sim/config assembles the schema from it without linking the units.
inline const std::vector<config::ParamDecl>& VpParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = [] {
    std::vector<config::ParamDecl> d = {
        {"npu.vector.lanes", T::Int, "32", "elements", "channels processed in parallel (one vector = lanes elements)", {}, r::count, config::bind(&VpParams::lanes)},
        {"npu.vector.instr_overhead_cycles", T::Int, "0", "cycles", "per VP instruction issue overhead", {}, r::delay, config::bind(&VpParams::instr_overhead_cycles)},
        {"npu.vector.parallel_images", T::Int, "1", "images",
         "images of a batch the VP processes side by side (the work of a batch of N takes ceil(N / this) passes' time)", {},
         r::count, config::bind(&VpParams::parallel_images)},
    };
    for (const std::string k : kStageKinds) {
      const std::string key = "npu.vector.stages." + k;
      if (k == "lut_group") {
        // Transcendental functions (exp, gelu, sigmoid, tanh, rsqrt, reciprocal) by table lookup and
        // interpolation: the passes of softmax, norms and activations beyond relu (docs/timing.md#vector-ops-of-the-workload-ir).
        d.push_back({key + ".vectors_per_cycle", T::Double, "0.5", "vectors/cycle",
                     "throughput of the lut_group stage (table lookup + linear interpolation: two reads per element)", {},
                     r::rate});
        d.push_back({key + ".latency_cycles", T::Int, "8", "cycles", "pipeline latency of the lut_group stage", {}, r::delay});
      } else {
        d.push_back({key + ".vectors_per_cycle", T::Double, "1", "vectors/cycle", "throughput of the " + k + " stage", {},
                     r::rate});
        d.push_back({key + ".latency_cycles", T::Int, "6", "cycles", "pipeline latency of the " + k + " stage", {}, r::delay});
      }
    }
    return d;
  }();
  return decls;
}

// The module_list stage kind with any group number removed: fp32_sum_sub_group0 -> fp32_sum_sub_group.
std::string vp_stage_family(const std::string& kind);

// Work of one stage in one VP command: `channels` x `pixels` elements (pixels = N*H*W). A
// vector is `lanes` bytes: 32 int8 elements, or 16 when the layer reads or writes fp16.
struct VpStageWork {
  std::string kind;
  int64_t channels = 1;
  int64_t pixels = 1;
  int64_t elem_bytes = 1;  // the wider of the layer's input and output element sizes
  int64_t images = 1;      // images in the work, when the VP may process several in parallel
};

// One VP command: its stages and the bytes it reads from and writes to L2.
struct VpTile {
  std::vector<VpStageWork> stages;
  int64_t l2_bytes = 0;
  int64_t fixed_cycles = 0;  // opaque ops: their compute time at the NPU's peak rate (roofline)
};

struct VpTiming {
  int64_t stream_cycles = 0;   // the slowest stage's vectors / throughput
  int64_t latency_cycles = 0;  // sum of the stage latencies (pipeline depth)
  int64_t total_cycles = 0;
  std::string slowest_stage;
};

// Stages form one pipeline: a tile takes the slowest stage's streaming time plus the pipeline
// depth plus the instruction overhead.
VpTiming vp_tile_timing(const VpParams& p, const std::vector<VpStageWork>& stages);
// The unit's busy time for one command: the pipeline above plus any fixed (roofline) cycles.
int64_t vp_command_cycles(const VpParams& p, const VpTile& t);

// One pass of a vector op over its data: a pipeline of stages (module kinds). Passes run one
// after another because each needs the previous one's result (softmax needs the row max before
// exp, the sum before the division). per_row: the pass touches one value per reduced row (the
// reciprocal of a softmax sum, the rsqrt of a variance), not every element.
struct VpPass {
  std::vector<std::string> stages;
  bool per_row = false;
};
// The passes an op takes on the vector processor when its producer gave no module_list
// (docs/timing.md#vector-ops-of-the-workload-ir). Empty for ops the VP only moves (reshape, transpose, concat,
// split, slice, pad, gather) and for opaque ops; GEMM-class ops never come here.
std::vector<VpPass> vp_op_passes(ir::OpKind op);

}  // namespace npusim::models
