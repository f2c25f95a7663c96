// Internal to frontends/onnx: the lowering of an ONNX graph to the workload IR (onnx_reader.h).
// onnx_tensor.cpp: element types, tensor data checks and decoding; onnx_eval.cpp: static
// evaluation of shape computations; onnx_fuse.cpp: recognized multi-node patterns;
// onnx_ops.cpp: one handler per ONNX op; onnx_infer.cpp: libonnx's shape inference for one
// node; onnx_lower.cpp: values, IR emission, the node loop.
#pragma once
#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontends/onnx/onnx_reader.h"
#include "sim/ir/graph.h"

namespace npusim::frontends::onnx_fe {

constexpr int kMinOpset = 7, kMaxOpset = 21;
constexpr int64_t kEvalLimit = int64_t{1} << 16;  // at most this many elements are evaluated statically

// A problem with the node being lowered: the node loop turns it into InputError(file, node place).
struct NodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---- element types and tensor data (onnx_tensor.cpp) ----
std::string onnx_type_name(int t);                // "FLOAT", "INT64", "type 42"
std::optional<ir::DType> ir_dtype(int onnx_type);  // nullopt: string, complex, undefined
bool is_integer_type(int onnx_type);               // integers and bool
// Bytes that n elements of the type occupy in raw_data; -1 for strings and unknown types.
int64_t storage_bytes(int onnx_type, int64_t n);
// Number of elements of dims; -1 if a dim is negative or the product passes 2^62.
int64_t dims_elements(const google::protobuf::RepeatedField<int64_t>& dims);
// Checks that the tensor's data (raw_data, the typed field or its external file) has exactly
// the size dims x type say. Returns "" when it does, else what is wrong.
std::string check_tensor_data(const onnx::TensorProto& t, const std::string& model_dir);

// The values of a small tensor: integers (and bool) in i, floating point in f.
struct ConstData {
  bool is_int = true;
  std::vector<int64_t> i;
  std::vector<double> f;
  size_t size() const { return is_int ? i.size() : f.size(); }
  double get(size_t k) const { return is_int ? static_cast<double>(i[k]) : f[k]; }
  int64_t get_int(size_t k) const;  // floats truncated, saturating
};
// The values of an in-file tensor of at most kEvalLimit numeric elements; nullopt otherwise.
std::optional<ConstData> decode_tensor(const onnx::TensorProto& t);

// ---- values ----
// One ONNX value (a name in the graph). Identity and other dropped ops make two names share
// one Value, so an IR tensor made for a constant is made once.
struct Value {
  std::string name;         // the name it was first defined under (IR tensor name)
  ir::Shape shape;          // the ONNX shape (rank 0 for scalars)
  ir::DType dtype = ir::DType::Float32;
  int onnx_type = 1;        // TensorProto data type
  bool is_const = false;    // known before run time: initializer, Constant, folded shape computation
  std::shared_ptr<const ConstData> data;       // values, when known and small
  const onnx::TensorProto* proto = nullptr;    // initializer / Constant tensor, decoded on demand
  bool decode_tried = false;
  int tensor = -1;          // IR tensor id once it is an op's input or output
};
using ValuePtr = std::shared_ptr<Value>;

// The shape a value has in the IR: rank-0 values become [1].
ir::Shape ir_shape(const ir::Shape& s);

// ---- shape rules shared by lowering and evaluation (onnx_eval.cpp); they throw NodeError ----
int64_t norm_axis(int64_t axis, size_t rank, const std::string& what = "axis");
// Number of elements; NodeError when a dim is negative or the product passes 2^52.
int64_t checked_elements(const ir::Shape& s);
std::optional<ir::Shape> broadcast(const ir::Shape& a, const ir::Shape& b);
ir::Shape reshape_shape(const ir::Shape& in, const std::vector<int64_t>& spec, bool allowzero);
ir::Shape squeeze_shape(const ir::Shape& in, const std::vector<int64_t>& axes);  // empty axes: all 1s
ir::Shape unsqueeze_shape(const ir::Shape& in, const std::vector<int64_t>& axes);
ir::Shape flatten_shape(const ir::Shape& in, int64_t axis);
ir::Shape concat_shape(const std::vector<ir::Shape>& ins, int64_t axis);  // axis normalized
ir::Shape gather_shape(const ir::Shape& table, const ir::Shape& idx, int64_t axis);  // axis normalized
// Per axis of the input: first index, step (may be negative) and count, as ONNX Slice says.
struct SliceAxis {
  int64_t start = 0, step = 1, count = 0;
};
std::vector<SliceAxis> slice_axes(const ir::Shape& in, const std::vector<int64_t>& starts,
                                  const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                                  const std::vector<int64_t>& steps);
// Output size of a window along one axis (floor, or ceil as PyTorch and sim/ir/op_rules.cpp count).
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t dil, bool ceil);

struct NodeRef {
  const onnx::NodeProto* p = nullptr;
  int index = 0;
  std::string where;  // "/graph/node/12 (Conv_3)"
  std::string name;   // unique layer name
  const std::string& op() const { return p->op_type(); }
};

// A recognized group of nodes lowered as one IR op (onnx_fuse.cpp).
struct Fusion {
  std::string kind;          // "gelu", "silu", "layer_norm"
  std::vector<int> nodes;    // every node of the group
  int anchor = 0;            // the first of them in graph order: where the op is emitted
  std::string x;             // the input
  std::vector<std::string> params;  // layer_norm: gamma, beta (optional, in that order)
  std::string out;           // the output
  double epsilon = 1e-5;
  std::vector<int64_t> axes;
};

class Lowerer {
 public:
  Lowerer(const onnx::ModelProto& m, std::string path, std::string model_dir, OnnxReadInfo& info);
  ir::Graph run();

 private:
  // ---- setup (onnx_lower.cpp) ----
  void index_graph();
  void define_inputs_and_initializers();
  void define_constant_nodes();
  void lower_node(const NodeRef& n);
  void lower_default_domain(const NodeRef& n);  // onnx_ops.cpp dispatch
  void finish_outputs();

  // ---- values ----
  ValuePtr find(const std::string& name) const;  // nullptr if undefined
  bool has_input(const NodeRef& n, int k) const;
  ValuePtr input(const NodeRef& n, int k) const;  // NodeError if absent
  const ConstData* data(const ValuePtr& v);     // nullptr when the values are not known
  std::optional<std::vector<int64_t>> ints_of(const ValuePtr& v);
  std::optional<double> scalar_of(const ValuePtr& v);
  // Integers of a constant input, or NodeError naming what it is for.
  std::vector<int64_t> const_ints(const NodeRef& n, int k, const std::string& what);
  std::vector<ValuePtr> inputs(const NodeRef& n) const;  // every input, nullptr for empty names
  bool all_const(const std::vector<ValuePtr>& vs) const;
  void define(const NodeRef& n, int out, ValuePtr v);  // checks against value_info
  void alias(const NodeRef& n, int out, const ValuePtr& v);
  ValuePtr new_const(const std::string& name, ir::Shape shape, ir::DType dt);
  ValuePtr make_const(ir::Shape shape, ir::DType dt, int onnx_type, ConstData d);
  bool consumed(const std::string& name) const;  // read by a node or a graph output

  // ---- IR emission ----
  int materialize(const ValuePtr& v, ir::TensorRole role);
  // One IR op with one output named out_name; when every input is constant the op is folded
  // into a constant value instead. Returns the output value (not yet defined under a name).
  ValuePtr emit(const NodeRef& n, ir::OpKind k, const std::string& suffix, const std::vector<ValuePtr>& ins,
                const ir::Shape& out, ir::DType dt, const std::string& out_name,
                const std::function<void(ir::Layer&)>& attrs = {});
  std::vector<ValuePtr> emit_multi(const NodeRef& n, ir::OpKind k, const std::vector<ValuePtr>& ins,
                                   const std::vector<ir::Shape>& outs, ir::DType dt, const std::vector<std::string>& names,
                                   const std::function<void(ir::Layer&)>& attrs = {}, const std::string& suffix = "");
  ValuePtr reshape(const NodeRef& n, const ValuePtr& x, const ir::Shape& to, const std::string& out_name,
                   const std::string& suffix = "reshape");
  // An opaque op (label = op type); output shapes from value_info unless given.
  void opaque(const NodeRef& n, const std::string& reason = "", const std::vector<ir::Shape>& shapes = {},
              std::optional<ir::DType> dtype = std::nullopt);
  std::string unique_name(const std::string& base);
  std::string out_name(const NodeRef& n, int k = 0) const { return n.p->output(k); }

  // ---- libonnx's shape inference for one node (onnx_infer.cpp) ----
  // Runs onnx::shape_inference::InferShapes on a model holding only this node, its inputs
  // typed with the shapes known so far (small constants with their values), and records the
  // output shapes it finds in m_vinfo. Used for ops the reader does not lower when the file's
  // value_info lacks their shapes: libonnx never sees the rest of the (unchecked) graph.
  void infer_node(const NodeRef& n);
  bool libonnx_can_infer(const NodeRef& n);  // false where libonnx 1.12 would crash (onnx_infer.cpp)

  // ---- static evaluation (onnx_eval.cpp): true when the node was evaluated ----
  bool try_eval(const NodeRef& n);

  // ---- patterns (onnx_fuse.cpp) ----
  void find_fusions();
  void emit_fusion(const Fusion& f, const NodeRef& n);
  std::string resolve_identity(const std::string& name) const;
  bool is_static(const std::string& name) const;        // initializer or Constant (through Identity)
  std::optional<double> static_scalar(const std::string& name);
  int producer_of(const std::string& name) const;       // node index or -1
  const std::vector<int>& consumers_of(const std::string& name) const;
  bool single_use(const std::string& name, int consumer) const;  // only that node reads it, not a graph output
  const onnx::NodeProto& node(int i) const { return m_graph.node(i); }
  bool node_is(int i, const char* op) const;

  // ---- op handlers (onnx_ops.cpp) ----
  void op_conv(const NodeRef& n, bool quantized, bool integer);
  void op_gemm(const NodeRef& n);
  void op_matmul(const NodeRef& n, bool quantized, bool integer);
  void op_binary(const NodeRef& n, ir::OpKind k);
  void op_variadic(const NodeRef& n, ir::OpKind k);
  void op_pow(const NodeRef& n);
  void op_unary(const NodeRef& n, ir::OpKind k);
  void op_clip(const NodeRef& n);
  void op_softmax(const NodeRef& n);
  void op_layer_norm(const NodeRef& n);
  void op_batch_norm(const NodeRef& n);
  void op_reduce(const NodeRef& n, ir::OpKind k, int axes_input_opset);
  void op_transpose(const NodeRef& n);
  void op_reshape_like(const NodeRef& n);
  void op_concat(const NodeRef& n);
  void op_split(const NodeRef& n);
  void op_slice(const NodeRef& n);
  void op_gather(const NodeRef& n);
  void op_pool(const NodeRef& n, ir::OpKind k);
  void op_global_pool(const NodeRef& n, ir::OpKind k);
  void op_pad(const NodeRef& n);
  void op_quantize(const NodeRef& n, bool quantize);
  void op_expand(const NodeRef& n);

  const onnx::ModelProto& m_model;
  const onnx::GraphProto& m_graph;
  std::string m_path, m_dir;
  OnnxReadInfo& m_info;
  int m_opset = 0;
  ir::Graph m_g;
  std::unordered_map<std::string, ValuePtr> m_values;
  struct VInfo {
    int elem_type = 0;
    bool has_shape = false;
    std::vector<int64_t> dims;  // -1: unknown
  };
  std::unordered_map<std::string, VInfo> m_vinfo;
  std::unordered_map<std::string, int> m_producer;
  std::unordered_map<std::string, std::vector<int>> m_consumers;
  std::unordered_map<std::string, const onnx::TensorProto*> m_static;  // initializers and Constant values
  std::set<std::string> m_graph_outputs;
  std::set<std::string> m_layer_names;
  std::vector<Fusion> m_fusions;
  std::unordered_map<int, int> m_node_fusion;  // node index -> index into m_fusions
  std::unordered_map<int, int> m_absorbed;     // conv node -> BatchNormalization node folded into it
  std::unordered_map<int, int> m_bias_add;     // MatMul node -> Add node whose constant is its bias
  std::set<int> m_skip;                        // nodes folded into an earlier one
};

}  // namespace npusim::frontends::onnx_fe
