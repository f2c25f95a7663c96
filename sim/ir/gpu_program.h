// The format-neutral GPU program: what a GPU "plan" asks the GPU to run (task infos, each a
// list of ops with their tensors; processor groups -> resource groups -> task groups) and the
// model graph it came from. frontends/ark fills these structs after validating its input;
// the GPU SystemC model reads them. No SystemC, no JSON here. The semantics follow ARK's
// executor (docs/format_ark.md).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace npusim::gpu {

using Dims = std::vector<int64_t>;
int64_t product(const Dims& d);  // 1 for an empty list
std::string dims_str(const Dims& d);  // "[1,512,4096]"

// Element types of ARK tensors (BYTE: untyped bytes, e.g. packet buffers).
enum class DataType { FP32, FP16, BF16, INT32, UINT32, INT8, UINT8, BYTE, FP8_E4M3, FP8_E5M2 };
int data_type_bytes(DataType t);
const char* data_type_name(DataType t);  // "FP16"
std::optional<DataType> parse_data_type(const std::string& s);
std::string data_type_list();  // "FP32, FP16, ..." for messages

// [remoteRank, tag]. remote_rank -1 means "the rank of the file that holds this buffer".
struct Tag {
  int remote_rank = -1;
  int64_t tag = 0;
};

// An exclusive memory space. rank -1: allocated by this rank; otherwise the rank that
// allocates it (a descriptor of a remote buffer). SendTags: this buffer's data may be copied
// to the remote rank; RecvTags: it may be overwritten by data from the remote rank.
struct Buffer {
  int64_t id = 0;
  int rank = -1;
  bool is_external = false;
  std::vector<Tag> send_tags, recv_tags;
  std::string pointer;  // JSON pointer of its first appearance ("/TaskInfos/0/Ops/0/ReadTensors/0/Buffer")

  int owner(int own_rank) const { return rank < 0 ? own_rank : rank; }
  bool is_local(int own_rank) const { return owner(own_rank) == own_rank; }
};

// A strided view of a buffer. strides is the shape of the underlying buffer (ARK's meaning,
// not element strides); offsets locate the first element; padded_shape reserves room.
struct Tensor {
  int64_t id = 0;
  DataType dtype = DataType::FP16;
  Dims shape, strides, offsets, padded_shape;
  int64_t buffer_id = 0;
  int buffer_rank = -1;  // copy of the buffer's Rank
  std::string pointer;

  int64_t num_elements() const { return product(shape); }
  int64_t bytes() const;          // num_elements * element size: the data the op touches
  int64_t buffer_bytes() const;   // product(strides) * element size: the buffer it needs
  int64_t byte_offset() const;    // row-major offset of the first element within the buffer
  bool is_remote(int own_rank) const { return buffer_rank >= 0 && buffer_rank != own_rank; }
};

// The 28 op types of ARK's May-2024 registry, then the 5 added on main (Sep 2024).
enum class OpType {
  Add, Cast, Copy, Div, Embedding, Exp, Gelu, Matmul, Mul, Noop, Recv, ReduceMax, ReduceMean,
  ReduceSum, Relu, Reshape, Rope, Rsqrt, ScalarAdd, ScalarAssign, ScalarMul, Send, SendDone,
  Sigmoid, Sqrt, Sub, Tensor, Transpose,
  SendPacket, RecvPacket, RecvReduceSendPacket, RecvReduceSend, DeviceSync,
};
constexpr int kNumOpTypes = 33;
const char* op_type_name(OpType t);  // the file's spelling: "Matmul"
std::optional<OpType> parse_op_type(const std::string& s);
std::string op_type_list();  // all 33 names, comma separated, for messages

// What kind of work an op is, for the timing model.
enum class OpClass {
  Matmul,        // tensor cores
  Elementwise,   // one arithmetic op per output element (incl. Rope and Scalar*)
  Reduce,        // one arithmetic op per input element
  DataMovement,  // Cast, Copy, Transpose, Embedding, ScalarAssign: memory traffic only
  Communication, // Send, Recv, SendDone, *Packet, RecvReduceSend (traffic between ranks)
  Sync,          // DeviceSync, Noop
  Virtual,       // Tensor, Reshape: views, no code
};
OpClass op_class(OpType t);

// One typed argument: {"Axis": {"INT": 2}}.
enum class ArgType { Int, Int64, UInt64, UInt32, Bool, Float, Dims, Tensor, Offset };
const char* arg_type_name(ArgType t);  // "INT", "INT64", "UINT64", "UINT32", "BOOL", "FLOAT"...
std::optional<ArgType> parse_arg_type(const std::string& s);

struct ArgValue {
  ArgType type = ArgType::Int;
  int64_t int_value = 0;     // INT, INT64, UINT32, and UINT64 when it fits
  uint64_t uint_value = 0;   // UINT64 (also set for non-negative integers of the other types)
  bool bool_value = false;
  double float_value = 0;
  Dims dims;
  std::optional<Tensor> tensor;  // TENSOR
  int64_t offset_buffer_id = -1, offset_value = 0;  // OFFSET {BufferId, Value}
};

// Config of an op in a plan. num_warps/sram_bytes/num_tasks are per output tile (task).
struct OpConfig {
  bool present = false;  // false for ops of a model file (and virtual ops of a plan)
  int num_warps = 0;
  int64_t sram_bytes = 0;
  int64_t num_tasks = 0;
  Dims tile;                                     // element-wise/Default ops: output tile over the last dims
  std::optional<std::array<int64_t, 3>> tile_shape_mnk;  // Matmul
  std::optional<std::array<int64_t, 3>> tile_pad_mnk;    // Matmul, May-2024 files
  int64_t tile_group_m = 1;  // Matmul tile order (models/gpu/gpu_timing.h matmul_tile_index): ARK's is row-major
  bool warp_mma = false;     // Matmul compiled to warp-level mma.sync (a measured kernel's; plans do not say)
  int64_t cluster_m = 1, cluster_n = 1;  // Matmul thread-block cluster sharing B / A slices (TMA multicast)
  bool stream_k = false;     // Matmul as a persistent stream-K kernel: each task a worker (gpu-calibrate's; plans do not say)
  // The library plan's (sim/mapping/gpu_library.h; ARK plans never set these):
  bool simt = false;              // Matmul on the CUDA cores (FFMA), not the tensor cores: fp32 without TF32
  double epilogue_read_bytes = 0; // Matmul: bytes its fused epilogue reads per output element (a residual)
  // Matmul as a fused attention kernel (FlashAttention): M = query rows, N = head dim, K = keys,
  // batch = batch x heads; a task is one query tile walking the key tiles (docs/gpu_library.md#attention).
  bool attention = false;
  bool causal = false;            // attention: query i sees keys [0, i + K - M]: only tiles at or below the diagonal run
  bool softmax_overlap = false;   // attention: softmax of one tile overlaps the MMAs of the next (FlashAttention-3)
  bool shared_kv = false;         // attention: keys and values are one tensor (MLA's latent cache): one slice a step
  // A looped row kernel (PyTorch's native norms and softmax, vLLM's rms_norm; docs/gpu_library.md#looped-row-kernels):
  // each task, one thread block, walks its row row_loop_passes times in row_loop_iters steps that
  // each wait one load round trip, with row_reduce_steps shuffles and row_reduce_exchanges
  // shared-memory exchanges between warps of its reductions; the passes after the first re-read row_reread_bytes (per task), from the L2 as far
  // as the rows resident at once (row_resident_bytes: what they all read and write) fit in it.
  int row_loop_passes = 0;  // 0: not a looped row kernel
  int64_t row_loop_iters = 0;
  int row_reduce_steps = 0;
  int row_reduce_exchanges = 0;
  double row_reread_bytes = 0;
  double row_resident_bytes = 0;
  std::string impl_type;     // Reduce: "WarpWise" / "ElementWise"
  std::string channel_type;  // Send/Recv/SendDone/DeviceSync: "Proxy" / "Sm"
  std::string packet_type;   // *Packet: "mscclpp::LL8Packet" / "mscclpp::LL16Packet"
  std::optional<bool> signal, wait;  // Send / Recv on main
  std::map<std::string, std::string> other;  // any other field, as JSON text
};

// A matrix multiplication C[batch, M, N] = A[batch, M, K] x B[batch, K, N], with the shape
// taken from Args (ShapeMNK, StridesACDB) when given and derived from the tensors otherwise.
struct MatmulShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;  // product of the output's leading dims (N*C)
  bool transpose_input = false, transpose_other = false;
  std::array<int64_t, 4> strides_acdb{};  // innermost buffer dim of A, C, D(=C), B
  bool shape_from_args = false;           // ShapeMNK was in Args
};

// Inputs of a cost model. bytes_*: data of the tensors touched; remote_*: the part that lives
// in another rank's buffer (crosses the interconnect); flops: arithmetic ops (see op_class).
struct OpCost {
  int64_t flops = 0;
  int64_t bytes_read = 0, bytes_written = 0;
  int64_t remote_bytes_read = 0, remote_bytes_written = 0;
  OpCost& operator+=(const OpCost& o);
};

struct Op {
  OpType type = OpType::Noop;
  std::string name;
  bool is_virtual = false;
  std::vector<Tensor> read_tensors, write_tensors, result_tensors;
  std::map<std::string, ArgValue> args;
  OpConfig config;
  std::optional<MatmulShape> matmul;  // Matmul only
  std::optional<double> scalar;       // ScalarAdd/ScalarMul (Factor, or Value), ScalarAssign (Value)
  OpCost cost;       // the whole op
  OpCost task_cost;  // one task (output tile); equals cost when there is no config
  std::string pointer;  // "/TaskInfos/3/Ops/0" or "/Nodes/2/Op"

  const ArgValue* arg(const std::string& name) const;  // nullptr if absent
  std::optional<int64_t> arg_int(const std::string& name) const;  // any integer type
  std::optional<bool> arg_bool(const std::string& name) const;
  std::optional<double> arg_float(const std::string& name) const;
  std::optional<Dims> arg_dims(const std::string& name) const;
};

// A sequence of ops run together on one slot; every op runs with the same task index.
struct TaskInfo {
  int64_t id = 0;
  int num_warps = 1;
  int64_t sram_bytes = 0;
  std::vector<Op> ops;
  int64_t num_tasks = 0;  // shared NumTasks of its non-virtual ops
  OpCost task_cost;       // sum over ops of one task
  std::string pointer;
};

// [begin, end) with step; ARK writes [b,e] or [b,e,s].
struct Range {
  int64_t begin = 0, end = 0, step = 1;
  int64_t size() const;               // number of elements
  bool contains(int64_t x) const;
  int64_t last() const;               // last element (begin - step if empty)
  std::string str() const;            // "[0,108]" or "[0,108,2]"
};

struct TaskGroup {
  int64_t task_id = 0;
  Range task_range;
  int64_t granularity = 1;
  std::string pointer;
};

struct ResourceGroup {
  Range processor_range, warp_range, sram_range;
  std::vector<TaskGroup> task_groups;
  std::string pointer;
};

struct ProcessorGroup {
  Range processor_range;
  std::vector<ResourceGroup> resource_groups;
  std::string pointer;
};

// One rank's plan.
struct Program {
  std::string source;
  int rank = 0;
  int world_size = 1;
  std::string architecture;  // "ROCM_942", "CUDA_80"... ("" when absent)
  int num_processors = 0;
  int num_warps_per_processor = 0;
  std::vector<TaskInfo> task_infos;
  std::vector<ProcessorGroup> processor_groups;
  std::vector<Buffer> buffers;  // every buffer any tensor refers to, sorted by id

  const TaskInfo* find_task(int64_t id) const;   // nullptr if absent
  const Buffer* find_buffer(int64_t id) const;   // nullptr if absent
  size_t num_ops() const;
  size_t num_tensor_ids() const;  // distinct tensor ids
};

// Concurrent copies of a task one processor of a resource group runs ("slots", ARK codegen):
// min(|warps| / num_warps, |sram| / sram_bytes), or |warps| / num_warps when sram_bytes = 0.
int64_t num_slots(const ResourceGroup& rg, const TaskInfo& task);

struct Node {
  int64_t id = 0;
  std::vector<int64_t> producer_ids, consumer_ids;
  std::vector<Op> ops;  // "Ops" array (May 2024) or the single "Op" (main)
  std::string pointer;
};

// One rank's model graph.
struct Model {
  std::string source;
  int rank = 0;
  int world_size = 1;
  std::vector<Node> nodes;
  std::vector<Buffer> buffers;  // sorted by id

  const Node* find_node(int64_t id) const;
  const Buffer* find_buffer(int64_t id) const;
  size_t num_ops() const;
  size_t num_tensor_ids() const;
};

// Fills op.cost and op.task_cost (and TaskInfo.task_cost) from the tensors, matmul shape and
// config; own_rank tells remote tensors apart. Formulas: docs/format_ark.md.
OpCost op_cost(const Op& op, int own_rank);
OpCost op_task_cost(const Op& op, int own_rank);
void derive_costs(Program& p);
void derive_costs(Model& m);

}  // namespace npusim::gpu
