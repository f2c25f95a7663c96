// ONNX models (frontends/onnx): protobuf bytes through libonnx, shape inference, lowering.
#include "frontends/onnx/onnx_reader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    frontends::OnnxReadInfo info;
    (void)frontends::read_onnx_bytes(fuzz::as_text(data, size), fuzz::scratch_dir().string() + "/fuzz.onnx", &info);
  });
  return 0;
}
