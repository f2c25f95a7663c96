// Measured-time files of `sim gpu-calibrate` (frontends/calibration): the same text read as
// GEMM rows, convolution rows and row-wise kernel rows.
#include "frontends/calibration/calibration_rows.h"
#include "frontends/json_util.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    const json::Json doc = json::parse_text(fuzz::as_text(data, size), "rows.json");
    fuzz::expect_input_errors_only([&] { (void)frontends::parse_gemm_rows(doc, "rows.json"); });
    fuzz::expect_input_errors_only([&] { (void)frontends::parse_conv_rows(doc, "rows.json"); });
    (void)frontends::parse_rowwise_rows(doc, "rows.json", 32);
  });
  return 0;
}
