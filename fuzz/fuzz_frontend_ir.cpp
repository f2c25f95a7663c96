// Frontend IR (frontends/frontend_ir) through the registry with the format forced: JSON
// limits, the reader, ir::validate.
#include "frontends/registry/registry.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    (void)frontends::read_workload(frontends::WorkloadSource("fuzz.json", fuzz::as_text(data, size)), "frontend_ir");
  });
  return 0;
}
