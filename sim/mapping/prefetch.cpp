// Weight prefetch policy of the NPU mapping (sim/mapping/prefetch.h).
#include "sim/mapping/prefetch.h"

#include <algorithm>

namespace npusim::mapping {

std::vector<int> WeightPrefetch::deps(int64_t bytes, bool& staged) const {
  std::vector<int> deps;
  const int n = static_cast<int>(m_layer_last.size());
  staged = bytes > m_p.weight_buffer_bytes / 2;
  if (!staged) {
    const int d = std::max(1, m_p.weight_prefetch_layers);
    if (n - d >= 0) deps.push_back(m_layer_last[static_cast<size_t>(n - d)]);
    return deps;
  }
  const int w = static_cast<int>(m_weight_layers.size());
  const int d = std::max(1, m_p.staged_prefetch_layers);
  if (w - d >= 0) deps.push_back(m_weight_layers[static_cast<size_t>(w - d)].last_cmd);
  // Room in the L2 weight share: staged weights of unfinished layers, oldest freed first.
  int64_t held = 0;
  for (const auto& s : m_weight_layers) held += s.staged_bytes;
  for (const auto& s : m_weight_layers) {
    if (held + bytes <= m_p.l2_weight_bytes || held == 0) break;
    if (s.staged_bytes == 0) continue;
    held -= s.staged_bytes;
    deps.push_back(s.last_cmd);
  }
  return deps;
}

void WeightPrefetch::commit_pending(int last_cmd) {
  if (!m_pending.set) return;
  m_pending.last_cmd = last_cmd;
  m_weight_layers.push_back(m_pending);
  m_pending = {};
}

void WeightPrefetch::extend(const std::string& name, int last_cmd) {
  for (auto& w : m_weight_layers)
    if (w.name == name) w.last_cmd = last_cmd;
}

}  // namespace npusim::mapping
