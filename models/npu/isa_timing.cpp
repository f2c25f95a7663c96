// Timing formulas of one Gemini instruction (docs/timing.md#compiled-programs).
#include "models/npu/isa_timing.h"

#include <algorithm>
#include <cmath>

namespace npusim::models {

IsaPeConvCycles isa_pe_conv_cycles(const PeArrayParams& pe, const IsaParams& isa, const IsaPeConv& t) {
  // Each PE takes channel_align input channels a cycle; the pe_groups groups split the cut axis
  // (each takes its ceiling share); a K pass covers rows x MTK0 output channels, and the pixels
  // of a group go in whole mini tiles (docs/calibration_data.md section 3.2).
  const int64_t g = std::max<int64_t>(1, pe.pe_groups);
  const int64_t c0 = ceil_div(t.c, pe.channel_align);
  auto part = [&](IsaCutAxis a, int64_t d) { return t.cut == a ? ceil_div(d, g) : d; };
  const int64_t n = part(IsaCutAxis::N, t.n), h = part(IsaCutAxis::H, t.h), w = part(IsaCutAxis::W, t.w);
  const int64_t k = part(IsaCutAxis::K, t.k), c0g = part(IsaCutAxis::C, c0);
  const int64_t mtk0 = std::max<int64_t>(1, t.mtk0), mh = std::max<int64_t>(1, t.mini_h), mw = std::max<int64_t>(1, t.mini_w);
  IsaPeConvCycles r;
  const double compute = static_cast<double>(ceil_div(k, pe.rows * mtk0) * mtk0) * static_cast<double>(n) *
                         static_cast<double>(ceil_div(h, mh) * mh) * static_cast<double>(ceil_div(w, mw) * mw) *
                         static_cast<double>(c0g * t.r * t.s);
  r.compute = static_cast<int64_t>(std::ceil(compute * (1 + isa.pe_stall_share)));
  // The drain counts outputs, not bytes: fp16 outputs drain at the int8 rate.
  r.drain = static_cast<int64_t>(std::ceil(static_cast<double>(t.n * t.k * t.h * t.w) / pe.out_write_bytes_per_cycle));
  if (t.weights_from_l2) {
    const int64_t k_pad = ceil_div(t.k, pe.rows) * pe.rows;  // whole K passes of weights stream
    r.weight_stream = static_cast<int64_t>(
        std::ceil(static_cast<double>(isa_weight_bytes(k_pad, t.c, t.r, t.s, pe.channel_align)) / pe.weight_read_bytes_per_cycle));
  }
  const double longest = static_cast<double>(std::max({r.compute, r.drain, r.weight_stream}));
  const double overlap = t.weights_from_l2 ? isa.weight_stream_overlap * static_cast<double>(std::min(r.compute, r.weight_stream)) : 0;
  r.total = static_cast<int64_t>(std::ceil(longest + overlap)) + isa.pe_fixed_cycles;
  return r;
}

int64_t isa_vp_cycles(int64_t lanes, const IsaParams& isa, int64_t c, int64_t h, int64_t w, int64_t elem_bytes,
                      int64_t instructions) {
  // lanes bytes of channels per pixel per cycle; a workload's instructions (one per image) share
  // one image's stream and the pipeline fill, and each pays its own issue (the batch traces).
  const int64_t stream = ceil_div(c * elem_bytes, lanes) * h * w;
  return isa.issue_cycles + (stream + isa.vp_pipeline_cycles) / std::max<int64_t>(1, instructions);
}

int64_t isa_activation_bytes(int64_t n, int64_t c, int64_t h, int64_t w, int64_t elem_bytes) {
  return n * ceil_div(c * elem_bytes, kIsaPixelAlignBytes) * kIsaPixelAlignBytes * h * w;
}

int64_t isa_weight_bytes(int64_t k, int64_t c, int64_t r, int64_t s, int64_t channel_align) {
  return k * ceil_div(c, channel_align) * channel_align * r * s + kIsaQuantParamBytesPerChannel * k;
}

int64_t isa_dma_cycles(int64_t bytes, int64_t setup_cycles, double dram_bytes_per_cycle) {
  return setup_cycles + static_cast<int64_t>(std::ceil(static_cast<double>(bytes) / dram_bytes_per_cycle));
}

}  // namespace npusim::models
