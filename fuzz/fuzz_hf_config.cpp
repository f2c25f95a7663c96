// Hugging Face config.json files (frontends/zoo/hf_config.h): read and counted.
#include "frontends/zoo/hf_config.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    const frontends::zoo::ModelDef m = frontends::zoo::parse_hf_config(fuzz::as_text(data, size), "fuzz/config.json");
    (void)frontends::zoo::parameter_count(m, true);
  });
  return 0;
}
