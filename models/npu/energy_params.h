// The NPU's energy (docs/energy.md): a cost per event of each unit - a MAC of the PE array by
// dtype, a lane-cycle of the vector processor, a byte through an on-chip buffer, a byte of DRAM
// traffic - and the chip's static power (leakage and always-on logic) over the run's time. Every
// figure in a config names its source and technology node; all 0 leaves energy out.
#pragma once
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/ir/dtype.h"

namespace npusim::models {

struct EnergyParams {
  double pj_per_mac = 0;  // any dtype without its own figure below
  double pj_per_mac_int8 = 0, pj_per_mac_fp8 = 0, pj_per_mac_fp16 = 0, pj_per_mac_bf16 = 0, pj_per_mac_fp32 = 0;
  double pj_per_vector_lane_cycle = 0;
  double pj_per_dram_byte = 0;
  double pj_per_sram_byte = 0;
  double pj_per_dma_byte = 0;       // the DMA engine's own work per byte it moves (DRAM and SRAM ends apart)
  double pj_per_noc_byte_hop = 0;   // multi-core: a byte over one NoC link (injection, router-to-router, ejection)
  double static_w = 0;

  bool modelled() const {
    return pj_per_mac > 0 || pj_per_mac_int8 > 0 || pj_per_mac_fp8 > 0 || pj_per_mac_fp16 > 0 || pj_per_mac_bf16 > 0 ||
           pj_per_mac_fp32 > 0 || pj_per_vector_lane_cycle > 0 || pj_per_dram_byte > 0 || pj_per_sram_byte > 0 ||
           pj_per_dma_byte > 0 || pj_per_noc_byte_hop > 0 || static_w > 0;
  }
  // A MAC whose operands are of type t: its dtype's figure, else pj_per_mac.
  double mac_pj(ir::DType t) const {
    double v = 0;
    switch (t) {
      case ir::DType::Int8:
      case ir::DType::UInt8: v = pj_per_mac_int8; break;
      case ir::DType::Float8E4M3:
      case ir::DType::Float8E5M2: v = pj_per_mac_fp8; break;
      case ir::DType::Float16: v = pj_per_mac_fp16; break;
      case ir::DType::BFloat16: v = pj_per_mac_bf16; break;
      case ir::DType::Float32: v = pj_per_mac_fp32; break;
      default: break;
    }
    return v > 0 ? v : pj_per_mac;
  }
  // The energy.* keys: the one place their defaults and ranges are written, each bound to its
  // field (config::bind).
  static const std::vector<config::ParamDecl>& params();
  static EnergyParams read(const config::HwConfig& c);  // reads only the keys of params()
};

// In the header: sim/config assembles the schema from it without linking the units.
inline const std::vector<config::ParamDecl>& EnergyParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"energy.pj_per_mac", T::Double, "0", "pJ", "energy per MAC of a dtype without its own figure", {}, r::energy,
       config::bind(&EnergyParams::pj_per_mac)},
      {"energy.pj_per_mac_int8", T::Double, "0", "pJ", "energy per int8 MAC (0: pj_per_mac)", {}, r::energy,
       config::bind(&EnergyParams::pj_per_mac_int8)},
      {"energy.pj_per_mac_fp8", T::Double, "0", "pJ", "energy per fp8 MAC (0: pj_per_mac)", {}, r::energy,
       config::bind(&EnergyParams::pj_per_mac_fp8)},
      {"energy.pj_per_mac_fp16", T::Double, "0", "pJ", "energy per fp16 MAC (0: pj_per_mac)", {}, r::energy,
       config::bind(&EnergyParams::pj_per_mac_fp16)},
      {"energy.pj_per_mac_bf16", T::Double, "0", "pJ", "energy per bf16 MAC (0: pj_per_mac)", {}, r::energy,
       config::bind(&EnergyParams::pj_per_mac_bf16)},
      {"energy.pj_per_mac_fp32", T::Double, "0", "pJ", "energy per fp32 MAC (0: pj_per_mac)", {}, r::energy,
       config::bind(&EnergyParams::pj_per_mac_fp32)},
      {"energy.pj_per_vector_lane_cycle", T::Double, "0", "pJ",
       "energy of one vector-processor lane for one busy cycle (x npu.vector.lanes x the vector unit's busy cycles)", {},
       r::energy, config::bind(&EnergyParams::pj_per_vector_lane_cycle)},
      {"energy.pj_per_dram_byte", T::Double, "0", "pJ", "energy per DRAM byte read or written (the DRAM type's figure)", {},
       r::energy, config::bind(&EnergyParams::pj_per_dram_byte)},
      {"energy.pj_per_sram_byte", T::Double, "0", "pJ", "energy per on-chip buffer byte read or written", {}, r::energy,
       config::bind(&EnergyParams::pj_per_sram_byte)},
      {"energy.pj_per_dma_byte", T::Double, "0", "pJ", "energy of the DMA engine per byte it moves (its descriptors and datapath; the DRAM and SRAM ends are their own figures)",
       {}, r::energy, config::bind(&EnergyParams::pj_per_dma_byte)},
      {"energy.pj_per_noc_byte_hop", T::Double, "0", "pJ",
       "multi-core chips: energy per byte over one NoC link (a core's injection or ejection link, a mesh router-to-router link)", {},
       r::energy, config::bind(&EnergyParams::pj_per_noc_byte_hop)},
      {"energy.static_w", T::Double, "0", "W", "static power of the chip (leakage, clocks, always-on logic) over the whole run",
       {}, r::energy, config::bind(&EnergyParams::static_w)},
  };
  return decls;
}

inline EnergyParams EnergyParams::read(const config::HwConfig& c) {
  EnergyParams p;
  config::read_bound(p, c, params());
  return p;
}

}  // namespace npusim::models
