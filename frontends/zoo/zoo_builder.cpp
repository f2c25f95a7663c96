#include "frontends/zoo/zoo_builder.h"

#include <cmath>
#include <deque>
#include <utility>

#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

using nlohmann::ordered_json;

namespace {

// Deterministic value in [0, 1) from a layer name (FNV-1a, then splitmix64 to spread bits), so
// a layer's quantization does not depend on which other layers exist.
double unit_hash(const std::string& s, uint64_t salt) {
  uint64_t h = 1469598103934665603ull ^ salt;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0);
}

// +0.0 turns a -0.0 (from rounding or negating zero) into 0.0 so dumps never show "-0.0".
double clean(double v) { return v + 0.0; }

std::string underscored(std::string s) {
  for (char& c : s)
    if (c == '.') c = '_';
  return s;
}

}  // namespace

NetBuilder::NetBuilder(std::string model, ExportStyle style, bool int8, int batch, int height,
                       int width, bool fp32)
    : m_model(std::move(model)), m_style(style), m_int8(int8),
      m_float(fp32 && !int8 ? "float32" : "float16"), m_batch(batch), m_height(height),
      m_width(width), m_next_number(style.first_node) {}

int NetBuilder::new_node(Node n) {
  int id = static_cast<int>(m_nodes.size());
  for (int in : n.inputs)
    if (in >= 0) m_nodes[in].consumers.push_back(id);
  m_nodes.push_back(std::move(n));
  return id;
}

// Relu outputs use the int8 range from zero point -128 upwards, as in the real files; signed
// tensors get a small integer zero point. Inverse scales span the files' ranges.
void NetBuilder::set_quant(Node& n, bool nonnegative) const {
  n.out_int8 = m_int8;
  if (!m_int8) return;
  double u = unit_hash(n.name, 1), v = unit_hash(n.name, 2);
  if (nonnegative) {
    n.scale_inv = 20.0 + 130.0 * u;
    n.zero_point = -128.0;
  } else {
    n.scale_inv = 60.0 + 440.0 * u;
    n.zero_point = clean(std::round(-30.0 + 60.0 * v));
  }
}

int64_t NetBuilder::window_out(const std::string& layer, int64_t in, int k, int s, int pt, int pb,
                               const char* axis) const {
  if (in + pt + pb < k)
    throw InputError("zoo", "input",
                     "input " + std::to_string(m_height) + "x" + std::to_string(m_width) +
                         " is too small for " + m_model + ": layer " + layer + " gets " + axis +
                         " " + std::to_string(in) + " (padded " + std::to_string(in + pt + pb) +
                         ") for a window of " + std::to_string(k));
  return (in + pt + pb - k) / s + 1;
}

int NetBuilder::input() {
  if (!m_int8) return -1;
  Node n;
  n.kind = Kind::kQuantize;
  n.name = "src_quantize_1_1";
  n.ori_name = "src_quantize_1";
  n.inputs = {-1};
  n.out = {m_batch, 3, m_height, m_width};
  n.out_int8 = true;
  n.scale_inv = 25.0 + 30.0 * unit_hash(n.name, 1);
  n.zero_point = clean(std::round(-15.0 + 30.0 * unit_hash(n.name, 2)));
  return new_node(std::move(n));
}

int NetBuilder::conv(int x, int cout, int kernel, int stride, int pad, Act act,
                     const std::string& param, bool bn, int groups) {
  const Shape in = x < 0 ? Shape{m_batch, 3, m_height, m_width} : m_nodes[x].out;
  if (in[1] % groups != 0 || cout % groups != 0)
    throw InternalError("zoo: channels not divisible by groups in " + m_model);
  Node n;
  n.kind = Kind::kConv;
  n.inputs = {x};
  n.name = "Conv_" + number();
  std::string bn_number;
  if (bn) {
    if (m_style.fused_bn)
      ++m_unfused_nodes;  // the BN the exporter folded still counts for constant numbering
    else
      bn_number = number();
  }
  const char* act_op = act == Act::kRelu6 ? "Clip_" : "Relu_";
  if (act != Act::kNone)
    n.ori_name = act_op + number();
  else if (bn)
    n.ori_name = m_style.fused_bn ? "fake_bn_" + std::to_string(m_bn_count)
                                  : "BatchNormalization_" + bn_number;
  else
    n.ori_name = n.name;
  if (bn) ++m_bn_count;
  if (m_style.fused_bn && bn)
    n.fused_ordinal = m_fused_count++;
  else
    n.constant = "constant_" + (m_style.fused_bn ? param : underscored(param));
  m_state_dict_entries += bn ? 1 + 5 : 1 + 1;  // weight + BN (w, b, mean, var, count) or bias

  n.kernel[0] = n.kernel[1] = kernel;
  n.stride[0] = n.stride[1] = stride;
  for (int& p : n.pad) p = pad;
  n.groups = groups;
  n.act = act;
  n.weight = {cout, in[1] / groups, kernel, kernel};
  n.out = {m_batch, cout, window_out(n.name, in[2], kernel, stride, pad, pad, "height"),
           window_out(n.name, in[3], kernel, stride, pad, pad, "width")};
  if (act != Act::kNone || m_style.fused_bn)
    set_quant(n, act != Act::kNone);
  // else: the unfused exporter leaves a BN-only conv in float16 for the add that follows.
  return new_node(std::move(n));
}

int NetBuilder::max_pool(int x, int kernel, int stride, int pad) {
  const Node& src = m_nodes.at(x);
  Node n;
  n.kind = Kind::kMaxPool;
  n.inputs = {x};
  std::string num = number();
  n.name = "MaxPool_" + num + "_1";
  n.ori_name = "MaxPool_" + num;
  n.kernel[0] = n.kernel[1] = kernel;
  n.stride[0] = n.stride[1] = stride;
  for (int& p : n.pad) p = pad;
  n.out = {m_batch, src.out[1], window_out(n.name, src.out[2], kernel, stride, pad, pad, "height"),
           window_out(n.name, src.out[3], kernel, stride, pad, pad, "width")};
  n.out_int8 = src.out_int8;  // max keeps the input's quantization
  n.scale_inv = src.scale_inv;
  n.zero_point = src.zero_point;
  return new_node(std::move(n));
}

int NetBuilder::dequantized(int x, const std::string& add_number, int input_pos) {
  Node n;
  n.kind = Kind::kDequantize;
  n.inputs = {x};
  n.name = "dequantize_Add_" + add_number + "_input_" + std::to_string(input_pos) + "_1";
  n.out = m_nodes[x].out;
  return new_node(std::move(n));
}

int NetBuilder::add(int a, int b, Act act) {
  if (m_nodes.at(a).out != m_nodes.at(b).out)
    throw InternalError("zoo: add of different shapes in " + m_model);
  std::string num = number();
  Node n;
  n.kind = Kind::kAdd;
  n.name = "Add_" + num + "_1";
  n.ori_name = act != Act::kNone ? "Relu_" + number() : "Add_" + num;
  if (!m_style.fused_bn && m_int8) {
    if (m_nodes[a].out_int8) a = dequantized(a, num, 1);
    if (m_nodes[b].out_int8) b = dequantized(b, num, 2);
  }
  n.inputs = {a, b};
  n.act = act;
  n.out = m_nodes[a].out;
  set_quant(n, act != Act::kNone);
  return new_node(std::move(n));
}

int NetBuilder::global_avg_pool(int x) {
  const Node& src = m_nodes.at(x);
  std::string num = number();
  Node n;
  n.kind = Kind::kAvgPool;
  n.inputs = {x};
  n.name = "GlobalAveragePool_" + num + "_1";
  n.ori_name = "GlobalAveragePool_" + num;
  n.constant = n.name + "_constant1";
  n.kernel[0] = static_cast<int>(src.out[2]);
  n.kernel[1] = static_cast<int>(src.out[3]);
  n.out = {m_batch, src.out[1], 1, 1};
  set_quant(n, true);  // every zoo network pools a relu output
  return new_node(std::move(n));
}

// VGG's classifier reads the flattened feature map. A reshape layer keeps every edge's shapes
// equal; it is nhwc_consistant because the compiler permutes fc6's weight columns to the
// NHWC order offline, so the flatten is a view and stays on the NPU.
int NetBuilder::flatten(int x) {
  const Node& src = m_nodes.at(x);
  std::string num = number();
  Node n;
  n.kind = Kind::kReshape;
  n.inputs = {x};
  n.name = "Flatten_" + num;
  n.ori_name = n.name;
  n.out = {m_batch, src.out[1] * src.out[2] * src.out[3], 1, 1};
  n.out_int8 = src.out_int8;
  n.scale_inv = src.scale_inv;
  n.zero_point = src.zero_point;
  return new_node(std::move(n));
}

int NetBuilder::dense(int x, int cout, Act act, const std::string& param) {
  const Node& src = m_nodes.at(x);
  Node n;
  n.kind = Kind::kDense;
  n.inputs = {x};
  n.name = "Gemm_" + number();
  if (act != Act::kNone) n.ori_name = "Relu_" + number();
  n.constant = "constant_" + (m_style.fused_bn ? param : underscored(param));
  m_state_dict_entries += 2;
  n.act = act;
  n.weight = {cout, src.out[1], src.out[2], src.out[3]};
  n.out = {m_batch, cout, 1, 1};
  if (act != Act::kNone) set_quant(n, true);  // the logits stay float16
  return new_node(std::move(n));
}

ordered_json NetBuilder::finish(int last) {
  const Node& src = m_nodes.at(last);
  Node n;
  n.kind = Kind::kReshape;
  n.inputs = {last};
  n.name = src.name + "_reshape_output0";
  n.ori_name = src.name;
  n.out = {m_batch, src.out[1]};
  n.out_int8 = src.out_int8;
  n.on_cpu = true;
  new_node(std::move(n));

  // Breadth-first (Kahn) order from the input: this reproduces the real files' layer order,
  // e.g. a downsample conv right after the first conv of its block.
  std::vector<int> pending(m_nodes.size(), 0);
  std::deque<int> ready;
  for (size_t i = 0; i < m_nodes.size(); ++i) {
    for (int in : m_nodes[i].inputs) pending[i] += in >= 0;
    if (pending[i] == 0) ready.push_back(static_cast<int>(i));
  }
  // Folded constants follow every value of the unfolded export (state dict, node outputs).
  const int64_t const_base = m_state_dict_entries + m_unfused_nodes + 2;
  ordered_json doc = ordered_json::object();
  int index = 0;
  while (!ready.empty()) {
    int id = ready.front();
    ready.pop_front();
    doc[m_nodes[id].name] = emit(m_nodes[id], index++, const_base);
    for (int c : m_nodes[id].consumers)
      if (--pending[c] == 0) ready.push_back(c);
  }
  if (index != static_cast<int>(m_nodes.size())) throw InternalError("zoo: graph has a cycle");
  return doc;
}

}  // namespace npusim::frontends::zoo
