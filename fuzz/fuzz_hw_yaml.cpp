// Hardware descriptions (sim/config): the YAML text, then `--set` overrides. Input: the YAML,
// optionally followed by a line "#--set" and one KEY=VALUE per line. The same file is also
// read as a multi-device system description with the same overrides (sim/config/system_config:
// system.* keys and device keys).
#include <sstream>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "sim/config/hw_config.h"
#include "sim/config/system_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npusim;
  std::string text = fuzz::as_text(data, size);
  std::vector<std::string> sets;
  const size_t cut = text.find("#--set\n");
  if (cut != std::string::npos) {
    std::istringstream in(text.substr(cut + 7));
    for (std::string line; std::getline(in, line);) sets.push_back(line);
    text.resize(cut);
  }
  const std::string path = fuzz::write_scratch("hw.yaml", text);
  fuzz::expect_input_errors_only([&] { (void)config::HwConfig::load(path, sets); });
  fuzz::expect_input_errors_only([&] { (void)config::SystemConfig::load(path, sets); });
  return 0;
}
