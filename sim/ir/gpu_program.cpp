#include "sim/ir/gpu_program.h"

#include <algorithm>
#include <set>

namespace npusim::gpu {

int64_t product(const Dims& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

std::string dims_str(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

namespace {

struct DataTypeInfo {
  DataType type;
  const char* name;
  int bytes;
};
constexpr DataTypeInfo kDataTypes[] = {
    {DataType::FP32, "FP32", 4},   {DataType::FP16, "FP16", 2},  {DataType::BF16, "BF16", 2},
    {DataType::INT32, "INT32", 4}, {DataType::UINT32, "UINT32", 4}, {DataType::INT8, "INT8", 1},
    {DataType::UINT8, "UINT8", 1}, {DataType::BYTE, "BYTE", 1},   {DataType::FP8_E4M3, "FP8_E4M3", 1},
    {DataType::FP8_E5M2, "FP8_E5M2", 1},
};

constexpr const char* kOpNames[kNumOpTypes] = {
    "Add", "Cast", "Copy", "Div", "Embedding", "Exp", "Gelu", "Matmul", "Mul", "Noop", "Recv",
    "ReduceMax", "ReduceMean", "ReduceSum", "Relu", "Reshape", "Rope", "Rsqrt", "ScalarAdd",
    "ScalarAssign", "ScalarMul", "Send", "SendDone", "Sigmoid", "Sqrt", "Sub", "Tensor", "Transpose",
    "SendPacket", "RecvPacket", "RecvReduceSendPacket", "RecvReduceSend", "DeviceSync",
};

constexpr const char* kArgTypeNames[] = {"INT",   "INT64", "UINT64", "UINT32", "BOOL",
                                         "FLOAT", "DIMS",  "TENSOR", "OFFSET"};

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

}  // namespace

int data_type_bytes(DataType t) {
  for (const auto& d : kDataTypes)
    if (d.type == t) return d.bytes;
  return 1;
}

const char* data_type_name(DataType t) {
  for (const auto& d : kDataTypes)
    if (d.type == t) return d.name;
  return "?";
}

std::optional<DataType> parse_data_type(const std::string& s) {
  for (const auto& d : kDataTypes)
    if (s == d.name) return d.type;
  return std::nullopt;
}

std::string data_type_list() {
  std::string s;
  for (const auto& d : kDataTypes) s += (s.empty() ? "" : ", ") + std::string(d.name);
  return s;
}

int64_t Tensor::bytes() const { return num_elements() * data_type_bytes(dtype); }
int64_t Tensor::buffer_bytes() const { return product(strides) * data_type_bytes(dtype); }

int64_t Tensor::byte_offset() const {
  int64_t off = 0;
  for (size_t i = 0; i < strides.size(); ++i) off = off * strides[i] + (i < offsets.size() ? offsets[i] : 0);
  return off * data_type_bytes(dtype);
}

const char* op_type_name(OpType t) {
  int i = static_cast<int>(t);
  return i >= 0 && i < kNumOpTypes ? kOpNames[i] : "?";
}

std::optional<OpType> parse_op_type(const std::string& s) {
  for (int i = 0; i < kNumOpTypes; ++i)
    if (s == kOpNames[i]) return static_cast<OpType>(i);
  return std::nullopt;
}

std::string op_type_list() {
  std::string s;
  for (const char* n : kOpNames) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

OpClass op_class(OpType t) {
  switch (t) {
    case OpType::Matmul: return OpClass::Matmul;
    case OpType::Add: case OpType::Sub: case OpType::Mul: case OpType::Div: case OpType::Exp:
    case OpType::Gelu: case OpType::Relu: case OpType::Rsqrt: case OpType::Sigmoid:
    case OpType::Sqrt: case OpType::Rope: case OpType::ScalarAdd: case OpType::ScalarMul:
      return OpClass::Elementwise;
    case OpType::ReduceMax: case OpType::ReduceMean: case OpType::ReduceSum: return OpClass::Reduce;
    case OpType::Cast: case OpType::Copy: case OpType::Transpose: case OpType::Embedding:
    case OpType::ScalarAssign:
      return OpClass::DataMovement;
    case OpType::Send: case OpType::Recv: case OpType::SendDone: case OpType::SendPacket:
    case OpType::RecvPacket: case OpType::RecvReduceSendPacket: case OpType::RecvReduceSend:
      return OpClass::Communication;
    case OpType::DeviceSync: case OpType::Noop: return OpClass::Sync;
    case OpType::Tensor: case OpType::Reshape: return OpClass::Virtual;
  }
  return OpClass::Sync;
}

const char* arg_type_name(ArgType t) { return kArgTypeNames[static_cast<int>(t)]; }

std::optional<ArgType> parse_arg_type(const std::string& s) {
  for (int i = 0; i < 9; ++i)
    if (s == kArgTypeNames[i]) return static_cast<ArgType>(i);
  return std::nullopt;
}

OpCost& OpCost::operator+=(const OpCost& o) {
  flops += o.flops;
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  remote_bytes_read += o.remote_bytes_read;
  remote_bytes_written += o.remote_bytes_written;
  return *this;
}

const ArgValue* Op::arg(const std::string& n) const {
  auto it = args.find(n);
  return it == args.end() ? nullptr : &it->second;
}

std::optional<int64_t> Op::arg_int(const std::string& n) const {
  const ArgValue* a = arg(n);
  if (!a || (a->type != ArgType::Int && a->type != ArgType::Int64 && a->type != ArgType::UInt32 &&
             a->type != ArgType::UInt64))
    return std::nullopt;
  return a->int_value;
}

std::optional<bool> Op::arg_bool(const std::string& n) const {
  const ArgValue* a = arg(n);
  return a && a->type == ArgType::Bool ? std::optional<bool>(a->bool_value) : std::nullopt;
}

std::optional<double> Op::arg_float(const std::string& n) const {
  const ArgValue* a = arg(n);
  return a && a->type == ArgType::Float ? std::optional<double>(a->float_value) : std::nullopt;
}

std::optional<Dims> Op::arg_dims(const std::string& n) const {
  const ArgValue* a = arg(n);
  return a && a->type == ArgType::Dims ? std::optional<Dims>(a->dims) : std::nullopt;
}

int64_t Range::size() const { return end <= begin || step <= 0 ? 0 : (end - begin + step - 1) / step; }

bool Range::contains(int64_t x) const {
  return step > 0 && x >= begin && x < end && (x - begin) % step == 0;
}

int64_t Range::last() const { return begin + (size() - 1) * step; }

std::string Range::str() const {
  std::string s = "[" + std::to_string(begin) + "," + std::to_string(end);
  if (step != 1) s += "," + std::to_string(step);
  return s + "]";
}

int64_t num_slots(const ResourceGroup& rg, const TaskInfo& task) {
  if (task.num_warps <= 0) return 0;
  int64_t by_warps = rg.warp_range.size() / task.num_warps;
  if (task.sram_bytes <= 0) return by_warps;
  return std::min(by_warps, rg.sram_range.size() / task.sram_bytes);
}

namespace {

const Buffer* find_buffer_in(const std::vector<Buffer>& bufs, int64_t id) {
  auto it = std::lower_bound(bufs.begin(), bufs.end(), id,
                             [](const Buffer& b, int64_t v) { return b.id < v; });
  return it != bufs.end() && it->id == id ? &*it : nullptr;
}

void collect_ids(const Op& op, std::set<int64_t>& ids) {
  for (const auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
    for (const Tensor& t : *list) ids.insert(t.id);
}

}  // namespace

const TaskInfo* Program::find_task(int64_t id) const {
  for (const TaskInfo& t : task_infos)
    if (t.id == id) return &t;
  return nullptr;
}

const Buffer* Program::find_buffer(int64_t id) const { return find_buffer_in(buffers, id); }

size_t Program::num_ops() const {
  size_t n = 0;
  for (const TaskInfo& t : task_infos) n += t.ops.size();
  return n;
}

size_t Program::num_tensor_ids() const {
  std::set<int64_t> ids;
  for (const TaskInfo& t : task_infos)
    for (const Op& op : t.ops) collect_ids(op, ids);
  return ids.size();
}

const Node* Model::find_node(int64_t id) const {
  for (const Node& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

const Buffer* Model::find_buffer(int64_t id) const { return find_buffer_in(buffers, id); }

size_t Model::num_ops() const {
  size_t n = 0;
  for (const Node& node : nodes) n += node.ops.size();
  return n;
}

size_t Model::num_tensor_ids() const {
  std::set<int64_t> ids;
  for (const Node& n : nodes)
    for (const Op& op : n.ops) collect_ids(op, ids);
  return ids.size();
}

OpCost op_cost(const Op& op, int own_rank) {
  OpCost c;
  if (op.is_virtual || op_class(op.type) == OpClass::Virtual) return c;
  for (const Tensor& t : op.read_tensors) {
    c.bytes_read += t.bytes();
    if (t.is_remote(own_rank)) c.remote_bytes_read += t.bytes();
  }
  for (const Tensor& t : op.write_tensors) {
    c.bytes_written += t.bytes();
    if (t.is_remote(own_rank)) c.remote_bytes_written += t.bytes();
  }
  int64_t out = op.write_tensors.empty() ? 0 : op.write_tensors[0].num_elements();
  switch (op_class(op.type)) {
    case OpClass::Matmul:
      if (op.matmul) c.flops = 2 * op.matmul->batch * op.matmul->m * op.matmul->n * op.matmul->k;
      break;
    case OpClass::Elementwise: c.flops = out; break;
    case OpClass::Reduce:
      c.flops = op.read_tensors.empty() ? 0 : op.read_tensors[0].num_elements();
      break;
    default:
      // A reduce-scatter step adds one peer input per output element and peer.
      if (op.type == OpType::RecvReduceSend || op.type == OpType::RecvReduceSendPacket)
        c.flops = out * op.arg_int("NPeers").value_or(1);
      break;
  }
  return c;
}

OpCost op_task_cost(const Op& op, int own_rank) {
  OpCost total = op_cost(op, own_rank);
  if (!op.config.present) return total;
  OpCost c;
  // A stream-K worker's share is the op's over the workers (the next case's even split).
  if (op.type == OpType::Matmul && op.matmul && op.config.tile_shape_mnk && !op.config.stream_k &&
      op.read_tensors.size() >= 2 && !op.write_tensors.empty()) {
    // One task = one TileM x TileN output tile with the whole K loop inside it.
    const auto& tile = *op.config.tile_shape_mnk;
    int64_t tm = std::min(tile[0], op.matmul->m), tn = std::min(tile[1], op.matmul->n);
    int64_t k = op.matmul->k;
    c.flops = 2 * tm * tn * k;
    c.bytes_read = tm * k * data_type_bytes(op.read_tensors[0].dtype) +
                   k * tn * data_type_bytes(op.read_tensors[1].dtype);
    c.bytes_written = tm * tn * data_type_bytes(op.write_tensors[0].dtype);
    if (op.read_tensors[0].is_remote(own_rank) || op.read_tensors[1].is_remote(own_rank))
      c.remote_bytes_read = c.bytes_read;
    if (op.write_tensors[0].is_remote(own_rank)) c.remote_bytes_written = c.bytes_written;
    return c;
  }
  // Other ops split their tensors evenly over the tasks (edge tiles averaged in).
  int64_t n = op.config.num_tasks;
  if (n <= 0) return c;
  c.flops = ceil_div(total.flops, n);
  c.bytes_read = ceil_div(total.bytes_read, n);
  c.bytes_written = ceil_div(total.bytes_written, n);
  c.remote_bytes_read = ceil_div(total.remote_bytes_read, n);
  c.remote_bytes_written = ceil_div(total.remote_bytes_written, n);
  return c;
}

void derive_costs(Program& p) {
  for (TaskInfo& t : p.task_infos) {
    t.task_cost = OpCost{};
    for (Op& op : t.ops) {
      op.cost = op_cost(op, p.rank);
      op.task_cost = op_task_cost(op, p.rank);
      t.task_cost += op.task_cost;
    }
  }
}

void derive_costs(Model& m) {
  for (Node& n : m.nodes)
    for (Op& op : n.ops) {
      op.cost = op_cost(op, m.rank);
      op.task_cost = op.cost;
    }
}

}  // namespace npusim::gpu
