// Expansion of a sweep into points: the cartesian product of the axes (first axis outermost,
// zipped keys stepping together), minus the points a constraint rejects. Point ids number the
// kept points 0..N-1 in that order, so the same sweep always gives the same ids.
#pragma once
#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/sweep/sweep_spec.h"

namespace npusim::sweep {

struct Point {
  int id = 0;
  std::vector<std::string> values;  // one per SweepSpec::axis_keys(), as config value text

  // "key=value" overrides for HwConfig::load / set.
  std::vector<std::string> overrides(const std::vector<std::string>& keys) const;
};

struct Expansion {
  std::vector<Point> points;
  int64_t grid_size = 0;  // product of the axis lengths, before constraints
  int64_t dropped = 0;    // points rejected by a constraint
};

// Checks every axis value against the schema (an InputError naming the sweep file and axis) and
// every constraint (syntax, names: config keys only), then expands. base gives the values of
// keys that are not swept.
Expansion expand(const SweepSpec& spec, const config::HwConfig& base);

// What a sweep runs on, resolved from its base hardware description: the device whose metric
// columns the files hold ("npu", "gpu", or "system" for a system config, whose axes may be
// system.* keys and device keys: sim/config/system_config.h), the points and the fingerprint.
// InputErrors name the sweep file and the axis or constraint (a system key on a device config,
// `device` as an axis, a value the config refuses).
struct SweepBase {
  std::string device;
  Expansion expansion;
  std::string fingerprint;
};
SweepBase resolve_base(const SweepSpec& spec);

// --shard i/N: the i-th (0-based) of N disjoint slices; point p belongs to shard p % N.
struct Shard {
  int index = 0, count = 1;
  static Shard parse(const std::string& text);  // "i/N"; InputError on anything else
  bool contains(int point_id) const { return point_id % count == index; }
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

}  // namespace npusim::sweep
