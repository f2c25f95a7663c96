#include "sim/sweep/points.h"

#include <cstdlib>
#include <map>

#include "sim/ir/error.h"
#include "sim/sweep/expr.h"

namespace npusim::sweep {

std::vector<std::string> Point::overrides(const std::vector<std::string>& keys) const {
  std::vector<std::string> o;
  for (size_t i = 0; i < keys.size(); ++i) o.push_back(keys[i] + "=" + values[i]);
  return o;
}

namespace {

constexpr int64_t kMaxGrid = 10'000'000;

ExprValue typed(const config::ParamDecl& d, const std::string& text) {
  switch (d.type) {
    case config::ParamType::String: return ExprValue::str(text);
    case config::ParamType::Bool:
      return ExprValue::num(text == "true" || text == "True" || text == "1" || text == "yes" ? 1 : 0);
    default: return ExprValue::num(std::strtod(text.c_str(), nullptr));
  }
}

}  // namespace

Expansion expand(const SweepSpec& spec, const config::HwConfig& base) {
  const std::vector<std::string> keys = spec.axis_keys();
  // Values: each one once against the schema, so a typo fails before anything runs.
  for (const auto& a : spec.axes)
    for (const auto& step : a.values)
      for (size_t k = 0; k < a.keys.size(); ++k) {
        config::HwConfig probe = base;
        try {
          probe.set(a.keys[k] + "=" + step[k]);
        } catch (const InputError& e) {
          throw InputError(spec.source, a.where, (a.keys.size() > 1 ? a.keys[k] + ": " : "") + e.detail());
        }
      }

  std::vector<Expr> constraints;
  for (size_t i = 0; i < spec.constraints.size(); ++i) {
    const std::string where = i < spec.constraint_where.size() ? spec.constraint_where[i] : "constraints";
    constraints.push_back(Expr::parse(spec.constraints[i], spec.source, where));
    for (const auto& n : constraints.back().names())
      if (!config::find_param(n))
        throw InputError(spec.source, where, "'" + n + "' is not a config key (did you mean '" + config::closest_param(n) + "'?)");
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
  for (const auto& c : constraints)
    for (const auto& n : c.names()) base_values[n] = typed(*config::find_param(n), base.get_string(n));

  std::vector<size_t> idx(spec.axes.size(), 0);
  Point p;
  for (int64_t g = 0; g < ex.grid_size; ++g) {
    p.values.clear();
    for (size_t a = 0; a < spec.axes.size(); ++a)
      for (const auto& v : spec.axes[a].values[idx[a]]) p.values.push_back(v);
    auto lookup = [&](const std::string& n) {
      auto it = key_index.find(n);
      return it == key_index.end() ? base_values.at(n) : typed(*config::find_param(n), p.values[it->second]);
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
