// `sim regress`: re-checks the committed golden sets (golden/<set>/: meta.json, the IR, its .npy
// files, expected_report.json): numerics with the functional reference, timing by comparing the
// cycle totals and per-layer cycles of a fresh simulation with the stored report
// (docs/golden.md). SystemC-free: the simulation comes in as a callback that runs in a forked
// child per set, since SystemC simulates once per process.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::check {

struct GoldenSet {
  std::string name;     // folder name
  std::string dir;      // the set's folder
  std::string ir;       // path of the Frontend IR
  std::string npy_dir;  // file_list names are relative to it (default: the set's folder)
  std::string hw;       // resolved hardware description
  std::string hw_label; // as meta.json spells it (stored in expected_report.json)
  std::string expected_report;  // path of expected_report.json (may not exist yet)
};

// `root` is one set (a folder with meta.json) or a folder of sets (its subfolders with
// meta.json, sorted by name). meta.json: {"ir": "ir.json", "hw": "configs/npu.yaml",
// "npy_dir": "."}; a relative hw is looked up in the set folder and each folder above it, then
// in the current folder. hw_override replaces every set's hw. Errors: InputError naming
// meta.json and the key, or root when it holds no set.
std::vector<GoldenSet> find_golden_sets(const std::string& root, const std::string& hw_override = "");

// Lines describing every cycle difference (totals.npu_cycles, totals.host_cycles, each layer's
// cycles by name, layers missing or new); empty when the cycles match exactly.
std::vector<std::string> diff_reports(const nlohmann::json& expected, const nlohmann::json& actual);

// diff_reports against a stored expected_report.json: the file is read with the depth-checked
// parse and every field the compare reads is type-checked first. Errors: InputError naming the
// file and the JSON pointer (e.g. "/layers/3/cycles: expected an integer").
std::vector<std::string> diff_expected_file(const std::string& expected_path, const nlohmann::json& actual);

// Simulates (ir, hw) and returns the report as JSON text (report::to_json). Runs in a child.
using SimulateFn = std::function<std::string(const std::string& ir, const std::string& hw)>;

struct RegressOptions {
  bool update = false;  // rewrite expected_report.json instead of comparing
  int jobs = 2;         // simulations at a time
  std::string hw;       // override of every set's hw
};

// Returns 0 when every set matches, 1 on any numeric failure or cycle difference (each printed
// to out). Missing or malformed files: InputError.
int run_regress(const std::string& root, const RegressOptions& o, const SimulateFn& simulate, std::ostream& out);

}  // namespace npusim::check
