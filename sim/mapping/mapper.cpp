// Tiling and scheduling of layers onto the NPU units (docs/mapping.md).
#include "sim/mapping/mapper.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "sim/ir/error.h"

namespace npusim::mapping {

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::Dma: return "dma";
    case Unit::PeArray: return "pe_array";
    case Unit::Vector: return "vector";
    case Unit::Host: return "host";
  }
  return "?";
}

const char* bound_name(Bound b) {
  switch (b) {
    case Bound::Compute: return "compute";
    case Bound::Memory: return "memory";
    case Bound::Vector: return "vector";
    case Bound::Host: return "host";
  }
  return "?";
}

MapperParams MapperParams::read(const config::HwConfig& c) {
  MapperParams p;
  p.l2_bytes = c.get_int("npu.l2.size_kib") * 1024;
  p.l2_weight_bytes = static_cast<int64_t>(p.l2_bytes * c.get_double("npu.l2.weight_share"));
  p.l2_act_bytes = p.l2_bytes - p.l2_weight_bytes;
  p.weight_buffer_bytes = c.get_int("npu.weight_buffer.size_kib") * 1024;
  p.weight_prefetch_layers = static_cast<int>(c.get_int("mapping.weight_prefetch_layers"));
  p.staged_prefetch_layers = static_cast<int>(c.get_int("mapping.staged_prefetch_layers"));
  p.serialize_layers = c.get_bool("mapping.serialize_layers");
  p.keep_activations_on_chip = c.get_bool("mapping.keep_activations_on_chip");
  const double bytes_per_cycle = c.get_double("host.bandwidth_gbps") / c.clock_ghz();
  p.host_cycles_per_byte = 1.0 / bytes_per_cycle;
  p.host_op_cycles = static_cast<int64_t>(std::llround(c.get_double("host.op_overhead_us") * 1000 * c.clock_ghz()));
  return p;
}

namespace {

using ir::Layer;
using ir::Shape;

int64_t bytes_of(const Shape& s, ir::DType t) { return ir::num_elements(s) * ir::dtype_bytes(t); }

// Dimensions of an activation as N, C, H, W (2-D tensors are [N, C] = [N, C, 1, 1]).
struct Nchw {
  int64_t n = 1, c = 1, h = 1, w = 1;
};
Nchw nchw(const Shape& s) {
  Nchw r;
  if (s.size() >= 1) r.n = s[0];
  if (s.size() >= 2) r.c = s[1];
  if (s.size() >= 3) r.h = s[2];
  if (s.size() >= 4) r.w = s[3];
  if (s.size() > 4)
    for (size_t i = 4; i < s.size(); ++i) r.w *= s[i];
  return r;
}

// A row tile: `images` whole images, or `rows` output rows of one image.
struct RowTiling {
  int64_t tiles = 1;
  int64_t out_rows_per_tile = 1;  // rows of N*Ho covered by one tile (last may be shorter)
};

// The shapes the PE array sees for a matmul: a 1x1 convolution. MatMul with a shared [K,N]
// operand: [M_total, K, 1, 1] x [N, K, 1, 1]; a batched operand: a grouped 1x1 convolution
// with one group per batch element, rows of M as pixels (docs/mapping.md#matmul).
Layer gemm_view(const Layer& l) {
  Layer v = l;
  const Shape &a = l.input_shapes[0], &b = l.input_shapes[1], &y = l.output_shapes[0];
  const int64_t m = y[y.size() - 2], n = y.back();
  const int64_t k = l.transpose_a ? a[a.size() - 2] : a.back();
  const int64_t groups = ir::num_elements(y) / (m * n);
  if (b.size() == 2) {
    v.input_shapes[0] = {groups * m, k, 1, 1};
    v.input_shapes[1] = {n, k, 1, 1};
    v.output_shapes[0] = {groups * m, n, 1, 1};
    v.groups = 1;
  } else {
    v.input_shapes[0] = {1, groups * k, m, 1};
    v.input_shapes[1] = {groups * n, k, 1, 1};
    v.output_shapes[0] = {1, groups * n, m, 1};
    v.groups = static_cast<int>(groups);
  }
  if (v.input_shapes.size() > 2) v.input_shapes[2] = {n};
  return v;
}

// Elements of a tensor as the VP vectorizes them: `channels` along a vector, `pixels` vectors'
// worth of positions. NCHW tensors of the Frontend IR's ops vectorize C; others the last dim.
std::pair<int64_t, int64_t> vp_extent(const Shape& s, bool nchw_layout) {
  if (nchw_layout) {
    const Nchw d = nchw(s);
    return {d.c, d.n * d.h * d.w};
  }
  const int64_t e = ir::num_elements(s);
  const int64_t last = s.empty() || s.back() == 1 ? e : s.back();
  return {last, e / std::max<int64_t>(1, last)};
}

// Row tiles run over output rows N x Ho for the Frontend IR's (NCHW, window) ops and the PE
// array's views; every other op over the rows of its larger tensor (every dim but the last),
// so a reduction to one row still tiles over its input.
bool window_rows(const Layer& l) { return ir::is_frontend_ir_native(l.op) || ir::runs_on_pe_array(l.op); }

int64_t row_count(const Layer& l) {
  const Shape& out = l.output_shapes.empty() ? Shape{1} : l.output_shapes[0];
  if (window_rows(l)) {
    const Nchw on = nchw(out);
    return on.n * on.h;
  }
  auto rows = [](const Shape& s) { return s.size() < 2 ? int64_t{1} : ir::num_elements(s) / s.back(); };
  return std::max<int64_t>(1, std::max(rows(out), l.input_shapes.empty() ? 1 : rows(l.input_shapes[0])));
}

// Elements in one normalized row (softmax axis, layer_norm trailing axes, reduced axes).
int64_t row_length(const Layer& l) {
  const Shape& x = l.input_shapes[0];
  std::vector<int64_t> axes = l.axes;
  if (axes.empty()) axes = {-1};
  int64_t len = 1;
  for (int64_t a : axes) len *= x[a < 0 ? a + static_cast<int64_t>(x.size()) : a];
  return std::max<int64_t>(1, len);
}

class Mapper {
 public:
  Mapper(const ir::Graph& g, const config::HwConfig& c)
      : m_graph(g), m_cfg(c), m_p(MapperParams::read(c)), m_pe(models::PeArrayParams::read(c)) {}

  Program run() {
    count_consumers();
    const auto segments = plan_segments();
    size_t i = 0;
    for (const auto& seg : segments) {
      for (; i < seg.first; ++i) map_layer(m_graph.layers[i], Instance{});
      map_segment(seg);
      i = seg.first + seg.count;
    }
    for (; i < m_graph.layers.size(); ++i) map_layer(m_graph.layers[i], Instance{});
    return std::move(m_prog);
  }

  // ---- Batch groups (docs/mapping.md#batch-groups) ----
  // A run of layers whose whole-batch activations do not fit the L2 activation share runs
  // depth-first on groups of images: every layer of the run for images [0, nb), then again for
  // [nb, 2nb)... Intermediates of one group stay on chip; weights load once, for the first group.
  struct Segment {
    size_t first = 0, count = 0;
    int64_t group = 1;  // images per group
  };

  // Activation bytes live while each layer runs, if everything stayed on chip (whole batch).
  std::vector<int64_t> whole_batch_live_bytes() const {
    const size_t n = m_graph.layers.size();
    std::map<std::string, size_t> last_use;
    for (size_t i = 0; i < n; ++i)
      for (const auto& p : m_graph.layers[i].previous) last_use[p] = i;
    std::vector<int64_t> out(n, 0), live(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const Layer& l = m_graph.layers[i];
      if (!l.output_shapes.empty())
        out[i] = bytes_of(l.output_shapes[0], l.output_dtypes.empty() ? ir::DType::Int8 : l.output_dtypes[0]);
    }
    for (size_t i = 0; i < n; ++i) {
      int64_t b = out[i];
      for (size_t j = 0; j < i; ++j) {
        auto it = last_use.find(m_graph.layers[j].name);
        if (it != last_use.end() && it->second >= i) b += out[j];
      }
      live[i] = b;
    }
    return live;
  }

  std::vector<Segment> plan_segments() const {
    std::vector<Segment> segs;
    const int64_t batch = m_graph.batch();
    if (batch <= 1 || !m_p.keep_activations_on_chip) return segs;
    const auto live = whole_batch_live_bytes();
    const int64_t weight_store = m_p.weight_buffer_bytes + m_p.l2_weight_bytes;
    Segment cur;
    int64_t cur_weights = 0;
    auto close = [&] {
      if (cur.count > 0 && cur.group < batch) segs.push_back(cur);
      cur = Segment{};
      cur_weights = 0;
    };
    // Consecutive NPU layers form runs while their weights fit the weight storage together (they
    // stay resident while every group passes); a run's group is set by its tightest layer.
    for (size_t i = 0; i < m_graph.layers.size(); ++i) {
      const Layer& l = m_graph.layers[i];
      // Batch groups are the Gemini compiler's schedule for its own (CNN) operations.
      if (l.device != ir::Device::Npu || !ir::is_frontend_ir_native(l.op)) {
        close();
        continue;
      }
      if (cur_weights + l.weight_bytes() > weight_store) close();
      const int64_t per_image = ceil_div(live[i], batch);
      const int64_t nb = std::max<int64_t>(1, m_p.l2_act_bytes / std::max<int64_t>(1, per_image));
      if (cur.count == 0) cur = Segment{i, 0, batch};
      cur.count++;
      cur.group = std::min(cur.group, nb);
      cur_weights += l.weight_bytes();
    }
    close();
    return segs;
  }

  static Shape with_batch(Shape s, int64_t batch, int64_t nb) {
    if (!s.empty() && s[0] == batch) s[0] = nb;
    return s;
  }

  void map_segment(const Segment& seg) {
    const int64_t batch = m_graph.batch();
    std::set<std::string> inside;
    for (size_t i = seg.first; i < seg.first + seg.count; ++i) inside.insert(m_graph.layers[i].name);
    auto group_name = [](const std::string& n, int64_t g) { return n + "#g" + std::to_string(g); };
    std::map<std::string, int> plan_slot;
    const int64_t groups = ceil_div(batch, seg.group);
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t nb = std::min(seg.group, batch - g * seg.group);
      for (size_t i = seg.first; i < seg.first + seg.count; ++i) {
        Layer l = m_graph.layers[i];
        const std::string orig = l.name;
        const bool weights = ir::runs_on_pe_array(l.op);
        for (size_t j = 0; j < l.input_shapes.size(); ++j)
          if (!(weights && j == 1)) l.input_shapes[j] = with_batch(l.input_shapes[j], batch, nb);
        for (auto& s : l.output_shapes) s = with_batch(s, batch, nb);
        for (auto& m : l.gemini.modules) {
          for (auto& s : m.input_shapes) s = with_batch(s, batch, nb);
          for (auto& s : m.output_shapes) s = with_batch(s, batch, nb);
        }
        for (auto& p : l.previous)
          if (inside.count(p)) p = group_name(p, g);
        bool outside_consumer = false;
        int inside_consumers = 0;
        for (auto& n : l.next) {
          if (inside.count(n)) n = group_name(n, g), inside_consumers++;
          else outside_consumer = true;
        }
        l.name = group_name(orig, g);
        m_consumers[l.name] = inside_consumers;
        Instance inst;
        inst.plan_slot = g == 0 ? -1 : plan_slot.at(orig);
        inst.group = g;
        inst.orig_name = orig;
        inst.force_store = outside_consumer;
        const int slot = map_layer(l, inst);
        if (g == 0) plan_slot[orig] = slot;
      }
    }
    // Outside consumers read each run output from DRAM, once every group has stored its part.
    for (size_t i = seg.first; i < seg.first + seg.count; ++i) {
      const Layer& l = m_graph.layers[i];
      const TensorState& last_group = m_tensors.at(group_name(l.name, groups - 1));
      TensorState t;
      t.in_l2 = false;
      t.in_dram = true;
      t.bytes = l.output_shapes.empty() ? 0 : bytes_of(l.output_shapes[0], l.output_dtypes.empty() ? ir::DType::Int8 : l.output_dtypes[0]);
      int outside = 0;
      for (const auto& n : l.next)
        if (!inside.count(n) && m_graph.find(n)) outside++;
      t.remaining_consumers = outside;
      t.last_cmd = last_group.last_cmd;
      t.store_cmd = last_group.store_cmd;
      m_tensors[l.name] = t;
      // Inputs from before the run were consumed once per group; count them once.
      for (const auto& p : l.previous) {
        if (inside.count(p)) continue;
        auto it = m_tensors.find(p);
        if (it != m_tensors.end()) it->second.remaining_consumers = std::max(0, it->second.remaining_consumers + static_cast<int>(groups) - 1 - static_cast<int>(groups - 1));
      }
    }
  }

 private:
  struct TensorState {
    bool in_l2 = false;
    bool in_dram = false;
    int64_t bytes = 0;
    int remaining_consumers = 0;
    int last_cmd = -1;   // command after which the tensor is complete (in L2 or in DRAM)
    int store_cmd = -1;  // last store to DRAM, if any
  };

  void count_consumers() {
    for (const auto& l : m_graph.layers) {
      for (const auto& p : l.previous)
        if (m_graph.find(ir::edge_layer(p))) m_consumers[ir::edge_layer(p)]++;
    }
  }

  int add(Command c) {
    c.id = static_cast<int>(m_prog.commands.size());
    std::sort(c.deps.begin(), c.deps.end());
    c.deps.erase(std::unique(c.deps.begin(), c.deps.end()), c.deps.end());
    c.deps.erase(std::remove(c.deps.begin(), c.deps.end(), -1), c.deps.end());
    m_prog.commands.push_back(std::move(c));
    return m_prog.commands.back().id;
  }

  int64_t live_l2_bytes(const std::set<std::string>& except) const {
    int64_t b = 0;
    for (const auto& [name, t] : m_tensors)
      if (t.in_l2 && t.remaining_consumers > 0 && !except.count(name)) b += t.bytes;
    return b;
  }

  // Producer layers (and graph inputs) feeding the activation inputs of l, with the input
  // position each feeds.
  struct ActInput {
    std::string name;
    size_t pos = 0;
  };
  std::vector<ActInput> activation_inputs(const Layer& l) const {
    std::vector<ActInput> r;
    for (size_t j = 0; j < l.previous.size(); ++j) {
      // Parameters (weights, biases, constants) are not activations; a graph built without
      // a tensor table falls back on the Frontend IR's naming convention.
      const bool param = j < l.inputs.size() ? m_graph.tensor(l.inputs[j]).is_parameter()
                                             : ir::is_constant_name(l.previous[j]) && !m_graph.find(l.previous[j]);
      if (!param) r.push_back({ir::edge_layer(l.previous[j]), j});  // "split:1" -> the split's state
    }
    return r;
  }

  // One mapped instance of a layer: the whole batch, or one group of a batch-group run.
  struct Instance {
    int plan_slot = -1;       // LayerPlan to add to (-1: a new one)
    int64_t group = 0;
    std::string orig_name;    // the layer's own name (instances are renamed "<name>#g<k>")
    bool force_store = false; // consumers outside the run read this output from DRAM
  };

  // Maps one layer (instance); returns its LayerPlan index.
  int map_layer(const Layer& orig, const Instance& inst) {
    // Matmuls run on the PE array as 1x1 convolutions over a view of their shapes.
    std::optional<Layer> view;
    if (orig.op == ir::OpKind::MatMul || orig.op == ir::OpKind::BatchMatMul) view = gemm_view(orig);
    const Layer& l = view ? *view : orig;
    m_inst = inst;
    LayerPlan plan;
    plan.layer_index = l.index;
    plan.name = inst.orig_name.empty() ? l.name : inst.orig_name;
    plan.op = ir::op_name(l.op);
    plan.on_host = l.device == ir::Device::Cpu;
    plan.macs = orig.macs();  // the op's own count (the view is a 1x1 convolution)
    plan.weight_bytes = l.weight_bytes();
    const ir::DType in_t = l.input_dtypes.empty() ? ir::DType::Int8 : l.input_dtypes[0];
    const ir::DType out_t = l.output_dtypes.empty() ? in_t : l.output_dtypes[0];
    plan.dtype = in_t;
    plan.peak_macs_per_cycle = static_cast<int64_t>(m_pe.peak_macs_per_cycle(in_t));

    // Activation inputs: layer producers and graph inputs (by position in previous_layer). A
    // GEMM's second operand, when an activation (attention's K and V), is loaded like a weight.
    std::vector<std::string> inputs;
    std::vector<int64_t> in_sizes;
    m_operand = {};
    for (const ActInput& a : activation_inputs(l)) {
      if (a.pos >= l.input_shapes.size()) continue;
      if (ir::runs_on_pe_array(l.op) && a.pos >= 1) {
        if (a.pos == 1) m_operand.source = a.name;
        continue;
      }
      int64_t b = bytes_of(l.input_shapes[a.pos], a.pos < l.input_dtypes.size() ? l.input_dtypes[a.pos] : in_t);
      inputs.push_back(a.name);
      in_sizes.push_back(b);
      plan.in_bytes += b;
    }
    if (!m_operand.source.empty()) {
      auto it = m_tensors.find(m_operand.source);
      if (it != m_tensors.end()) {
        m_operand.on_chip = it->second.in_l2;
        m_operand.ready = it->second.in_l2 ? it->second.last_cmd
                                           : (it->second.store_cmd >= 0 ? it->second.store_cmd : it->second.last_cmd);
      }
    }
    if (!l.output_shapes.empty()) plan.out_bytes = bytes_of(l.output_shapes[0], out_t);
    const int layer_id = inst.plan_slot >= 0 ? inst.plan_slot : static_cast<int>(m_prog.layers.size());

    // Where do the inputs come from, and what must finish first?
    std::vector<int> input_deps;
    int64_t resident_in = 0, dram_in = 0;
    std::set<std::string> own;
    for (size_t j = 0; j < in_sizes.size(); ++j) {
      const std::string& src = inputs[j];
      own.insert(src);
      auto it = m_tensors.find(src);
      if (it == m_tensors.end()) {  // graph input: in DRAM from the start
        dram_in += in_sizes[j];
        continue;
      }
      const TensorState& t = it->second;
      if (t.in_l2 && !plan.on_host) {
        resident_in += in_sizes[j];
        input_deps.push_back(t.last_cmd);
      } else {
        dram_in += in_sizes[j];
        input_deps.push_back(t.store_cmd >= 0 ? t.store_cmd : t.last_cmd);
      }
    }
    if (!m_operand.source.empty()) {
      own.insert(m_operand.source);
      if (m_operand.on_chip) resident_in += plan.weight_bytes;
    }
    plan.input_from_dram = dram_in > 0;
    // A scheduler that issues one layer at a time: the layer waits for the previous NPU layer.
    if (m_p.serialize_layers && !plan.on_host && !m_npu_layer_last.empty()) input_deps.push_back(m_npu_layer_last.back());

    // Consumers that need the output in DRAM: graph outputs and host layers.
    bool needs_dram_copy = false;
    for (const auto& n : l.next) {
      const Layer* c = m_graph.find(n.substr(0, n.find("#g")));  // batch-group instances: "<name>#g<k>"
      if (!c || c->device == ir::Device::Cpu) needs_dram_copy = true;
    }
    if (inst.force_store) needs_dram_copy = true;

    if (plan.on_host) {
      Command c;
      c.unit = Unit::Host;
      c.layer = layer_id;
      c.label = l.name;
      c.host_cycles = m_p.host_op_cycles +
                      static_cast<int64_t>(std::ceil((plan.in_bytes + plan.out_bytes) * m_p.host_cycles_per_byte));
      c.deps = input_deps;
      int id = add(std::move(c));
      record_plan(plan, layer_id);
      finish_layer(l, id, /*in_l2=*/false, /*store=*/id, plan.out_bytes);
      return layer_id;
    }

    // Keep the output in L2 when it fits beside everything still live.
    int64_t live_other = live_l2_bytes(own);
    bool keep = m_p.keep_activations_on_chip && !needs_dram_copy &&
                live_other + resident_in + plan.out_bytes <= m_p.l2_act_bytes;
    // Row tiling: what streams through L2 (from or to DRAM) must fit, double-buffered.
    const Shape out_shape = l.output_shapes.empty() ? Shape{1} : l.output_shapes[0];
    const int64_t total_rows = row_count(l);
    auto plan_rows = [&](bool keep_out) -> std::optional<RowTiling> {
      const int64_t fixed = live_other + resident_in + (keep_out ? plan.out_bytes : 0);
      const int64_t stream_total = dram_in + (keep_out ? 0 : plan.out_bytes);
      if (fixed > m_p.l2_act_bytes) return std::nullopt;
      const int64_t space = m_p.l2_act_bytes - fixed;
      if (stream_total == 0) return RowTiling{1, total_rows};
      for (int64_t t = 1; t <= total_rows; t = (t < total_rows && t * 2 > total_rows) ? total_rows : t * 2) {
        const int64_t rows = ceil_rows(total_rows, t);
        // A tile's input includes its halo rows: (rows-1)*stride + kernel per image.
        const int64_t per_tile = tile_stream_bytes(l, rows, dram_in, keep_out ? 0 : plan.out_bytes, total_rows);
        if (2 * per_tile <= space) return RowTiling{ceil_div(total_rows, rows), rows};
        if (t == total_rows) break;
      }
      return std::nullopt;
    };
    std::optional<RowTiling> tiling = plan_rows(keep);
    if (!tiling && keep) {
      keep = false;
      tiling = plan_rows(false);
    }
    // Last resort: spill other live tensors to DRAM, the longest-resident first, until this
    // layer fits (docs/mapping.md, step 2). The stores are charged to this layer.
    while (!tiling) {
      const int spilled = spill_oldest(own, layer_id);
      if (spilled < 0) break;
      input_deps.push_back(spilled);  // the space is free once the store has read it
      live_other = live_l2_bytes(own);
      keep = m_p.keep_activations_on_chip && !needs_dram_copy && live_other + resident_in + plan.out_bytes <= m_p.l2_act_bytes;
      tiling = plan_rows(keep);
      if (!tiling && keep) {
        keep = false;
        tiling = plan_rows(false);
      }
    }
    if (!tiling)
      throw InputError(m_cfg.source(), "npu.l2.size_kib",
                       "L2 buffer too small for layer " + l.name + " (needs " +
                           std::to_string((live_other + resident_in + 2 * tile_stream_bytes(l, 1, dram_in, plan.out_bytes, total_rows)) / 1024) +
                           " KiB for activations beside the weight share)");
    plan.output_to_dram = !keep || needs_dram_copy;
    plan.row_tiles = static_cast<int>(tiling->tiles);
    plan.l2_act_bytes = live_other + resident_in + (keep ? plan.out_bytes : 0);

    int last = -1, store = -1;
    if (ir::runs_on_pe_array(l.op))
      emit_pe_layer(l, plan, layer_id, *tiling, input_deps, dram_in, keep, needs_dram_copy, last, store);
    else
      emit_vp_layer(l, plan, layer_id, *tiling, input_deps, dram_in, keep, needs_dram_copy, last, store);
    record_plan(plan, layer_id);
    m_npu_layer_last.push_back(last);
    if (m_inst.group > 0 && ir::runs_on_pe_array(l.op)) {
      // The run's weights stay resident until its last group is done.
      for (auto& w : m_weight_layers)
        if (w.name == m_inst.orig_name) w.last_cmd = last;
    }
    if (m_pending_weight.last_cmd >= 0) {
      m_pending_weight.last_cmd = last;
      m_weight_layers.push_back(m_pending_weight);
      m_pending_weight = {};
    }
    finish_layer(l, last, keep, store, plan.out_bytes);
    return layer_id;
  }

  // Stores the live on-chip tensor that has been in L2 longest (not one of `except`) to DRAM and
  // frees its space; returns the store command, or -1 when there is nothing to spill.
  int spill_oldest(const std::set<std::string>& except, int layer_id) {
    TensorState* victim = nullptr;
    std::string name;
    for (auto& [n, t] : m_tensors)
      if (t.in_l2 && t.remaining_consumers > 0 && !except.count(n) && (!victim || t.last_cmd < victim->last_cmd))
        victim = &t, name = n;
    if (!victim) return -1;
    Command st;
    st.unit = Unit::Dma;
    st.layer = layer_id;
    st.label = name + " spill";
    st.dma = {models::DmaKind::StoreActivations, victim->bytes, 1};
    st.deps = {victim->last_cmd};
    victim->store_cmd = add(std::move(st));
    victim->in_l2 = false;
    victim->in_dram = true;
    return victim->store_cmd;
  }

  // A new layer's plan, or one more batch group added to its layer's plan.
  void record_plan(const LayerPlan& plan, int slot) {
    if (slot == static_cast<int>(m_prog.layers.size())) {
      m_prog.layers.push_back(plan);
      m_prog.layers.back().batch_groups = 1;
      return;
    }
    LayerPlan& p = m_prog.layers[slot];
    p.macs += plan.macs;
    p.in_bytes += plan.in_bytes;
    p.out_bytes += plan.out_bytes;
    p.input_from_dram = p.input_from_dram || plan.input_from_dram;
    p.output_to_dram = p.output_to_dram || plan.output_to_dram;
    p.row_tiles += plan.row_tiles;
    p.l2_act_bytes = std::max(p.l2_act_bytes, plan.l2_act_bytes);
    p.batch_groups++;
  }

  static int64_t ceil_rows(int64_t total, int64_t tiles) { return ceil_div(total, tiles); }
  static int64_t ceil_div(int64_t a, int64_t b) { return models::ceil_div(a, b); }

  // Bytes that stream through L2 for one row tile of `rows` output rows.
  int64_t tile_stream_bytes(const Layer& l, int64_t rows, int64_t dram_in, int64_t out_stream,
                            int64_t total_rows) const {
    const double frac = static_cast<double>(rows) / static_cast<double>(std::max<int64_t>(1, total_rows));
    int64_t in_part = static_cast<int64_t>(std::ceil(dram_in * frac));
    if (dram_in > 0 && !l.input_shapes.empty() && !l.output_shapes.empty() && window_rows(l)) {
      const Nchw in = nchw(l.input_shapes[0]), out = nchw(l.output_shapes[0]);
      if (rows < out.h) {  // rows of one image: add the window halo
        const int64_t in_rows = std::min<int64_t>(in.h, (rows - 1) * l.stride[0] + std::max(l.kernel[0], l.pool[0]));
        in_part = std::min(dram_in, static_cast<int64_t>(std::ceil(dram_in * static_cast<double>(in_rows) / (in.h * in.n))));
      }
    }
    return in_part + static_cast<int64_t>(std::ceil(out_stream * frac));
  }

  // What the first weight load of the current layer waits for (docs/mapping.md#weights).
  // Weights that fit half the WL0 weight buffer go straight into it and may load once the
  // layer `weight_prefetch_layers` earlier (any kind) finished. Larger weights are staged in
  // the L2 weight share: they may load once the weight layer `staged_prefetch_layers` earlier
  // finished and once enough earlier staged weights have been consumed to make room.
  std::vector<int> prefetch_deps(int64_t bytes, bool& staged) {
    std::vector<int> deps;
    const int n = static_cast<int>(m_npu_layer_last.size());
    staged = bytes > m_p.weight_buffer_bytes / 2;
    if (!staged) {
      const int d = std::max(1, m_p.weight_prefetch_layers);
      if (n - d >= 0) deps.push_back(m_npu_layer_last[n - d]);
      return deps;
    }
    const int w = static_cast<int>(m_weight_layers.size());
    const int d = std::max(1, m_p.staged_prefetch_layers);
    if (w - d >= 0) deps.push_back(m_weight_layers[w - d].last_cmd);
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

  void emit_pe_layer(const Layer& l, LayerPlan& plan, int layer_id, const RowTiling& tiling,
                     const std::vector<int>& input_deps, int64_t dram_in, bool keep, bool copy_out,
                     int& last, int& store) {
    const Shape& w = l.input_shapes.size() > 1 ? l.input_shapes[1] : Shape{1, 1, 1, 1};
    const int64_t groups = std::max(1, l.groups);
    const int64_t k_total = w.empty() ? 1 : w[0];
    int64_t red = 1;
    for (size_t i = 1; i < w.size(); ++i) red *= w[i];
    const ir::DType wt = l.input_dtypes.size() > 1 ? l.input_dtypes[1] : plan.dtype;
    const int64_t bytes_per_k = red * ir::dtype_bytes(wt);
    // K chunks: a chunk's weights must fit half the weight storage (double buffering).
    const int64_t weight_store = m_p.weight_buffer_bytes + m_p.l2_weight_bytes;
    int64_t k_chunk = k_total;
    if (plan.weight_bytes > weight_store / 2 && groups == 1) {
      k_chunk = std::max<int64_t>(1, (weight_store / 2) / std::max<int64_t>(1, bytes_per_k));
      if (k_chunk >= m_pe.rows) k_chunk -= k_chunk % m_pe.rows;
      k_chunk = std::min(k_chunk, k_total);
    }
    const int64_t k_chunks = ceil_div(k_total, k_chunk);
    plan.k_chunks = static_cast<int>(k_chunks);
    const Nchw out = nchw(l.output_shapes[0]);
    const int64_t total_rows = row_count(l);
    const int64_t r = w.size() > 2 ? w[2] : 1, s = w.size() > 3 ? w[3] : 1;
    const int64_t c_per_group = w.size() > 1 ? w[1] : 1;

    // The array reads only the input pixels some window touches: a 1x1 stride-2 conv reads a
    // quarter of its input.
    const Nchw in = nchw(l.input_shapes[0]);
    const double touched_h = std::min<double>(in.h, static_cast<double>(out.h) * std::min<int64_t>(r, l.stride[0]));
    const double touched_w = std::min<double>(in.w, static_cast<double>(out.w) * std::min<int64_t>(s, l.stride[1]));
    const double read_fraction = (touched_h * touched_w) / std::max<double>(1.0, static_cast<double>(in.h * in.w));
    bool staged = false;
    const bool reuse = m_inst.group > 0 && k_chunks == 1;
    const std::vector<int> first_deps =
        reuse ? std::vector<int>{} : prefetch_deps(std::min(plan.weight_bytes, k_chunk * bytes_per_k), staged);
    std::vector<int> pe_of_chunk;
    for (int64_t kc = 0; kc < k_chunks; ++kc) {
      const int64_t k0 = kc * k_chunk, kn = std::min(k_chunk, k_total - k0);
      int wid;
      if (m_inst.group > 0 && k_chunks == 1) {
        wid = m_weight_cmd.at(m_inst.orig_name);  // resident since the run's first group
      } else {
        Command wl;
        wl.unit = Unit::Dma;
        wl.layer = layer_id;
        wl.label = plan.name + " weights k" + std::to_string(k0) + "+" + std::to_string(kn);
        wl.dma = {m_operand.on_chip ? models::DmaKind::L2ToWeightBuffer : models::DmaKind::LoadWeights, kn * bytes_per_k, kn};
        if (kc <= 1) wl.deps = first_deps;
        if (m_operand.ready >= 0) wl.deps.push_back(m_operand.ready);  // the operand's producer
        if (kc >= 2) wl.deps.push_back(pe_of_chunk[kc - 2]);  // double-buffered chunks
        wid = add(std::move(wl));
        if (k_chunks == 1) m_weight_cmd[plan.name] = wid;
      }
      int prev_pe = -1;
      for (int64_t t = 0; t < tiling.tiles; ++t) {
        const int64_t row0 = t * tiling.out_rows_per_tile;
        const int64_t rows = std::min(tiling.out_rows_per_tile, total_rows - row0);
        const double frac = static_cast<double>(rows) / total_rows;
        std::vector<int> deps = input_deps;
        deps.push_back(wid);
        if (dram_in > 0) {
          deps.push_back(emit_act_load(l, layer_id, row0, rows, tile_stream_bytes(l, rows, dram_in, 0, total_rows),
                                       input_deps, prev_pe));
        }
        Command pe;
        pe.unit = Unit::PeArray;
        pe.layer = layer_id;
        pe.label = l.name + " k" + std::to_string(k0) + "+" + std::to_string(kn) + " rows " +
                   std::to_string(row0) + "+" + std::to_string(rows);
        pe.pe.k = kn / groups > 0 ? kn / groups : kn;
        pe.pe.groups = groups;
        if (groups > 1) pe.pe.k = std::max<int64_t>(1, kn / groups);
        pe.pe.c = c_per_group;
        pe.pe.r = r;
        pe.pe.s = s;
        pe.pe.pixels = rows * out.w;
        pe.pe.dtype = plan.dtype;
        pe.pe.in_bytes = static_cast<int64_t>(std::ceil(plan.in_bytes * frac * read_fraction));
        pe.pe.out_bytes = static_cast<int64_t>(std::ceil(plan.out_bytes * frac * kn / k_total));
        pe.pe.weight_bytes = kn * bytes_per_k;
        pe.deps = deps;
        prev_pe = add(std::move(pe));
        last = prev_pe;
        if (!keep || copy_out) {
          store = emit_store(l, layer_id, row0, rows, static_cast<int64_t>(std::ceil(plan.out_bytes * frac * kn / k_total)), out.c, prev_pe);
          last = std::max(last, store);
        }
      }
      pe_of_chunk.push_back(prev_pe);
    }
    if (!reuse) m_pending_weight = {plan.name, last, staged ? std::min(plan.weight_bytes, k_chunk * bytes_per_k) : 0};
  }

  void emit_vp_layer(const Layer& l, LayerPlan& plan, int layer_id, const RowTiling& tiling,
                     const std::vector<int>& input_deps, int64_t dram_in, bool keep, bool copy_out,
                     int& last, int& store) {
    const Nchw out = nchw(l.output_shapes.empty() ? Shape{1} : l.output_shapes[0]);
    const int64_t total_rows = row_count(l);
    // Stage work for the whole layer: the module_list (one pass), or the op's passes
    // (models/npu/vector_processor_timing.cpp, docs/timing.md#vector-ops).
    std::vector<std::vector<models::VpStageWork>> passes;
    std::vector<bool> per_row;
    int64_t elem_bytes = 1;
    for (auto t : l.input_dtypes) elem_bytes = std::max<int64_t>(elem_bytes, ir::dtype_bytes(t));
    for (auto t : l.output_dtypes) elem_bytes = std::max<int64_t>(elem_bytes, ir::dtype_bytes(t));
    // Constant operands (avg pool's scalar) are not streamed.
    if (l.op == ir::OpKind::AvgPool2d && !l.input_dtypes.empty()) elem_bytes = std::max<int64_t>(1, ir::dtype_bytes(l.input_dtypes[0]));
    const bool native = ir::is_frontend_ir_native(l.op) || l.op == ir::OpKind::GlobalAvgPool2d || l.op == ir::OpKind::GlobalMaxPool2d;
    if (!l.gemini.modules.empty()) {
      passes.emplace_back();
      per_row.push_back(false);
      for (const auto& m : l.gemini.modules) {
        const Shape& s = !m.input_shapes.empty() ? m.input_shapes[0]
                         : !l.input_shapes.empty() ? l.input_shapes[0] : Shape{1};
        const Nchw d = nchw(s);
        passes.back().push_back({m.kind, d.c, d.n * d.h * d.w, elem_bytes});
      }
    } else {
      // post_cal works on the output, every other stage on the input (or, for element-wise ops
      // that broadcast, on the output's elements).
      const Shape& in_s = l.input_shapes.empty() ? Shape{1} : l.input_shapes[0];
      const Shape& out_s = l.output_shapes.empty() ? in_s : l.output_shapes[0];
      const Shape& data_s = ir::op_class(l.op) == ir::OpClass::Elementwise && !native ? out_s : in_s;
      const int64_t rows = std::max<int64_t>(1, ir::num_elements(in_s) / row_length(l));
      for (const auto& pass : models::vp_op_passes(l.op)) {
        passes.emplace_back();
        per_row.push_back(pass.per_row);
        for (const auto& k : pass.stages) {
          const auto [c, px] = pass.per_row ? std::pair<int64_t, int64_t>{rows, 1}
                                            : vp_extent(k == "post_cal" ? out_s : data_s, native);
          passes.back().push_back({k, c, px, elem_bytes});
        }
      }
    }
    if (passes.empty()) {  // data movement through the VP's L2 port, or an opaque op
      passes.emplace_back();
      per_row.push_back(false);
    }
    // Opaque ops: compute at the NPU's peak rate (2 flops per MAC); their bytes stream from DRAM.
    const int64_t opaque_cycles =
        l.op == ir::OpKind::Opaque ? ceil_div(l.opaque_flops, std::max<int64_t>(1, 2 * plan.peak_macs_per_cycle)) : 0;
    int prev = -1;
    for (int64_t t = 0; t < tiling.tiles; ++t) {
      const int64_t row0 = t * tiling.out_rows_per_tile;
      const int64_t rows = std::min(tiling.out_rows_per_tile, total_rows - row0);
      const double frac = static_cast<double>(rows) / total_rows;
      std::vector<int> deps = input_deps;
      if (dram_in > 0) {
        deps.push_back(emit_act_load(l, layer_id, row0, rows, tile_stream_bytes(l, rows, dram_in, 0, total_rows),
                                     input_deps, prev));
      }
      if (l.op == ir::OpKind::Gather && !l.input_shapes.empty()) {
        // The looked-up rows of the table (a weight in DRAM), one segment per index.
        Command g;
        g.unit = Unit::Dma;
        g.layer = layer_id;
        g.label = l.name + " gather rows " + std::to_string(row0) + "+" + std::to_string(rows);
        g.dma = {models::DmaKind::LoadActivations, static_cast<int64_t>(std::ceil(plan.out_bytes * frac)),
                 std::max<int64_t>(1, static_cast<int64_t>(std::ceil(ir::num_elements(l.input_shapes.back()) * frac)))};
        g.deps = input_deps;
        if (prev >= 0) g.deps.push_back(prev);
        plan.in_bytes += g.dma.bytes;
        deps.push_back(add(std::move(g)));
      }
      int opaque_load = -1;
      if (l.op == ir::OpKind::Opaque && l.opaque_bytes > 0) {
        Command m;
        m.unit = Unit::Dma;
        m.layer = layer_id;
        m.label = l.name + " opaque bytes";
        m.dma = {models::DmaKind::LoadActivations, static_cast<int64_t>(std::ceil(l.opaque_bytes * frac)), 1};
        m.deps = input_deps;
        opaque_load = add(std::move(m));
      }
      const int64_t tile_in = static_cast<int64_t>(std::ceil(plan.in_bytes * frac));
      const int64_t tile_out = static_cast<int64_t>(std::ceil(plan.out_bytes * frac));
      for (size_t pi = 0; pi < passes.size(); ++pi) {
        const bool last_pass = pi + 1 == passes.size();
        Command vp;
        vp.unit = Unit::Vector;
        vp.layer = layer_id;
        vp.label = l.name + (passes.size() > 1 ? " pass " + std::to_string(pi + 1) : "") + " rows " +
                   std::to_string(row0) + "+" + std::to_string(rows);
        for (const auto& w : passes[pi])
          vp.vp.stages.push_back({w.kind, w.channels, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(w.pixels * frac))), w.elem_bytes});
        if (per_row[pi]) {
          // One value per row: the row count scales with the tile, not the pixel count.
          for (auto& st : vp.vp.stages) st.channels = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(st.channels * frac))), st.pixels = 1;
          vp.vp.l2_bytes = 0;  // per-row values stay in the VP's registers
        } else if (passes.size() == 1) {
          vp.vp.l2_bytes = static_cast<int64_t>(std::ceil((plan.in_bytes + plan.out_bytes) * frac));
        } else {
          // Every element pass reads the tile again; the last one writes the result.
          vp.vp.l2_bytes = tile_in + (last_pass ? tile_out : 0);
        }
        if (pi == 0) vp.vp.fixed_cycles = static_cast<int64_t>(std::ceil(opaque_cycles * frac));
        vp.deps = pi == 0 ? deps : std::vector<int>{prev};
        prev = add(std::move(vp));
      }
      if (opaque_load >= 0) {
        // Roofline: the op ends when both its compute and its bytes are done.
        Command join;
        join.unit = Unit::Vector;
        join.layer = layer_id;
        join.label = l.name + " roofline join";
        join.deps = {prev, opaque_load};
        prev = add(std::move(join));
      }
      last = prev;
      if (!keep || copy_out) {
        store = emit_store(l, layer_id, row0, rows, tile_out, out.c, prev);
        last = std::max(last, store);
      }
    }
  }

  // Stores one row tile's output to DRAM (one segment per channel) after `producer`.
  int emit_store(const Layer& l, int layer_id, int64_t row0, int64_t rows, int64_t bytes, int64_t channels, int producer) {
    Command st;
    st.unit = Unit::Dma;
    st.layer = layer_id;
    st.label = l.name + " store rows " + std::to_string(row0) + "+" + std::to_string(rows);
    st.dma = {models::DmaKind::StoreActivations, bytes, std::max<int64_t>(1, channels)};
    st.deps = {producer};
    return add(std::move(st));
  }

  // Loads one row tile's input from DRAM; waits for the producers and for the previous tile's
  // work (double buffering: one tile ahead).
  int emit_act_load(const Layer& l, int layer_id, int64_t row0, int64_t rows, int64_t bytes,
                    const std::vector<int>& input_deps, int prev_work) {
    Command la;
    la.unit = Unit::Dma;
    la.layer = layer_id;
    la.label = l.name + " act rows " + std::to_string(row0) + "+" + std::to_string(rows);
    la.dma = {models::DmaKind::LoadActivations, bytes,
              std::max<int64_t>(1, l.input_shapes.empty() ? 1 : nchw(l.input_shapes[0]).c)};
    la.deps = input_deps;
    if (prev_work >= 0) la.deps.push_back(prev_work);
    return add(std::move(la));
  }

  void finish_layer(const Layer& l, int last, bool in_l2, int store, int64_t out_bytes) {
    // Inputs consumed: free them when their last consumer is done.
    for (const auto& p : l.previous) {
      auto it = m_tensors.find(ir::edge_layer(p));
      if (it != m_tensors.end() && it->second.remaining_consumers > 0) it->second.remaining_consumers--;
    }
    TensorState t;
    t.in_l2 = in_l2;
    t.in_dram = store >= 0;
    t.bytes = out_bytes;
    t.remaining_consumers = m_consumers.count(l.name) ? m_consumers.at(l.name) : 0;
    t.last_cmd = last;
    t.store_cmd = store;
    m_tensors[l.name] = t;
  }

  const ir::Graph& m_graph;
  const config::HwConfig& m_cfg;
  MapperParams m_p;
  models::PeArrayParams m_pe;
  Program m_prog;
  std::map<std::string, int> m_consumers;
  std::map<std::string, TensorState> m_tensors;
  std::vector<int> m_npu_layer_last;  // last command of each NPU layer, in order
  struct WeightLayer {
    std::string name;
    int last_cmd = -1;         // the layer's last command: its weights are free after it
    int64_t staged_bytes = 0;  // bytes it holds in the L2 weight share (0: straight to WL0)
  };
  std::vector<WeightLayer> m_weight_layers;  // layers with weights, in order
  Instance m_inst;                           // the instance being mapped
  std::map<std::string, int> m_weight_cmd;   // a run's weight load, shared by its groups
  WeightLayer m_pending_weight;
  // A GEMM's second operand when it is an activation (attention's K, V): where it comes from.
  struct Operand {
    std::string source;    // producer layer or graph input; empty: a weight
    bool on_chip = false;  // in L2: moved into the weight buffer without DRAM
    int ready = -1;        // command after which it is complete
  } m_operand;
};

}  // namespace

Program map_graph(const ir::Graph& g, const config::HwConfig& c) { return Mapper(g, c).run(); }

}  // namespace npusim::mapping
