// Checks that need more than one plan file: model vs plan, plan vs device, ranks vs ranks.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "frontends/ark/ark_reader.h"

namespace npusim::frontends {

namespace {

struct Located {
  const gpu::Tensor* tensor;
  const gpu::Op* op;
};

void for_each_op(const gpu::Model& m, const std::function<void(const gpu::Op&)>& f) {
  for (const gpu::Node& n : m.nodes)
    for (const gpu::Op& op : n.ops) f(op);
}

void for_each_op(const gpu::Program& p, const std::function<void(const gpu::Op&)>& f) {
  for (const gpu::TaskInfo& t : p.task_infos)
    for (const gpu::Op& op : t.ops) f(op);
}

std::string describe(const gpu::Tensor& t) {
  return std::string(gpu::data_type_name(t.dtype)) + " " + gpu::dims_str(t.shape);
}

}  // namespace

void cross_check(const gpu::Model& model, const gpu::Program& plan) {
  const std::string in_model = " in the model (" + model.source + ")";
  if (plan.rank != model.rank)
    throw InputError(plan.source, "/Rank", "plan is for rank " + std::to_string(plan.rank) + " but the model" +
                                               " (" + model.source + ") is for rank " + std::to_string(model.rank));
  if (plan.world_size != model.world_size)
    throw InputError(plan.source, "/WorldSize", "WorldSize " + std::to_string(plan.world_size) + " differs from " +
                                                    std::to_string(model.world_size) + in_model);

  std::map<int64_t, Located> model_tensors;
  std::set<int64_t> model_written;
  for_each_op(model, [&](const gpu::Op& op) {
    for (const auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
      for (const gpu::Tensor& t : *list) model_tensors.emplace(t.id, Located{&t, &op});
    for (const auto* list : {&op.write_tensors, &op.result_tensors})
      for (const gpu::Tensor& t : *list) model_written.insert(t.id);
  });

  // Same id, same data: dtype and logical shape (the buffer may change: plans re-buffer).
  std::map<int64_t, std::set<gpu::OpType>> plan_writers;
  std::set<int64_t> plan_buffers;
  for_each_op(plan, [&](const gpu::Op& op) {
    for (const auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
      for (const gpu::Tensor& t : *list) {
        plan_buffers.insert(t.buffer_id);
        auto it = model_tensors.find(t.id);
        if (it != model_tensors.end() &&
            (it->second.tensor->dtype != t.dtype || it->second.tensor->shape != t.shape))
          throw InputError(plan.source, t.pointer,
                           "tensor " + std::to_string(t.id) + " is " + describe(t) + " here but " +
                               describe(*it->second.tensor) + in_model + " at " + it->second.tensor->pointer);
      }
    for (const gpu::Tensor& t : op.write_tensors) plan_writers[t.id].insert(op.type);
  });

  // Every computation of the model happens in the plan, possibly split or fused.
  for_each_op(model, [&](const gpu::Op& op) {
    if (op.is_virtual) return;
    for (const gpu::Tensor& t : op.write_tensors) {
      auto it = plan_writers.find(t.id);
      if (it == plan_writers.end() || !it->second.count(op.type))
        throw InputError(plan.source, "/TaskInfos",
                         std::string("no ") + gpu::op_type_name(op.type) + " op writes tensor " +
                             std::to_string(t.id) + ", which model op '" + op.name + "' (" + model.source +
                             ": " + op.pointer + ") writes");
    }
  });

  // Model inputs (read, never written) must still feed the plan, through their buffer.
  for (const auto& [id, loc] : model_tensors) {
    if (model_written.count(id)) continue;
    if (!plan_buffers.count(loc.tensor->buffer_id))
      throw InputError(plan.source, "/TaskInfos",
                       "no op uses buffer " + std::to_string(loc.tensor->buffer_id) + " of model input tensor " +
                           std::to_string(id) + " (" + model.source + ": " + loc.tensor->pointer + ")");
  }
}

void validate_against_device(const gpu::Program& plan, int num_processors, int warps_per_processor,
                             int64_t smem_bytes) {
  if (num_processors <= 0 || warps_per_processor <= 0 || smem_bytes < kArkSmemReservedBytes)
    throw InternalError("validate_against_device: bad device description");
  if (plan.num_processors > num_processors)
    throw InputError(plan.source, "/NumProcessors",
                     "plan uses " + std::to_string(plan.num_processors) + " processors, the device has " +
                         std::to_string(num_processors));
  if (plan.num_warps_per_processor > warps_per_processor)
    throw InputError(plan.source, "/NumWarpsPerProcessor",
                     "plan uses " + std::to_string(plan.num_warps_per_processor) +
                         " warps per processor, the device runs at most " + std::to_string(warps_per_processor) +
                         " per thread block");
  const int64_t usable = smem_bytes - kArkSmemReservedBytes;
  const std::string fits = " bytes, more than the device's " + std::to_string(smem_bytes) +
                           " bytes of shared memory less the " + std::to_string(kArkSmemReservedBytes) +
                           " ARK reserves (" + std::to_string(usable) + ")";
  for (const gpu::TaskInfo& t : plan.task_infos)
    if (t.sram_bytes > usable)
      throw InputError(plan.source, t.pointer + "/SramBytes", "task needs " + std::to_string(t.sram_bytes) + fits);
  for (const gpu::ProcessorGroup& pg : plan.processor_groups)
    for (const gpu::ResourceGroup& rg : pg.resource_groups)
      if (rg.sram_range.end > usable)
        throw InputError(plan.source, rg.pointer + "/SramRange",
                         "SramRange " + rg.sram_range.str() + " reaches " + std::to_string(rg.sram_range.end) + fits);
}

namespace {

// "sender sends to receiver with tag", as one plan declares it.
struct Claim {
  int sender, receiver;
  int64_t tag;
  const gpu::Program* plan;
  std::string pointer;
};
using Key = std::tuple<int, int, int64_t>;

}  // namespace

void check_send_recv_pairs(const std::vector<gpu::Program>& plans) {
  if (plans.empty()) return;
  const int world = plans[0].world_size;
  std::map<int, const gpu::Program*> by_rank;
  for (const gpu::Program& p : plans) {
    if (p.world_size != world)
      throw InputError(p.source, "/WorldSize", "WorldSize " + std::to_string(p.world_size) + " differs from " +
                                                   std::to_string(world) + " of " + plans[0].source);
    if (!by_rank.emplace(p.rank, &p).second)
      throw InputError(p.source, "/Rank", "rank " + std::to_string(p.rank) + " also comes from " +
                                              by_rank[p.rank]->source);
  }
  for (int r = 0; r < world; ++r)
    if (!by_rank.count(r))
      throw InputError(plans[0].source, "/WorldSize",
                       "WorldSize is " + std::to_string(world) + " but no plan of rank " + std::to_string(r) +
                           " was given (each rank's plan is needed to pair sends with receives)");

  std::vector<Claim> sends, recvs;
  std::set<Key> send_keys, recv_keys;
  for (const auto& rank_plan : by_rank) {
    const int r = rank_plan.first;  // (not a structured binding: clang cannot capture one before C++20)
    const auto& p = rank_plan.second;
    for (const gpu::Buffer& b : p->buffers) {
      int owner = b.owner(r);
      auto add = [&](int s, int d, const gpu::Tag& t, const std::string& ptr) {
        Claim c{s, d, t.tag, p, ptr};
        if (s == r) { sends.push_back(c); send_keys.insert({s, d, t.tag}); }
        if (d == r) { recvs.push_back(c); recv_keys.insert({s, d, t.tag}); }
      };
      for (size_t i = 0; i < b.send_tags.size(); ++i) {
        int peer = b.send_tags[i].remote_rank < 0 ? r : b.send_tags[i].remote_rank;
        add(owner, peer, b.send_tags[i], b.pointer + "/SendTags/" + std::to_string(i));
      }
      for (size_t i = 0; i < b.recv_tags.size(); ++i) {
        int peer = b.recv_tags[i].remote_rank < 0 ? r : b.recv_tags[i].remote_rank;
        add(peer, owner, b.recv_tags[i], b.pointer + "/RecvTags/" + std::to_string(i));
      }
    }
  }
  for (const Claim& c : sends)
    if (!recv_keys.count({c.sender, c.receiver, c.tag}))
      throw InputError(c.plan->source, c.pointer,
                       "rank " + std::to_string(c.sender) + " sends to rank " + std::to_string(c.receiver) +
                           " with tag " + std::to_string(c.tag) + ", but the plan of rank " +
                           std::to_string(c.receiver) + " (" + by_rank[c.receiver]->source +
                           ") declares no receive from rank " + std::to_string(c.sender) + " with that tag");
  for (const Claim& c : recvs)
    if (!send_keys.count({c.sender, c.receiver, c.tag}))
      throw InputError(c.plan->source, c.pointer,
                       "rank " + std::to_string(c.receiver) + " receives from rank " + std::to_string(c.sender) +
                           " with tag " + std::to_string(c.tag) + ", but the plan of rank " +
                           std::to_string(c.sender) + " (" + by_rank[c.sender]->source +
                           ") declares no send to rank " + std::to_string(c.receiver) + " with that tag");
}

}  // namespace npusim::frontends
