// Compiled Gemini programs (sim program, compare-trace --program): the assembler's lines, the
// instruction model's decoding of every field, the queues and tokens, the per-layer attribution.
#include "frontends/zebu_trace/zebu_trace.h"
#include "fuzz/fuzz_common.h"
#include "sim/engine/isa_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  fuzz::expect_input_errors_only([&] {
    const frontends::zebu::Trace p = frontends::zebu::parse_gemini_program(fuzz::as_text(data, size), "fuzz_asm.txt");
    const engine::IsaProgramRun run = engine::run_isa_program(p, engine::IsaUnits{});
    (void)frontends::zebu::measure_layers(run.simulated);
  });
  return 0;
}
