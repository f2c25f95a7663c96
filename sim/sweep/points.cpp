#include "sim/sweep/points.h"

#include <cstdlib>
#include <map>

#include <algorithm>
#include <functional>

#include "sim/config/system_config.h"
#include "sim/ir/error.h"
#include "sim/llm/serving.h"
#include "sim/sweep/expr.h"

namespace npusim::sweep {

std::vector<std::string> Point::overrides(const std::vector<std::string>& keys) const {
  std::vector<std::string> o;
  for (size_t i = 0; i < keys.size(); ++i) o.push_back(keys[i] + "=" + values[i]);
  return o;
}

namespace {

constexpr int64_t kMaxGrid = 10'000'000;

ExprValue typed(config::ParamType type, const std::string& text) {
  switch (type) {
    case config::ParamType::String: return ExprValue::str(text);
    case config::ParamType::Bool:
      return ExprValue::num(text == "true" || text == "True" || text == "1" || text == "yes" ? 1 : 0);
    default: return ExprValue::num(std::strtod(text.c_str(), nullptr));
  }
}

// A key's type and its base value (text); nullopt: not a key of the sweep's hardware.
struct KeyInfo {
  config::ParamType type = config::ParamType::Double;
  std::string base;
};
using KeyInfoFn = std::function<std::optional<KeyInfo>(const std::string&)>;
// Applies key=value to the base hardware; an InputError when the value is refused.
using ProbeFn = std::function<void(const std::string& key, const std::string& value)>;

Expansion expand_with(const SweepSpec& spec, const KeyInfoFn& info, const ProbeFn& probe) {
  const std::vector<std::string> keys = spec.axis_keys();
  // Values: each one once against the schema, so a typo fails before anything runs.
  for (const auto& a : spec.axes)
    for (const auto& step : a.values)
      for (size_t k = 0; k < a.keys.size(); ++k) {
        try {
          probe(a.keys[k], step[k]);
        } catch (const InputError& e) {
          throw InputError(spec.source, a.where, (a.keys.size() > 1 ? a.keys[k] + ": " : "") + e.detail());
        }
      }

  std::vector<Expr> constraints;
  std::map<std::string, KeyInfo> infos;
  for (size_t i = 0; i < spec.constraints.size(); ++i) {
    const std::string where = i < spec.constraint_where.size() ? spec.constraint_where[i] : "constraints";
    constraints.push_back(Expr::parse(spec.constraints[i], spec.source, where));
    for (const auto& n : constraints.back().names()) {
      const std::optional<KeyInfo> ki = info(n);
      if (!ki)
        throw InputError(spec.source, where, "'" + n + "' is not a config key (did you mean '" + config::closest_param(n) + "'?)");
      infos[n] = *ki;
    }
  }

  Expansion ex;
  ex.grid_size = 1;
  for (const auto& a : spec.axes) {
    ex.grid_size *= static_cast<int64_t>(a.values.size());
    if (ex.grid_size > kMaxGrid)
      throw InputError(spec.source, "axes", "more than " + std::to_string(kMaxGrid) + " points: split the sweep");
  }

  // Base values of every name a constraint reads; swept keys are overwritten per point.
  std::map<std::string, ExprValue> base_values;
  std::map<std::string, size_t> key_index;
  for (size_t i = 0; i < keys.size(); ++i) key_index[keys[i]] = i;
  for (const auto& [n, ki] : infos) base_values[n] = typed(ki.type, ki.base);

  std::vector<size_t> idx(spec.axes.size(), 0);
  Point p;
  for (int64_t g = 0; g < ex.grid_size; ++g) {
    p.values.clear();
    for (size_t a = 0; a < spec.axes.size(); ++a)
      for (const auto& v : spec.axes[a].values[idx[a]]) p.values.push_back(v);
    auto lookup = [&](const std::string& n) {
      auto it = key_index.find(n);
      return it == key_index.end() ? base_values.at(n) : typed(infos.at(n).type, p.values[it->second]);
    };
    bool keep = true;
    for (const auto& c : constraints)
      if (!c.holds(lookup)) {
        keep = false;
        break;
      }
    if (keep) {
      p.id = static_cast<int>(ex.points.size());
      ex.points.push_back(p);
    } else {
      ++ex.dropped;
    }
    // Odometer: the last axis steps fastest.
    for (size_t a = spec.axes.size(); a-- > 0;) {
      if (++idx[a] < spec.axes[a].values.size()) break;
      idx[a] = 0;
    }
  }
  return ex;
}

}  // namespace

namespace {

// A device config's keys: the schema's type, the config's value; a value is probed on a copy.
KeyInfoFn device_info(const config::HwConfig& base) {
  return [&base](const std::string& n) -> std::optional<KeyInfo> {
    const config::ParamDecl* d = config::find_param(n);
    if (!d) return std::nullopt;
    return KeyInfo{d->type, base.get_string(n)};
  };
}

ProbeFn device_probe(const config::HwConfig& base) {
  return [&base](const std::string& k, const std::string& v) {
    config::HwConfig probe = base;
    probe.set(k + "=" + v);
  };
}

}  // namespace

Expansion expand(const SweepSpec& spec, const config::HwConfig& base) {
  return expand_with(spec, device_info(base), device_probe(base));
}

namespace {

// Serving sweeps (llm: workloads): `serving.<option>` keys are sim llm's options, typed as the
// option table says and based on the first workload's value (else the option's default); other
// keys are the hardware's.
KeyInfoFn serving_info(const SweepSpec& spec, KeyInfoFn hw) {
  return [&spec, hw](const std::string& n) -> std::optional<KeyInfo> {
    if (n.rfind("serving.", 0) != 0) return hw(n);
    const llm::ServingOption* o = llm::find_serving_option(n.substr(8));
    if (!o) return std::nullopt;
    KeyInfo k{o->type == llm::OptionType::Int ? config::ParamType::Int
              : o->type == llm::OptionType::Number ? config::ParamType::Double
              : o->type == llm::OptionType::Bool ? config::ParamType::Bool
                                                  : config::ParamType::String,
              o->default_value()};
    for (const auto& [key, v] : spec.workloads.front().llm_options)
      if (key == o->name) k.base = v;
    return k;
  };
}

ProbeFn serving_probe(ProbeFn hw) {
  return [hw](const std::string& k, const std::string& v) {
    if (k.rfind("serving.", 0) != 0) return hw(k, v);
    const llm::ServingOption* o = llm::find_serving_option(k.substr(8));
    if (!o) {
      std::string names;
      for (const auto& so : llm::serving_options()) names += (names.empty() ? "" : ", ") + std::string("serving.") + so.name;
      throw InputError("sweep", k, "not a serving option (expected one of: " + names + ")");
    }
    if (const std::string e = llm::serving_value_error(*o, v); !e.empty()) throw InputError("sweep", k, e);
  };
}

}  // namespace

SweepBase resolve_base(const SweepSpec& spec) {
  for (const std::string& k : spec.axis_keys())
    if (k == "device") throw InputError(spec.source, "axes", "device is not a sweep axis: sweep the keys of one device's config");
  const bool serving = !spec.workloads.empty() && !spec.workloads.front().llm_model.empty();
  if (!serving)
    for (const std::string& k : spec.axis_keys())
      if (k.rfind("serving.", 0) == 0)
        throw InputError(spec.source, "axes", k + ": serving options need llm: workloads (docs/sweeps.md#serving)");
  // Serving keys wrap the hardware's: identity for other sweeps.
  auto info = [&](KeyInfoFn f) { return serving ? serving_info(spec, std::move(f)) : f; };
  auto probe = [&](ProbeFn f) { return serving ? serving_probe(std::move(f)) : f; };
  SweepBase b;
  if (!config::is_system_config(spec.hw)) {
    const config::HwConfig base = config::HwConfig::load(spec.hw);
    for (const std::string& k : spec.axis_keys())
      if (k.rfind("system.", 0) == 0)
        throw InputError(spec.source, "axes", k + ": system keys need a system config as hw (docs/system.md#config)");
    b.device = serving ? "llm" : base.get_string("device");
    b.expansion = expand_with(spec, info(device_info(base)), probe(device_probe(base)));
    b.fingerprint = fingerprint(spec, base.resolved());
    return b;
  }
  // A system: system.* keys with the file's values; device keys with the first device that has them.
  const config::SystemConfig sys = config::SystemConfig::load(spec.hw);
  b.device = serving ? "llm" : "system";
  b.expansion = expand_with(
      spec,
      info([&](const std::string& n) -> std::optional<KeyInfo> {
        if (const config::SystemKey* k = config::find_system_key(n)) {
          const auto it = sys.values.find(n);
          if (it == sys.values.end() && std::find(spec.axis_keys().begin(), spec.axis_keys().end(), n) == spec.axis_keys().end())
            throw InputError(spec.source, "constraints", n + " is not set in " + sys.source + ": sweep it, or set it there");
          return KeyInfo{k->type, it == sys.values.end() ? "" : it->second};
        }
        const config::ParamDecl* d = config::find_param(n);
        if (!d) return std::nullopt;
        for (const auto& dev : sys.devices)
          if (config::param_applies(n, dev.hw.get_string("device"))) return KeyInfo{d->type, dev.hw.get_string(n)};
        return std::nullopt;
      }),
      probe([&](const std::string& k, const std::string& v) { (void)config::SystemConfig::load(spec.hw, {k + "=" + v}); }));
  std::vector<std::pair<std::string, std::string>> resolved(sys.values.begin(), sys.values.end());
  for (const auto& d : sys.devices) {
    resolved.emplace_back(d.name, d.source);
    for (const auto& [k, v] : d.hw.resolved()) resolved.emplace_back(d.name + "." + k, v);
  }
  b.fingerprint = fingerprint(spec, resolved);
  return b;
}

Shard Shard::parse(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  char* end = nullptr;
  bool ok = slash != std::string::npos && slash > 0;
  if (ok) {
    s.index = static_cast<int>(std::strtol(text.c_str(), &end, 10));
    ok = end == text.c_str() + slash;
    s.count = static_cast<int>(std::strtol(text.c_str() + slash + 1, &end, 10));
    ok = ok && *end == '\0' && slash + 1 < text.size();
  }
  if (!ok || s.count < 1 || s.index < 0 || s.index >= s.count)
    throw InputError("--shard", text, "expected i/N with 0 <= i < N, e.g. 0/4");
  return s;
}

}  // namespace npusim::sweep
