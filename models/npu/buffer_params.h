// Sizes and port rate of the NPU's on-chip buffers: the global (L2) buffer and the WL0 weight
// buffer next to the PE array. The mapper plans against the sizes (sim/mapping); the engine's
// L2Buffer (models/npu/buffer.h) serves its port at l2_bytes_per_cycle.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/config/hw_config.h"

namespace npusim::models {

struct BufferParams {
  int64_t l2_bytes = 8192 * 1024;
  double l2_bytes_per_cycle = 256;
  double l2_weight_share = 0.5;  // of l2_bytes, reserved for weight prefetch
  int64_t weight_buffer_bytes = 1152 * 1024;

  // The npu.l2.* and npu.weight_buffer.* keys: the one place their defaults and ranges are
  // written, each bound to its field (config::bind).
  static const std::vector<config::ParamDecl>& params();
  static BufferParams read(const config::HwConfig& c);  // reads only the keys of params()
};

// In the header: sim/config assembles the schema from it without linking the units.
inline const std::vector<config::ParamDecl>& BufferParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"npu.l2.size_kib", T::Int, "8192", "KiB", "global (L2) buffer holding activations and prefetched weights", {}, r::size, config::bind(&BufferParams::l2_bytes, 1024)},
      {"npu.l2.bytes_per_cycle", T::Double, "256", "B/cycle", "L2 port bandwidth shared by DMA, PE array and VP", {}, r::rate, config::bind(&BufferParams::l2_bytes_per_cycle)},
      // [0, 1): the rest of the L2 holds activations.
      {"npu.l2.weight_share", T::Double, "0.5", "fraction", "share of L2 reserved for weight prefetch", {},
       {0, 1, false, true}, config::bind(&BufferParams::l2_weight_share)},
      {"npu.weight_buffer.size_kib", T::Int, "1152", "KiB", "WL0 weight buffer next to the PE array", {}, r::size, config::bind(&BufferParams::weight_buffer_bytes, 1024)},
  };
  return decls;
}

inline BufferParams BufferParams::read(const config::HwConfig& c) {
  BufferParams p;
  config::read_bound(p, c, params());  // sizes in KiB, bound with a scale of 1024
  return p;
}

}  // namespace npusim::models
