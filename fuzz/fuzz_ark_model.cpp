// ARK model files (frontends/ark): the reader and the conversion to the IR (ark_model_to_ir,
// ir::validate) as `sim --ir model.json` runs them.
#include "frontends/registry/registry.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    (void)frontends::read_workload(frontends::WorkloadSource("fuzz.json", fuzz::as_text(data, size)), "ark_model");
  });
  return 0;
}
