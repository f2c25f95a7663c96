// Reader of the `system:` section (docs/system.md#config). Every key is checked; unknown keys,
// bad values and missing device files are InputErrors with file and line.
#include "sim/config/system_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "sim/config/hw_paths.h"
#include "sim/config/yaml_load.h"
#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

namespace npusim::config {

namespace {

std::string at(const YAML::Node& n, const std::string& path) {
  const auto m = n.Mark();
  return m.line >= 0 ? path + " (line " + std::to_string(m.line + 1) + ")" : path;
}

YAML::Node load_yaml(const std::string& path) {
  // A regular file of at most kMaxYamlFileBytes holding one document without duplicate keys
  // (sim/ir/input_file.h, sim/config/yaml_load.h); the built-in npu.yaml is no system.
  if (path == kBuiltinHw) return load_yaml_document(read_hw_text(path), path);
  return load_yaml_document(read_input_file(path, "a YAML system description", kMaxYamlFileBytes), path);
}

double positive(const YAML::Node& n, const std::string& file, const std::string& path, double hi) {
  double v = 0;
  try {
    v = n.as<double>();
  } catch (const YAML::Exception&) {
    throw InputError(file, at(n, path), "expected a number, got '" + (n.IsScalar() ? n.Scalar() : std::string("a mapping or list")) + "'");
  }
  if (!(v > 0) || v > hi)
    throw InputError(file, at(n, path), path + " = " + n.Scalar() + ": must be greater than 0 and at most " + std::to_string(hi));
  return v;
}

void only_keys(const YAML::Node& n, const std::string& file, const std::string& path, const std::vector<std::string>& keys) {
  if (!n.IsMap()) throw InputError(file, at(n, path), "expected a mapping of keys");
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      std::string list;
      for (const auto& x : keys) list += (list.empty() ? "" : ", ") + x;
      throw InputError(file, at(kv.first, path + "." + k), "unknown key; valid: " + list);
    }
  }
}

// The keys of one section of `system:` (the part after "system.<section>.").
std::vector<std::string> keys_under(const std::string& section) {
  std::vector<std::string> out;
  const std::string prefix = "system." + section + ".";
  for (const std::string& k : system_keys())
    if (k.rfind(prefix, 0) == 0) out.push_back(k.substr(prefix.size()));
  return out;
}

}  // namespace

const std::vector<SystemKey>& system_key_decls() {
  using T = ParamType;
  static const std::vector<SystemKey> keys = {
      {"system.link.topology", T::String, "", "fully_connected (a link per pair), ring (neighbours only), switch (one port per device into a non-blocking switch)"},
      {"system.link.bandwidth_gbps", T::Double, "GB/s", "one link, one direction (switch: one device's port), the line rate"},
      {"system.link.latency_us", T::Double, "us", "per hop (switch: device to device)"},
      {"system.link.efficiency", T::Double, "fraction", "share of the line rate the transport reaches (default 1)"},
      {"system.link.switch_reduction", T::Bool, "", "the switch reduces (NVLink SHARP, NCCL's NVLS); needs topology switch"},
      {"system.link.pj_per_bit", T::Double, "pJ", "energy to carry one bit from a device to another over the links (switch: both links through it); 0: links not costed (docs/energy.md#systems)"},
      {"system.nodes.devices_per_node", T::Int, "devices", "devices [k*d, (k+1)*d) form node k; divides the device count"},
      {"system.nodes.nic_bandwidth_gbps", T::Double, "GB/s", "each device's NIC into the network between nodes, per direction (default 50)"},
      {"system.nodes.nic_latency_us", T::Double, "us", "NIC to NIC (default 5)"},
      {"system.nodes.nic_efficiency", T::Double, "fraction", "share of the NIC's line rate reached (default 1)"},
      {"system.nodes.nic_pj_per_bit", T::Double, "pJ", "energy to carry one bit from NIC to NIC (0: not costed)"},
      {"system.collectives.model", T::String, "", "plain (every step at the links' rates) or nccl (NCCL's cost model and tuner)"},
      {"system.collectives.generation", T::String, "", "nccl only: volta, ampere, hopper, blackwell or cdna3 (RCCL)"},
      {"system.collectives.protocol", T::String, "", "nccl only: auto, ll, ll128 or simple for every collective"},
      {"system.collectives.channels", T::Int, "channels", "nccl only: rings / trees side by side (default 16)"},
      {"system.collectives.ring_fill_mib", T::Double, "MiB", "nccl only: pipeline fill of ring and tree collectives (default 0)"},
      {"system.collectives.nvls_fill_mib", T::Double, "MiB", "nccl only: pipeline fill of nvls collectives (default 0)"},
      {"system.collectives.all_reduce", T::String, "", "ring, tree, direct, pairwise, nvls, or auto with nccl"},
      {"system.collectives.all_gather", T::String, "", "as all_reduce (no nvls)"},
      {"system.collectives.reduce_scatter", T::String, "", "as all_reduce (no nvls)"},
      {"system.collectives.all_to_all", T::String, "", "as all_reduce (no nvls); plain default pairwise"},
      {"system.collectives.broadcast", T::String, "", "as all_reduce (no nvls); plain default direct"},
      {"system.collectives.reduce", T::String, "", "as all_reduce (no nvls); plain default direct"},
      {"system.collectives.gather", T::String, "", "as all_reduce (no nvls); plain default direct"},
      {"system.host.bandwidth_gbps", T::Double, "GB/s", "cpu supertasks move their bytes at this rate (default 10)"},
      {"system.host.op_overhead_us", T::Double, "us", "plus this per cpu supertask (default 5)"}};
  return keys;
}

const std::vector<std::string>& system_keys() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> p;
    for (const SystemKey& k : system_key_decls()) p.push_back(k.path);
    return p;
  }();
  return paths;
}

const SystemKey* find_system_key(const std::string& path) {
  for (const SystemKey& k : system_key_decls())
    if (k.path == path) return &k;
  return nullptr;
}

std::string system_keys_markdown() {
  std::string o = "| key | type | unit | meaning |\n|---|---|---|---|\n";
  for (const SystemKey& k : system_key_decls())
    o += "| `" + k.path + "` | " +
         param_type_name(k.type) +
         " | " + k.unit + " | " + k.meaning + " |\n";
  return o;
}

std::optional<models::CollectiveAlgo> SystemConfig::forced_algorithm(const std::string& kind) const {
  auto it = algorithms.find(kind);
  if (it != algorithms.end()) return it->second;
  return std::nullopt;
}

models::CollectiveAlgo SystemConfig::algorithm(const std::string& kind) const {
  auto it = algorithms.find(kind);
  if (it != algorithms.end()) return it->second;
  return kind == "all_to_all" ? models::CollectiveAlgo::Pairwise
         : kind == "broadcast" || kind == "reduce" || kind == "gather" ? models::CollectiveAlgo::Direct
                                                                        : models::CollectiveAlgo::Ring;
}

bool is_system_config(const std::string& path) {
  std::string resolved;
  try {
    resolved = resolve_hw(path);
  } catch (const InputError&) {
    return false;  // no such file: HwConfig::load reports it
  }
  // A file that cannot be read or is not one well-formed YAML document is reported here, the
  // same way HwConfig::load would (a pipeline must not be told "give a system" instead).
  const YAML::Node root = load_yaml(resolved);
  return root.IsMap() && root["system"];
}

struct Overrides {
  std::vector<std::pair<std::string, std::string>> system;  // (system key, value)
  std::vector<std::string> device;                          // KEY=VALUE of device keys
};

static SystemConfig load_resolved(const std::string& source, const Overrides& o);

SystemConfig SystemConfig::load(const std::string& value, const std::vector<std::string>& overrides) {
  const std::string source = resolve_hw(value);
  Overrides o;
  for (const std::string& text : overrides) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--set", text, "expected path.to.key=value");
    const std::string key = text.substr(0, eq);
    if (key.rfind("system.", 0) != 0) {
      if (!find_param(key))
        throw InputError("--set", key, "is neither a system key nor a device key (did you mean '" + closest_param(key) + "'?)");
      o.device.push_back(text);
      continue;
    }
    if (std::find(system_keys().begin(), system_keys().end(), key) == system_keys().end()) {
      std::string list;
      for (const auto& k : system_keys()) list += (list.empty() ? "" : ", ") + k;
      throw InputError("--set", key, "not a system key; valid: " + list);
    }
    o.system.emplace_back(key, text.substr(eq + 1));
  }
  try {
    return load_resolved(source, o);
  } catch (const YAML::Exception& e) {  // as<>() of a mapping or list where a value belongs
    throw InputError(source, "line " + std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1),
                     "expected a single value here (" + e.msg + ")");
  } catch (const InputError& e) {
    // A value given with --set has no line in the file: name the option, not the file.
    for (const auto& [key, v] : o.system)
      if (e.file() == source && e.where() == key) throw InputError("--set", key, e.detail());
    throw;
  }
}

static SystemConfig load_resolved(const std::string& source, const Overrides& o) {
  SystemConfig c;
  c.source = source;
  YAML::Node root = load_yaml(c.source);
  // --set system.SECTION.KEY=VALUE: the value as if the file held it (checked below as such).
  for (const auto& [key, value] : o.system) {
    const auto dot = key.find('.', 7);
    if (!root.IsMap() || !root["system"] || !root["system"].IsMap()) break;  // reported below
    YAML::Node sys = root["system"];
    YAML::Node section = sys[key.substr(7, dot - 7)];
    if (section && !section.IsMap()) break;  // reported below
    // A fresh node (no line in the file): its errors then name --set, not the file's line.
    if (section) section.remove(key.substr(dot + 1));
    sys[key.substr(7, dot - 7)][key.substr(dot + 1)] = value;
  }
  only_keys(root, c.source, "", {"name", "system"});
  c.name = root["name"] ? root["name"].as<std::string>() : std::filesystem::path(c.source).stem().string();
  const YAML::Node sys = root["system"];
  only_keys(sys, c.source, "system", {"devices", "link", "nodes", "collectives", "host"});
  for (const std::string& key : system_keys()) {
    const auto dot = key.find('.', 7);
    const YAML::Node section = sys[key.substr(7, dot - 7)];
    if (section && section.IsMap() && section[key.substr(dot + 1)] && section[key.substr(dot + 1)].IsScalar())
      c.values[key] = section[key.substr(dot + 1)].Scalar();
  }
  // devices: a list of configs (file or shipped name), each optionally {config: X, count: N}.
  const YAML::Node devs = sys["devices"];
  if (!devs || !devs.IsSequence() || devs.size() == 0)
    throw InputError(c.source, at(sys, "system.devices"), "expected a list of device configs (file or shipped name, or {config: X, count: N})");
  const std::filesystem::path dir = std::filesystem::path(c.source).parent_path();
  for (size_t i = 0; i < devs.size(); ++i) {
    const YAML::Node d = devs[i];
    const std::string where = "system.devices[" + std::to_string(i) + "]";
    std::string cfg;
    int64_t count = 1;
    if (d.IsScalar()) {
      cfg = d.Scalar();
    } else {
      only_keys(d, c.source, where, {"config", "count"});
      if (!d["config"]) throw InputError(c.source, at(d, where), "missing key 'config'");
      cfg = d["config"].as<std::string>();
      if (d["count"]) count = static_cast<int64_t>(positive(d["count"], c.source, where + ".count", 4096));
    }
    // A relative file is relative to the system file; otherwise a shipped name.
    const std::filesystem::path rel = dir / cfg;
    std::error_code ec;  // a name too long for the file system is no file: a shipped name, or an error below
    const std::string path = std::filesystem::is_regular_file(rel, ec) ? rel.string() : cfg;
    HwConfig hw;
    try {
      hw = HwConfig::load(path);
      // Device keys given with --set: to the devices whose kind has them.
      std::vector<std::string> mine;
      for (const std::string& t : o.device)
        if (param_applies(t.substr(0, t.find('=')), hw.get_string("device"))) mine.push_back(t);
      if (!mine.empty()) hw = HwConfig::load(path, mine);
    } catch (const InputError& e) {
      if (e.file() == "--set") throw;
      throw InputError(c.source, at(d, where), "device config: " + std::string(e.what()));
    }
    for (int64_t k = 0; k < count; ++k) {
      if (c.devices.size() >= 4096) throw InputError(c.source, at(d, where), "more than 4096 devices");
      c.devices.push_back({"dev" + std::to_string(c.devices.size()), cfg, hw, hw.get_string("device") == "gpu"});
    }
  }
  for (const std::string& t : o.device) {
    const std::string key = t.substr(0, t.find('='));
    if (std::none_of(c.devices.begin(), c.devices.end(),
                     [&](const SystemDeviceConfig& d) { return param_applies(key, d.hw.get_string("device")); }))
      throw InputError("--set", key, "applies to none of the system's devices");
  }
  auto fraction = [&](const YAML::Node& n, const std::string& path) {
    double v = 0;
    try { v = n.as<double>(); } catch (const YAML::Exception&) { v = -1; }
    if (!(v > 0) || v > 1) throw InputError(c.source, at(n, path), path + ": must be a number in (0, 1]");
    return v;
  };
  auto flag = [&](const YAML::Node& n, const std::string& path) {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false")) return n.Scalar() == "true";
    throw InputError(c.source, at(n, path), path + ": expected true or false");
  };
  auto in_0_1e6 = [&](const YAML::Node& n, const std::string& path) {
    double v = 0;
    try { v = n.as<double>(); } catch (const YAML::Exception&) { v = -1; }
    if (!(v >= 0) || v > 1e6) throw InputError(c.source, at(n, path), path + ": must be a number in [0, 1e6]");
    return v;
  };
  auto latency = [&](const YAML::Node& n, const std::string& path) { return in_0_1e6(n, path) * 1000; };
  auto energy = in_0_1e6;  // pJ; 0: not costed
  double link_efficiency = 1;
  if (const YAML::Node l = sys["link"]) {
    only_keys(l, c.source, "system.link", keys_under("link"));
    if (l["topology"]) {
      const std::string t = l["topology"].as<std::string>();
      if (t == "fully_connected") c.network.topology = models::Topology::FullyConnected;
      else if (t == "ring") c.network.topology = models::Topology::Ring;
      else if (t == "switch") c.network.topology = models::Topology::Switch;
      else throw InputError(c.source, at(l["topology"], "system.link.topology"), "'" + t + "' is not one of: fully_connected, ring, switch");
    }
    if (l["bandwidth_gbps"]) c.network.bytes_per_ns = positive(l["bandwidth_gbps"], c.source, "system.link.bandwidth_gbps", 1e6);
    if (l["latency_us"]) c.network.latency_ns = latency(l["latency_us"], "system.link.latency_us");
    if (l["efficiency"]) link_efficiency = fraction(l["efficiency"], "system.link.efficiency");
    if (l["pj_per_bit"]) c.link_pj_per_bit = energy(l["pj_per_bit"], "system.link.pj_per_bit");
    if (l["switch_reduction"]) {
      c.switch_reduction = flag(l["switch_reduction"], "system.link.switch_reduction");
      if (c.switch_reduction && c.network.topology != models::Topology::Switch)
        throw InputError(c.source, at(l["switch_reduction"], "system.link.switch_reduction"),
                         "in-switch reduction needs system.link.topology: switch");
    }
  }
  c.network.bytes_per_ns *= link_efficiency;
  if (const YAML::Node nd = sys["nodes"]) {
    only_keys(nd, c.source, "system.nodes", keys_under("nodes"));
    if (!nd["devices_per_node"]) throw InputError(c.source, at(nd, "system.nodes"), "missing key 'devices_per_node'");
    const double k = positive(nd["devices_per_node"], c.source, "system.nodes.devices_per_node", 4096);
    if (k != std::floor(k) || static_cast<size_t>(k) > c.devices.size() || c.devices.size() % static_cast<size_t>(k) != 0)
      throw InputError(c.source, at(nd["devices_per_node"], "system.nodes.devices_per_node"),
                       "must be a whole number that divides the " + std::to_string(c.devices.size()) + " devices");
    c.network.devices_per_node = static_cast<int>(k);
    double eff = 1;
    if (nd["nic_bandwidth_gbps"]) c.network.nic_bytes_per_ns = positive(nd["nic_bandwidth_gbps"], c.source, "system.nodes.nic_bandwidth_gbps", 1e6);
    if (nd["nic_latency_us"]) c.network.nic_latency_ns = latency(nd["nic_latency_us"], "system.nodes.nic_latency_us");
    if (nd["nic_efficiency"]) eff = fraction(nd["nic_efficiency"], "system.nodes.nic_efficiency");
    if (nd["nic_pj_per_bit"]) c.nic_pj_per_bit = energy(nd["nic_pj_per_bit"], "system.nodes.nic_pj_per_bit");
    c.network.nic_bytes_per_ns *= eff;
  }
  if (const YAML::Node co = sys["collectives"]) {
    only_keys(co, c.source, "system.collectives", keys_under("collectives"));
    const std::string model = co["model"] ? co["model"].as<std::string>() : "plain";
    if (model != "plain" && model != "nccl")
      throw InputError(c.source, at(co["model"], "system.collectives.model"), "'" + model + "' is not one of: plain, nccl");
    if (model == "nccl") c.library = SystemConfig::Library{};
    for (const char* k : {"generation", "protocol", "channels", "ring_fill_mib", "nvls_fill_mib"})
      if (co[k] && !c.library)
        throw InputError(c.source, at(co[k], std::string("system.collectives.") + k), "applies to system.collectives.model: nccl only");
    if (c.library) {
      if (co["generation"]) {
        const std::string g = co["generation"].as<std::string>();
        if (g != "volta" && g != "ampere" && g != "hopper" && g != "blackwell" && g != "cdna3")
          throw InputError(c.source, at(co["generation"], "system.collectives.generation"), "'" + g + "' is not one of: volta, ampere, hopper, blackwell, cdna3");
        c.library->generation = g;
      }
      if (co["protocol"]) {
        const std::string p = co["protocol"].as<std::string>();
        if (p != "auto") {
          c.library->protocol = models::parse_protocol(p);
          if (!c.library->protocol)
            throw InputError(c.source, at(co["protocol"], "system.collectives.protocol"), "'" + p + "' is not one of: auto, ll, ll128, simple");
        }
      }
      if (co["channels"]) {
        const double ch = positive(co["channels"], c.source, "system.collectives.channels", 64);
        if (ch != std::floor(ch)) throw InputError(c.source, at(co["channels"], "system.collectives.channels"), "must be a whole number");
        c.library->channels = static_cast<int>(ch);
      }
      // latency(): a number in [0, 1e6], here MiB (x 1000 undone).
      if (co["ring_fill_mib"]) c.library->ring_fill_mib = latency(co["ring_fill_mib"], "system.collectives.ring_fill_mib") / 1000;
      if (co["nvls_fill_mib"]) c.library->nvls_fill_mib = latency(co["nvls_fill_mib"], "system.collectives.nvls_fill_mib") / 1000;
      if (c.library->generation == "cdna3" && c.library->protocol == models::Protocol::LL128)
        throw InputError(c.source, at(co["protocol"], "system.collectives.protocol"),
                         "ll128: RCCL's tuning table for MI300X (cdna3) gives LL128 no bandwidth; give ll, simple or auto");
      if (c.switch_reduction && (c.library->generation == "volta" || c.library->generation == "ampere" || c.library->generation == "cdna3"))
        throw InputError(c.source, at(co, "system.collectives.generation"),
                         "generation " + c.library->generation + " has no in-switch reduction (NVLS), but system.link.switch_reduction is true");
    }
    for (const auto& kv : co) {
      const std::string kind = kv.first.as<std::string>();
      if (kind == "model" || kind == "generation" || kind == "protocol" || kind == "channels" || kind == "ring_fill_mib" ||
          kind == "nvls_fill_mib")
        continue;
      const std::string algo = kv.second.as<std::string>();
      if (algo == "auto" && c.library) continue;
      auto a = models::parse_algo(algo);
      if (!a) throw InputError(c.source, at(kv.second, "system.collectives." + kind),
                               "'" + algo + "' is not one of: " + std::string(c.library ? "auto, " : "") + "ring, tree, direct, pairwise, nvls");
      if (*a == models::CollectiveAlgo::Nvls && (kind != "all_reduce" || !c.switch_reduction))
        throw InputError(c.source, at(kv.second, "system.collectives." + kind),
                         "nvls runs all_reduce on a switch that reduces (system.link.switch_reduction: true)");
      c.algorithms[kind] = *a;
    }
  }
  if (const YAML::Node h = sys["host"]) {
    only_keys(h, c.source, "system.host", keys_under("host"));
    if (h["bandwidth_gbps"]) c.host_bytes_per_ns = positive(h["bandwidth_gbps"], c.source, "system.host.bandwidth_gbps", 1e6);
    if (h["op_overhead_us"]) c.host_overhead_ns = positive(h["op_overhead_us"], c.source, "system.host.op_overhead_us", 1e6) * 1000;
  }
  return c;
}

}  // namespace npusim::config
