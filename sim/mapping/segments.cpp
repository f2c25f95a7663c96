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

std::vector<Segment> plan_segments(const ir::Graph& g, const MapperParams& p) {
  std::vector<Segment> segs;
  const int64_t batch = g.batch();
  if (batch <= 1 || !p.keep_activations_on_chip) return segs;
  const auto live = whole_batch_live_bytes(g);
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
