// NumPy .npy arrays (models/functional/npy.cpp): header, dtype, shape, data; a parsed array
// is written back (serialize_npy).
#include "fuzz/fuzz_common.h"
#include "models/functional/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    functional::NpyArray a = functional::parse_npy(data, size, "fuzz.npy");
    (void)functional::serialize_npy(a);
  });
  return 0;
}
