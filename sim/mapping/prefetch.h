// Weight prefetch policy (docs/mapping.md, step 6): what the first weight load of a layer waits
// for. Weights that fit half the WL0 buffer load straight into it once the layer
// `mapping.weight_prefetch_layers` earlier (any kind) has finished; larger weights are staged in
// the L2 weight share once the weight layer `mapping.staged_prefetch_layers` earlier has
// finished and enough earlier staged weights have been consumed to make room. The history it
// needs (each NPU layer's last command, each weight layer's release) is its own state, fed by
// the mapper as layers are emitted (tests/unit/mapping/prefetch_test.cpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/mapping/mapper.h"

namespace npusim::mapping {

class WeightPrefetch {
 public:
  explicit WeightPrefetch(const MapperParams& p) : m_p(p) {}

  // Commands the first load of `bytes` of weights waits for; `staged` tells whether they go
  // through the L2 weight share (true) or straight to WL0.
  std::vector<int> deps(int64_t bytes, bool& staged) const;

  // An NPU layer was emitted; `last_cmd` is its last command.
  void layer_done(int last_cmd) { m_layer_last.push_back(last_cmd); }
  size_t layers() const { return m_layer_last.size(); }
  int last_layer_cmd() const { return m_layer_last.back(); }

  // The layer being emitted loads weights (`staged_bytes` of them held in the L2 weight share,
  // 0 when they go straight to WL0); commit_pending records that they are free after `last_cmd`.
  void set_pending(const std::string& name, int64_t staged_bytes) { m_pending = {name, 0, staged_bytes, true}; }
  void commit_pending(int last_cmd);
  // A batch-group run keeps its weights until its last group: move the release of `name`.
  void extend(const std::string& name, int last_cmd);

 private:
  struct WeightLayer {
    std::string name;
    int last_cmd = -1;         // its weights are free after this command
    int64_t staged_bytes = 0;  // held in the L2 weight share until then (0: straight to WL0)
    bool set = false;
  };
  MapperParams m_p;
  std::vector<int> m_layer_last;            // last command of each NPU layer, in order
  std::vector<WeightLayer> m_weight_layers;  // layers with weights, in order
  WeightLayer m_pending;
};

}  // namespace npusim::mapping
