// Per-layer attribution on tiny hand-written traces, and the comparison table.
#include <gtest/gtest.h>

#include "frontends/zebu_trace/layer_compare.h"
#include "frontends/zebu_trace/zebu_trace.h"

namespace npusim::frontends::zebu {
namespace {

// One instruction line; params kept minimal.
std::string line(const std::string& name, int slyr, int idx, int64_t s, int64_t e) {
  return "[" + name + ", {'slyr': " + std::to_string(slyr) + ", 'clyr': [], 'wkl': " + std::to_string(slyr) +
         ", 'tile': 0}, {'inst_idx': " + std::to_string(idx) + ", 'time': [" + std::to_string(s) + ", " +
         std::to_string(e) + "]}, {}]\n";
}

const LayerMeasurement& find(const std::vector<LayerMeasurement>& v, int layer) {
  for (const auto& m : v)
    if (m.layer_index == layer) return m;
  throw std::runtime_error("layer not found");
}

TEST(ZebuMeasure, SequentialLayersWithLoadsAndTail) {
  // t:   0....100 lda (layer 0's input)         DMA
  //      100..300 vp_self layer 0               -> layer 0: 0..300 = 300 (dma 100, vp 200)
  //      300..320 pe_cfg_fm layer 1 (ignored: configuration)
  //      250..400 lw_mov layer 1 (weights)      -> overlaps layer 0 by 50, layer 1 by 100
  //      400..900 pe_conv layer 1               -> layer 1: 300..900 = 600 (pe 500, dma 100)
  //      900..960 sta_mov, 960..995 ct_ed       -> tail 900..995 to layer 1 = 95 more
  std::string text = line("ct_st", 0, 1, 0, 38) + line("lda_mov", 0, 2, 0, 100) + line("vp_self", 0, 3, 100, 300) +
                     line("pe_cfg_fm", 1, 4, 300, 320) + line("lw_mov", 1, 5, 250, 400) +
                     line("pe_conv", 1, 6, 400, 900) + line("sta_mov", 1, 7, 900, 960) + line("ct_ed", 1, 8, 960, 995);
  Trace t = parse_zebu_trace(text, "tiny.txt");
  ASSERT_EQ(t.end_cycle(), 995);
  auto m = measure_layers(t);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].layer_index, 0);
  EXPECT_EQ(m[0].cycles, 300);
  EXPECT_EQ(m[0].vp_busy, 200);
  EXPECT_EQ(m[0].dma_busy, 150);  // lda 0..100 + lw_mov 250..300
  EXPECT_EQ(m[0].first_start, 100);
  EXPECT_EQ(m[0].last_end, 300);
  EXPECT_EQ(m[1].cycles, 600 + 95);
  EXPECT_EQ(m[1].pe_busy, 500);
  EXPECT_EQ(m[1].dma_busy, 100 + 60);  // lw_mov 300..400 + sta_mov 900..960
  EXPECT_EQ(m[0].cycles + m[1].cycles, t.end_cycle());
}

TEST(ZebuMeasure, InterleavedTilesAreChargedPerInstruction) {
  // Layers 5 and 6 alternate tiles (like ResNet-50 layers 65/66):
  //   pe 5: 0..100, vp 6: 100..130, (stall) pe 5: 150..250, vp 6: 250..280
  // Frontier charges: 5 <- 100, 6 <- 30, 5 <- 120 (stall 20 + run 100), 6 <- 30.
  std::string text = line("pe_conv", 5, 1, 0, 100) + line("vp_self", 6, 2, 100, 130) +
                     line("pe_conv", 5, 3, 150, 250) + line("vp_self", 6, 4, 250, 280);
  auto m = measure_layers(parse_zebu_trace(text, "x"));
  EXPECT_EQ(find(m, 5).cycles, 220);
  EXPECT_EQ(find(m, 6).cycles, 60);
  EXPECT_EQ(find(m, 5).first_start, 0);
  EXPECT_EQ(find(m, 5).last_end, 250);
  EXPECT_EQ(m.back().layer_index, 6);  // ordered by last compute end
}

TEST(ZebuMeasure, OverlappingComputeOnlyAdvancesTheFrontier) {
  // vp of layer 2 runs 0..100 while pe of layer 3 runs 20..60 and pe of layer 4 runs 50..180.
  // Sorted by end: L3 (60) gets 0..60, L2 (100) gets 60..100, L4 (180) gets 100..180.
  std::string text = line("vp_self", 2, 1, 0, 100) + line("pe_conv", 3, 2, 20, 60) + line("pe_conv", 4, 3, 50, 180);
  auto m = measure_layers(parse_zebu_trace(text, "x"));
  EXPECT_EQ(find(m, 3).cycles, 60);
  EXPECT_EQ(find(m, 2).cycles, 40);
  EXPECT_EQ(find(m, 4).cycles, 80);
  EXPECT_EQ(find(m, 3).pe_busy, 40);  // pe union 20..180 inside 0..60
  EXPECT_EQ(find(m, 3).vp_busy, 60);  // vp 0..100 inside 0..60: overlapping units both count
}

TEST(ZebuMeasure, NoComputeGivesNoRows) {
  Trace t = parse_zebu_trace(line("lda_mov", 0, 1, 0, 50), "x");
  EXPECT_TRUE(measure_layers(t).empty());
  EXPECT_EQ(t.end_cycle(), 50);
}

TEST(ZebuMeasure, ClassifiesInstructions) {
  Instruction i;
  for (const char* n : {"pe_conv", "vp_self", "vp_pool", "dt_cal"}) {
    i.name = n;
    EXPECT_TRUE(is_compute(i)) << n;
  }
  for (const char* n : {"pe_cfg_tp", "vp_cfg_fm", "dt_cfg", "lw_mov", "ct_ed"}) {
    i.name = n;
    EXPECT_FALSE(is_compute(i)) << n;
  }
  for (const char* n : {"lda_mov", "ldw_mov", "lw_mov", "sta_mov"}) {
    i.name = n;
    EXPECT_TRUE(is_dma(i)) << n;
  }
  i.name = "lda_cfg";
  EXPECT_FALSE(is_dma(i));
}

TEST(ZebuCompare, RowsTotalsAndSummary) {
  std::vector<LayerMeasurement> meas(3);
  meas[0].layer_index = 0; meas[0].cycles = 1000;
  meas[1].layer_index = 1; meas[1].cycles = 2000;
  meas[2].layer_index = 2; meas[2].cycles = 500;
  // errors: +10%, -5%, missing -> -100%; total (1100+1900+0-3500)/3500 = -14.29%
  auto rows = compare_layers(meas, {{0, 1100}, {1, 1900}}, {{0, "quant"}, {1, "Conv_0"}});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0].error, 0.10);
  EXPECT_DOUBLE_EQ(rows[1].error, -0.05);
  EXPECT_EQ(rows[2].simulated, 0);
  EXPECT_DOUBLE_EQ(rows[2].error, -1.0);
  ComparisonSummary s = summarize(rows);
  EXPECT_EQ(s.measured_total, 3500);
  EXPECT_EQ(s.simulated_total, 3000);
  EXPECT_NEAR(s.total_error, -500.0 / 3500.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.median_abs_error, 0.10);                 // of {0.05, 0.10, 1.0}
  EXPECT_NEAR(s.mean_abs_error, (0.10 + 0.05 + 1.0) / 3, 1e-12);
  std::string table = format_comparison_table(rows);
  EXPECT_NE(table.find("Conv_0"), std::string::npos) << table;
  EXPECT_NE(table.find("+10.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("-5.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("TOTAL"), std::string::npos) << table;
  EXPECT_NE(table.find("-14.3%"), std::string::npos) << table;
  EXPECT_NE(table.find("median |error| 10.0%, mean |error| 38.3% over 3 layers"), std::string::npos) << table;
  // +10% is within 10%, -5% too; the missing layer is the one miss.
  EXPECT_EQ(s.within_10pct, 2);
  EXPECT_NE(table.find("within 10%: 2 of 3 layers (66.7%)"), std::string::npos) << table;
}

TEST(ZebuCompare, MissesAreGroupedByOpLargestFirst) {
  std::vector<LayerMeasurement> meas(4);
  for (int i = 0; i < 4; ++i) meas[i].layer_index = i, meas[i].cycles = 1000;
  // add: +50% and +100% (1,500 cycles over); conv2d: -20% (200 under); relu within 10%.
  auto rows = compare_layers(meas, {{0, 1500}, {1, 2000}, {2, 800}, {3, 1050}}, {},
                             {{0, "add"}, {1, "add"}, {2, "conv2d"}, {3, "relu"}});
  const std::string table = format_comparison_table(rows);
  const size_t add = table.find("  add                 2 layers, median +75.0%, +1500 cycles in all");
  const size_t conv = table.find("  conv2d              1 layers, median -20.0%, -200 cycles in all");
  EXPECT_NE(add, std::string::npos) << table;
  EXPECT_NE(conv, std::string::npos) << table;
  EXPECT_LT(add, conv) << table;
  EXPECT_EQ(table.find("relu"), std::string::npos) << table;
  EXPECT_NE(table.find("within 10%: 1 of 4 layers (25.0%)"), std::string::npos) << table;
}

TEST(ZebuCompare, ZeroMeasuredRowsAreNotAveraged) {
  std::vector<LayerMeasurement> meas(2);
  meas[0].layer_index = 0; meas[0].cycles = 0;
  meas[1].layer_index = 1; meas[1].cycles = 100;
  auto rows = compare_layers(meas, {{0, 7}, {1, 120}});
  EXPECT_DOUBLE_EQ(rows[0].error, 0.0);
  ComparisonSummary s = summarize(rows);
  EXPECT_EQ(s.rows_compared, 1);
  EXPECT_DOUBLE_EQ(s.median_abs_error, 0.2);
  EXPECT_NE(format_comparison_table(rows).find("  -\n"), std::string::npos);
}

}  // namespace
}  // namespace npusim::frontends::zebu
