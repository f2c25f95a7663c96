// One SystemC unit on its own: two DMA channels contending for one DRAM bus (docs/timing.md#dma,
// #dram). Runs in its own process under ctest (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <algorithm>

#include "models/memory/dram.h"
#include "models/npu/buffer.h"
#include "models/npu/units.h"
#include "sim/engine/simulation.h"

namespace npusim::models {
namespace {

TEST(SingleUnit, TwoDmaChannelsShareOneDramBusFirstComeFirstServed) {
  DmaParams dma;
  dma.channels = 2;
  dma.setup_cycles = 10;
  dma.bytes_per_cycle = 64;
  DramParams dram;
  dram.bytes_per_cycle = 32;
  dram.latency_cycles = 100;
  dram.burst_bytes = 64;
  dram.segment_overhead_cycles = 0;
  dram.channels = 1;
  Scoreboard sb(2, sc_core::sc_time(1, sc_core::SC_NS));
  Dram d("dram", dram, sb);
  L2Buffer l2("l2", 1e9, sb);  // never the bottleneck here
  // One 6400-byte load on each channel, no dependencies.
  const CoreJob<DmaTransfer> load{{DmaKind::LoadActivations, 6400, 1}, 0, {}};
  Dma unit("dma", dma, sb, d, l2, {{{0, {}, load}}, {{1, {}, load}}});
  engine::run_simulation();
  ASSERT_TRUE(sb.all_done());
  // By hand: both set up for 10 cycles; the DRAM serves 6400 B in 6400/32 = 200 cycles, one
  // transfer after the other: [10, 210) and [210, 410); data lands 100 cycles after service.
  // The channels' own rate (6400/64 = 100 cycles) never limits. Ends: 310 and 510.
  std::vector<int64_t> ends = {sb.records()[0].end_cycle, sb.records()[1].end_cycle};
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(ends, (std::vector<int64_t>{310, 510}));
  EXPECT_EQ(sb.records()[0].start_cycle, 0);
  EXPECT_EQ(sb.records()[1].start_cycle, 0);
  EXPECT_EQ(d.stats().bytes_read, 12800);
  EXPECT_EQ(d.stats().busy_cycles, 400);
  EXPECT_EQ(d.stats().transfers, 2);
}

}  // namespace
}  // namespace npusim::models
