// Internal: builds a CNN the way the Gemini front-end emits it (BN and activations fused into
// the preceding conv, VP ops with module_list stages) and writes the Frontend IR.
//
// Node numbers imitate ONNX export numbering, because layer names carry them (Conv_7,
// Add_9_1, ori_name Relu_10). Two exporter styles appear in the real files:
//  - fused (ResNet-50 file): BN already folded into conv weights before export, numbering
//    starts at 0, a conv without activation has ori_name fake_bn_<k> (k = BN ordinal),
//    folded weights are named constant_<n> with n = base + 3 * conv ordinal, where base =
//    state-dict entries + nodes of the unfolded graph + 2 (497 for ResNet-50, as in the file;
//    the formula is our reading of torch's value numbering), unfolded parameters keep their
//    dotted torch name (constant_fc.weight), input_batchdim [0];
//    every int8 add requantizes both int8 inputs in pre_cal.
//  - unfused (ResNet-34 file): BN nodes are numbered (ori_name BatchNormalization_<n>),
//    numbering starts at 1, constants are the torch names with '_' (constant_conv1_weight),
//    input_batchdim [0, -1]; a conv without activation outputs float16, adds take float16
//    and an int8 shortcut passes a dequantize_Add_<n>_input_<i>_1 layer first.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::frontends::zoo {

using Shape = std::vector<int64_t>;

enum class Act { kNone, kRelu, kRelu6 };

struct ExportStyle {
  bool fused_bn = true;
  int first_node = 0;  // ONNX number of the first node
};

class NetBuilder {
 public:
  // model: for error messages; int8: src_quantize + int8 tensors, else every tensor in the
  // float type (float16, or float32 with fp32).
  NetBuilder(std::string model, ExportStyle style, bool int8, int batch, int height, int width,
             bool fp32 = false);

  // The tensor feeding the first layer (src_quantize_1_1 for int8, else the network input).
  int input();
  // param: torch parameter name of the weight (layer1.0.conv1.weight).
  int conv(int x, int cout, int kernel, int stride, int pad, Act act, const std::string& param,
           bool bn = true, int groups = 1);
  int max_pool(int x, int kernel, int stride, int pad);
  int add(int a, int b, Act act);
  int global_avg_pool(int x);
  // Flatten [N,C,H,W] -> [N,C*H*W,1,1] for a following dense layer.
  int flatten(int x);
  int dense(int x, int cout, Act act, const std::string& param);
  // Numbers the ONNX Flatten that torchvision puts between a global pool and the classifier
  // (it becomes no layer: the pooled [N,C,1,1] tensor is already dense-shaped).
  void skip_node() { ++m_next_number; ++m_unfused_nodes; }

  // Appends the final <dense>_reshape_output0 layer and writes the document in the order the
  // compiler does (breadth-first from the input).
  nlohmann::ordered_json finish(int last);

 private:
  enum class Kind { kQuantize, kDequantize, kConv, kMaxPool, kAvgPool, kAdd, kDense, kReshape };
  struct Node {
    Kind kind = Kind::kConv;
    std::string name, ori_name;  // empty ori_name: no key
    std::vector<int> inputs;     // node ids, -1 = network input
    std::vector<int> consumers;
    std::string constant;        // second previous_layer entry (weights, GAP scalar)
    int fused_ordinal = -1;      // >= 0: constant is constant_<base + 3 * ordinal>
    Shape out, weight;
    int kernel[2] = {1, 1}, stride[2] = {1, 1}, pad[4] = {0, 0, 0, 0}, groups = 1;
    Act act = Act::kNone;
    bool out_int8 = false;
    double scale_inv = 1, zero_point = 0;  // output quantization when out_int8
    bool on_cpu = false;  // only the final output reshape
  };

  int new_node(Node n);
  int dequantized(int x, const std::string& add_number, int input_pos);
  void set_quant(Node& n, bool nonnegative) const;
  int64_t window_out(const std::string& layer, int64_t in, int k, int s, int pt, int pb,
                     const char* axis) const;
  std::string number() { ++m_unfused_nodes; return std::to_string(m_next_number++); }

  // zoo_emit.cpp: one layer's JSON, keys in the real files' order for its operation.
  nlohmann::ordered_json emit(const Node& n, int index, int64_t const_base) const;
  nlohmann::ordered_json pre_cal(const Node& n) const;
  nlohmann::ordered_json post_cal(const Node& n) const;
  nlohmann::ordered_json quant_info(const Node& n) const;
  std::string in_name(int id) const { return id < 0 ? "input1" : m_nodes[id].name; }
  const char* dt(bool int8) const { return int8 ? "int8" : m_float; }
  nlohmann::ordered_json batchdim_conv() const;

  std::string m_model;
  ExportStyle m_style;
  bool m_int8;
  const char* m_float;  // the float type of non-int8 tensors: "float16" or "float32"
  int64_t m_batch, m_height, m_width;
  std::vector<Node> m_nodes;
  int m_next_number;
  int m_bn_count = 0, m_fused_count = 0;
  int64_t m_unfused_nodes = 0, m_state_dict_entries = 0;
};

}  // namespace npusim::frontends::zoo
