// The energy model's formulas on cases computed by hand (docs/energy.md): a GPU kernel's board
// power from its activity, and an NPU MAC's cost by dtype.
#include <gtest/gtest.h>

#include "models/gpu/gpu_power.h"
#include "models/npu/energy_params.h"

namespace {

using npusim::models::EnergyParams;
using npusim::models::GpuPowerParams;
namespace ir = npusim::ir;

TEST(GpuPower, IdlePlusTheActivityShareOfTheDynamicRange) {
  GpuPowerParams p;
  p.tdp_w = 700, p.idle_w = 100;
  // 1 ms at a quarter of the peak flops and half the HBM rate: 100 + 600 x 0.75 = 550 W.
  EXPECT_DOUBLE_EQ(p.kernel_power_w(0.25e12, 1e15, 0.5e9, 1e12, 1e-3), 550.0);
  // Saturating either unit, or both past 1: the TDP.
  EXPECT_DOUBLE_EQ(p.kernel_power_w(1e12, 1e15, 0, 1e12, 1e-3), 700.0);
  EXPECT_DOUBLE_EQ(p.kernel_power_w(0.8e12, 1e15, 0.8e9, 1e12, 1e-3), 700.0);
  // Nothing done: idle.
  EXPECT_DOUBLE_EQ(p.kernel_power_w(0, 1e15, 0, 1e12, 1e-3), 100.0);
  // No TDP: not modelled, idle (0) whatever runs.
  GpuPowerParams off;
  EXPECT_FALSE(off.modelled());
  EXPECT_DOUBLE_EQ(off.kernel_power_w(1e12, 1e15, 1e9, 1e12, 1e-3), 0.0);
}

TEST(NpuEnergy, AMacCostsItsDtypesFigureElseTheCommonOne) {
  EnergyParams e;
  EXPECT_FALSE(e.modelled());
  e.pj_per_mac = 0.2;
  e.pj_per_mac_int8 = 0.028;
  e.pj_per_mac_fp16 = 0.19;
  EXPECT_TRUE(e.modelled());
  EXPECT_DOUBLE_EQ(e.mac_pj(ir::DType::Int8), 0.028);
  EXPECT_DOUBLE_EQ(e.mac_pj(ir::DType::Float16), 0.19);
  EXPECT_DOUBLE_EQ(e.mac_pj(ir::DType::BFloat16), 0.2);  // no bf16 figure: the common one
  EXPECT_DOUBLE_EQ(e.mac_pj(ir::DType::Float32), 0.2);
  EnergyParams static_only;
  static_only.static_w = 1;
  EXPECT_TRUE(static_only.modelled());
}

}  // namespace
