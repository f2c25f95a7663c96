// A multi-device system (docs/system.md): a YAML file with a `system:` section naming the
// devices (each an NPU or GPU hardware description, by file or shipped name), the links
// between them and the collective algorithm per kind. Device configs load as usual
// (HwConfig::load); errors name the file and the line.
#pragma once
#include <map>
#include <optional>
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
  models::NetworkParams network;    // bandwidths as the transport achieves them (nominal x efficiency)
  std::map<std::string, models::CollectiveAlgo> algorithms;  // by collective kind (absent: default / tuner)
  // system.collectives.model: nccl: NCCL's tuner picks algorithm and protocol with its constants
  // for `generation` (docs/system.md#nccl); the engine builds models::CollectiveTuning from it.
  struct Library {
    std::string generation = "hopper";
    std::optional<models::Protocol> protocol;  // forced
    int channels = 16;
    double ring_fill_mib = 0, nvls_fill_mib = 0;
  };
  std::optional<Library> library;
  bool switch_reduction = false;  // system.link.switch_reduction: the switch reduces (NVLS)
  double link_pj_per_bit = 0;     // system.link.pj_per_bit: a bit from device to device (0: links not costed)
  double nic_pj_per_bit = 0;      // system.nodes.nic_pj_per_bit: a bit from NIC to NIC
  double host_bytes_per_ns = 10;     // cpu supertasks: bytes moved at this rate...
  double host_overhead_ns = 5000;    // ...plus this per supertask
  std::map<std::string, std::string> values;  // text of each system key the file sets (with --set)
  models::CollectiveAlgo algorithm(const std::string& kind) const;
  std::optional<models::CollectiveAlgo> forced_algorithm(const std::string& kind) const;

  // overrides: `--set KEY=VALUE` texts. A `system.*` key (system_keys()) replaces that value of
  // the file, checked as the file's own would be; any other key is a device key and applies to
  // every device whose kind has it (a GPU key to the GPUs). Errors name --set and the key.
  static SystemConfig load(const std::string& path, const std::vector<std::string>& overrides = {});
};

// A key under `system:` that holds one value (docs/system.md#config): system.link.*,
// system.nodes.*, system.collectives.*, system.host.*; system.devices is a list, not among them.
// The reader checks each value (ranges, choices, combinations); this declares what it is.
struct SystemKey {
  std::string path;
  ParamType type;
  std::string unit, meaning;
};
const std::vector<SystemKey>& system_key_decls();
const std::vector<std::string>& system_keys();  // their paths, in the same order
const SystemKey* find_system_key(const std::string& path);
// Markdown table of the system keys (docs/config.md, after the device keys).
std::string system_keys_markdown();

// True when the file (after --hw name resolution) has a top-level `system:` key.
bool is_system_config(const std::string& path);

}  // namespace npusim::config
