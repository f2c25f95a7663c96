// The format-neutral workload graph: layers in execution order, their tensors and attributes.
// Frontends (frontends/*) fill it after validating their input; mapping and the functional
// reference read it. No SystemC, no JSON here.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/ir/dtype.h"

namespace npusim::ir {

using Shape = std::vector<int64_t>;
int64_t num_elements(const Shape& s);
std::string shape_str(const Shape& s);  // "[1,64,56,56]"

// The closed operation set shared by every reader. The first eight are the Frontend IR's own
// operations (the real Gemini files); the rest are npusim extensions
// (docs/format_frontend_ir.md#npusim-extensions). Shape rules per op: sim/ir/op_rules.cpp.
enum class OpKind {
  Quantize,        // float -> int8 (vector processor pre_cal/post_cal)
  Dequantize,      // int8 -> float
  Conv2d,          // PE array (groups > 1: grouped / depthwise; dilation)
  Dense,           // PE array: [N,C] x [K,C]^T
  MaxPool2d,       // vector processor (compare_group)
  AvgPool2d,       // vector processor (fp32_mul_group + acc_tree_group)
  ElementWiseAdd,  // vector processor (fp32_sum_sub_group0); broadcasting
  Reshape,         // data movement only (often on device cpu)
  // ---- npusim extensions ----
  Requantize,      // int8 -> int8 with a new scale
  MatMul,          // [.., M, K] x [K, N] (transpose flags); the second operand may be a weight
  BatchMatMul,     // [B.., M, K] x [B.., K, N], batch dims broadcast
  GlobalAvgPool2d, GlobalMaxPool2d,  // [N,C,H,W] -> [N,C,1,1]
  Sub, Mul, Div, Maximum, Minimum,   // element-wise binary, numpy broadcasting
  Relu, Relu6, Gelu, Silu, Sigmoid, Tanh, Exp, Sqrt, Rsqrt, Neg, Clip,  // unary
  Softmax,         // over one axis
  LayerNorm,       // over the trailing axes, with optional gamma/beta
  RmsNorm,         // over the last axis, with optional gamma
  ReduceSum, ReduceMean, ReduceMax,  // over axes
  Transpose,       // permute (perm)
  Concat,          // along axis
  Split,           // along axis into the output shapes
  Slice,           // starts/ends/steps per axis
  Gather,          // rows of a table by integer indices (embedding)
  Pad,             // constant padding per axis
  Opaque,          // given FLOPs and bytes, costed by roofline and flagged in reports
};
constexpr int kNumOpKinds = static_cast<int>(OpKind::Opaque) + 1;
const char* op_name(OpKind k);                         // the IR spelling: "conv2d", "softmax"...
// Inverse of op_name; also takes short aliases ("add", "sub", "max", "embedding", "matmul").
std::optional<OpKind> parse_op(const std::string& s);
bool runs_on_pe_array(OpKind k);  // conv2d, dense, matmul, batch_matmul
bool is_frontend_ir_native(OpKind k);  // one of the 8 operations of the real Gemini files

enum class OpClass { Gemm, Window, Elementwise, Normalization, Reduction, DataMovement, Quantization, Opaque };
OpClass op_class(OpKind k);

enum class Device { Npu, Cpu };

// Tensors: every value an operation reads or writes, once, with its role.
enum class TensorRole { GraphInput, Activation, Weight, Bias, Constant, GraphOutput };
const char* role_name(TensorRole r);

struct Tensor {
  int id = 0;               // index into Graph::tensors
  std::string name;
  Shape shape;
  DType dtype = DType::Int8;
  TensorRole role = TensorRole::Activation;
  std::string file;         // optional data file (.npy), relative to the workload
  int producer = -1;        // index into Graph::layers; -1 for inputs, weights and constants
  bool is_parameter() const { return role == TensorRole::Weight || role == TensorRole::Bias || role == TensorRole::Constant; }
};

// ---- Producer side records: read only by the parts that understand them ----

// One vector-processor stage from a layer's module_list, in file order.
// kind: pre_cal, compare_group, post_cal, fp32_sum_sub_group0 (any fp32_sum_sub_group<N>),
// relu_group, fp32_mul_group, acc_tree_group.
struct VpStage {
  std::string kind;
  std::vector<Shape> input_shapes;
  std::vector<Shape> output_shapes;
  std::map<std::string, double> numbers;      // e.g. requan_scale_a, mul_k, sum_b
  std::map<std::string, std::string> strings; // e.g. cmp_mode, carry_sel, sumsub_mode
};

struct QuantInfo {
  bool present = false;
  std::optional<double> input_scale1, input_zero_point1;
  std::optional<double> input_scale2, input_zero_point2;
  std::optional<double> output_scale, output_zero_point;
  std::string round_type;  // "round" / "floor" / "ceil" or empty
};

// What the Gemini compiler's Frontend IR says beyond the op itself (module_list, quant_info,
// LUT enables): the NPU mapping and the functional reference read it when present.
struct GeminiDetails {
  std::optional<std::array<int, 3>> tensor0_lut, tensor1_lut;  // C,H,W enables for the VP
  std::optional<int> tensor_mode;
  std::vector<VpStage> modules;  // module_list in file order
  QuantInfo quant;
  std::string ori_name;
  std::optional<bool> nhwc_consistant;  // spelled as the producer spells it
  const VpStage* module(const std::string& kind) const;  // nullptr if absent
};

// An ARK op's configuration when the workload came from an ARK model file.
struct ArkDetails {
  std::string op_type;  // "Matmul", "ReduceSum"...
  int64_t node_id = -1;
};

// One operation (historically "layer": one Frontend IR entry). Inputs and outputs refer to
// Graph::tensors by id; input_shapes/output_shapes/dtypes mirror those tensors for the
// mapping and are checked against them by ir::validate.
struct Layer {
  int index = 0;           // execution order key (layer_index)
  std::string name;
  OpKind op = OpKind::Conv2d;
  Device device = Device::Npu;
  std::vector<int> inputs, outputs;                // tensor ids
  std::vector<DType> input_dtypes, output_dtypes;
  std::vector<Shape> input_shapes, output_shapes;  // NCHW activations, KCRS weights
  std::vector<std::string> previous, next;         // graph edges by name (Frontend IR style)
  std::map<std::string, std::string> files;        // file_list: role -> .npy file name
  std::vector<int> input_batchdim, output_batchdim;

  // Window operations (conv2d / pooling). Padding is [top, bottom, left, right].
  std::array<int, 2> kernel{1, 1};
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> dilation{1, 1};
  std::array<int, 4> padding{0, 0, 0, 0};
  std::array<int, 2> pool{0, 0};
  bool ceil_mode = false;
  int groups = 1;  // conv2d only; input_shapes[1] is [K, C/groups, R, S]

  std::string activation;                 // fused activation: "" (null), "relu", "relu6", ...
  std::optional<double> activation_attr;  // null unless the activation takes a parameter

  // Typed attributes of the extension ops (unused fields keep their defaults).
  bool transpose_a = false, transpose_b = false;  // matmul / batch_matmul
  std::vector<int64_t> axes;      // reductions, softmax (one), layer_norm (trailing), concat/split/gather (one)
  bool keepdims = true;           // reductions
  double epsilon = 1e-5;          // layer_norm, rms_norm
  double clip_min = 0, clip_max = 6;  // clip
  std::vector<int64_t> perm;      // transpose
  std::vector<int64_t> starts, ends, steps;  // slice, per axis
  std::vector<int64_t> pads;      // pad: [before_0, after_0, before_1, after_1, ...]
  int64_t opaque_flops = 0, opaque_bytes = 0;  // opaque
  std::string opaque_label;       // opaque: what the producer called it

  GeminiDetails gemini;               // Frontend IR extras (module_list, quant_info, LUTs)
  std::optional<ArkDetails> ark;      // set when the op came from an ARK model

  std::string pointer;  // JSON pointer of this op in its source file, for messages ("/Conv_0")

  // Derived quantities used by mapping and reports.
  int64_t macs() const;          // multiply-accumulates (conv2d, dense, matmul); 0 otherwise
  int64_t weight_bytes() const;  // bytes of the weight operand when it is a parameter; 0 if none
  bool weight_is_parameter = true;  // matmul: false when both operands are activations
};
using Op = Layer;

struct Graph {
  std::string source;         // file the graph came from (for messages)
  std::string name;           // model name (file stem)
  std::string format;         // the reader that produced it ("frontend_ir", "ark_model"...)
  std::vector<Tensor> tensors;  // by id
  std::vector<Layer> layers;  // sorted by layer_index; a topological order (checked by validate)
  std::vector<std::string> graph_inputs;  // names like input1 that are fed from outside
  std::vector<std::string> graph_outputs; // names like output1

  const Layer* find(const std::string& name) const;  // nullptr if absent
  int batch() const;  // N of the first layer's first input (1 if unknown)
  int add_tensor(Tensor t);  // assigns the id
  const Tensor& tensor(int id) const { return tensors.at(static_cast<size_t>(id)); }
};

// Builds Graph::tensors and each layer's inputs/outputs from the name edges (previous/next)
// of a Frontend-IR-style graph: layer outputs, graph inputs (input<N>) and constants.
void link_tensors_by_name(Graph& g);
// Fills previous/next names and the shape/dtype mirrors from tensor ids (readers that build
// by ids: zoo, ARK model, later ONNX / TVM).
void derive_edges(Graph& g);
// One validation pass for every reader: tensor ids and roles, each tensor produced once and
// before use, mirrors agree with tensors, and the shape rules of every op (op_rules.cpp).
// InputError(g.source, layer pointer, ...) on the first violation.
void validate(const Graph& g);
// Its two halves: the shape rules of every op (op_rules.cpp), and the tensor table.
void check_ops(const Graph& g);
void validate_tensors(const Graph& g);
void check_op(const Layer& l, const std::string& file);
// Numpy broadcasting of two shapes aligned at their last dim; nullopt if they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Names that are not layers: graph inputs ("input1"), outputs ("output1") and constants
// ("constant_497", "GlobalAveragePool_119_1_constant1").
bool is_graph_input_name(const std::string& s);
bool is_graph_output_name(const std::string& s);
bool is_constant_name(const std::string& s);
// An edge name may pick a producer's output k > 0 as "<layer>:<k>" (split); the layer part.
std::string edge_layer(const std::string& s);
int edge_port(const std::string& s);  // k, or 0 without a suffix

}  // namespace npusim::ir
