// `sim regress`'s stored files (sim/check/regress.cpp): the input is read as a golden set's
// expected_report.json and compared with a fixed fresh report, and as the set's meta.json.
// Wrong types anywhere must be InputErrors naming the JSON pointer, never exceptions from
// inside the compare (issue 28: a string for a number was exit 3).
#include <filesystem>
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_common.h"
#include "sim/check/regress.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  static const nlohmann::json actual = nlohmann::json::parse(R"({
    "totals": {"npu_cycles": 1200, "host_cycles": 30},
    "layers": [{"name": "conv1", "cycles": 700}, {"name": "fc", "cycles": 500}]})");
  const std::string text = fuzz::as_text(data, size);
  const std::string report = fuzz::write_scratch("expected_report.json", text);
  fuzz::expect_input_errors_only([&] { (void)check::diff_expected_file(report, actual); });
  // The same bytes as a set's meta.json, in a folder of its own.
  static const std::filesystem::path set = [] {
    const std::filesystem::path d = fuzz::scratch_dir() / "set";
    std::filesystem::create_directories(d);
    return d;
  }();
  (void)fuzz::write_scratch("set/meta.json", text);
  fuzz::expect_input_errors_only([&] { (void)check::find_golden_sets(set.string()); });
  return 0;
}
