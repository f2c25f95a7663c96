// ZeBu instruction traces (frontends/zebu_trace): Python-literal lines, then the per-layer
// attribution `sim compare-trace` makes.
#include "frontends/zebu_trace/zebu_trace.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    const frontends::zebu::Trace t = frontends::zebu::parse_zebu_trace(fuzz::as_text(data, size), "fuzz_sim.txt");
    (void)frontends::zebu::count_by_name(t);
    (void)frontends::zebu::measure_layers(t);
  });
  return 0;
}
