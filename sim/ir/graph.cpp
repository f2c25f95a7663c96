#include "sim/ir/graph.h"

#include <regex>

namespace npusim::ir {

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

namespace {
struct OpEntry {
  OpKind kind;
  const char* name;
  OpClass cls;
};
// In OpKind order.
const OpEntry kOps[] = {
    {OpKind::Quantize, "quantize", OpClass::Quantization},
    {OpKind::Dequantize, "dequantize", OpClass::Quantization},
    {OpKind::Conv2d, "conv2d", OpClass::Gemm},
    {OpKind::Dense, "dense", OpClass::Gemm},
    {OpKind::MaxPool2d, "max_pool2d", OpClass::Window},
    {OpKind::AvgPool2d, "avg_pool2d", OpClass::Window},
    {OpKind::ElementWiseAdd, "element_wise_add", OpClass::Elementwise},
    {OpKind::Reshape, "reshape", OpClass::DataMovement},
    {OpKind::Requantize, "requantize", OpClass::Quantization},
    {OpKind::MatMul, "matmul", OpClass::Gemm},
    {OpKind::BatchMatMul, "batch_matmul", OpClass::Gemm},
    {OpKind::GlobalAvgPool2d, "global_avg_pool2d", OpClass::Window},
    {OpKind::GlobalMaxPool2d, "global_max_pool2d", OpClass::Window},
    {OpKind::Sub, "element_wise_sub", OpClass::Elementwise},
    {OpKind::Mul, "element_wise_mul", OpClass::Elementwise},
    {OpKind::Div, "element_wise_div", OpClass::Elementwise},
    {OpKind::Maximum, "element_wise_max", OpClass::Elementwise},
    {OpKind::Minimum, "element_wise_min", OpClass::Elementwise},
    {OpKind::Relu, "relu", OpClass::Elementwise},
    {OpKind::Relu6, "relu6", OpClass::Elementwise},
    {OpKind::Gelu, "gelu", OpClass::Elementwise},
    {OpKind::Silu, "silu", OpClass::Elementwise},
    {OpKind::Sigmoid, "sigmoid", OpClass::Elementwise},
    {OpKind::Tanh, "tanh", OpClass::Elementwise},
    {OpKind::Exp, "exp", OpClass::Elementwise},
    {OpKind::Sqrt, "sqrt", OpClass::Elementwise},
    {OpKind::Rsqrt, "rsqrt", OpClass::Elementwise},
    {OpKind::Neg, "neg", OpClass::Elementwise},
    {OpKind::Clip, "clip", OpClass::Elementwise},
    {OpKind::Softmax, "softmax", OpClass::Normalization},
    {OpKind::LayerNorm, "layer_norm", OpClass::Normalization},
    {OpKind::RmsNorm, "rms_norm", OpClass::Normalization},
    {OpKind::ReduceSum, "reduce_sum", OpClass::Reduction},
    {OpKind::ReduceMean, "reduce_mean", OpClass::Reduction},
    {OpKind::ReduceMax, "reduce_max", OpClass::Reduction},
    {OpKind::Transpose, "transpose", OpClass::DataMovement},
    {OpKind::Concat, "concat", OpClass::DataMovement},
    {OpKind::Split, "split", OpClass::DataMovement},
    {OpKind::Slice, "slice", OpClass::DataMovement},
    {OpKind::Gather, "gather", OpClass::DataMovement},
    {OpKind::Pad, "pad", OpClass::DataMovement},
    {OpKind::Opaque, "opaque", OpClass::Opaque},
};
static_assert(sizeof(kOps) / sizeof(kOps[0]) == kNumOpKinds, "one entry per OpKind");

const struct {
  const char* alias;
  OpKind kind;
} kAliases[] = {
    {"add", OpKind::ElementWiseAdd}, {"sub", OpKind::Sub},       {"mul", OpKind::Mul},
    {"div", OpKind::Div},            {"max", OpKind::Maximum},   {"min", OpKind::Minimum},
    {"embedding", OpKind::Gather},   {"permute", OpKind::Transpose}, {"bmm", OpKind::BatchMatMul},
    {"linear", OpKind::Dense},       {"global_avg_pool", OpKind::GlobalAvgPool2d},
    {"global_max_pool", OpKind::GlobalMaxPool2d}, {"max_pool", OpKind::MaxPool2d},
    {"avg_pool", OpKind::AvgPool2d}, {"conv", OpKind::Conv2d},
};
}  // namespace

const char* op_name(OpKind k) {
  const int i = static_cast<int>(k);
  return i >= 0 && i < kNumOpKinds ? kOps[i].name : "?";
}

std::optional<OpKind> parse_op(const std::string& s) {
  for (const auto& e : kOps)
    if (s == e.name) return e.kind;
  for (const auto& a : kAliases)
    if (s == a.alias) return a.kind;
  return std::nullopt;
}

OpClass op_class(OpKind k) { return kOps[static_cast<int>(k)].cls; }

bool runs_on_pe_array(OpKind k) {
  return k == OpKind::Conv2d || k == OpKind::Dense || k == OpKind::MatMul || k == OpKind::BatchMatMul;
}

bool is_frontend_ir_native(OpKind k) { return static_cast<int>(k) <= static_cast<int>(OpKind::Reshape); }

const char* role_name(TensorRole r) {
  switch (r) {
    case TensorRole::GraphInput: return "graph_input";
    case TensorRole::Activation: return "activation";
    case TensorRole::Weight: return "weight";
    case TensorRole::Bias: return "bias";
    case TensorRole::Constant: return "constant";
    case TensorRole::GraphOutput: return "graph_output";
  }
  return "?";
}

// Reduction length of one output element of a GEMM-class op.
static int64_t gemm_reduction(const Layer& l) {
  if (l.input_shapes.size() < 2) return 0;
  const Shape& a = l.input_shapes[0];
  const Shape& w = l.input_shapes[1];
  if (l.op == OpKind::MatMul || l.op == OpKind::BatchMatMul) {
    if (a.empty()) return 0;
    return l.transpose_a && a.size() >= 2 ? a[a.size() - 2] : a.back();
  }
  int64_t reduce = 1;  // conv2d / dense: weight [K, C/g, R, S] or [K, C]
  for (size_t i = 1; i < w.size(); ++i) reduce *= w[i];
  return reduce;
}

int64_t Layer::macs() const {
  if (!runs_on_pe_array(op) || input_shapes.size() < 2 || output_shapes.empty()) return 0;
  // Every output element needs one dot product over the reduction dims.
  return num_elements(output_shapes[0]) * gemm_reduction(*this);
}

int64_t Layer::weight_bytes() const {
  if (!runs_on_pe_array(op) || input_shapes.size() < 2) return 0;
  DType t = input_dtypes.size() > 1 ? input_dtypes[1] : DType::Int8;
  return num_elements(input_shapes[1]) * dtype_bytes(t);
}

const VpStage* GeminiDetails::module(const std::string& kind) const {
  for (const auto& m : modules)
    if (m.kind == kind) return &m;
  return nullptr;
}

const Layer* Graph::find(const std::string& n) const {
  for (const auto& l : layers)
    if (l.name == n) return &l;
  return nullptr;
}

int Graph::add_tensor(Tensor t) {
  t.id = static_cast<int>(tensors.size());
  tensors.push_back(std::move(t));
  return tensors.back().id;
}

int Graph::batch() const {
  // The first graph input's leading dim (token ids [B, S], images [N, C, H, W])...
  for (const Tensor& t : tensors)
    if (t.role == TensorRole::GraphInput && !t.shape.empty()) return static_cast<int>(t.shape[0]);
  // ...or, for a graph without a tensor table, the first layer's first input.
  if (layers.empty() || layers[0].input_shapes.empty() || layers[0].input_shapes[0].empty()) return 1;
  return static_cast<int>(layers[0].input_shapes[0][0]);
}

bool is_graph_input_name(const std::string& s) {
  static const std::regex re("input[0-9]*");
  return std::regex_match(s, re);
}
bool is_graph_output_name(const std::string& s) {
  static const std::regex re("output[0-9]*");
  return std::regex_match(s, re);
}
std::string edge_layer(const std::string& s) {
  const auto c = s.rfind(':');
  if (c == std::string::npos || c + 1 == s.size()) return s;
  for (size_t i = c + 1; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return s;
  return s.substr(0, c);
}

int edge_port(const std::string& s) {
  const std::string l = edge_layer(s);
  if (l.size() == s.size() || s.size() - l.size() > 8) return 0;
  return std::stoi(s.substr(l.size() + 1));
}

bool is_constant_name(const std::string& s) {
  return s.rfind("constant", 0) == 0 || s.find("_constant") != std::string::npos;
}

}  // namespace npusim::ir
