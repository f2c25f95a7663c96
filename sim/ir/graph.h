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

enum class OpKind {
  Quantize,        // float -> int8 on the vector processor (module_list pre_cal/post_cal)
  Dequantize,      // int8 -> float on the vector processor
  Conv2d,          // PE array (groups > 1: grouped / depthwise)
  Dense,           // PE array (fully connected)
  MaxPool2d,       // vector processor (compare_group)
  AvgPool2d,       // vector processor (fp32_mul_group + acc_tree_group)
  ElementWiseAdd,  // vector processor (fp32_sum_sub_group0)
  Reshape,         // data movement only (often on device cpu)
};
const char* op_name(OpKind k);                         // the Frontend IR spelling: "conv2d"...
std::optional<OpKind> parse_op(const std::string& s);  // inverse of op_name
bool runs_on_pe_array(OpKind k);                       // conv2d, dense

enum class Device { Npu, Cpu };

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

struct Layer {
  int index = 0;           // layer_index
  std::string name;
  OpKind op = OpKind::Conv2d;
  Device device = Device::Npu;
  std::vector<DType> input_dtypes, output_dtypes;
  std::vector<Shape> input_shapes, output_shapes;  // NCHW activations, KCRS weights
  std::vector<std::string> previous, next;         // graph edges by name (incl. input1, constant_*)
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

  std::string activation;                 // "" (null), "relu", "relu6", ...
  std::optional<double> activation_attr;  // null unless the activation takes a parameter
  QuantInfo quant;

  std::optional<std::array<int, 3>> tensor0_lut, tensor1_lut;  // C,H,W enables for the VP
  std::optional<int> tensor_mode;
  std::vector<VpStage> modules;  // module_list in file order
  std::string ori_name;
  std::optional<bool> nhwc_consistant;  // spelled as the producer spells it

  std::string pointer;  // JSON pointer of this layer in its source file, for messages ("/Conv_0")

  // Derived quantities used by mapping and reports.
  int64_t macs() const;          // multiply-accumulates (conv2d, dense); 0 otherwise
  int64_t weight_bytes() const;  // bytes of the constant weight input (input_shapes[1]); 0 if none
  const VpStage* module(const std::string& kind) const;  // nullptr if absent
};

struct Graph {
  std::string source;         // file the graph came from (for messages)
  std::string name;           // model name (file stem)
  std::vector<Layer> layers;  // sorted by layer_index; a topological order (checked by the reader)
  std::vector<std::string> graph_inputs;  // names like input1 that are fed from outside
  std::vector<std::string> graph_outputs; // names like output1

  const Layer* find(const std::string& name) const;  // nullptr if absent
  int batch() const;  // N of the first layer's first input (1 if unknown)
};

// Names that are not layers: graph inputs ("input1"), outputs ("output1") and constants
// ("constant_497", "GlobalAveragePool_119_1_constant1").
bool is_graph_input_name(const std::string& s);
bool is_graph_output_name(const std::string& s);
bool is_constant_name(const std::string& s);

}  // namespace npusim::ir
