// The manifest of a sweep output directory (manifest.json): what the sweep is, which shard the
// directory holds and how many points the whole sweep has, so that resume and merge need
// nothing but the directory.
#pragma once
#include <string>
#include <vector>

#include "sim/sweep/points.h"
#include "sim/sweep/sweep_spec.h"

namespace npusim::sweep {

// Whether a path exists, never throwing: a name the file system refuses (too long, a component
// that is a file) does not exist, and the caller's message names the path.
bool path_exists(const std::string& path);

struct Manifest {
  std::string fingerprint;
  Shard shard;
  int points = 0;                      // of the whole sweep, after constraints
  std::vector<std::string> workloads;  // names, in sweep order
  std::vector<std::string> axis_keys;
  SweepSpec spec;
  std::string device = "npu";          // of the base hardware: "npu" or "gpu" (its metric columns)
};

Manifest make_manifest(const SweepSpec& spec, const std::string& fingerprint, const Shard& shard, const Expansion& ex);
Manifest read_manifest(const std::string& dir);  // InputError when missing or not a manifest
void write_manifest(const std::string& dir, const Manifest& m);

}  // namespace npusim::sweep
