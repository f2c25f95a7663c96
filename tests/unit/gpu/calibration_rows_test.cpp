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
