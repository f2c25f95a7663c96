// A multi-device system (docs/system.md): a YAML file with a `system:` section naming the
// devices (each an NPU or GPU hardware description, by file or shipped name), the links
// between them and the collective algorithm per kind. Device configs load as usual
// (HwConfig::load); errors name the file and the line.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "models/interconnect/collectives.h"
#include "models/interconnect/network.h"
#include "sim/config/hw_config.h"

namespace npusim::config {

struct SystemDeviceConfig {
  std::string name;    // "dev0"...
  std::string source;  // the config as written in the system file
  HwConfig hw;
  bool gpu = false;    // hw's `device` key
};

struct SystemConfig {
  std::string source, name;
  std::vector<SystemDeviceConfig> devices;
  models::NetworkParams network;
  std::map<std::string, models::CollectiveAlgo> algorithms;  // by collective kind
  double host_bytes_per_ns = 10;     // cpu supertasks: bytes moved at this rate...
  double host_overhead_ns = 5000;    // ...plus this per supertask
  models::CollectiveAlgo algorithm(const std::string& kind) const;

  static SystemConfig load(const std::string& path);
};

// True when the file (after --hw name resolution) has a top-level `system:` key.
bool is_system_config(const std::string& path);

}  // namespace npusim::config
