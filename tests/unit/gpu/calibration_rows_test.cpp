// The measured-time files of `sim gpu-calibrate` (frontends/calibration): what a row holds and
// where a bad value is blamed.
#include <gtest/gtest.h>

#include <string>

#include "frontends/calibration/calibration_rows.h"
#include "sim/ir/error.h"

using namespace npusim;

namespace {

std::string message_of(const json::Json& doc, int max_warps) {
  try {
    frontends::parse_rowwise_rows(doc, "ops.json", max_warps);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CalibrationRows, RowwiseRowsKeepEveryFieldAndDefaultTheTranscendentals) {
  const json::Json doc = json::parse_text(
      R"({"rows":[{"kind":"rms","M":4096,"N":1024,"dtype":"bf16","row_inputs":1,"col_vectors":1,"row_outputs":1,)"
      R"("row_stats":1,"flops_per_element":5,"warps":4,"ms":0.012},)"
      R"({"kind":"swiglu","M":8,"N":64,"dtype":"fp32","row_inputs":2,"col_vectors":0,"row_outputs":1,)"
      R"("row_stats":0,"flops_per_element":4,"transcendentals_per_element":2,"warps":32,"ms":2}]})",
      "ops.json");
  const auto rows = frontends::parse_rowwise_rows(doc, "ops.json", 32);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kind, "rms");
  EXPECT_EQ(rows[0].dtype, gpu::DataType::BF16);
  EXPECT_EQ(rows[0].m, 4096);
  EXPECT_EQ(rows[0].row_stats, 1);
  EXPECT_DOUBLE_EQ(rows[0].transcendentals_per_element, 0);
  EXPECT_DOUBLE_EQ(rows[0].measured_us, 12);
  EXPECT_EQ(rows[1].pointer, "/rows/1");
  EXPECT_DOUBLE_EQ(rows[1].transcendentals_per_element, 2);
  EXPECT_EQ(rows[1].warps, 32);
  // 32 warps are more than a 16-warp device allows: blamed on the row's field.
  const std::string m = message_of(doc, 16);
  EXPECT_NE(m.find("ops.json"), std::string::npos) << m;
  EXPECT_NE(m.find("/rows/1/warps"), std::string::npos) << m;
}

TEST(CalibrationRows, GemmRowsNeedPositiveSizesAndTimes) {
  const auto rows = frontends::parse_gemm_rows(json::parse_text(R"({"rows":[{"M":1,"N":2,"K":3,"ms":0.5}]})", "g.json"), "g.json");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].k, 3);
  EXPECT_DOUBLE_EQ(rows[0].measured_us, 500);
  EXPECT_THROW(frontends::parse_gemm_rows(json::parse_text(R"({"rows":[{"M":1,"N":2,"K":3,"ms":-1}]})", "g.json"), "g.json"),
               InputError);
  EXPECT_THROW(frontends::parse_gemm_rows(json::parse_text(R"({"rows":[{"M":0,"N":2,"K":3,"ms":1}]})", "g.json"), "g.json"),
               InputError);
}

TEST(CalibrationRows, GemmRowsKeepTheirTileAndTileOrder) {
  const auto rows = frontends::parse_gemm_rows(
      json::parse_text(R"({"rows":[{"M":8,"N":8,"K":8,"ms":1},{"M":8,"N":8,"K":8,"ms":1,"tile":"64x128x32:4:4","group_m":8,"kind":"gemm_triton"}]})",
                       "g.json"),
      "g.json");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tile, "");
  EXPECT_EQ(rows[0].group_m, 1);
  EXPECT_EQ(rows[1].tile, "64x128x32:4:4");
  EXPECT_EQ(rows[1].group_m, 8);
  EXPECT_EQ(rows[1].kind, "gemm_triton");
  EXPECT_EQ(rows[0].kind, "");
  EXPECT_EQ(rows[1].pointer, "/rows/1");
  frontends::TileText t;
  ASSERT_TRUE(frontends::parse_tile_text("64x128x32:4", &t));
  EXPECT_EQ(t.tn, 128);
  EXPECT_EQ(t.stages, 3);  // the default
  EXPECT_FALSE(frontends::parse_tile_text("64x128x32:4:4:1", &t));
  EXPECT_FALSE(frontends::parse_tile_text("64x128:4", &t));
  EXPECT_FALSE(frontends::parse_tile_text("64x128x32:0", &t));
  EXPECT_THROW(frontends::parse_gemm_rows(json::parse_text(R"({"rows":[{"M":1,"N":2,"K":3,"ms":1,"tile":"big"}]})", "g.json"),
                                          "g.json"),
               InputError);
}

TEST(CalibrationRows, RowsSayWhichMmaAndClusterTheirKernelUsed) {
  const auto rows = frontends::parse_gemm_rows(
      json::parse_text(R"({"rows":[{"M":8,"N":8,"K":8,"ms":1},{"M":8,"N":8,"K":8,"ms":1,"mma":"mma.sync"},)"
                       R"({"M":8,"N":8,"K":8,"ms":1,"mma":"wgmma"}]})",
                       "g.json"),
      "g.json");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_FALSE(rows[0].warp_mma);
  EXPECT_TRUE(rows[1].warp_mma);
  EXPECT_FALSE(rows[2].warp_mma);
  const auto conv = frontends::parse_conv_rows(
      json::parse_text(R"({"rows":[{"N":1,"C":4,"H":7,"W":7,"K":4,"R":3,"S":3,"stride":1,"pad":1,"dtype":"fp16",)"
                       R"("ms":1,"mma":"mma.sync"}]})",
                       "c.json"),
      "c.json");
  EXPECT_TRUE(conv.at(0).warp_mma);
  const auto clustered = frontends::parse_gemm_rows(
      json::parse_text(R"({"rows":[{"M":8,"N":8,"K":8,"ms":1,"cluster":"4x2"}]})", "g.json"), "g.json");
  EXPECT_EQ(clustered.at(0).cluster_m, 4);
  EXPECT_EQ(clustered.at(0).cluster_n, 2);
  EXPECT_EQ(rows[0].cluster_m, 1);
  for (const char* bad : {"\"8x4\"", "\"2\"", "\"0x1\"", "\"2x1x1\"", "2"})
    EXPECT_THROW(frontends::parse_gemm_rows(
                     json::parse_text(std::string(R"({"rows":[{"M":8,"N":8,"K":8,"ms":1,"cluster":)") + bad + "}]}", "g.json"),
                     "g.json"),
                 InputError)
        << bad;
  try {
    frontends::parse_gemm_rows(json::parse_text(R"({"rows":[{"M":8,"N":8,"K":8,"ms":1,"mma":"hmma"}]})", "g.json"), "g.json");
    FAIL() << "an unknown mma passed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/rows/0/mma"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("wgmma or mma.sync"), std::string::npos) << e.what();
  }
}

// Output sizes by hand: (56 + 2 - 3) / 2 + 1 = 28; (7 + 0 - 7) / 1 + 1 = 1.
TEST(CalibrationRows, ConvRowsDeriveTheOutputSizeAndRefuseKernelsLargerThanTheInput) {
  const auto rows = frontends::parse_conv_rows(
      json::parse_text(R"({"rows":[{"layer":"s2","N":8,"C":128,"H":56,"W":56,"K":128,"R":3,"S":3,"stride":2,"pad":1,)"
                       R"("dtype":"fp16","ms":0.02},{"N":1,"C":4,"H":7,"W":7,"K":4,"R":7,"S":7,"stride":1,"pad":0,)"
                       R"("dtype":"fp32","ms":1}]})",
                       "c.json"),
      "c.json");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].layer, "s2");
  EXPECT_EQ(rows[0].p, 28);
  EXPECT_EQ(rows[0].q, 28);
  EXPECT_DOUBLE_EQ(rows[0].measured_us, 20);
  EXPECT_EQ(rows[1].p, 1);
  EXPECT_EQ(rows[1].dtype, gpu::DataType::FP32);
  try {
    frontends::parse_conv_rows(json::parse_text(R"({"rows":[{"N":1,"C":4,"H":7,"W":9,"K":4,"R":3,"S":10,"stride":1,)"
                                                R"("pad":0,"dtype":"fp16","ms":1}]})",
                                                "c.json"),
                               "c.json");
    FAIL() << "a 10-wide kernel on a 9-wide input was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/rows/0/S"), std::string::npos) << e.what();
  }
}
