// Request traces of sim llm --trace (sim/llm/request_trace.h): npusim's CSV, Azure's and
// BurstGPT's, the format found from the header.
#include "fuzz/fuzz_common.h"
#include "sim/llm/request_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    const llm::RequestTrace t = llm::parse_request_trace(fuzz::as_text(data, size), "fuzz.csv", 1.5);
    (void)t.requests.size();
  });
  return 0;
}
