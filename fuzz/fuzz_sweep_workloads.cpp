// A sweep file's workload entries (sim/sweep/sweep_run.cpp load_workload): every entry of the
// parsed spec is built as `sim sweep` builds it (a zoo model generated in-process, or a file
// read from a path relative to the sweep file), so a zoo model the zoo refuses, a batch of 0
// or a path that names no workload file must each be an InputError.
#include "fuzz/fuzz_common.h"
#include "sim/sweep/sweep_run.h"
#include "sim/sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  const std::string path = fuzz::write_scratch("sweep.yaml", fuzz::as_text(data, size));
  fuzz::expect_input_errors_only([&] {
    const sweep::SweepSpec s = sweep::load_sweep_file(path);
    for (const sweep::WorkloadSpec& w : s.workloads) {
      try {
        (void)sweep::load_workload(w);
      } catch (const InputError&) {
        // refused by name: go on with the next entry
      }
    }
  });
  return 0;
}
