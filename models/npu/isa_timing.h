// Timing of one instruction of a compiled Gemini program (ISA_Format.md): what a pe_conv, a
// vp_self / vp_pool, a *_mov or a *_cfg takes from its own fields. Pure formulas, no SystemC;
// the queues and tokens that order the instructions are sim/engine/isa_program.h's.
// See docs/timing.md#compiled-programs.
#pragma once
#include <cstdint>
#include <vector>

#include "models/npu/pe_array_timing.h"
#include "sim/config/hw_config.h"

namespace npusim::models {

// The npu.isa.* keys: what the instruction-level model adds to the units' own keys (the PE
// array's lanes, output drain and weight read rate, the VP's lanes, the DMA's setup, the DRAM's
// rate). Values and sources: configs/gemini_zebu.yaml, docs/calibration_data.md.
struct IsaParams {
  int64_t issue_cycles = 21;       // each *_cfg* instruction, and each vector instruction's own issue
  int64_t control_cycles = 35;     // ct_st / ct_bc / ct_ed
  int64_t pe_fixed_cycles = 100;   // per pe_conv: start and drain of the OL1 pipeline
  double pe_stall_share = 0.016;   // pe_conv compute stretched by array stalls: cycles x (1 + this)
  double weight_stream_overlap = 0.25;  // weights streamed from L2: this share of the shorter of compute and stream shows
  int64_t vp_pipeline_cycles = 17; // per vector workload, shared by its instructions (one per image)

  static const std::vector<config::ParamDecl>& params();
  static IsaParams read(const config::HwConfig& c) {
    IsaParams p;
    config::read_bound(p, c, params());
    return p;
  }
};

// In the header: sim/config assembles the schema from it without linking the units.
inline const std::vector<config::ParamDecl>& IsaParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"npu.isa.issue_cycles", T::Int, "21", "cycles",
       "compiled programs (sim program, compare-trace --program): each configuration instruction (*_cfg*) in its queue, and "
       "each vector instruction's issue", {}, r::delay, config::bind(&IsaParams::issue_cycles)},
      {"npu.isa.control_cycles", T::Int, "35", "cycles", "compiled programs: each control instruction (ct_st, ct_bc, ct_ed)",
       {}, r::delay, config::bind(&IsaParams::control_cycles)},
      {"npu.isa.pe_fixed_cycles", T::Int, "100", "cycles", "compiled programs: fixed part of each pe_conv", {}, r::delay,
       config::bind(&IsaParams::pe_fixed_cycles)},
      {"npu.isa.pe_stall_share", T::Double, "0.016", "",
       "compiled programs: pe_conv compute cycles stretched by array stalls, x (1 + this)", {}, {0, 10, false, false},
       config::bind(&IsaParams::pe_stall_share)},
      {"npu.isa.weight_stream_overlap", T::Double, "0.25", "",
       "compiled programs: a pe_conv whose weights stream from L2 takes max(compute, drain, stream) + this x min(compute, stream)",
       {}, {0, 1, false, false}, config::bind(&IsaParams::weight_stream_overlap)},
      {"npu.isa.vp_pipeline_cycles", T::Int, "17", "cycles",
       "compiled programs: pipeline fill of a vector workload, shared by its instructions", {}, r::delay,
       config::bind(&IsaParams::vp_pipeline_cycles)},
  };
  return decls;
}

// Output channels carry this many bytes of quantisation parameters beside their weights (the
// Scheduler IR's `size` of every weight block); pixels are stored padded to this many bytes.
inline constexpr int64_t kIsaQuantParamBytesPerChannel = 32;
inline constexpr int64_t kIsaPixelAlignBytes = 8;

// The axis the PE groups split (pe_cfg_pm XYmode[1], YCutMode).
enum class IsaCutAxis { W = 0, H = 1, N = 2, K = 3, C = 4 };

// One pe_conv: pe_cfg_tp Tile [N, K, C, H, W] (output pixels), KERNEL [R, S], MTK0, MTI (mini
// tile of (MTI[0]+1) x (MTI[1]+1) pixels), the cut axis, and where its weights are.
struct IsaPeConv {
  int64_t n = 1, k = 1, c = 1, h = 1, w = 1, r = 1, s = 1;
  int64_t mtk0 = 1, mini_h = 1, mini_w = 1;
  IsaCutAxis cut = IsaCutAxis::W;
  bool weights_from_l2 = false;  // lw_mov SS=0: the weights stream out of L2 while the conv runs
};

struct IsaPeConvCycles {
  int64_t compute = 0;        // K passes x pixels (mini tiles, cut axis rounded up) x channel groups x R x S, with stalls
  int64_t drain = 0;          // outputs / the drain rate
  int64_t weight_stream = 0;  // weights from L2 (0 when they sit in the weight buffer)
  int64_t total = 0;
};

IsaPeConvCycles isa_pe_conv_cycles(const PeArrayParams& pe, const IsaParams& isa, const IsaPeConv& t);

// One vector instruction over one image of `c` x `h` x `w` (vp_cfg_fm STile) of which each
// element is `elem_bytes` wide (the wider of input and output); `instructions` of the workload
// share one image's streaming time.
int64_t isa_vp_cycles(int64_t lanes, const IsaParams& isa, int64_t c, int64_t h, int64_t w, int64_t elem_bytes,
                      int64_t instructions);

// Bytes a transfer moves: activations [N, C, H, W] of elem_bytes (each pixel padded to 8 bytes),
// weights [K, C, R, S] in int8 (C padded to the PE's channel_align) with their per-channel parameters.
int64_t isa_activation_bytes(int64_t n, int64_t c, int64_t h, int64_t w, int64_t elem_bytes);
int64_t isa_weight_bytes(int64_t k, int64_t c, int64_t r, int64_t s, int64_t channel_align);
// A DRAM transfer: setup + bytes at the DRAM's rate.
int64_t isa_dma_cycles(int64_t bytes, int64_t setup_cycles, double dram_bytes_per_cycle);

}  // namespace npusim::models
