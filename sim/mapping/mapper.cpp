// Tiling and scheduling of layers onto the NPU units (docs/mapping.md).
#include "sim/mapping/mapper.h"

#include "sim/mapping/buffer_state.h"
#include "sim/mapping/prefetch.h"
#include "sim/mapping/segments.h"
#include "sim/mapping/tiling.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "sim/ir/error.h"

namespace npusim::mapping {

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::Dma: return "dma";
    case Unit::PeArray: return "pe_array";
    case Unit::Vector: return "vector";
    case Unit::Host: return "host";
    case Unit::Sync: return "sync";
  }
  return "?";
}

Bound layer_bound(int64_t pe_busy, int64_t vp_busy, int64_t stall) {
  if (stall > pe_busy && stall > vp_busy) return Bound::Memory;
  return pe_busy >= vp_busy ? Bound::Compute : Bound::Vector;
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

HostParams HostParams::read(const config::HwConfig& c) {
  HostParams p;
  const double bytes_per_cycle = c.get_double("host.bandwidth_gbps") / c.clock_ghz();
  p.cycles_per_byte = 1.0 / bytes_per_cycle;
  p.op_cycles = static_cast<int64_t>(std::llround(c.get_double("host.op_overhead_us") * 1000 * c.clock_ghz()));
  return p;
}

MapperParams MapperParams::read(const config::HwConfig& c, const models::BufferParams& buffers, const HostParams& host,
                                int cores) {
  MapperParams p;
  p.l2_bytes = buffers.l2_bytes;
  p.l2_weight_bytes = static_cast<int64_t>(p.l2_bytes * buffers.l2_weight_share);
  p.l2_act_bytes = p.l2_bytes - p.l2_weight_bytes;
  p.weight_buffer_bytes = buffers.weight_buffer_bytes;
  // The mapping.* keys bound to their fields (mapping.multicore's `fused` leaves Auto: the
  // fused chip is one core by then; mapping.multicore_layers is the mapper's to parse).
  config::read_bound(p, c, params());
  p.cores = cores;
  if (p.cores > 1) p.l2_act_bytes *= p.cores;  // a layer's tiles spread over every core's L2
  p.host_cycles_per_byte = host.cycles_per_byte;
  p.host_op_cycles = host.op_cycles;
  return p;
}

namespace {

using ir::Layer;
using ir::Shape;

class Mapper {
 public:
  Mapper(const ir::Graph& g, const config::HwConfig& c, const NpuParams& p)
      : m_graph(g), m_cfg(c), m_p(p.mapper), m_pe(p.pe), m_prefetch(m_p), m_vp_parallel_images(p.vp.parallel_images),
        m_max_bytes(p.max_program_bytes) {
    for (const Layer& l : g.layers) m_layer_named.emplace(l.name, &l);
    read_layer_splits();
  }

  Program run() {
    count_consumers();
    const bool pipeline = m_p.cores > 1 && m_p.multicore == MapperParams::Multicore::Pipeline;
    if (pipeline) plan_stages();
    const auto segments = pipeline ? pipeline_segments() : plan_segments(m_graph, m_p);
    m_live = whole_batch_live_bytes(m_graph);
    size_t i = 0;
    for (const auto& seg : segments) {
      for (; i < seg.first; ++i) map_layer(m_graph.layers[i], Instance{});
      map_segment(seg);
      i = seg.first + seg.count;
    }
    for (; i < m_graph.layers.size(); ++i) map_layer(m_graph.layers[i], Instance{});
    return std::move(m_prog);
  }

  // mapping.multicore: pipeline (docs/multicore.md#pipeline): consecutive layers in `cores`
  // stages of about equal MACs, stage k on core k, each stage's weights resident on its core.
  void plan_stages() {
    int64_t total = 0;
    for (const Layer& l : m_graph.layers) total += l.macs();
    int64_t before = 0;
    std::vector<int64_t> weights(static_cast<size_t>(m_p.cores), 0);
    for (const Layer& l : m_graph.layers) {
      const double mid = static_cast<double>(before) + static_cast<double>(l.macs()) / 2;
      const int stage = total > 0 ? std::min(m_p.cores - 1, static_cast<int>(mid * m_p.cores / static_cast<double>(total))) : 0;
      m_stage[l.index] = stage;
      weights[static_cast<size_t>(stage)] += l.weight_bytes();
      before += l.macs();
    }
    const int64_t store = m_p.weight_buffer_bytes + m_p.l2_weight_bytes;
    for (int s = 0; s < m_p.cores; ++s)
      if (weights[static_cast<size_t>(s)] > store)
        throw InputError(m_cfg.source(), "mapping.multicore",
                         "pipeline: stage " + std::to_string(s) + " of " + m_graph.name + " holds " +
                             std::to_string(weights[static_cast<size_t>(s)] >> 10) + " KiB of weights, more than a core's " +
                             std::to_string(store >> 10) + " KiB (npu.weight_buffer + the L2 weight share): use more cores or another split");
  }
  // mapping.multicore_layers: NAME=SPLIT entries (NAME exact, or a prefix ending in *), each
  // naming at least one layer; refused with fused or pipeline chips, whose layers have no split.
  void read_layer_splits() {
    const std::string text = m_cfg.get_string("mapping.multicore_layers");
    if (text.empty()) return;  // on one core the names are still checked
    const std::string key = "mapping.multicore_layers";
    const std::string whole = m_cfg.get_string("mapping.multicore");
    if (whole == "pipeline" || whole == "fused")
      throw InputError(m_cfg.source(), key, "cannot be used with mapping.multicore: " + whole + " (its layers are not split)");
    size_t at = 0;
    while (at <= text.size()) {
      const size_t end = std::min(text.find(',', at), text.size());
      const std::string entry = text.substr(at, end - at);
      at = end + 1;
      const size_t eq = entry.find('=');
      const std::string name = eq == std::string::npos ? entry : entry.substr(0, eq);
      const std::string split = eq == std::string::npos ? "" : entry.substr(eq + 1);
      const auto policy = split == "rows"       ? MapperParams::Multicore::Rows
                          : split == "channels" ? MapperParams::Multicore::Channels
                          : split == "layer"    ? MapperParams::Multicore::Layer
                                                : MapperParams::Multicore::Auto;
      if (name.empty() || policy == MapperParams::Multicore::Auto)
        throw InputError(m_cfg.source(), key, "entry '" + entry + "' is not NAME=SPLIT with SPLIT rows, channels or layer");
      const bool prefix = name.back() == '*';
      const std::string stem = prefix ? name.substr(0, name.size() - 1) : name;
      bool matched = false;
      for (const Layer& l : m_graph.layers)
        if (prefix ? l.name.rfind(stem, 0) == 0 : l.name == stem) {
          m_layer_split[l.index] = policy;
          matched = true;
        }
      if (!matched) throw InputError(m_cfg.source(), key, "entry '" + entry + "': no layer of " + m_graph.name + " is named " + name);
    }
  }
  MapperParams::Multicore split_policy(const Layer& l) const {
    const auto it = m_layer_split.find(l.index);
    return it != m_layer_split.end() ? it->second : m_p.multicore;
  }
  // Images stream through the stages in groups of mapping.pipeline_images: every run of the
  // Frontend IR's own NPU ops is one batch-group run of that group size.
  std::vector<Segment> pipeline_segments() const {
    std::vector<Segment> segs;
    const int64_t batch = m_graph.batch();
    const int64_t group = std::min<int64_t>(std::max<int64_t>(1, m_p.pipeline_images), batch);
    if (batch <= 1 || group >= batch) return segs;
    for (size_t i = 0; i < m_graph.layers.size(); ++i) {
      const Layer& l = m_graph.layers[i];
      if (l.device != ir::Device::Npu || !ir::is_frontend_ir_native(l.op)) continue;
      if (!segs.empty() && segs.back().first + segs.back().count == i) segs.back().count++;
      else segs.push_back(Segment{i, 1, group, 0});
    }
    return segs;
  }

  static Shape with_batch(Shape s, int64_t batch, int64_t nb) {
    if (!s.empty() && s[0] == batch) s[0] = nb;
    return s;
  }

  void map_segment(const Segment& seg) {
    const int64_t batch = m_graph.batch();
    if (seg.group >= batch) {  // the whole batch at once: plain layers with the run's L2 split
      Instance inst;
      inst.act_bytes = seg.act_bytes;
      for (size_t i = seg.first; i < seg.first + seg.count; ++i) map_layer(m_graph.layers[i], inst);
      return;
    }
    std::set<std::string> inside;
    for (size_t i = seg.first; i < seg.first + seg.count; ++i) inside.insert(m_graph.layers[i].name);
    auto group_name = [](const std::string& n, int64_t g) { return n + "#g" + std::to_string(g); };
    std::map<std::string, int> plan_slot;
    const int64_t groups = ceil_div(batch, seg.group);
    // Inputs from before the run are read once per group: hold them for every group (the
    // older rule, kept byte-identical for other configs, lets them go after the first groups).
    if (m_p.batch_groups_per_stage)
      for (size_t i = seg.first; i < seg.first + seg.count; ++i)
        for (const auto& p : m_graph.layers[i].previous) {
          TensorState* t = m_buffers.find(ir::edge_layer(p));
          if (!inside.count(p) && t && t->remaining_consumers > 0) t->remaining_consumers += static_cast<int>(groups) - 1;
        }
    // Per-stage runs (the Gemini compiler's) leave their outputs for later layers in L2 when
    // they fit beside the next groups; the other rule stores them per group.
    // They fit when all of them (the next run reads them group by group), beside a group's
    // peak, fit the run's activation space.
    bool keep_outputs = false;
    if (m_p.batch_groups_per_stage) {
      int64_t boundary = 0, peak = 0;
      for (size_t i = seg.first; i < seg.first + seg.count; ++i) {
        const Layer& l = m_graph.layers[i];
        peak = std::max(peak, ceil_div(m_live[i], batch) * seg.group);
        bool outside = false;
        for (const auto& n : l.next) outside = outside || (!inside.count(n) && layer_named(n));
        if (outside && !l.output_shapes.empty())
          boundary += bytes_of(l.output_shapes[0], l.output_dtypes.empty() ? ir::DType::Int8 : l.output_dtypes[0]);
      }
      const int64_t capacity = seg.act_bytes > 0 ? seg.act_bytes : m_p.l2_act_bytes;
      keep_outputs = boundary + peak <= capacity;
    }
    size_t before_second_group = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t nb = std::min(seg.group, batch - g * seg.group);
      if (g == 1) before_second_group = m_prog.commands.size();
      if (g == 2) refuse_projected(groups, m_prog.commands.size() - before_second_group, seg.first);
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
        // A kept output stays live (one extra consumer) until the run is over.
        m_consumers[l.name] = inside_consumers + (keep_outputs && outside_consumer ? 1 : 0);
        Instance inst;
        inst.plan_slot = g == 0 ? -1 : plan_slot.at(orig);
        inst.group = g;
        inst.orig_name = orig;
        inst.force_store = outside_consumer && !keep_outputs;
        inst.act_bytes = seg.act_bytes;
        const int slot = map_layer(l, inst);
        if (g == 0) plan_slot[orig] = slot;
      }
    }
    // Outside consumers read each run output from DRAM, once every group has stored its part,
    // or from L2 when every group's part stayed there.
    for (size_t i = seg.first; i < seg.first + seg.count; ++i) {
      const Layer& l = m_graph.layers[i];
      int outside = 0;
      for (const auto& n : l.next)
        if (!inside.count(n) && layer_named(n)) outside++;
      TensorState t;
      t.bytes = l.output_shapes.empty() ? 0 : bytes_of(l.output_shapes[0], l.output_dtypes.empty() ? ir::DType::Int8 : l.output_dtypes[0]);
      t.remaining_consumers = outside;
      bool all_in_l2 = true;
      for (int64_t g = 0; g < groups; ++g) all_in_l2 = all_in_l2 && m_buffers.at(group_name(l.name, g)).in_l2;
      if (keep_outputs && outside > 0) {
        for (int64_t g = 0; g < groups; ++g) {
          TensorState& part = m_buffers.at(group_name(l.name, g));
          if (!all_in_l2 && part.in_l2) {  // some part was stored: store the rest too
            Command st;
            st.unit = Unit::Dma;
            st.layer = plan_slot.at(l.name);
            st.label = group_name(l.name, g) + " store";
            st.dma = {models::DmaKind::StoreActivations, part.bytes, 1};
            st.deps = {part.last_cmd};
            part.store_cmd = add(std::move(st));
            part.last_cmd = std::max(part.last_cmd, part.store_cmd);
          }
          part.remaining_consumers = 0;  // the whole tensor below holds its bytes
        }
      }
      const TensorState& last_group = m_buffers.at(group_name(l.name, groups - 1));
      t.where = last_group.where;
      t.in_l2 = keep_outputs && outside > 0 && all_in_l2;
      t.in_dram = !t.in_l2;
      t.last_cmd = last_group.last_cmd;
      t.store_cmd = t.in_l2 ? -1 : last_group.store_cmd;
      if (!t.in_l2 && keep_outputs && outside > 0) {
        int last_store = -1;  // stores run in program order on their queue: the last one ends last
        for (int64_t g = 0; g < groups; ++g) last_store = std::max(last_store, m_buffers.at(group_name(l.name, g)).store_cmd);
        t.store_cmd = last_store;
      }
      m_buffers.put(l.name, t);
    }
  }

 private:
  void count_consumers() {
    for (const auto& l : m_graph.layers) {
      for (const auto& p : l.previous)
        if (layer_named(ir::edge_layer(p))) m_consumers[ir::edge_layer(p)]++;
    }
  }

  // Each command costs about this much here, in the engine's timings and in the unit queues
  // (an estimate; checked as the program grows, so a workload beyond the budget stops early).
  static constexpr int64_t kBytesPerCommand = static_cast<int64_t>(sizeof(Command) + sizeof(CommandTiming)) + 128;

  // After two batch groups of a run: every later full group maps to as many commands as the
  // second (same shapes; the first also loads the run's weights), so the program will have at
  // least commands so far + per_group x (groups - 3) (the last group may be partial). Beyond the
  // budget, refuse now rather than after mapping millions of commands.
  void refuse_projected(int64_t groups, size_t per_group, size_t first_layer) {
    const int64_t later = std::max<int64_t>(0, groups - 3);
    const double projected = static_cast<double>(m_prog.commands.size()) + static_cast<double>(per_group) * later;
    if (projected * kBytesPerCommand <= static_cast<double>(m_max_bytes)) return;
    char need[32];
    std::snprintf(need, sizeof need, "%.0f", projected * kBytesPerCommand / (1 << 20));
    throw InputError("--max-memory", m_graph.layers[first_layer].name,
                     "mapping " + m_graph.name + " needs at least " + need + " MiB, more than " +
                         std::to_string(m_max_bytes >> 20) + " MiB: " + std::to_string(groups) + " batch groups of " +
                         std::to_string(per_group) + " commands each (projected after 2 groups): raise --max-memory " +
                         "(MiB) or run a smaller batch");
  }

  int add(Command c) {
    if (static_cast<int64_t>(m_prog.commands.size() + 1) * kBytesPerCommand > m_max_bytes)
      throw InputError("--max-memory", c.label,
                       "mapping " + m_graph.name + " needs more than " + std::to_string(m_max_bytes >> 20) +
                           " MiB (" + std::to_string(m_prog.commands.size()) +
                           " commands so far): raise --max-memory (MiB) or run a smaller batch");
    c.id = static_cast<int>(m_prog.commands.size());
    std::sort(c.deps.begin(), c.deps.end());
    c.deps.erase(std::unique(c.deps.begin(), c.deps.end()), c.deps.end());
    c.deps.erase(std::remove(c.deps.begin(), c.deps.end(), -1), c.deps.end());
    m_prog.commands.push_back(std::move(c));
    return m_prog.commands.back().id;
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
                                             : ir::is_constant_name(l.previous[j]) && !layer_named(l.previous[j]);
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
    int64_t act_bytes = 0;    // L2 bytes for activations (0: the L2 activation share)
  };
  int64_t act_capacity() const { return m_inst.act_bytes > 0 ? m_inst.act_bytes : m_p.l2_act_bytes; }

  // Multi-core chips (docs/multicore.md#mapping). A PE layer is split over its output rows
  // (every core loads the whole weights: (cores - 1) x weight bytes more) or its output
  // channels (every core reads the whole input: (cores - 1) x input bytes more); `auto` takes
  // the one that moves fewer bytes, rows on a tie. Vector-processor layers split their rows.
  Split choose_split(const Layer& l, const LayerPlan& plan, const RowTiling& tiling) {
    if (m_p.cores <= 1) return {};
    const MapperParams::Multicore policy = split_policy(l);
    // `layer`: each layer whole on one core, the cores in turn (every batch group of a layer on
    // the same core, where its weights are).
    if (policy == MapperParams::Multicore::Layer) {
      const auto it = m_stage.find(l.index);
      return {SplitKind::One, 1, it != m_stage.end() ? it->second : (m_stage[l.index] = m_next_home++ % m_p.cores)};
    }
    if (m_p.multicore == MapperParams::Multicore::Pipeline) return {SplitKind::One, 1, m_stage.at(l.index)};
    const int64_t rows = tiling.total_rows > 0 ? tiling.total_rows : row_count(l);
    const int by_rows = static_cast<int>(std::min<int64_t>(m_p.cores, rows));
    if (!ir::runs_on_pe_array(l.op)) return by_rows > 1 ? Split{SplitKind::Rows, by_rows, 0} : Split{};
    const int64_t k_total = l.input_shapes.size() > 1 && !l.input_shapes[1].empty() ? l.input_shapes[1][0] : 1;
    const int by_channels = l.groups > 1 ? 1 : static_cast<int>(std::min<int64_t>(m_p.cores, k_total));
    const double rows_cost = static_cast<double>(by_rows - 1) * static_cast<double>(plan.weight_bytes);
    const double channels_cost = static_cast<double>(by_channels - 1) * static_cast<double>(plan.in_bytes);
    bool channels = by_channels > 1 && (by_rows <= 1 || policy == MapperParams::Multicore::Channels ||
                                        (policy == MapperParams::Multicore::Auto && channels_cost < rows_cost));
    if (policy == MapperParams::Multicore::Rows && by_rows > 1) channels = false;
    if (channels) return {SplitKind::Channels, by_channels, 0};
    return by_rows > 1 ? Split{SplitKind::Rows, by_rows, 0} : Split{};
  }
  // Rows split: at least one row tile per core (smaller tiles stream less, so they still fit).
  void spread_rows(RowTiling& t, const Layer& l) {
    if (t.tiles >= m_split.cores) return;
    const int64_t rows = t.total_rows > 0 ? t.total_rows : row_count(l);
    t.out_rows_per_tile = ceil_div(rows, m_split.cores);
    t.tiles = ceil_div(rows, t.out_rows_per_tile);
    m_split.cores = static_cast<int>(std::min<int64_t>(m_split.cores, t.tiles));
  }
  // The core that runs row tile t of `tiles` (of output-channel chunk kc).
  int core_of(int64_t kc, int64_t t, int64_t tiles) const {
    switch (m_split.kind) {
      case SplitKind::Rows: return static_cast<int>(t * m_split.cores / std::max<int64_t>(1, tiles));
      case SplitKind::Channels: return static_cast<int>(kc % m_split.cores);
      default: return m_split.home;
    }
  }
  // The share of an on-chip input that core `core` reads from other cores' L2: none when both
  // layers split the same rows the same way (contiguous blocks line up; halos are left out),
  // else all but the part on this core.
  double remote_share(const Split& producer, int core) const {
    if (producer.cores <= 1) return producer.home == core ? 0.0 : 1.0;
    if (producer.kind == SplitKind::Rows && m_split.kind == SplitKind::Rows) return 0.0;
    return core < producer.cores ? 1.0 - 1.0 / producer.cores : 1.0;
  }
  // Marks the remote part of a compute command's on-chip input (tile_in_bytes: its whole input,
  // of which the resident inputs are their share).
  void mark_remote(Command& c, int64_t tile_in_bytes, int64_t all_in_bytes) {
    if (m_p.cores <= 1 || m_resident_inputs.empty() || all_in_bytes <= 0) return;
    double remote = 0;
    int from = -2;
    for (const auto& [bytes, where] : m_resident_inputs) {
      const double share = remote_share(where, c.core);
      if (share <= 0) continue;
      remote += share * static_cast<double>(tile_in_bytes) * static_cast<double>(bytes) / static_cast<double>(all_in_bytes);
      const int src = where.cores <= 1 ? where.home : -1;
      from = from == -2 || from == src ? src : -1;
    }
    c.remote_bytes = static_cast<int64_t>(std::ceil(remote));
    c.remote_from.core = from < 0 ? -1 : from;
  }
  // One command that ends when the last of `ids` (each core's last) has: what consumers of a
  // layer split over cores wait for.
  int join(std::vector<int> ids, int layer_id, const std::string& label) {
    ids.erase(std::remove(ids.begin(), ids.end(), -1), ids.end());
    if (ids.empty()) return -1;
    if (ids.size() == 1) return ids[0];
    Command j;
    j.unit = Unit::Sync;
    j.layer = layer_id;
    j.label = label;
    j.deps = std::move(ids);
    return add(std::move(j));
  }

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
      if (const TensorState* t = m_buffers.find(m_operand.source)) {
        m_operand.on_chip = t->in_l2;
        m_operand.where = t->where;
        m_operand.ready = t->in_l2 ? t->last_cmd : (t->store_cmd >= 0 ? t->store_cmd : t->last_cmd);
      }
    }
    if (!l.output_shapes.empty()) plan.out_bytes = bytes_of(l.output_shapes[0], out_t);
    const int layer_id = inst.plan_slot >= 0 ? inst.plan_slot : static_cast<int>(m_prog.layers.size());

    // Where do the inputs come from, and what must finish first?
    std::vector<int> input_deps;
    int64_t resident_in = 0, dram_in = 0;
    std::set<std::string> own;
    m_resident_inputs.clear();
    for (size_t j = 0; j < in_sizes.size(); ++j) {
      const std::string& src = inputs[j];
      own.insert(src);
      const TensorState* found = m_buffers.find(src);
      if (!found) {  // graph input: in DRAM from the start
        dram_in += in_sizes[j];
        continue;
      }
      const TensorState& t = *found;
      if (t.in_l2 && !plan.on_host) {
        resident_in += in_sizes[j];
        m_resident_inputs.emplace_back(in_sizes[j], t.where);
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
    m_serial_dep = m_load_dep = -1;
    if (m_p.serialize_layers && !plan.on_host && m_prefetch.layers() > 0) {
      // The previous layer's compute: its output stores drain behind this layer.
      input_deps.push_back(m_serial_dep = m_compute_last.back());
      // Activation loads from DRAM may start `activation_prefetch_layers` NPU layers ahead.
      m_load_dep = m_serial_dep;
      if (m_p.activation_prefetch_layers > 1) {
        const int64_t back = static_cast<int64_t>(m_prefetch.layers()) - m_p.activation_prefetch_layers;
        m_load_dep = back >= 0 ? m_compute_last[static_cast<size_t>(back)] : -1;
      }
    }

    // Consumers that need the output in DRAM: graph outputs and host layers.
    bool needs_dram_copy = false;
    for (const auto& n : l.next) {
      const Layer* c = layer_named(n.substr(0, n.find("#g")));  // batch-group instances: "<name>#g<k>"
      if (!c || c->device == ir::Device::Cpu) needs_dram_copy = true;
    }
    if (inst.force_store) needs_dram_copy = true;

    m_split = Split{};
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
    int64_t live_other = m_buffers.live_bytes(own);
    bool keep = m_p.keep_activations_on_chip && !needs_dram_copy &&
                live_other + resident_in + plan.out_bytes <= act_capacity();
    // Row tiling: what streams through L2 (from or to DRAM) must fit, double-buffered.
    const Shape out_shape = l.output_shapes.empty() ? Shape{1} : l.output_shapes[0];
    const int64_t total_rows = row_count(l);
    auto plan_rows = [&](bool keep_out) -> std::optional<RowTiling> {
      return plan_row_tiles(l, live_other + resident_in + (keep_out ? plan.out_bytes : 0), act_capacity(), dram_in,
                            keep_out ? 0 : plan.out_bytes, total_rows);
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
      live_other = m_buffers.live_bytes(own);
      keep = m_p.keep_activations_on_chip && !needs_dram_copy && live_other + resident_in + plan.out_bytes <= act_capacity();
      tiling = plan_rows(keep);
      if (!tiling && keep) {
        keep = false;
        tiling = plan_rows(false);
      }
    }
    // A vector-processor op whose rows do not fit streams finer slices through L2 (every
    // element, channel or normalized row), as the compiler streams such ops: same bytes, more tiles.
    if (!tiling && !ir::runs_on_pe_array(l.op)) {
      if (const int64_t fine = stream_rows(l); fine > total_rows) {
        keep = false;
        tiling = plan_row_tiles(l, live_other + resident_in, act_capacity(), dram_in, plan.out_bytes, fine, true);
      }
    }
    if (!tiling)
      throw InputError(m_cfg.source(), "npu.l2.size_kib",
                       "L2 buffer too small for layer " + l.name + " (needs " +
                           std::to_string((live_other + resident_in + 2 * tile_stream_bytes(l, 1, dram_in, plan.out_bytes, total_rows)) / 1024) +
                           " KiB for activations beside the weight share)");
    plan.output_to_dram = !keep || needs_dram_copy;
    m_split = choose_split(l, plan, *tiling);
    if (m_split.kind == SplitKind::Rows) spread_rows(*tiling, l);
    plan.cores = m_split.cores;
    plan.split = m_p.cores == 1 ? "" : m_split.kind == SplitKind::Rows ? "rows" : m_split.kind == SplitKind::Channels ? "channels" : "one";
    plan.row_tiles = static_cast<int>(tiling->tiles);
    plan.l2_act_bytes = live_other + resident_in + (keep ? plan.out_bytes : 0);

    int last = -1, store = -1;
    if (ir::runs_on_pe_array(l.op))
      emit_pe_layer(l, plan, layer_id, *tiling, input_deps, dram_in, keep, needs_dram_copy, last, store);
    else
      emit_vp_layer(l, plan, layer_id, *tiling, input_deps, dram_in, keep, needs_dram_copy, last, store);
    record_plan(plan, layer_id);
    m_prefetch.layer_done(last);
    int compute_last = -1;  // the layer's last PE / VP command (its stores may follow)
    for (int id = static_cast<int>(m_prog.commands.size()) - 1; id >= 0 && m_prog.commands[id].layer == layer_id; --id)
      if (m_prog.commands[id].unit != Unit::Dma) compute_last = std::max(compute_last, id);
    m_compute_last.push_back(compute_last >= 0 ? compute_last : last);
    // A batch-group run's weights stay resident until its last group is done.
    if (m_inst.group > 0 && ir::runs_on_pe_array(l.op)) m_prefetch.extend(m_inst.orig_name, last);
    m_prefetch.commit_pending(last);
    finish_layer(l, last, keep, store, plan.out_bytes);
    return layer_id;
  }

  // Stores the live on-chip tensor that has been in L2 longest (not one of `except`) to DRAM and
  // frees its space; returns the store command, or -1 when there is nothing to spill.
  int spill_oldest(const std::set<std::string>& except, int layer_id) {
    const auto [name, victim] = m_buffers.oldest_live(except);
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
    p.cores = std::max(p.cores, plan.cores);
    p.batch_groups++;
  }

  static int64_t ceil_div(int64_t a, int64_t b) { return models::ceil_div(a, b); }

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
    int64_t k_chunk = k_chunk_size(plan.weight_bytes, m_p.weight_buffer_bytes + m_p.l2_weight_bytes, bytes_per_k,
                                   k_total, groups, m_pe.rows);
    // Split over output channels: at least one chunk per core, chunk k on core k mod cores.
    if (m_split.kind == SplitKind::Channels) k_chunk = std::min(k_chunk, ceil_div(k_total, m_split.cores));
    const int64_t k_chunks = ceil_div(k_total, k_chunk);
    if (m_split.kind == SplitKind::Channels) plan.cores = m_split.cores = static_cast<int>(std::min<int64_t>(m_split.cores, k_chunks));
    plan.k_chunks = static_cast<int>(k_chunks);
    // A core's chunks are double-buffered among themselves: chunk kc waits for its core's chunk
    // `stride` x 2 earlier.
    const int64_t stride = m_split.kind == SplitKind::Channels ? m_split.cores : 1;
    const auto ncores = static_cast<size_t>(std::max(1, m_p.cores));
    std::vector<int> core_last(ncores, -1), core_store(ncores, -1);
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
        reuse ? std::vector<int>{} : m_prefetch.deps(std::min(plan.weight_bytes, k_chunk * bytes_per_k), staged);
    std::vector<std::vector<int>> pe_of_chunk;  // per chunk, each core's last PE command in it
    // Weights are named per core: the first core's key is the layer's name.
    auto weight_key = [](const std::string& name, int core) { return core == 0 ? name : name + "@" + std::to_string(core); };
    for (int64_t kc = 0; kc < k_chunks; ++kc) {
      const int64_t k0 = kc * k_chunk, kn = std::min(k_chunk, k_total - k0);
      // Rows split: every core holds the chunk; else the chunk's one core.
      std::vector<int> holders;
      if (m_split.kind == SplitKind::Rows)
        for (int c = 0; c < m_split.cores; ++c) holders.push_back(c);
      else
        holders.push_back(core_of(kc, 0, tiling.tiles));
      std::vector<int> wid(ncores, -1);
      for (int c : holders) {
        if (m_inst.group > 0 && k_chunks == 1) {
          wid[c] = m_weight_cmd.at(weight_key(m_inst.orig_name, c));  // resident since the run's first group
          continue;
        }
        Command wl;
        wl.unit = Unit::Dma;
        wl.core = c;
        wl.layer = layer_id;
        wl.label = plan.name + " weights k" + std::to_string(k0) + "+" + std::to_string(kn) +
                   (m_split.kind == SplitKind::Rows ? " core " + std::to_string(c) : "");
        wl.dma = {m_operand.on_chip ? models::DmaKind::L2ToWeightBuffer : models::DmaKind::LoadWeights, kn * bytes_per_k, kn};
        if (kc < 2 * stride) wl.deps = first_deps;
        if (m_operand.ready >= 0) wl.deps.push_back(m_operand.ready);  // the operand's producer
        if (kc >= 2 * stride) wl.deps.push_back(pe_of_chunk[kc - 2 * stride][c]);  // double-buffered chunks
        if (m_operand.on_chip && m_p.cores > 1) {  // an on-chip operand may sit in other cores' L2
          const double share = remote_share(m_operand.where, c);
          wl.remote_bytes = static_cast<int64_t>(std::ceil(share * wl.dma.bytes));
          wl.remote_from.core = m_operand.where.cores <= 1 ? m_operand.where.home : -1;
        }
        wid[c] = add(std::move(wl));
        if (k_chunks == 1) m_weight_cmd[weight_key(plan.name, c)] = wid[c];
      }
      std::vector<int> prev_on(ncores, -1);  // each core's previous PE command of this chunk
      for (int64_t t = 0; t < tiling.tiles; ++t) {
        const int core = core_of(kc, t, tiling.tiles);
        int& prev_pe = prev_on[static_cast<size_t>(core)];
        const int64_t row0 = t * tiling.out_rows_per_tile;
        const int64_t rows = std::min(tiling.out_rows_per_tile, total_rows - row0);
        const double frac = static_cast<double>(rows) / total_rows;
        std::vector<int> deps = input_deps;
        deps.push_back(wid[static_cast<size_t>(core)]);
        if (dram_in > 0) {
          deps.push_back(emit_act_load(l, layer_id, row0, rows, tile_stream_bytes(l, rows, dram_in, 0, total_rows),
                                       input_deps, prev_pe, core));
        }
        Command pe;
        pe.unit = Unit::PeArray;
        pe.core = core;
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
        // The tile's output as images x rows x columns (rows of N x Ho; npu.pe_array.pe_groups).
        pe.pe.n = rows >= out.h ? ceil_div(rows, out.h) : 1;
        pe.pe.h = std::min(rows, out.h);
        pe.pe.w = out.w;
        pe.pe.dtype = plan.dtype;
        pe.pe.in_bytes = static_cast<int64_t>(std::ceil(plan.in_bytes * frac * read_fraction));
        pe.pe.out_bytes = static_cast<int64_t>(std::ceil(plan.out_bytes * frac * kn / k_total));
        pe.pe.weight_bytes = kn * bytes_per_k;
        pe.deps = deps;
        mark_remote(pe, pe.pe.in_bytes, plan.in_bytes);
        prev_pe = add(std::move(pe));
        core_last[static_cast<size_t>(core)] = prev_pe;
        if (!keep || copy_out) {
          core_store[static_cast<size_t>(core)] = emit_store(
              l, layer_id, row0, rows, static_cast<int64_t>(std::ceil(plan.out_bytes * frac * kn / k_total)), out.c, prev_pe, core);
          core_last[static_cast<size_t>(core)] = core_store[static_cast<size_t>(core)];
        }
      }
      pe_of_chunk.push_back(prev_on);
    }
    last = join(core_last, layer_id, plan.name + " join");
    if (std::count(core_store.begin(), core_store.end(), -1) < static_cast<std::ptrdiff_t>(ncores))
      store = join(core_store, layer_id, plan.name + " stores join");
    if (!reuse) m_prefetch.set_pending(plan.name, staged ? std::min(plan.weight_bytes, k_chunk * bytes_per_k) : 0);
  }

  void emit_vp_layer(const Layer& l, LayerPlan& plan, int layer_id, const RowTiling& tiling,
                     const std::vector<int>& input_deps, int64_t dram_in, bool keep, bool copy_out,
                     int& last, int& store) {
    const Nchw out = nchw(l.output_shapes.empty() ? Shape{1} : l.output_shapes[0]);
    const int64_t total_rows = tiling.total_rows > 0 ? tiling.total_rows : row_count(l);
    // Stage work for the whole layer: the module_list (one pass), or the op's passes
    // (models/npu/vector_processor_timing.cpp, docs/timing.md#vector-ops-of-the-workload-ir).
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
        passes.back().push_back({m.kind, d.c, d.n * d.h * d.w, elem_bytes, d.n});
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
          passes.back().push_back({k, c, px, elem_bytes, native ? nchw(k == "post_cal" ? out_s : data_s).n : 1});
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
    const auto ncores = static_cast<size_t>(std::max(1, m_p.cores));
    std::vector<int> prev_on(ncores, -1), core_last(ncores, -1), core_store(ncores, -1);
    for (int64_t t = 0; t < tiling.tiles; ++t) {
      const int core = core_of(0, t, tiling.tiles);
      int& prev = prev_on[static_cast<size_t>(core)];  // this core's last command of the layer
      const int64_t row0 = t * tiling.out_rows_per_tile;
      const int64_t rows = std::min(tiling.out_rows_per_tile, total_rows - row0);
      const double frac = static_cast<double>(rows) / total_rows;
      std::vector<int> deps = input_deps;
      if (dram_in > 0) {
        deps.push_back(emit_act_load(l, layer_id, row0, rows,
                                     tile_stream_bytes(l, rows, dram_in, 0, total_rows, tiling.proportional), input_deps, prev, core));
      }
      if (l.op == ir::OpKind::Gather && !l.input_shapes.empty()) {
        // The looked-up rows of the table (a weight in DRAM), one segment per index.
        Command g;
        g.unit = Unit::Dma;
        g.core = core;
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
        m.core = core;
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
        vp.core = core;
        vp.layer = layer_id;
        vp.label = l.name + (passes.size() > 1 ? " pass " + std::to_string(pi + 1) : "") + " rows " +
                   std::to_string(row0) + "+" + std::to_string(rows);
        for (const auto& w : passes[pi]) {
          if (tiling.proportional)  // a streamed slice: its share of the channels (elements, rows)
            vp.vp.stages.push_back({w.kind, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(w.channels * frac))),
                                    w.pixels, w.elem_bytes, w.images});
          else
            vp.vp.stages.push_back({w.kind, w.channels, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(w.pixels * frac))),
                                    w.elem_bytes, std::max<int64_t>(1, static_cast<int64_t>(std::ceil(w.images * frac)))});
        }
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
        // Images the VP takes side by side sweep one image's tile: one image's L2 traffic too
        // (docs/timing.md#vector-processor).
        int64_t images = 1;
        for (const auto& st : vp.vp.stages) images = std::max(images, st.images);
        const int64_t side_by_side = std::max<int64_t>(1, std::min(m_vp_parallel_images, images));
        vp.vp.l2_bytes = ceil_div(vp.vp.l2_bytes, side_by_side);
        vp.deps = pi == 0 ? deps : std::vector<int>{prev};
        if (pi == 0) mark_remote(vp, tile_in, plan.in_bytes);
        prev = add(std::move(vp));
      }
      if (opaque_load >= 0) {
        // Roofline: the op ends when both its compute and its bytes are done.
        Command join;
        join.unit = Unit::Vector;
        join.core = core;
        join.layer = layer_id;
        join.label = l.name + " roofline join";
        join.deps = {prev, opaque_load};
        prev = add(std::move(join));
      }
      core_last[static_cast<size_t>(core)] = prev;
      if (!keep || copy_out) {
        core_store[static_cast<size_t>(core)] = emit_store(l, layer_id, row0, rows, tile_out, out.c, prev, core);
        core_last[static_cast<size_t>(core)] = core_store[static_cast<size_t>(core)];
      }
    }
    last = join(core_last, layer_id, plan.name + " join");
    if (std::count(core_store.begin(), core_store.end(), -1) < static_cast<std::ptrdiff_t>(ncores))
      store = join(core_store, layer_id, plan.name + " stores join");
  }

  // Stores one row tile's output to DRAM (one segment per channel) after `producer`.
  int emit_store(const Layer& l, int layer_id, int64_t row0, int64_t rows, int64_t bytes, int64_t channels, int producer,
                 int core) {
    Command st;
    st.unit = Unit::Dma;
    st.core = core;
    st.layer = layer_id;
    st.label = l.name + " store rows " + std::to_string(row0) + "+" + std::to_string(rows);
    st.dma = {models::DmaKind::StoreActivations, bytes, std::max<int64_t>(1, channels)};
    st.deps = {producer};
    return add(std::move(st));
  }

  // Loads one row tile's input from DRAM; waits for the producers and for the previous tile's
  // work (double buffering: one tile ahead).
  int emit_act_load(const Layer& l, int layer_id, int64_t row0, int64_t rows, int64_t bytes,
                    const std::vector<int>& input_deps, int prev_work, int core) {
    Command la;
    la.unit = Unit::Dma;
    la.core = core;
    la.layer = layer_id;
    la.label = l.name + " act rows " + std::to_string(row0) + "+" + std::to_string(rows);
    la.dma = {models::DmaKind::LoadActivations, bytes,
              std::max<int64_t>(1, l.input_shapes.empty() ? 1 : nchw(l.input_shapes[0]).c)};
    la.deps = input_deps;
    if (m_load_dep != m_serial_dep) {  // prefetch: wait for an earlier layer, not the previous one
      la.deps.erase(std::remove(la.deps.begin(), la.deps.end(), m_serial_dep), la.deps.end());
      la.deps.push_back(m_load_dep);
    }
    if (prev_work >= 0) la.deps.push_back(prev_work);
    return add(std::move(la));
  }

  void finish_layer(const Layer& l, int last, bool in_l2, int store, int64_t out_bytes) {
    // Inputs consumed: free them when their last consumer is done.
    for (const auto& p : l.previous) m_buffers.consumed(ir::edge_layer(p));
    TensorState t;
    t.in_l2 = in_l2;
    t.in_dram = store >= 0;
    t.bytes = out_bytes;
    t.remaining_consumers = m_consumers.count(l.name) ? m_consumers.at(l.name) : 0;
    t.last_cmd = last;
    t.store_cmd = store;
    t.where = m_split;
    m_buffers.put(l.name, t);
  }

  const ir::Graph& m_graph;
  const config::HwConfig& m_cfg;  // names the file in errors
  const MapperParams& m_p;        // the run's, outliving the mapper (map_graph)
  const models::PeArrayParams& m_pe;
  Program m_prog;
  std::map<std::string, int> m_consumers;
  BufferState m_buffers;  // where every mapped tensor lives (sim/mapping/buffer_state.h)
  // Layers by name: Graph::find scans, which made mapping quadratic in the layer count.
  std::unordered_map<std::string, const Layer*> m_layer_named;
  const Layer* layer_named(const std::string& name) const {
    auto it = m_layer_named.find(name);
    return it == m_layer_named.end() ? nullptr : it->second;
  }
  WeightPrefetch m_prefetch;                 // weight-prefetch policy and its history
  Instance m_inst;                           // the instance being mapped
  Split m_split;                             // how the layer being mapped is spread over the cores
  int m_next_home = 0;                       // mapping.multicore: layer: the next layer's core
  std::unordered_map<int, int> m_stage;      // mapping.multicore: pipeline / layer: each layer's core, by index
  std::unordered_map<int, MapperParams::Multicore> m_layer_split;  // mapping.multicore_layers, by layer index
  // Its on-chip inputs (bytes, where they live): the share of a tile's input that is remote.
  std::vector<std::pair<int64_t, Split>> m_resident_inputs;
  std::vector<int64_t> m_live;               // whole-batch live activation bytes per layer
  int64_t m_vp_parallel_images = 1;          // npu.vector.parallel_images
  int64_t m_max_bytes = 0;                    // NpuParams::max_program_bytes (--max-memory)
  int m_serial_dep = -1, m_load_dep = -1;    // serialize_layers dep of the layer, and its loads'
  std::vector<int> m_compute_last;           // last PE / VP command of each NPU layer, in order
  std::map<std::string, int> m_weight_cmd;   // a run's weight load, shared by its groups
  // A GEMM's second operand when it is an activation (attention's K, V): where it comes from.
  struct Operand {
    std::string source;    // producer layer or graph input; empty: a weight
    bool on_chip = false;  // in L2: moved into the weight buffer without DRAM
    int ready = -1;        // command after which it is complete
    Split where;           // multi-core: the cores whose L2 hold it
  } m_operand;
};

}  // namespace

Program map_graph(const ir::Graph& g, const config::HwConfig& c, const NpuParams& p) { return Mapper(g, c, p).run(); }

Program map_graph(const ir::Graph& g, const config::HwConfig& c) { return map_graph(g, c, NpuParams::read(c)); }

}  // namespace npusim::mapping
