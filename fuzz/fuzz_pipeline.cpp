// Multi-device pipelines (frontends/pipeline): devices, tensors, supertasks, fx payloads;
// parameter files are looked up in an empty folder.
#include "frontends/pipeline/pipeline_reader.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    (void)frontends::pipeline::read_pipeline_text(fuzz::as_text(data, size), "pipeline.json",
                                                  fuzz::scratch_dir().string());
  });
  return 0;
}
