// The real ResNet-50 b1 ZeBu trace (shared/examples/gemini_npu) parses completely and its
// per-layer attribution adds up to the run's end cycle.
#include <numeric>

#include <gtest/gtest.h>

#include "frontends/zebu_trace/py_literal.h"
#include "frontends/zebu_trace/zebu_trace.h"

namespace npusim::frontends::zebu {
namespace {

const std::string kTrace = std::string(NPUSIM_SOURCE_DIR) +
                           "/../shared/examples/gemini_npu/int8_resnet50.sim_quantized_b1_c1_bw16_sim.txt";

const Trace& trace() {
  static const Trace t = read_zebu_trace(kTrace);
  return t;
}

TEST(ZebuRealTrace, ParsesEveryLine) {
  const Trace& t = trace();
  ASSERT_EQ(t.instructions.size(), 742u);
  EXPECT_EQ(t.end_cycle(), 2545655);  // ct_ed ends the run: [2545620, 2545655]
  EXPECT_EQ(t.instructions.front().name, "ct_st");
  EXPECT_EQ(t.instructions.back().name, "ct_ed");
  for (size_t k = 0; k < t.instructions.size(); ++k) EXPECT_EQ(t.instructions[k].inst_idx, static_cast<int>(k) + 1);
}

TEST(ZebuRealTrace, CountsPerInstructionName) {
  // Counted with `cut -d, -f1 | sort | uniq -c` on the file.
  std::map<std::string, int> want = {
      {"ct_st", 1},      {"ct_bc", 4},      {"ct_ed", 1},      {"lda_cfg", 18},   {"lda_mov", 18},
      {"ldw_cfg", 18},   {"ldw_mov", 22},   {"lw_cfg", 56},    {"lw_mov", 144},   {"pe_cfg_fm", 61},
      {"pe_cfg_pm", 54}, {"pe_cfg_dq", 1},  {"pe_cfg_tp", 63}, {"pe_conv", 151},  {"vp_cfg_gcs", 3},
      {"vp_cfg_gms", 2}, {"vp_cfg_sms", 1}, {"vp_cfg_qp", 19}, {"vp_cfg_iq", 19}, {"vp_cfg_iq1", 18},
      {"vp_cfg_fm", 16}, {"vp_cfg_tp", 16}, {"vp_self", 24},   {"vp_pool", 2},    {"dt_cfg", 1},
      {"dt_cal", 1},     {"sta_cfg", 4},    {"sta_mov", 4}};
  EXPECT_EQ(count_by_name(trace()), want);
  int total = std::accumulate(want.begin(), want.end(), 0, [](int s, const auto& kv) { return s + kv.second; });
  EXPECT_EQ(total, 742);
}

TEST(ZebuRealTrace, FieldsOfTheFirstConvolution) {
  // Line 23: [pe_conv, {'slyr': 1, ..., 'wkl': 1, 'tile': 0}, {'inst_idx': 23, 'time': [73773, 151166]},
  //           {'PS': 0, 'SPHI': -3, 'SPWI': -3, ..., 'STaddr': -5400, ..., 'Prev_Insts': ['LW', 'VP'], ...}]
  const Instruction& c = trace().instructions[22];
  EXPECT_EQ(c.name, "pe_conv");
  EXPECT_EQ(c.line, 23);
  EXPECT_EQ(c.slyr, 1);
  EXPECT_EQ(c.wkl, 1);
  EXPECT_EQ(c.tile, 0);
  EXPECT_EQ(c.start, 73773);
  EXPECT_EQ(c.duration(), 77393);
  EXPECT_EQ(c.params["SPHI"], -3);
  EXPECT_EQ(c.params["STaddr"], -5400);
  EXPECT_EQ(c.params["Prev_Insts"], json::Json::array({"LW", "VP"}));
  // Line 20 (pe_cfg_pm): enums and a float with many digits.
  const Instruction& pm = trace().instructions[19];
  EXPECT_EQ(pm.params["ACTMD"]["enum"], "ActMode.RELU");
  EXPECT_EQ(enum_or_int(pm.params["XYmode"][0]), 3);  // <XCutMode.CUT_K: 3>
  EXPECT_DOUBLE_EQ(pm.params["QK"].get<double>(), 43.62298146446928);
  EXPECT_EQ(pm.params["QB"].get<double>(), -128.0);
  // Line 7 (lda_mov): prefetch for layers 1 and 0.
  EXPECT_EQ(trace().instructions[6].clyr, (std::vector<int>{1, 0}));
}

TEST(ZebuRealTrace, AttributionSumsToTheEndCycle) {
  auto layers = measure_layers(trace());
  int64_t sum = 0;
  for (const auto& l : layers) {
    sum += l.cycles;
    EXPECT_GE(l.cycles, 0);
    EXPECT_LE(l.pe_busy + l.vp_busy, l.cycles) << "layer " << l.layer_index;  // PE and VP never overlap here
    EXPECT_LE(l.dma_busy, l.cycles);
  }
  EXPECT_EQ(sum, 2545655);
  // 73 compute layers: layer_index 0..72 (73 is the reshape on the CPU).
  EXPECT_EQ(layers.size(), 73u);
  // Layer 0 (quantize) owns the input load: cycle 0 .. end of vp_self [23563, 73773].
  EXPECT_EQ(layers.front().layer_index, 0);
  EXPECT_EQ(layers.front().cycles, 73773);
  EXPECT_EQ(layers.front().vp_busy, 50210);
  // Layer 1 (Conv_0): 73773 .. 151166, all PE.
  EXPECT_EQ(layers[1].layer_index, 1);
  EXPECT_EQ(layers[1].cycles, 77393);
  EXPECT_EQ(layers[1].pe_busy, 77393);
  // The dense layer 72 ends the list and owns the final store + ct_ed tail (2545473 .. 2545655).
  EXPECT_EQ(layers.back().layer_index, 72);
  EXPECT_EQ(layers.back().last_end, 2545473);
}

}  // namespace
}  // namespace npusim::frontends::zebu
