// What one GPU simulation measured: the SM model's statistics (models/gpu/sm_stats.h), under
// the names the reports and the system engine use.
#pragma once
#include "models/gpu/sm_stats.h"

namespace npusim::mapping {

using models::GpuPgStats;
using models::GpuRankResult;
using models::GpuSimResult;
using models::GpuSpan;
using models::GpuWork;
using models::LimiterCycles;

}  // namespace npusim::mapping
