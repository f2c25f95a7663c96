// Hardware description: one YAML file (configs/*.yaml) plus --set overrides, checked against a
// schema that declares every key once (type, unit, default, range, meaning). Each unit declares
// its keys next to its params struct (PeArrayParams::params(), ...); schema.cpp only assembles
// them. The schema also prints `sim config --list` and docs/config.md, so documentation and
// defaults cannot drift.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace npusim::config {

enum class ParamType { Int, Double, String, Bool };

// The values a number may take: [lo, hi] (hi excluded when hi_open). `positive` means lo is
// excluded (a rate or size of 0 would divide by zero or hold nothing). Upper bounds keep every
// derived cycle count far inside int64.
struct ParamRange {
  double lo = 0, hi = 1e9;
  bool positive = false, hi_open = false;
  std::string text() const;  // "[1e-06, 1e+09]", "[1, 1048576]", "[0, 1)"
};

// The ranges the units' declarations name, by what a key measures. Every bound is far enough
// inside int64 that cycle arithmetic cannot overflow.
namespace range {
inline constexpr ParamRange rate{1e-6, 1e9, true, false};      // B/cycle, GB/s, TFLOPS, MAC/PE/cycle...: > 0
inline constexpr ParamRange count{1, 1 << 20, false, false};   // PEs, lanes, channels, SMs, warps...: >= 1
inline constexpr ParamRange size{1, 1 << 30, false, false};    // KiB, MiB
inline constexpr ParamRange delay{0, 1e9, false, false};       // cycles, ns, us: not negative
inline constexpr ParamRange latency{1e-6, 1e9, true, false};   // a latency a model divides by: > 0
inline constexpr ParamRange fraction{1e-6, 1, true, false};    // efficiencies: (0, 1]
inline constexpr ParamRange clock{1e-3, 1e6, true, false};     // MHz
inline constexpr ParamRange energy{0, 1e6, false, false};      // pJ (0: not modelled)
inline constexpr ParamRange optional_rate{0, 1e9, false, false};  // a rate the hardware may lack: 0 = none
inline constexpr ParamRange none{};                            // strings and bools: not checked
}  // namespace range

class HwConfig;

// A key bound to a field of its unit's params struct (as gem5 binds a SimObject's params): the
// unit's read() is then `read_bound(p, c, params())`, not a hand-written line per key. `same`
// says whether two structs agree on the field (the tests check a struct's own defaults against
// the declared ones through it). Made by bind() / bind_choice() below.
struct ParamBinding {
  std::function<void(void* params, const HwConfig& c, const std::string& path)> read;
  std::function<bool(const void* a, const void* b)> same;
  explicit operator bool() const { return static_cast<bool>(read); }
};

struct ParamDecl {
  std::string path;     // dotted YAML path, e.g. "npu.pe_array.rows"
  ParamType type;
  std::string default_value;
  std::string unit;     // "cycles", "B/cycle", "KiB", "" ...
  std::string meaning;  // one line
  std::vector<std::string> choices;  // for enumerated strings; empty = free
  ParamRange range = {};             // numbers only: config::range::*, or its own where a unit needs it
  ParamBinding bind = {};            // the params field it fills (empty: the unit's read() reads it by hand)
};

// Every parameter npusim reads, in documentation order: the top-level keys, then each unit's
// declarations (schema.cpp).
const std::vector<ParamDecl>& schema();
// The parts it is assembled from, in that order: the top-level keys (name, clock_mhz, device),
// then each unit's declarations (tests check that no key is declared twice).
const std::vector<ParamDecl>& top_level_params();
const std::vector<const std::vector<ParamDecl>*>& unit_param_lists();
const ParamDecl* find_param(const std::string& path);

// A rule between two keys that the models assume: value(lesser) <= value(greater). Checked when
// a config is loaded (both keys of the config's device), the error naming both keys, their values
// and where each was set; listed in docs/config.md.
struct KeyOrder {
  const char* lesser;
  const char* greater;
  const char* why;
};
const std::vector<KeyOrder>& key_orders();
std::string closest_param(const std::string& path);  // for "did you mean" messages

// A resolved configuration: every schema key has a value (file, override or default).
class HwConfig {
 public:
  // Reads a YAML file; unknown keys, wrong types and bad values are InputErrors naming the
  // file and YAML path. Overrides are "path=value" strings (--set), applied after the file.
  static HwConfig load(const std::string& path, const std::vector<std::string>& overrides = {});
  // Defaults only (plus overrides): used by tests through make_params-style helpers.
  static HwConfig defaults(const std::vector<std::string>& overrides = {});
  // Applies one "path=value" override (InputError "--set" on unknown path or bad value).
  void set(const std::string& assignment);

  int64_t get_int(const std::string& path) const;
  double get_double(const std::string& path) const;  // ints are accepted as doubles
  std::string get_string(const std::string& path) const;
  bool get_bool(const std::string& path) const;

  const std::string& source() const { return m_source; }
  // path -> value text, every schema key of this config's device, in schema order (for
  // reports: "restate the specs"); a one-core NPU leaves out the multi-core keys.
  std::vector<std::pair<std::string, std::string>> resolved() const;

  // Derived: clock period and rates used by several units.
  double clock_ghz() const { return get_double("clock_mhz") / 1000.0; }
  double dram_bytes_per_cycle() const { return get_double("memory.dram.bandwidth_gbps") / clock_ghz(); }

 private:
  void assign(const std::string& path, const std::string& text, const std::string& file,
              const std::string& where);
  void validate() const;  // cross-field rules
  std::map<std::string, std::string> m_values;
  std::map<std::string, std::pair<std::string, std::string>> m_origin;  // key -> (file, where) when set
  std::string m_source = "<defaults>";
};

// NPU and GPU descriptions are separate roots: a `device: gpu` config uses the gpu.* keys, a
// `device: npu` config everything else; name, clock_mhz and device belong to both.
bool param_applies(const std::string& path, const std::string& device);
// npu.cores, npu.noc.*, mapping.multicore and mapping.pipeline_images: what a one-core NPU's
// reports do not list.
bool is_multicore_key(const std::string& path);

// Markdown table of the schema (docs/config.md is generated from it).
std::string schema_markdown();

// "int", "number", "bool" or "string", as the docs' key tables name a type.
const char* param_type_name(ParamType t);

// A key's value into field m of P, times scale for numbers (1024: KiB to bytes).
template <class P, class T>
ParamBinding bind(T P::*m, double scale = 1) {
  ParamBinding b;
  b.read = [m, scale](void* p, const HwConfig& c, const std::string& path) {
    P& x = *static_cast<P*>(p);
    if constexpr (std::is_same_v<T, bool>) x.*m = c.get_bool(path);
    else if constexpr (std::is_same_v<T, std::string>) x.*m = c.get_string(path);
    else if constexpr (std::is_integral_v<T>) x.*m = static_cast<T>(c.get_int(path) * static_cast<int64_t>(scale));
    else x.*m = static_cast<T>(c.get_double(path) * scale);
  };
  b.same = [m](const void* a, const void* c) { return static_cast<const P*>(a)->*m == static_cast<const P*>(c)->*m; };
  return b;
}
// An enumerated string key into an enum field: each choice's value.
template <class P, class E>
ParamBinding bind_choice(E P::*m, std::vector<std::pair<std::string, E>> values) {
  ParamBinding b;
  b.read = [m, values](void* p, const HwConfig& c, const std::string& path) {
    const std::string v = c.get_string(path);
    for (const auto& [name, e] : values)
      if (name == v) static_cast<P*>(p)->*m = e;
  };
  b.same = [m](const void* a, const void* c) { return static_cast<const P*>(a)->*m == static_cast<const P*>(c)->*m; };
  return b;
}
// Fills every bound field of p from c.
template <class P>
void read_bound(P& p, const HwConfig& c, const std::vector<ParamDecl>& decls) {
  for (const ParamDecl& d : decls)
    if (d.bind) d.bind.read(&p, c, d.path);
}

}  // namespace npusim::config
