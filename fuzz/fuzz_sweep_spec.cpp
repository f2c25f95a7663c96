// Sweep specs (sim/sweep/sweep_spec.cpp): the YAML file, then the expansion into points
// against the default hardware (only for grids of at most 10,000 points, to keep runs short;
// the 10^7 limit itself is tested in tests/malformed).
#include "fuzz/fuzz_common.h"
#include "sim/config/hw_config.h"
#include "sim/sweep/points.h"
#include "sim/sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  const std::string path = fuzz::write_scratch("sweep.yaml", fuzz::as_text(data, size));
  fuzz::expect_input_errors_only([&] {
    const sweep::SweepSpec s = sweep::load_sweep_file(path);
    double grid = 1;
    for (const auto& a : s.axes) grid *= static_cast<double>(a.values.size());
    static const config::HwConfig base = config::HwConfig::defaults();
    if (grid <= 10000) (void)sweep::expand(s, base);
  });
  return 0;
}
