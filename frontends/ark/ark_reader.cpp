// ARK model and plan files: top-level structure and the checks that need the whole file.
#include "frontends/ark/ark_reader.h"

#include <map>
#include <optional>
#include <tuple>

#include "frontends/ark/ark_parse.h"

namespace npusim::frontends {

using ark_detail::BufferTable;

namespace {

constexpr int64_t kMaxId = 2147483647;
constexpr int64_t kMaxCount = int64_t{1} << 40;

int read_world_size(const json::Cursor& root) {
  return static_cast<int>(root.at("WorldSize").as_int_in(1, 1 << 20));
}

// Plans that ARK's PR #205 branch wrote on 2024-05-16/17 (examples/tutorial/*plan.json @cd15cc16
// .. b1d73e57) say "WorldSize": 0: the Python DefaultPlanner (python/ark/runtime.py) planned a
// copy of the model (Model::compress()) and Model's copy constructor did not copy world_size_
// (ark/include/ark/model.hpp @cd15cc16; fixed in b1d73e57). ARK ran them as one process: the
// executor took its world size from its own arguments (ark/api/executor.cpp), and codegen.cpp
// used the plan's WorldSize only in "if (world_size_ > 1) def_channels(...)", so 0 acted as 1.
// Communication in such a plan had no channels and could not compile, so Rank must be 0 and
// every buffer local, which WorldSize 1 enforces. Model files never held 0 (Rank and
// WorldSize entered the model file in b1d73e57, with the fix).
int read_plan_world_size(const json::Cursor& root) {
  json::Cursor ws = root.at("WorldSize");
  if (ws.value().is_number_integer() && ws.as_int() == 0) {
    json::Cursor rank = root.at("Rank");
    if (rank.as_int() != 0)
      rank.fail("Rank " + std::to_string(rank.as_int()) +
                " with WorldSize 0: ARK (May 2024) ran a WorldSize-0 plan as a single process, which is rank 0");
    return 1;
  }
  return read_world_size(root);
}

bool has(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t y : v)
    if (y == x) return true;
  return false;
}

// Producer/consumer ids exist, are not the node itself, are listed on both ends, and the
// links form no cycle.
void check_links(const json::Cursor& nodes_c, const gpu::Model& m) {
  std::map<int64_t, size_t> index;
  for (size_t i = 0; i < m.nodes.size(); ++i) index[m.nodes[i].id] = i;
  // Two passes, so that an unknown id is reported as such rather than as a missing back link.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < m.nodes.size(); ++i) {
      const gpu::Node& n = m.nodes[i];
      json::Cursor nc = nodes_c.at(i);
      for (auto [key, ids, back_key] :
           {std::make_tuple("ProducerNodeIds", &n.producer_ids, "ConsumerNodeIds"),
            std::make_tuple("ConsumerNodeIds", &n.consumer_ids, "ProducerNodeIds")}) {
        for (size_t j = 0; j < ids->size(); ++j) {
          int64_t other = (*ids)[j];
          json::Cursor at = nc.at(key).at(j);
          auto it = index.find(other);
          if (pass == 0) {
            if (it == index.end()) at.fail("unknown node id " + std::to_string(other));
            if (other == n.id) at.fail("node " + std::to_string(n.id) + " lists itself");
            continue;
          }
          const gpu::Node& o = m.nodes[it->second];
          const auto& back = std::string(back_key) == "ConsumerNodeIds" ? o.consumer_ids : o.producer_ids;
          if (!has(back, n.id))
            at.fail("node " + std::to_string(n.id) + " lists node " + std::to_string(other) + " in " + key +
                    " but node " + std::to_string(other) + " (" + o.pointer + ") does not list " +
                    std::to_string(n.id) + " in " + back_key);
        }
      }
    }
  }
  // Kahn's algorithm over producer -> consumer edges.
  std::map<int64_t, size_t> pending;
  std::vector<int64_t> ready;
  for (const gpu::Node& n : m.nodes) {
    pending[n.id] = n.producer_ids.size();
    if (n.producer_ids.empty()) ready.push_back(n.id);
  }
  size_t done = 0;
  while (!ready.empty()) {
    int64_t id = ready.back();
    ready.pop_back();
    ++done;
    for (int64_t c : m.nodes[index[id]].consumer_ids)
      if (--pending[c] == 0) ready.push_back(c);
  }
  if (done != m.nodes.size()) {
    for (const gpu::Node& n : m.nodes)
      if (pending[n.id] > 0)
        nodes_c.at(index[n.id]).fail("node " + std::to_string(n.id) +
                                     " is on (or after) a cycle of producer/consumer links");
  }
}

std::string id_list(const std::vector<gpu::TaskInfo>& tasks) {
  std::string s;
  for (const gpu::TaskInfo& t : tasks) s += (s.empty() ? "" : ", ") + std::to_string(t.id);
  return s;
}

gpu::TaskInfo parse_task_info(const json::Cursor& c, const gpu::Program& p, BufferTable& bufs) {
  c.expect_object();
  gpu::TaskInfo t;
  t.pointer = c.pointer();
  t.id = c.at("Id").as_int_in(0, kMaxId);
  t.num_warps = static_cast<int>(c.at("NumWarps").as_int_in(1, 1024));
  t.sram_bytes = c.at("SramBytes").as_int_in(0, kMaxCount);
  if (t.num_warps > p.num_warps_per_processor)
    c.at("NumWarps").fail("NumWarps " + std::to_string(t.num_warps) + " exceeds NumWarpsPerProcessor " +
                          std::to_string(p.num_warps_per_processor));
  json::Cursor ops = c.at("Ops");
  if (ops.size() == 0) ops.fail("a TaskInfo needs at least one op");
  std::optional<size_t> first;  // first non-virtual op: sets the shared NumTasks
  for (const json::Cursor& oc : ops.elements()) {
    t.ops.push_back(ark_detail::parse_op(oc, bufs, true));
    const gpu::Op& op = t.ops.back();
    if (!op.config.present) continue;
    json::Cursor cfg = oc.at("Config");
    if (op.config.num_warps > t.num_warps)
      cfg.at("NumWarps").fail("op needs " + std::to_string(op.config.num_warps) + " warps but its TaskInfo has NumWarps " +
                              std::to_string(t.num_warps));
    if (op.config.sram_bytes > t.sram_bytes)
      cfg.at("SramBytes").fail("op needs " + std::to_string(op.config.sram_bytes) +
                               " bytes of SRAM but its TaskInfo has SramBytes " + std::to_string(t.sram_bytes));
    if (op.is_virtual) continue;
    if (!first) {
      first = t.ops.size() - 1;
      t.num_tasks = op.config.num_tasks;
    } else if (op.config.num_tasks != t.num_tasks) {
      cfg.at("NumTasks").fail("NumTasks " + std::to_string(op.config.num_tasks) + " differs from " +
                              std::to_string(t.num_tasks) + " of " + t.ops[*first].pointer +
                              " (all ops of a TaskInfo run with the same task index, so they share NumTasks)");
    }
  }
  return t;
}

// Task instances a plan may run in all (every TaskRange of every processor group): each one is
// simulated and its id held in the per-processor schedule, about 16 B and a microsecond each,
// so 2^28 of them is ~4 GiB. The shipped and example plans run under 10^6.
constexpr int64_t kMaxPlanTasks = int64_t{1} << 28;

gpu::TaskGroup parse_task_group(const json::Cursor& c, const gpu::ResourceGroup& rg, const gpu::Program& p,
                                int64_t& plan_tasks) {
  c.expect_object();
  gpu::TaskGroup g;
  g.pointer = c.pointer();
  g.task_id = c.get_int("TaskId");
  const gpu::TaskInfo* task = p.find_task(g.task_id);
  if (!task)
    c.at("TaskId").fail("unknown TaskId " + std::to_string(g.task_id) + " (TaskInfo ids: " + id_list(p.task_infos) + ")");
  g.task_range = ark_detail::parse_range(c.at("TaskRange"), true);
  if (g.task_range.size() > 0 && g.task_range.last() >= task->num_tasks)
    c.at("TaskRange").fail("TaskRange " + g.task_range.str() + " must lie within [0, " +
                           std::to_string(task->num_tasks) + ") (NumTasks of TaskInfo " +
                           std::to_string(task->id) + ")");
  plan_tasks += std::max<int64_t>(0, g.task_range.end - g.task_range.begin);
  if (plan_tasks > kMaxPlanTasks)
    c.at("TaskRange").fail("the plan runs " + std::to_string(plan_tasks) + " tasks in all up to this TaskRange, more than " +
                           std::to_string(kMaxPlanTasks) + " (2^28; each task is simulated and scheduled one by one: ~16 B "
                           "and ~1 us of simulation each)");
  g.granularity = c.at("Granularity").as_int_in(1, kMaxCount);
  if (gpu::num_slots(rg, *task) == 0)
    c.fail("no slot for TaskId " + std::to_string(task->id) + ": it needs " + std::to_string(task->num_warps) +
           " warps and " + std::to_string(task->sram_bytes) + " bytes of SRAM, the resource group has " +
           std::to_string(rg.warp_range.size()) + " warps (WarpRange " + rg.warp_range.str() + ") and " +
           std::to_string(rg.sram_range.size()) + " bytes (SramRange " + rg.sram_range.str() + ")");
  return g;
}

gpu::Range processor_range(const json::Cursor& c, const gpu::Program& p) {
  gpu::Range r = ark_detail::parse_range(c, false);
  if (r.last() >= p.num_processors)
    c.fail("processor range " + r.str() + " exceeds NumProcessors " + std::to_string(p.num_processors));
  return r;
}

gpu::ProcessorGroup parse_processor_group(const json::Cursor& c, const gpu::Program& p, int64_t& plan_tasks) {
  c.expect_object();
  gpu::ProcessorGroup pg;
  pg.pointer = c.pointer();
  pg.processor_range = processor_range(c.at("ProcessorRange"), p);
  for (const json::Cursor& rc : c.at("ResourceGroups").elements()) {
    rc.expect_object();
    gpu::ResourceGroup rg;
    rg.pointer = rc.pointer();
    rg.processor_range = processor_range(rc.at("ProcessorRange"), p);
    for (int64_t x = rg.processor_range.begin; x < rg.processor_range.end; x += rg.processor_range.step)
      if (!pg.processor_range.contains(x))
        rc.at("ProcessorRange").fail("processor " + std::to_string(x) + " of " + rg.processor_range.str() +
                                     " is not in the processor group's range " + pg.processor_range.str());
    rg.warp_range = ark_detail::parse_range(rc.at("WarpRange"), false);
    if (rg.warp_range.last() >= p.num_warps_per_processor)
      rc.at("WarpRange").fail("warp range " + rg.warp_range.str() + " exceeds NumWarpsPerProcessor " +
                              std::to_string(p.num_warps_per_processor));
    rg.sram_range = ark_detail::parse_range(rc.at("SramRange"), true);
    if (rg.sram_range.step != 1)
      rc.at("SramRange").fail("SramRange " + rg.sram_range.str() + " must have step 1");
    for (const json::Cursor& tc : rc.at("TaskGroups").elements())
      rg.task_groups.push_back(parse_task_group(tc, rg, p, plan_tasks));
    pg.resource_groups.push_back(std::move(rg));
  }
  return pg;
}

}  // namespace

gpu::Model parse_ark_model(const json::Json& doc, const std::string& source) {
  json::Cursor root(doc, source);
  root.expect_object();
  gpu::Model m;
  m.source = source;
  m.world_size = read_world_size(root);
  m.rank = static_cast<int>(root.at("Rank").as_int_in(0, m.world_size - 1));
  BufferTable bufs{m.rank, m.world_size, {}};
  json::Cursor nodes = root.at("Nodes");
  std::map<int64_t, std::string> seen;
  for (const json::Cursor& nc : nodes.elements()) {
    nc.expect_object();
    gpu::Node n;
    n.pointer = nc.pointer();
    n.id = nc.at("Id").as_int_in(0, kMaxId);
    if (!seen.emplace(n.id, n.pointer).second)
      nc.at("Id").fail("duplicate node Id " + std::to_string(n.id) + " (also at " + seen[n.id] + ")");
    n.producer_ids = nc.get_int_array("ProducerNodeIds");
    n.consumer_ids = nc.get_int_array("ConsumerNodeIds");
    bool has_ops = nc.has("Ops"), has_op = nc.has("Op");
    if (has_ops && has_op) nc.fail("node has both 'Ops' (May-2024 files) and 'Op' (later files); expected one");
    if (has_ops) {
      for (const json::Cursor& oc : nc.at("Ops").elements()) n.ops.push_back(ark_detail::parse_op(oc, bufs, false));
    } else if (has_op) {
      n.ops.push_back(ark_detail::parse_op(nc.at("Op"), bufs, false));
    } else {
      nc.fail_at("Op", "missing required field 'Op' (or an 'Ops' array)");
    }
    m.nodes.push_back(std::move(n));
  }
  check_links(nodes, m);
  m.buffers = bufs.sorted();
  gpu::derive_costs(m);
  return m;
}

gpu::Model read_ark_model(const std::string& path) { return parse_ark_model(json::read_json_file(path), path); }

gpu::Program parse_ark_plan(const json::Json& doc, const std::string& source) {
  json::Cursor root(doc, source);
  root.expect_object();
  gpu::Program p;
  p.source = source;
  p.world_size = read_plan_world_size(root);
  p.rank = static_cast<int>(root.at("Rank").as_int_in(0, p.world_size - 1));
  p.architecture = root.optional_string("Architecture").value_or("");
  p.num_processors = static_cast<int>(root.at("NumProcessors").as_int_in(1, 1 << 20));
  p.num_warps_per_processor = static_cast<int>(root.at("NumWarpsPerProcessor").as_int_in(1, 1024));
  BufferTable bufs{p.rank, p.world_size, {}};
  std::map<int64_t, std::string> seen;
  for (const json::Cursor& tc : root.at("TaskInfos").elements()) {
    p.task_infos.push_back(parse_task_info(tc, p, bufs));
    const gpu::TaskInfo& t = p.task_infos.back();
    if (!seen.emplace(t.id, t.pointer).second)
      tc.at("Id").fail("duplicate TaskInfo Id " + std::to_string(t.id) + " (also at " + seen[t.id] + ")");
  }
  int64_t plan_tasks = 0;
  for (const json::Cursor& pc : root.at("ProcessorGroups").elements())
    p.processor_groups.push_back(parse_processor_group(pc, p, plan_tasks));
  p.buffers = bufs.sorted();
  gpu::derive_costs(p);
  return p;
}

gpu::Program read_ark_plan(const std::string& path) { return parse_ark_plan(json::read_json_file(path), path); }

}  // namespace npusim::frontends
