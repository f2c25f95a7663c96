// Liveness and batch groups of the NPU mapping (sim/mapping/segments.h).
#include "sim/mapping/segments.h"

#include <algorithm>
#include <unordered_map>

#include "models/npu/pe_array_timing.h"
#include "sim/mapping/tiling.h"

namespace npusim::mapping {

std::vector<int64_t> whole_batch_live_bytes(const ir::Graph& g) {
  const size_t n = g.layers.size();
  std::unordered_map<std::string, size_t> last_use;  // layer name -> last layer that reads it
  for (size_t i = 0; i < n; ++i)
    for (const auto& p : g.layers[i].previous) last_use[ir::edge_layer(p)] = i;
  std::vector<int64_t> out(n, 0), live(n, 0), expires(n + 1, 0);
  int64_t running = 0;  // outputs of earlier layers still to be read at layer i
  for (size_t i = 0; i < n; ++i) {
    const ir::Layer& l = g.layers[i];
    if (!l.output_shapes.empty())
      out[i] = bytes_of(l.output_shapes[0], l.output_dtypes.empty() ? ir::DType::Int8 : l.output_dtypes[0]);
    running -= expires[i];
    live[i] = out[i] + running;
    auto it = last_use.find(l.name);
    if (it != last_use.end() && it->second > i) {  // read after this layer: live until then
      running += out[i];
      expires[it->second + 1] += out[i];
    }
  }
  return live;
}

namespace {

int64_t floor_pow2(int64_t v) {
  int64_t r = 1;
  while (r * 2 <= v) r *= 2;
  return r;
}

int64_t spatial(const ir::Layer& l) {
  if (l.output_shapes.empty()) return 1;
  const auto& s = l.output_shapes[0];
  int64_t px = 1;
  for (size_t i = 2; i < s.size(); ++i) px *= s[i];
  return px;
}

std::vector<Segment> plan_stage_segments(const ir::Graph& g, const MapperParams& p, const std::vector<int64_t>& live) {
  std::vector<Segment> segs;
  const int64_t batch = g.batch();
  const size_t n = g.layers.size();
  const int64_t budget = static_cast<int64_t>(p.batch_group_fill * static_cast<double>(p.l2_bytes));
  auto native = [&](size_t i) {
    return g.layers[i].device == ir::Device::Npu && ir::is_frontend_ir_native(g.layers[i].op);
  };
  // Per-layer groups, then the smallest of each stage.
  std::vector<int64_t> nb(n, batch);
  for (size_t i = 0; i < n; ++i) {
    const int64_t per_image = std::max<int64_t>(1, models::ceil_div(live[i], batch));
    nb[i] = std::min(batch, floor_pow2(std::max<int64_t>(1, budget / per_image)));
  }
  // Cuts: points where a single tensor is live (between residual blocks). A stage starts at
  // the first cut at or after a change of the output H x W.
  std::unordered_map<std::string, size_t> last_use;
  for (size_t i = 0; i < n; ++i)
    for (const auto& prev : g.layers[i].previous) last_use[ir::edge_layer(prev)] = i;
  std::vector<int> live_before(n + 1, 0);  // tensors made before layer i and read at or after it
  {
    std::vector<int> expires(n + 2, 0);
    int running = 0;
    for (size_t i = 0; i < n; ++i) {
      running -= expires[i];
      live_before[i] = running;
      auto it = last_use.find(g.layers[i].name);
      if (it != last_use.end() && it->second > i) running++, expires[it->second + 1]++;
    }
  }
  std::vector<bool> stage_start(n, false);
  bool pending = false;
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || !native(i) || !native(i - 1)) {
      stage_start[i] = true;
      pending = false;
      continue;
    }
    if (spatial(g.layers[i]) != spatial(g.layers[i - 1])) pending = true;
    if (pending && live_before[i] <= 1) stage_start[i] = true, pending = false;
  }
  std::vector<int64_t> stage_nb(n, batch);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && !stage_start[j]) ++j;
    int64_t m = batch;
    for (size_t k = i; k < j; ++k) m = std::min(m, nb[k]);
    for (size_t k = i; k < j; ++k) stage_nb[k] = m;
    i = j;
  }
  // Runs: a stage with a larger group starts a new run; others join and shrink it.
  std::vector<Segment> runs;
  for (size_t i = 0; i < n; ++i) {
    if (!native(i)) continue;
    const bool contiguous = !runs.empty() && runs.back().first + runs.back().count == i;
    if (!contiguous || (stage_start[i] && stage_nb[i] > runs.back().group)) {
      runs.push_back(Segment{i, 1, stage_nb[i]});
    } else {
      runs.back().count++;
      runs.back().group = std::min(runs.back().group, stage_nb[i]);
    }
  }
  // Weight storage: a run ends where its weights stop fitting together.
  const int64_t weight_store = p.weight_buffer_bytes + p.l2_weight_bytes;
  for (const Segment& r : runs) {
    Segment cur{r.first, 0, r.group};
    int64_t weights = 0, staged = 0, peak = 0;
    std::vector<int64_t> staged_layers;  // staged weights of the run's layers, in order
    auto close = [&] {
      if (cur.count == 0) return;
      // A run on groups holds all its staged weights in L2 until its last group; a run on the
      // whole batch only the `staged_prefetch_layers` in flight at once.
      int64_t window = 0;
      const size_t d = static_cast<size_t>(std::max(1, p.staged_prefetch_layers));
      for (size_t k = 0; k < staged_layers.size(); ++k) {
        int64_t sum = 0;
        for (size_t j = k; j < std::min(staged_layers.size(), k + d); ++j) sum += staged_layers[j];
        window = std::max(window, sum);
      }
      auto capacity = [&](int64_t group) {
        return std::max(p.l2_act_bytes, p.l2_bytes - (group < batch ? staged : window));
      };
      // The group's live activations must fit that space too.
      while (cur.group > 1 && static_cast<double>(cur.group * peak) > p.batch_group_fill * static_cast<double>(capacity(cur.group)))
        cur.group = floor_pow2(cur.group - 1);
      cur.act_bytes = capacity(cur.group);
      segs.push_back(cur);  // whole-batch runs too: they carry their L2 split
    };
    for (size_t i = r.first; i < r.first + r.count; ++i) {
      const int64_t w = g.layers[i].weight_bytes();
      if (cur.count > 0 && weights + w > weight_store) {
        close();
        cur = Segment{i, 0, r.group};
        weights = staged = peak = 0;
        staged_layers.clear();
      }
      cur.count++;
      weights += w;
      peak = std::max(peak, models::ceil_div(live[i], batch));
      if (w > p.weight_buffer_bytes / 2) staged += w, staged_layers.push_back(w);  // through the L2 weight share
    }
    close();
  }
  return segs;
}

}  // namespace

std::vector<Segment> plan_segments(const ir::Graph& g, const MapperParams& p) {
  std::vector<Segment> segs;
  const int64_t batch = g.batch();
  if (batch <= 1 || !p.keep_activations_on_chip) return segs;
  const auto live = whole_batch_live_bytes(g);
  if (p.batch_groups_per_stage) return plan_stage_segments(g, p, live);
  const int64_t weight_store = p.weight_buffer_bytes + p.l2_weight_bytes;
  Segment cur;
  int64_t cur_weights = 0;
  auto close = [&] {
    if (cur.count > 0 && cur.group < batch) segs.push_back(cur);
    cur = Segment{};
    cur_weights = 0;
  };
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const ir::Layer& l = g.layers[i];
    // Batch groups are the Gemini compiler's schedule for its own (CNN) operations.
    if (l.device != ir::Device::Npu || !ir::is_frontend_ir_native(l.op)) {
      close();
      continue;
    }
    if (cur_weights + l.weight_bytes() > weight_store) close();
    const int64_t per_image = models::ceil_div(live[i], batch);
    const int64_t nb = std::max<int64_t>(1, p.l2_act_bytes / std::max<int64_t>(1, per_image));
    if (cur.count == 0) cur = Segment{i, 0, batch};
    cur.count++;
    cur.group = std::min(cur.group, nb);
    cur_weights += l.weight_bytes();
  }
  close();
  return segs;
}

}  // namespace npusim::mapping
