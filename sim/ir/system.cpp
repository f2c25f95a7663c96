// The multi-device workload: name resolution, the pipeline rules and the topological order
// (rules listed in system.h; docs/format_pipeline.md).
#include "sim/ir/system.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <functional>
#include <set>
#include <unordered_map>

#include "sim/ir/error.h"

namespace npusim::ir {

const char* supertask_kind_name(SuperTaskKind k) {
  switch (k) {
    case SuperTaskKind::Input: return "input";
    case SuperTaskKind::Output: return "output";
    case SuperTaskKind::Compute: return "compute";
    case SuperTaskKind::Communication: return "communication";
  }
  return "?";
}

const char* collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::Send: return "send";
    case CollectiveKind::Recv: return "recv";
    case CollectiveKind::Reduce: return "reduce";
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::Gather: return "gather";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllToAll: return "all_to_all";
    case CollectiveKind::Broadcast: return "broadcast";
  }
  return "?";
}

std::optional<CollectiveKind> parse_collective(const std::string& s) {
  static const std::map<std::string, CollectiveKind> names = {
      {"send", CollectiveKind::Send},           {"recv", CollectiveKind::Recv},
      {"reduce", CollectiveKind::Reduce},       {"all_reduce", CollectiveKind::AllReduce},
      {"gather", CollectiveKind::Gather},       {"all_gather", CollectiveKind::AllGather},
      {"reduce_scatter", CollectiveKind::ReduceScatter}, {"all_to_all", CollectiveKind::AllToAll},
      {"broadcast", CollectiveKind::Broadcast}};
  auto it = names.find(s);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

const std::vector<std::string>& collective_metadata_keys(CollectiveKind k) {
  static const std::vector<std::string> none, reduce{"dst", "reduce_op"}, all_gather{"dim"},
      all_reduce{"reduce_op"}, reduce_scatter{"dim", "reduce_op"}, all_to_all{"dst_dim", "src_dim"},
      broadcast{"src"}, gather{"dim", "dst"};
  switch (k) {
    case CollectiveKind::Send:
    case CollectiveKind::Recv: return none;
    case CollectiveKind::Reduce: return reduce;
    case CollectiveKind::AllGather: return all_gather;
    case CollectiveKind::AllReduce: return all_reduce;
    case CollectiveKind::ReduceScatter: return reduce_scatter;
    case CollectiveKind::AllToAll: return all_to_all;
    case CollectiveKind::Broadcast: return broadcast;
    case CollectiveKind::Gather: return gather;
  }
  return none;
}

std::optional<DType> parse_pipeline_dtype(const std::string& s) {
  static const std::map<std::string, DType> names = {
      {"f64", DType::Float64}, {"f32", DType::Float32}, {"f16", DType::Float16}, {"bf16", DType::BFloat16},
      {"f8", DType::Float8E4M3}, {"bool", DType::Bool},   {"i64", DType::Int64},   {"i32", DType::Int32},
      {"i16", DType::Int16},   {"i8", DType::Int8},     {"u8", DType::UInt8}};
  auto it = names.find(s);
  if (it != names.end()) return it->second;
  return parse_dtype(s);
}

namespace {

std::string escape(const std::string& token) {
  std::string r;
  for (char c : token) {
    if (c == '~') r += "~0";
    else if (c == '/') r += "~1";
    else r += c;
  }
  return r;
}

std::string join(const std::string& base, const std::string& key) { return base + "/" + escape(key); }
std::string join(const std::string& base, size_t i) { return base + "/" + std::to_string(i); }

std::string quoted_list(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : ", ") + s;
  return r;
}

std::string range_str(const std::pair<int64_t, int64_t>& r) {
  return "[" + std::to_string(r.first) + ", " + std::to_string(r.second) + ")";
}

// Checks a placements list against the shape it slices (`stored`, when known) and the shape of
// the slice itself (`own`, when given). `base` is the pointer of the placements array.
void check_placements(const std::string& file, const std::string& base,
                      const std::vector<std::pair<int64_t, int64_t>>& pl, const std::optional<Shape>& stored,
                      const std::string& stored_what, const Shape* own, const std::string& own_what) {
  if (stored && pl.size() != stored->size())
    throw InputError(file, base, "has " + std::to_string(pl.size()) + " ranges but " + stored_what + " " +
                                     shape_str(*stored) + " has rank " + std::to_string(stored->size()) +
                                     " (one [start, end) per dimension)");
  if (own && pl.size() != own->size())
    throw InputError(file, base, "has " + std::to_string(pl.size()) + " ranges but " + own_what + " " +
                                     shape_str(*own) + " has rank " + std::to_string(own->size()));
  for (size_t i = 0; i < pl.size(); ++i) {
    const auto& r = pl[i];
    const std::string p = join(base, i);
    if (r.first < 0 || r.second < r.first)
      throw InputError(file, p, "range " + range_str(r) + " is reversed or negative");
    if (stored && r.second > (*stored)[i])
      throw InputError(file, p, "range " + range_str(r) + " exceeds dimension " + std::to_string(i) + " (" +
                                    std::to_string((*stored)[i]) + ") of " + stored_what + " " + shape_str(*stored));
    if (own && r.second - r.first != (*own)[i])
      throw InputError(file, p, "range " + range_str(r) + " has " + std::to_string(r.second - r.first) +
                                    " elements but dimension " + std::to_string(i) + " of " + own_what + " " +
                                    shape_str(*own) + " is " + std::to_string((*own)[i]));
  }
}

std::string tensor_desc(const SystemTensor& t) { return "'" + t.name + "' " + shape_str(t.shape) + " " + t.dtype_name; }

class Finalizer {
 public:
  explicit Finalizer(System& s) : m_s(s), m_file(s.source) {}

  void run() {
    index();
    tensors();
    supertasks();
    producers_and_consumers();
    collectives();
    placements();
    m_s.order = topological_order(m_s);
  }

 private:
  [[noreturn]] void fail(const std::string& where, const std::string& what) { throw InputError(m_file, where, what); }

  const std::string& st_ptr(SuperTask& t) {
    if (t.pointer.empty()) t.pointer = join("/supertasks", t.id);
    return t.pointer;
  }

  void index() {
    m_dev.clear();
    for (size_t i = 0; i < m_s.devices.size(); ++i) {
      SystemDevice& d = m_s.devices[i];
      if (d.pointer.empty()) d.pointer = join("/devices", d.id);
      if (!m_dev.emplace(d.id, static_cast<int>(i)).second) fail(d.pointer, "device '" + d.id + "' is defined twice");
    }
    for (size_t i = 0; i < m_s.tensors.size(); ++i) {
      SystemTensor& t = m_s.tensors[i];
      if (t.pointer.empty()) t.pointer = join("/tensors", t.name);
      if (!m_ten.emplace(t.name, static_cast<int>(i)).second) fail(t.pointer, "tensor '" + t.name + "' is defined twice");
    }
    for (size_t i = 0; i < m_s.supertasks.size(); ++i) {
      SuperTask& t = m_s.supertasks[i];
      st_ptr(t);
      if (!m_st.emplace(t.id, static_cast<int>(i)).second) fail(t.pointer, "supertask '" + t.id + "' is defined twice");
    }
  }

  void tensors() {
    for (SystemTensor& t : m_s.tensors) {
      for (size_t i = 0; i < t.shape.size(); ++i)
        if (t.shape[i] < 0) fail(join(join(t.pointer, "shape"), i), "dimension " + std::to_string(t.shape[i]) + " < 0");
      if (t.dtype_name.empty()) t.dtype_name = dtype_name(t.dtype);
      t.bytes = num_elements(t.shape) * dtype_bytes(t.dtype);
      t.producer = -1;
      t.consumers.clear();
    }
  }

  void supertasks() {
    int input = -1, output = -1;
    for (size_t i = 0; i < m_s.supertasks.size(); ++i) {
      SuperTask& t = m_s.supertasks[i];
      const std::string& p = t.pointer;
      const bool io = t.kind == SuperTaskKind::Input || t.kind == SuperTaskKind::Output;
      if (io) {
        int& slot = t.kind == SuperTaskKind::Input ? input : output;
        if (slot >= 0)
          fail(p, std::string("a pipeline has one ") + supertask_kind_name(t.kind) + " supertask; '" +
                      m_s.supertasks[slot].id + "' is one already");
        slot = static_cast<int>(i);
        if (!t.device.empty())
          fail(join(p, "device"), std::string("an ") + supertask_kind_name(t.kind) + " supertask has no device");
        if (t.kind == SuperTaskKind::Input && !t.inputs.empty())
          fail(join(p, "inputs"), "an input supertask has no inputs (it emits the pipeline's inputs)");
        if (t.kind == SuperTaskKind::Output && !t.outputs.empty())
          fail(join(p, "outputs"), "an output supertask has no outputs (it takes the pipeline's outputs)");
        t.device_index = -1;
      } else {
        auto it = m_dev.find(t.device);
        if (t.device.empty()) fail(join(p, "device"), std::string("a ") + supertask_kind_name(t.kind) + " supertask needs a device");
        if (it == m_dev.end())
          fail(join(p, "device"), "device '" + t.device + "' is not in /devices");
        t.device_index = it->second;
      }
      if (t.kind == SuperTaskKind::Compute && !t.compute) throw InternalError("compute supertask '" + t.id + "' without its task");
      if (t.kind == SuperTaskKind::Communication && !t.comm)
        throw InternalError("communication supertask '" + t.id + "' without its collective");
      t.input_ids.clear();
      t.output_ids.clear();
      t.input_bytes = t.output_bytes = 0;
      for (size_t k = 0; k < t.inputs.size(); ++k) {
        t.input_ids.push_back(resolve(t.inputs[k], join(join(p, "inputs"), k)));
        t.input_bytes += m_s.tensors[t.input_ids.back()].bytes;
      }
      for (size_t k = 0; k < t.outputs.size(); ++k) {
        t.output_ids.push_back(resolve(t.outputs[k], join(join(p, "outputs"), k)));
        t.output_bytes += m_s.tensors[t.output_ids.back()].bytes;
      }
      if (t.compute) t.compute->bytes = t.input_bytes + t.output_bytes;
    }
    if (input < 0) fail("/supertasks", "the pipeline has no input supertask (kind \"input\")");
    if (output < 0) fail("/supertasks", "the pipeline has no output supertask (kind \"output\")");
  }

  int resolve(const std::string& name, const std::string& where) {
    auto it = m_ten.find(name);
    if (it == m_ten.end()) fail(where, "tensor '" + name + "' is not in /tensors");
    return it->second;
  }

  void producers_and_consumers() {
    for (size_t i = 0; i < m_s.supertasks.size(); ++i) {
      SuperTask& t = m_s.supertasks[i];
      for (size_t k = 0; k < t.output_ids.size(); ++k) {
        SystemTensor& x = m_s.tensors[t.output_ids[k]];
        const std::string where = join(join(t.pointer, "outputs"), k);
        if (x.constant) fail(where, "writes tensor '" + x.name + "', a constant (it has a value)");
        if (x.producer >= 0)
          fail(where, "tensor '" + x.name + "' is produced twice (also by supertask '" + m_s.supertasks[x.producer].id + "')");
        x.producer = static_cast<int>(i);
      }
    }
    for (size_t i = 0; i < m_s.supertasks.size(); ++i) {
      SuperTask& t = m_s.supertasks[i];
      for (size_t k = 0; k < t.input_ids.size(); ++k) {
        SystemTensor& x = m_s.tensors[t.input_ids[k]];
        const std::string where = join(join(t.pointer, "inputs"), k);
        if (std::find(x.consumers.begin(), x.consumers.end(), static_cast<int>(i)) == x.consumers.end())
          x.consumers.push_back(static_cast<int>(i));
        if (x.constant) continue;
        if (x.producer < 0)
          fail(where, "tensor '" + x.name + "' is read but no supertask produces it, and it is not a constant (no value)");
        const SuperTask& prod = m_s.supertasks[x.producer];
        if (t.device_index >= 0 && prod.device_index >= 0 && prod.device_index != t.device_index)
          fail(where, "tensor '" + x.name + "' lives on device '" + prod.device + "' (made by supertask '" + prod.id +
                          "') but supertask '" + t.id + "' runs on device '" + t.device +
                          "'; data crosses devices only through communication supertasks");
      }
    }
    for (SystemTensor& x : m_s.tensors) {
      if (!x.constant && x.producer < 0)
        fail(x.pointer, "tensor '" + x.name + "' is neither a constant (no value) nor produced by any supertask");
      if (x.constant && x.consumers.empty()) m_s.warnings.push_back("constant tensor '" + x.name + "' is not used by any supertask");
    }
  }

  // ---- collectives ----

  void collectives() {
    std::map<std::string, std::vector<int>> groups;  // group -> members, file order
    std::vector<std::string> group_order;
    for (size_t i = 0; i < m_s.supertasks.size(); ++i) {
      SuperTask& t = m_s.supertasks[i];
      if (!t.comm) continue;
      Collective& c = *t.comm;
      if (c.group.empty()) fail(join(t.pointer, "group"), "a communication supertask needs a group");
      check_metadata_keys(t);
      if (!groups.count(c.group)) group_order.push_back(c.group);
      groups[c.group].push_back(static_cast<int>(i));
    }
    for (const std::string& g : group_order) {
      const std::vector<int>& ms = groups[g];
      const bool p2p = std::any_of(ms.begin(), ms.end(), [&](int i) {
        const auto k = m_s.supertasks[i].comm->kind;
        return k == CollectiveKind::Send || k == CollectiveKind::Recv;
      });
      if (p2p)
        send_recv(g, ms);
      else
        group(g, ms);
    }
  }

  void check_metadata_keys(SuperTask& t) {
    Collective& c = *t.comm;
    const auto& keys = collective_metadata_keys(c.kind);
    const std::string mp = join(t.pointer, "metadata");
    const std::string expected =
        keys.empty() ? std::string(collective_name(c.kind)) + " takes no metadata keys"
                     : std::string(collective_name(c.kind)) + " takes exactly " + quoted_list(keys);
    for (const auto& [k, v] : c.metadata)
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        fail(join(mp, k), "unexpected metadata key '" + k + "': " + expected);
    for (const std::string& k : keys)
      if (!c.metadata.count(k)) fail(join(mp, k), "missing metadata key '" + k + "': " + expected);
    c.reduce_op.clear();
    c.dim = c.src_dim = c.dst_dim = std::nullopt;
    c.src.clear();
    c.dst.clear();
    for (const auto& [k, v] : c.metadata) {
      const std::string kp = join(mp, k);
      if (k == "reduce_op") {
        static const std::set<std::string> ops{"sum", "avg", "max", "min"};
        if (v.is_int || !ops.count(v.s))
          fail(kp, "reduce_op must be one of sum, avg, max, min; got " + (v.is_int ? v.str() : "'" + v.s + "'"));
        c.reduce_op = v.s;
      } else if (k == "dim" || k == "src_dim" || k == "dst_dim") {
        if (!v.is_int || v.i < 0) fail(kp, k + " must be a non-negative integer, got " + (v.is_int ? v.str() : "'" + v.s + "'"));
        (k == "dim" ? c.dim : k == "src_dim" ? c.src_dim : c.dst_dim) = v.i;
        // The dimension must exist in the tensor it splits / concatenates.
        const SystemTensor* ref = !t.input_ids.empty() ? &m_s.tensors[t.input_ids[0]]
                                  : !t.output_ids.empty() ? &m_s.tensors[t.output_ids[0]] : nullptr;
        if (ref && v.i >= static_cast<int64_t>(ref->shape.size()))
          fail(kp, k + " " + v.str() + " is outside the rank of tensor " + tensor_desc(*ref));
      } else {  // src, dst: device slot ids
        if (v.is_int) fail(kp, k + " must be a device id (a string), got " + v.str());
        if (!m_dev.count(v.s)) fail(kp, "device '" + v.s + "' is not in /devices");
        (k == "src" ? c.src : c.dst) = v.s;
      }
    }
  }

  void send_recv(const std::string& g, const std::vector<int>& ms) {
    int send = -1, recv = -1;
    for (int i : ms) {
      SuperTask& t = m_s.supertasks[i];
      const CollectiveKind k = t.comm->kind;
      if (k != CollectiveKind::Send && k != CollectiveKind::Recv)
        fail(join(t.pointer, "kind"), "group '" + g + "' pairs a send and a recv; " + collective_name(k) +
                                          " supertask '" + t.id + "' cannot join it");
      int& slot = k == CollectiveKind::Send ? send : recv;
      if (slot >= 0)
        fail(join(t.pointer, "group"), "group '" + g + "' has a second " + collective_name(k) + " ('" +
                                           m_s.supertasks[slot].id + "' is the first); a send/recv group has one of each");
      slot = i;
    }
    if (recv < 0) fail(join(m_s.supertasks[send].pointer, "group"), "send '" + m_s.supertasks[send].id + "' has no recv in group '" + g + "'");
    if (send < 0) fail(join(m_s.supertasks[recv].pointer, "group"), "recv '" + m_s.supertasks[recv].id + "' has no send in group '" + g + "'");
    SuperTask &s = m_s.supertasks[send], &r = m_s.supertasks[recv];
    if (!s.outputs.empty()) fail(join(s.pointer, "outputs"), "a send has no outputs");
    if (s.inputs.size() != 1) fail(join(s.pointer, "inputs"), "a send sends exactly one tensor, got " + std::to_string(s.inputs.size()));
    if (!r.inputs.empty()) fail(join(r.pointer, "inputs"), "a recv has no inputs");
    if (r.outputs.size() != 1) fail(join(r.pointer, "outputs"), "a recv receives exactly one tensor, got " + std::to_string(r.outputs.size()));
    const SystemTensor &a = m_s.tensors[s.input_ids[0]], &b = m_s.tensors[r.output_ids[0]];
    if (a.shape != b.shape || a.dtype != b.dtype)
      fail(join(join(r.pointer, "outputs"), 0), "recv tensor " + tensor_desc(b) + " differs from the sent tensor " + tensor_desc(a));
    if (s.device_index == r.device_index)
      fail(join(r.pointer, "device"), "recv '" + r.id + "' is on device '" + r.device + "', the same as its send '" + s.id + "'");
    for (SuperTask* t : {&s, &r})
      if (t->comm->device_idx < 0 || t->comm->device_idx > 1)
        fail(join(t->pointer, "device_idx"), "device_idx " + std::to_string(t->comm->device_idx) + " is outside group '" + g +
                                                 "' of 2 supertasks (0..1)");
    for (SuperTask* t : {&s, &r}) {
      Collective& c = *t->comm;
      c.members = {send, recv};
      c.devices = {s.device, r.device};
      c.peer = t == &s ? recv : send;
      c.bytes = a.bytes;
    }
  }

  void group(const std::string& g, const std::vector<int>& ms) {
    const int n = static_cast<int>(ms.size());
    const SuperTask& first = m_s.supertasks[ms[0]];
    std::vector<int> by_idx(n, -1);
    std::map<int, int> by_device;
    for (int i : ms) {
      SuperTask& t = m_s.supertasks[i];
      Collective& c = *t.comm;
      if (c.kind != first.comm->kind)
        fail(join(t.pointer, "kind"), "group '" + g + "' mixes " + collective_name(c.kind) + " with " +
                                          collective_name(first.comm->kind) + " (supertask '" + first.id + "')");
      if (c.device_idx < 0 || c.device_idx >= n)
        fail(join(t.pointer, "device_idx"), "device_idx " + std::to_string(c.device_idx) + " is outside group '" + g + "' of " +
                                                std::to_string(n) + " supertasks (0.." + std::to_string(n - 1) + ")");
      int& slot = by_idx[c.device_idx];
      if (slot >= 0)
        fail(join(t.pointer, "device_idx"), "device_idx " + std::to_string(c.device_idx) + " is taken by supertask '" +
                                                m_s.supertasks[slot].id + "' of group '" + g + "' too");
      slot = i;
      auto [it, fresh] = by_device.emplace(t.device_index, i);
      if (!fresh)
        fail(join(t.pointer, "device"), "group '" + g + "' already has supertask '" + m_s.supertasks[it->second].id +
                                            "' on device '" + t.device + "'");
      for (const auto& [k, v] : c.metadata) {
        const MetaValue& w = first.comm->metadata.at(k);
        if (v.is_int != w.is_int || v.i != w.i || v.s != w.s)
          fail(join(join(t.pointer, "metadata"), k), k + " " + v.str() + " differs from " + w.str() + " of supertask '" +
                                                         first.id + "' in the same group");
      }
      if (c.algorithm != first.comm->algorithm)
        fail(join(t.pointer, "algorithm"), "algorithm '" + c.algorithm + "' differs from '" + first.comm->algorithm +
                                               "' of supertask '" + first.id + "' in the same group");
    }
    std::vector<std::string> devices;
    for (int i : by_idx) devices.push_back(m_s.supertasks[i].device);
    for (int i : ms) {
      SuperTask& t = m_s.supertasks[i];
      Collective& c = *t.comm;
      for (const char* key : {"src", "dst"}) {
        const std::string& d = std::string(key) == "src" ? c.src : c.dst;
        if (!d.empty() && std::find(devices.begin(), devices.end(), d) == devices.end())
          fail(join(join(t.pointer, "metadata"), key), "device '" + d + "' is not in group '" + g + "' (" + quoted_list(devices) + ")");
      }
      check_shapes(t, n);
      c.members = by_idx;
      c.devices = devices;
      c.peer = -1;
      c.bytes = t.input_ids.empty() ? t.output_bytes : t.input_bytes;
    }
  }

  // The shape relations of the collectives with one input and one output.
  void check_shapes(const SuperTask& t, int n) {
    const Collective& c = *t.comm;
    if (t.input_ids.size() != 1 || t.output_ids.size() != 1) return;
    const SystemTensor &in = m_s.tensors[t.input_ids[0]], &out = m_s.tensors[t.output_ids[0]];
    const std::string where = join(join(t.pointer, "outputs"), 0);
    Shape expect = in.shape;
    std::string why;
    switch (c.kind) {
      case CollectiveKind::AllReduce:
      case CollectiveKind::Broadcast:
      case CollectiveKind::Reduce: why = "equal to its input"; break;
      case CollectiveKind::AllGather:
        if (!c.dim) return;
        expect[*c.dim] *= n;
        why = "its input with dim " + std::to_string(*c.dim) + " times " + std::to_string(n);
        break;
      case CollectiveKind::ReduceScatter:
        if (!c.dim) return;
        if (expect[*c.dim] % n != 0)
          fail(join(join(t.pointer, "inputs"), 0), "tensor " + tensor_desc(in) + " does not split evenly along dim " +
                                                       std::to_string(*c.dim) + " over " + std::to_string(n) + " devices");
        expect[*c.dim] /= n;
        why = "its input with dim " + std::to_string(*c.dim) + " divided by " + std::to_string(n);
        break;
      default: return;
    }
    if (out.shape != expect)
      fail(where, std::string(collective_name(c.kind)) + " output " + tensor_desc(out) + " should be " + shape_str(expect) +
                      " (" + why + ", input " + tensor_desc(in) + ")");
  }

  // ---- placements ----

  void placements() {
    for (SystemTensor& t : m_s.tensors) {
      if (!t.constant) continue;
      const std::string base = join(join(t.pointer, "value"), "placements");
      const std::string stored = "stored tensor '" + t.param.name + "'" +
                                 (t.param.path.empty() ? "" : " in " + t.param.path);
      check_placements(m_file, base, t.param.placements, t.param.stored_shape, stored, &t.shape, "the tensor's shape");
    }
    const PipelineMetadata& md = m_s.metadata;
    if (!md.present) return;
    for (int side = 0; side < 2; ++side) {
      const auto& slices = side == 0 ? md.input_slices : md.output_slices;
      const auto& origins = side == 0 ? md.inputs : md.outputs;
      for (const MetaTensorSlice& sl : slices) {
        if (!m_ten.count(sl.name)) fail(sl.pointer, "tensor '" + sl.name + "' is not in /tensors");
        if (!m_dev.count(sl.device)) fail(join(sl.pointer, "device"), "device '" + sl.device + "' is not in /devices");
        auto o = std::find_if(origins.begin(), origins.end(), [&](const MetaTensor& m) { return m.name == sl.origin; });
        if (o == origins.end())
          fail(join(sl.pointer, "origin"), "origin '" + sl.origin + "' is not in /metadata/tensors/" + (side == 0 ? "inputs" : "outputs"));
        const SystemTensor& t = m_s.tensors[m_ten.at(sl.name)];
        check_placements(m_file, join(sl.pointer, "placements"), sl.placements, o->shape,
                         "origin '" + o->name + "'", &t.shape, "tensor '" + t.name + "'");
      }
    }
  }

  System& m_s;
  std::string m_file;
  std::unordered_map<std::string, int> m_dev, m_ten, m_st;
};

}  // namespace

void finalize_system(System& s) { Finalizer(s).run(); }

std::vector<int> topological_order(const System& s) {
  const int n = static_cast<int>(s.supertasks.size());
  // Collective groups (not send/recv) are one step: all members wait for each other.
  std::vector<int> comp(n);
  std::map<std::string, int> group_comp;
  int nc = 0;
  for (int i = 0; i < n; ++i) {
    const SuperTask& t = s.supertasks[i];
    if (t.comm && t.comm->kind != CollectiveKind::Send && t.comm->kind != CollectiveKind::Recv) {
      auto [it, fresh] = group_comp.emplace(t.comm->group, nc);
      if (fresh) ++nc;
      comp[i] = it->second;
    } else {
      comp[i] = nc++;
    }
  }
  std::vector<std::vector<int>> members(nc), succ(nc);
  for (int i = 0; i < n; ++i) members[comp[i]].push_back(i);
  for (auto& m : members)
    std::stable_sort(m.begin(), m.end(), [&](int a, int b) {
      const auto& ca = s.supertasks[a].comm;
      const auto& cb = s.supertasks[b].comm;
      return ca && cb ? ca->device_idx < cb->device_idx : a < b;
    });
  std::vector<int> indeg(nc, 0);
  // edge_from[c] lists, for a cycle report, one supertask pair per edge.
  std::vector<std::vector<std::pair<int, int>>> edges(nc);  // (to comp, via supertask)
  auto add_edge = [&](int from_st, int to_st) {
    const int a = comp[from_st], b = comp[to_st];
    succ[a].push_back(b);
    edges[a].push_back({b, to_st});
    ++indeg[b];
  };
  int input = -1, output = -1;
  for (int i = 0; i < n; ++i) {
    const SuperTask& t = s.supertasks[i];
    if (t.kind == SuperTaskKind::Input) input = i;
    if (t.kind == SuperTaskKind::Output) output = i;
    for (int id : t.input_ids) {
      const SystemTensor& x = s.tensors[id];
      if (!x.constant && x.producer >= 0) add_edge(x.producer, i);
    }
    if (t.comm && t.comm->kind == CollectiveKind::Send && t.comm->peer >= 0) add_edge(i, t.comm->peer);
  }
  // Of the steps whose inputs are ready, the earliest in the file goes first (the input step
  // before all): a device runs its supertasks in the order the file issues them where the
  // dependencies allow, so a file listing microbatch after microbatch pipelines them.
  std::vector<int> order;
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  std::vector<bool> done(nc, false);
  auto take = [&](int c) {
    done[c] = true;
    for (int m : members[c]) order.push_back(m);
    for (int b : succ[c])
      if (--indeg[b] == 0 && (output < 0 || b != comp[output])) ready.push(b);
  };
  const bool input_first = input >= 0 && indeg[comp[input]] == 0;
  for (int c = 0; c < nc; ++c)
    if (indeg[c] == 0 && (input < 0 || c != comp[input]) && (output < 0 || c != comp[output])) ready.push(c);
  if (input_first) take(comp[input]);
  while (!ready.empty()) {
    const int c = ready.top();
    ready.pop();
    take(c);
  }
  if (output >= 0 && indeg[comp[output]] == 0 && !done[comp[output]]) {
    done[comp[output]] = true;
    order.push_back(output);
  }
  if (static_cast<int>(order.size()) == n) return order;

  // A cycle among the components not done: walk predecessors-first DFS to find one.
  std::vector<int> state(nc, 0), parent(nc, -1);
  std::vector<int> cycle;  // supertasks
  std::function<bool(int)> dfs = [&](int c) -> bool {
    state[c] = 1;
    for (const auto& [b, st] : edges[c]) {
      (void)st;
      if (done[b]) continue;
      if (state[b] == 1) {
        // cycle b -> ... -> c -> b
        std::vector<int> comps{c};
        for (int x = c; x != b; x = parent[x]) comps.push_back(parent[x]);
        std::reverse(comps.begin(), comps.end());  // b ... c
        for (int x : comps) cycle.push_back(members[x].front());
        cycle.push_back(members[b].front());
        return true;
      }
      if (state[b] == 0) {
        parent[b] = c;
        if (dfs(b)) return true;
      }
    }
    state[c] = 2;
    return false;
  };
  for (int c = 0; c < nc && cycle.empty(); ++c)
    if (!done[c] && state[c] == 0) dfs(c);
  if (cycle.empty()) throw InternalError("topological order: no cycle found among unfinished supertasks");
  std::string path;
  bool through_group = false;
  for (size_t k = 0; k < cycle.size(); ++k) {
    const SuperTask& t = s.supertasks[cycle[k]];
    path += (k ? " -> " : "") + t.id;
    if (k + 1 < cycle.size() && members[comp[cycle[k]]].size() > 1) through_group = true;
  }
  const SuperTask& head = s.supertasks[cycle.front()];
  throw InputError(s.source, head.pointer.empty() ? join("/supertasks", head.id) : head.pointer,
                   "supertasks form a cycle: " + path +
                       (through_group ? " (the members of a collective group wait for each other)" : ""));
}

// ---- lookups ----

int System::find_device(const std::string& id) const {
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].id == id) return static_cast<int>(i);
  return -1;
}

int System::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

int System::find_supertask(const std::string& id) const {
  for (size_t i = 0; i < supertasks.size(); ++i)
    if (supertasks[i].id == id) return static_cast<int>(i);
  return -1;
}

std::vector<int> System::supertasks_on(int device) const {
  std::vector<int> r;
  for (int i : order)
    if (supertasks[i].device_index == device) r.push_back(i);
  return r;
}

std::vector<int> System::group_members(const std::string& group) const {
  std::vector<int> r;
  for (size_t i = 0; i < supertasks.size(); ++i)
    if (supertasks[i].comm && supertasks[i].comm->group == group) r.push_back(static_cast<int>(i));
  return r;
}

}  // namespace npusim::ir
