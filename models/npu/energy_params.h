// Energy per NPU event (MAC, DRAM byte, on-chip buffer byte) for the report's energy columns
// (optional: all 0 leaves them out).
#pragma once
#include <vector>

#include "sim/config/hw_config.h"

namespace npusim::models {

struct EnergyParams {
  double pj_per_mac = 0;
  double pj_per_dram_byte = 0;
  double pj_per_sram_byte = 0;

  bool modelled() const { return pj_per_mac > 0 || pj_per_dram_byte > 0 || pj_per_sram_byte > 0; }
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
      {"energy.pj_per_mac", T::Double, "0", "pJ", "energy per MAC", {}, r::energy, config::bind(&EnergyParams::pj_per_mac)},
      {"energy.pj_per_dram_byte", T::Double, "0", "pJ", "energy per DRAM byte", {}, r::energy, config::bind(&EnergyParams::pj_per_dram_byte)},
      {"energy.pj_per_sram_byte", T::Double, "0", "pJ", "energy per on-chip buffer byte", {}, r::energy, config::bind(&EnergyParams::pj_per_sram_byte)},
  };
  return decls;
}

inline EnergyParams EnergyParams::read(const config::HwConfig& c) {
  EnergyParams p;
  config::read_bound(p, c, params());
  return p;
}

}  // namespace npusim::models
