// `--hw` values: a path to a YAML file, or the name of a shipped configuration ("npu",
// "npu.yaml", "gpu_h100", "configs/gemini_zebu.yaml" from any folder). HwConfig::load resolves
// every value it is given through resolve_hw, so each --hw of the CLI takes names.
#pragma once
#include <string>
#include <vector>

namespace npusim::config {

// Folders that hold shipped configurations, in search order, those that exist:
// <folder of the running binary>/../share/npusim/configs (an installed sim), the source
// checkout's configs/ (NPUSIM_SOURCE_DIR, set at build time), then ./configs.
std::vector<std::string> shipped_config_dirs();

// Short names of the shipped configurations ("npu" first, then the others sorted).
std::vector<std::string> shipped_config_names();

// The file to open for a --hw value: the value itself when it names an existing file;
// otherwise, when the value is a bare name or configs/<name> (with or without .yaml), the
// first shipped configuration of that name. InputError(value, "", ...) for a directory and
// for a miss: "cannot open: no such file, and not a shipped config; shipped: npu, ...".
std::string resolve_hw(const std::string& value);

}  // namespace npusim::config
