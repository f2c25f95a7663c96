// `--hw` values: a path to a YAML file, or the name of a shipped configuration ("npu",
// "npu.yaml", "gpu_h100", "configs/gemini_zebu.yaml" from any folder). HwConfig::load resolves
// every value it is given through resolve_hw, so each --hw of the CLI takes names.
//
// The default NPU description (configs/npu.yaml) is also built into the binary (CMake embeds
// its text at build time): when no shipped configs/ folder is found (an installed `sim`
// without its share/ folder, a binary copied elsewhere), the names of npu resolve to
// kBuiltinHw and HwConfig::load reads the embedded text, so `sim --ir X` runs from anywhere.
#pragma once
#include <string>
#include <vector>

namespace npusim::config {

// What resolve_hw returns for the built-in default NPU description (also accepted as a value).
inline constexpr const char* kBuiltinHw = "built-in:configs/npu.yaml";

// The embedded text of configs/npu.yaml as it was at build time.
const std::string& builtin_npu_yaml();

// Folders that hold shipped configurations, in search order, those that exist:
// <folder of the running binary>/../share/npusim/configs (an installed sim), the source
// checkout's configs/ (NPUSIM_SOURCE_DIR, set at build time), then ./configs. The environment
// variable NPUSIM_CONFIG_DIRS (folders separated by ':'), when set, replaces this list.
std::vector<std::string> shipped_config_dirs();

// Short names of the shipped configurations ("npu" first, then the others sorted). "npu" is
// always there (built in).
std::vector<std::string> shipped_config_names();

// The file to open for a --hw value: the value itself when it names an existing file;
// otherwise, when the value is a bare name or configs/<name> (with or without .yaml), the
// first shipped configuration of that name; for the names of npu without a shipped file,
// kBuiltinHw. InputError(value, "", ...) for a directory and for a miss: "cannot open: no such
// file, and not a shipped config; shipped: npu, ...".
std::string resolve_hw(const std::string& value);

// The text of a resolved --hw value (resolve_hw's result): the embedded text for kBuiltinHw,
// else the file's contents. InputError(path, "", "cannot open file") when unreadable.
std::string read_hw_text(const std::string& resolved);

// A file shipped beside the configurations (e.g. "scripts/plot_run.py"): the first existing of
// <folder of the running binary>/../share/npusim/<rel> and <source checkout>/<rel>; "" if none.
std::string find_shipped_file(const std::string& rel);

}  // namespace npusim::config
