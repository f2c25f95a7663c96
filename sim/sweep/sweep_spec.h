// What a sweep is (docs/sweeps.md): workloads, a base hardware config, axes of config values
// and constraints. Read from a sweep file (YAML) or built from `sim sweep --set k=a,b,c` flags,
// and stored in the output directory's manifest so that --resume and merge need nothing else.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/run/workload_loader.h"

namespace npusim::sweep {

// What names a workload: the one loader's spec (sim/run/workload_loader.h).
using WorkloadSpec = run::WorkloadSpec;

// One axis: a single key, or zipped keys that step together.
struct Axis {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;  // values[step][key], as config value text
  std::string where;                              // place in the sweep file, for messages
};

struct SweepSpec {
  std::string source;  // sweep file, or "--set" for flags
  std::vector<WorkloadSpec> workloads;
  std::string hw;      // base hardware description (resolved path)
  std::vector<Axis> axes;
  std::vector<std::string> constraints;
  std::vector<std::string> constraint_where;  // parallel to constraints

  std::vector<std::string> axis_keys() const;  // all keys, axis order, zipped keys side by side
};

// Reads a sweep file; relative paths are resolved against its folder. Unknown fields, keys
// that are not config parameters, bad values and bad ranges are InputErrors naming the file
// and the place (e.g. "axes/npu.pe_array.rowz (line 7)").
SweepSpec load_sweep_file(const std::string& path);

// `sim sweep --ir a.json --zoo resnet50:1 --hw npu.yaml --set k=1,2,4 --set k2=8:64:x2`.
SweepSpec sweep_from_flags(const std::vector<std::string>& irs, const std::vector<std::string>& zoos,
                           const std::string& hw, const std::vector<std::string>& sets,
                           const std::vector<std::string>& constraints);

// Values of one axis entry: "a,b,c" items, each a value or a range "start:stop:step" (stop
// included when reached) or geometric "start:stop:x2" (also "×2"); integers stay integers.
std::vector<std::string> expand_values(const std::string& text, const std::string& file, const std::string& where);

// Manifest form (absolute paths) and back.
nlohmann::ordered_json spec_to_json(const SweepSpec& s);
SweepSpec spec_from_json(const nlohmann::ordered_json& j, const std::string& source);

// Identity of a sweep, independent of machine and paths: workload names and file contents,
// the resolved base config, axes and constraints. Shards of one sweep share it.
// `resolved`: every (key, value) of the base hardware (HwConfig::resolved(); a system's keys and
// each device's, sweep::resolve_base).
std::string fingerprint(const SweepSpec& s, const std::vector<std::pair<std::string, std::string>>& resolved);

}  // namespace npusim::sweep
