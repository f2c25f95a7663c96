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
};
const OpEntry kOps[] = {
    {OpKind::Quantize, "quantize"},     {OpKind::Dequantize, "dequantize"},
    {OpKind::Conv2d, "conv2d"},         {OpKind::Dense, "dense"},
    {OpKind::MaxPool2d, "max_pool2d"},  {OpKind::AvgPool2d, "avg_pool2d"},
    {OpKind::ElementWiseAdd, "element_wise_add"}, {OpKind::Reshape, "reshape"},
};
}  // namespace

const char* op_name(OpKind k) {
  for (const auto& e : kOps)
    if (e.kind == k) return e.name;
  return "?";
}

std::optional<OpKind> parse_op(const std::string& s) {
  for (const auto& e : kOps)
    if (s == e.name) return e.kind;
  return std::nullopt;
}

bool runs_on_pe_array(OpKind k) { return k == OpKind::Conv2d || k == OpKind::Dense; }

int64_t Layer::macs() const {
  if (!runs_on_pe_array(op) || input_shapes.size() < 2 || output_shapes.empty()) return 0;
  // Every output element needs one dot product over the weight's reduction dims (C/g * R * S).
  const Shape& w = input_shapes[1];
  int64_t reduce = 1;
  for (size_t i = 1; i < w.size(); ++i) reduce *= w[i];
  return num_elements(output_shapes[0]) * reduce;
}

int64_t Layer::weight_bytes() const {
  if (!runs_on_pe_array(op) || input_shapes.size() < 2) return 0;
  DType t = input_dtypes.size() > 1 ? input_dtypes[1] : DType::Int8;
  return num_elements(input_shapes[1]) * dtype_bytes(t);
}

const VpStage* Layer::module(const std::string& kind) const {
  for (const auto& m : modules)
    if (m.kind == kind) return &m;
  return nullptr;
}

const Layer* Graph::find(const std::string& n) const {
  for (const auto& l : layers)
    if (l.name == n) return &l;
  return nullptr;
}

int Graph::batch() const {
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
bool is_constant_name(const std::string& s) {
  return s.rfind("constant", 0) == 0 || s.find("_constant") != std::string::npos;
}

}  // namespace npusim::ir
