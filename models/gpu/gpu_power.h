// A GPU's board power (docs/energy.md#gpus): idle power, and above it a dynamic part driven by
// how busy a kernel keeps the math units and HBM, capped at the board's TDP:
//   P = idle + (tdp - idle) x min(1, flops / (peak flops x t) + HBM bytes / (HBM rate x t))
// A kernel that saturates either the tensor cores or HBM runs at the TDP (Hopper and Ampere
// boards are power-limited there); the gaps between kernels at idle. Both figures from the
// vendor's board specification or, where none is published, marked as estimates in the config.
#pragma once
#include <algorithm>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/ir/error.h"

namespace npusim::models {

struct GpuPowerParams {
  double tdp_w = 0;   // 0: power not modelled
  double idle_w = 0;

  bool modelled() const { return tdp_w > 0; }
  // The board's power while a kernel of `flops` and `hbm_bytes` runs for `seconds`, against the
  // peak rates it could reach (flop/s, byte/s).
  double kernel_power_w(double flops, double peak_flops, double hbm_bytes, double peak_bytes, double seconds) const {
    if (!modelled() || seconds <= 0) return idle_w;
    const double busy = (peak_flops > 0 ? flops / (peak_flops * seconds) : 0) + (peak_bytes > 0 ? hbm_bytes / (peak_bytes * seconds) : 0);
    return idle_w + (tdp_w - idle_w) * std::min(1.0, busy);
  }

  static const std::vector<config::ParamDecl>& params();
  static GpuPowerParams read(const config::HwConfig& c);  // InputError when idle_w > tdp_w
};

inline const std::vector<config::ParamDecl>& GpuPowerParams::params() {
  using T = config::ParamType;
  static const config::ParamRange watts{0, 1e5, false, false};
  static const std::vector<config::ParamDecl> decls = {
      {"gpu.power.tdp_w", T::Double, "0", "W", "board power limit (TDP): the power of a kernel that saturates the tensor cores or HBM; 0: power not modelled",
       {}, watts, config::bind(&GpuPowerParams::tdp_w)},
      {"gpu.power.idle_w", T::Double, "0", "W", "board power with no kernel running (between kernels, and the floor under each)", {},
       watts, config::bind(&GpuPowerParams::idle_w)},
  };
  return decls;
}

inline GpuPowerParams GpuPowerParams::read(const config::HwConfig& c) {
  GpuPowerParams p;
  config::read_bound(p, c, params());
  if (p.modelled() && p.idle_w > p.tdp_w)
    throw InputError(c.source(), "gpu.power.idle_w", "idle power " + std::to_string(p.idle_w) + " W exceeds the TDP " + std::to_string(p.tdp_w) + " W");
  return p;
}

}  // namespace npusim::models
