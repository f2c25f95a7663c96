// safetensors headers (frontends/pipeline/safetensors.cpp): the 8-byte length, the JSON
// header and its offsets against the file's size (the input is the whole file).
#include "frontends/pipeline/safetensors.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    (void)frontends::pipeline::parse_safetensors(fuzz::as_text(data, size), static_cast<int64_t>(size),
                                                 "fuzz.safetensors");
  });
  return 0;
}
