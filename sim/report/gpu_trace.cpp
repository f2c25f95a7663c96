// Chrome trace of a GPU run and the plan-file writer (sim/report/gpu_report.h).
#include <algorithm>
#include <cmath>
#include <map>

#include "sim/report/gpu_report.h"

namespace npusim::report {

namespace {

using OJson = nlohmann::ordered_json;

double r3(double v) { return std::round(v * 1000.0) / 1000.0; }

constexpr int kMaxTracks = 32;

}  // namespace

OJson gpu_chrome_trace(const GpuReport& r, const std::vector<gpu::Program>& plans, const models::GpuSimResult& sim) {
  OJson events = OJson::array();
  const double us = 1.0 / sim.clock_mhz;
  for (const models::GpuRankResult& res : sim.ranks) {
    const gpu::Program& p = plans.at(res.rank);
    const int n = res.processors;
    const int per_track = std::max(1, (n + kMaxTracks - 1) / kMaxTracks);
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", res.rank},
                      {"args", {{"name", "gpu" + std::to_string(res.rank) + " " + p.source}}}});
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", res.rank}, {"tid", 0},
                      {"args", {{"name", "processor groups"}}}});
    for (int t = 0; t * per_track < n; ++t) {
      const int a = t * per_track, b = std::min(n, a + per_track) - 1;
      const std::string name = per_track == 1 ? "SM " + std::to_string(a) : "SMs " + std::to_string(a) + "-" + std::to_string(b);
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", res.rank}, {"tid", t + 1}, {"args", {{"name", name}}}});
    }
    for (size_t i = 0; i < res.pgs.size(); ++i) {
      const models::GpuPgStats& g = res.pgs[i];
      if (g.start < 0) continue;
      const std::string ops = i < r.ranks.at(res.rank).pgs.size() ? r.ranks[res.rank].pgs[i].ops : "";
      events.push_back({{"name", "PG " + std::to_string(i) + ": " + ops}, {"ph", "X"}, {"pid", res.rank}, {"tid", 0},
                        {"ts", r3(g.start * us)}, {"dur", r3((g.end - g.start) * us)},
                        {"args", {{"tasks", g.work.tasks}, {"flops", g.work.flops}, {"hbm_bytes", std::round(g.work.hbm_bytes)}}}});
    }
    // Spans of one track merged per step kind (task group or barrier) when it holds several SMs.
    struct Merged {
      double start = -1, end = -1;
      int64_t tasks = 0;
      int pg = 0;
    };
    std::map<std::tuple<int, int, int>, Merged> merged;  // (track, kind: 0 task / 1 barrier, index)
    for (const models::GpuSpan& s : res.spans) {
      if (s.start < 0 || s.end < 0) continue;
      Merged& m = merged[{s.sm / per_track, s.seq >= 0 ? 0 : 1, s.seq >= 0 ? s.seq : s.barrier}];
      m.start = m.start < 0 ? s.start : std::min(m.start, s.start);
      m.end = std::max(m.end, s.end);
      m.tasks += s.tasks;
      m.pg = s.pg;
    }
    std::vector<std::pair<std::tuple<int, double, int, int>, Merged>> order;  // by track, start
    for (const auto& [key, m] : merged) order.push_back({{std::get<0>(key), m.start, std::get<1>(key), std::get<2>(key)}, m});
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, m] : order) {
      const auto [track, start, kind, index] = key;
      std::string name;
      OJson args = {{"pg", m.pg}};
      if (kind == 0) {
        name = res.seq_labels.at(static_cast<size_t>(index));
        args["tasks"] = m.tasks;
      } else {
        const auto& [begin, end] = res.barrier_ranges.at(static_cast<size_t>(index));
        name = "barrier [" + std::to_string(begin) + "," + std::to_string(end) + ")";
      }
      events.push_back({{"name", name}, {"ph", "X"}, {"pid", res.rank}, {"tid", track + 1}, {"ts", r3(start * us)},
                        {"dur", r3((m.end - m.start) * us)}, {"args", args}});
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

namespace {

OJson range_json(const gpu::Range& r) {
  OJson j = OJson::array({r.begin, r.end});
  if (r.step != 1) j.push_back(r.step);
  return j;
}

OJson tags_json(const std::vector<gpu::Tag>& tags) {
  OJson j = OJson::array();
  for (const gpu::Tag& t : tags) j.push_back({t.remote_rank, t.tag});
  return j;
}

OJson tensor_json(const gpu::Tensor& t, const gpu::Program& p) {
  OJson buf = {{"Id", t.buffer_id}, {"Rank", t.buffer_rank}, {"SendTags", OJson::array()}, {"RecvTags", OJson::array()}};
  if (const gpu::Buffer* b = p.find_buffer(t.buffer_id)) {
    buf["Rank"] = b->rank;
    buf["SendTags"] = tags_json(b->send_tags);
    buf["RecvTags"] = tags_json(b->recv_tags);
    if (b->is_external) buf["IsExternal"] = true;
  }
  return {{"Id", t.id}, {"DataType", gpu::data_type_name(t.dtype)}, {"Shape", t.shape}, {"Strides", t.strides},
          {"Offsets", t.offsets}, {"PaddedShape", t.padded_shape}, {"Buffer", buf}};
}

OJson arg_json(const gpu::ArgValue& a, const gpu::Program& p) {
  OJson v;
  switch (a.type) {
    case gpu::ArgType::Int: case gpu::ArgType::Int64: case gpu::ArgType::UInt32: v = a.int_value; break;
    case gpu::ArgType::UInt64: v = a.uint_value; break;
    case gpu::ArgType::Bool: v = a.bool_value; break;
    case gpu::ArgType::Float: v = a.float_value; break;
    case gpu::ArgType::Dims: v = a.dims; break;
    case gpu::ArgType::Tensor: v = a.tensor ? tensor_json(*a.tensor, p) : OJson(); break;
    case gpu::ArgType::Offset: v = {{"BufferId", a.offset_buffer_id}, {"Value", a.offset_value}}; break;
  }
  return {{gpu::arg_type_name(a.type), v}};
}

OJson config_json(const gpu::OpConfig& c) {
  OJson j;
  j["NumWarps"] = c.num_warps;
  j["SramBytes"] = c.sram_bytes;
  if (!c.tile.empty()) j["Tile"] = c.tile;
  if (c.tile_shape_mnk) j["TileShapeMNK"] = *c.tile_shape_mnk;
  if (c.tile_pad_mnk) j["TilePadMNK"] = *c.tile_pad_mnk;
  if (!c.impl_type.empty()) j["ImplType"] = c.impl_type;
  if (!c.channel_type.empty()) j["ChannelType"] = c.channel_type;
  if (!c.packet_type.empty()) j["PacketType"] = c.packet_type;
  if (c.signal) j["Signal"] = *c.signal;
  if (c.wait) j["Wait"] = *c.wait;
  for (const auto& [k, v] : c.other) j[k] = OJson::parse(v);
  j["NumTasks"] = c.num_tasks;
  return j;
}

}  // namespace

OJson plan_to_json(const gpu::Program& p) {
  OJson j;
  j["Rank"] = p.rank;
  j["WorldSize"] = p.world_size;
  if (!p.architecture.empty()) j["Architecture"] = p.architecture;
  j["NumProcessors"] = p.num_processors;
  j["NumWarpsPerProcessor"] = p.num_warps_per_processor;
  j["TaskInfos"] = OJson::array();
  for (const gpu::TaskInfo& t : p.task_infos) {
    OJson ops = OJson::array();
    for (const gpu::Op& op : t.ops) {
      OJson o = {{"Type", gpu::op_type_name(op.type)}, {"Name", op.name}, {"IsVirtual", op.is_virtual}};
      for (const auto& [key, list] : {std::make_pair("ReadTensors", &op.read_tensors),
                                      std::make_pair("WriteTensors", &op.write_tensors),
                                      std::make_pair("ResultTensors", &op.result_tensors)}) {
        o[key] = OJson::array();
        for (const gpu::Tensor& x : *list) o[key].push_back(tensor_json(x, p));
      }
      o["Args"] = OJson::object();
      for (const auto& [name, a] : op.args) o["Args"][name] = arg_json(a, p);
      if (op.config.present) o["Config"] = config_json(op.config);
      ops.push_back(o);
    }
    j["TaskInfos"].push_back({{"Id", t.id}, {"NumWarps", t.num_warps}, {"SramBytes", t.sram_bytes}, {"Ops", ops}});
  }
  j["ProcessorGroups"] = OJson::array();
  for (const gpu::ProcessorGroup& pg : p.processor_groups) {
    OJson rgs = OJson::array();
    for (const gpu::ResourceGroup& rg : pg.resource_groups) {
      OJson tgs = OJson::array();
      for (const gpu::TaskGroup& tg : rg.task_groups)
        tgs.push_back({{"TaskId", tg.task_id}, {"TaskRange", range_json(tg.task_range)}, {"Granularity", tg.granularity}});
      rgs.push_back({{"ProcessorRange", range_json(rg.processor_range)}, {"WarpRange", range_json(rg.warp_range)},
                     {"SramRange", range_json(rg.sram_range)}, {"TaskGroups", tgs}});
    }
    j["ProcessorGroups"].push_back({{"ProcessorRange", range_json(pg.processor_range)}, {"ResourceGroups", rgs}});
  }
  return j;
}

}  // namespace npusim::report
