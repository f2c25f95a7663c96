#include "frontends/frontend_ir/frontend_ir_writer.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "sim/ir/error.h"

namespace npusim::frontends {

namespace {

using nlohmann::ordered_json;
using ir::Layer;
using ir::OpKind;

std::string pointer_of(const Layer& l) { return l.pointer.empty() ? "/" + l.name : l.pointer; }

ordered_json pair(const std::array<int, 2>& a) { return ordered_json::array({a[0], a[1]}); }

ordered_json ints(const std::vector<int64_t>& v) {
  ordered_json a = ordered_json::array();
  for (int64_t x : v) a.push_back(x);
  return a;
}

// The graph with tensor ids on every layer: graphs built by ids are used as they are, graphs
// that only carry name edges are linked first.
bool has_tensor_ids(const ir::Graph& g) {
  for (const Layer& l : g.layers) {
    if (l.outputs.empty() && !l.output_shapes.empty()) return false;
    if (l.inputs.empty() && !l.previous.empty()) return false;
  }
  return true;
}

class Writer {
 public:
  explicit Writer(const ir::Graph& g) : m_g(g) {}

  ordered_json write() {
    check_layers();
    name_tensors();
    find_batch();
    ordered_json doc = ordered_json::object();
    for (size_t i = 0; i < m_g.layers.size(); ++i) doc[m_g.layers[i].name] = layer(m_g.layers[i], i);
    return doc;
  }

 private:
  const ir::Tensor& tensor(const Layer& l, int id, const char* field) const {
    if (id < 0 || static_cast<size_t>(id) >= m_g.tensors.size())
      throw InputError(m_g.source, pointer_of(l) + "/" + field, "tensor id " + std::to_string(id) + " does not exist");
    return m_g.tensors[static_cast<size_t>(id)];
  }

  void check_layers() {
    std::set<std::string> seen;
    m_producer.assign(m_g.tensors.size(), -1);
    m_consumers.assign(m_g.tensors.size(), {});
    for (size_t i = 0; i < m_g.layers.size(); ++i) {
      const Layer& l = m_g.layers[i];
      if (l.name.empty()) throw InputError(m_g.source, pointer_of(l), "an operation without a name cannot be written");
      if (!seen.insert(l.name).second)
        throw InputError(m_g.source, pointer_of(l), "two operations are named '" + l.name + "'");
      if (l.inputs.empty())
        throw InputError(m_g.source, pointer_of(l), std::string("Frontend IR needs at least one input per operation; ") +
                                                        ir::op_name(l.op) + " '" + l.name + "' has none");
      if (l.outputs.empty())
        throw InputError(m_g.source, pointer_of(l), "'" + l.name + "' has no output");
      for (int id : l.inputs) {
        const ir::Tensor& t = tensor(l, id, "inputs");
        if (t.shape.empty())
          throw InputError(m_g.source, pointer_of(l), "tensor '" + t.name + "' has rank 0; Frontend IR shapes have rank >= 1");
        auto& c = m_consumers[static_cast<size_t>(id)];
        if (std::find(c.begin(), c.end(), static_cast<int>(i)) == c.end()) c.push_back(static_cast<int>(i));
      }
      for (int id : l.outputs) {
        const ir::Tensor& t = tensor(l, id, "outputs");
        if (t.shape.empty())
          throw InputError(m_g.source, pointer_of(l), "tensor '" + t.name + "' has rank 0; Frontend IR shapes have rank >= 1");
        m_producer[static_cast<size_t>(id)] = static_cast<int>(i);
      }
    }
    m_layer_names = seen;
  }

  // input<N>, constant_<name> and output<N>, never equal to a layer name or to each other.
  void name_tensors() {
    std::set<std::string> used = m_layer_names;
    m_names.assign(m_g.tensors.size(), "");
    int next_input = 1, next_output = 1;
    auto fresh_input = [&] {
      std::string n;
      do n = "input" + std::to_string(next_input++);
      while (used.count(n));
      return n;
    };
    // Names already in the reader's style are kept (a graph read from Frontend IR writes back
    // with its own names); they are claimed first so that generated ones avoid them.
    for (const ir::Tensor& t : m_g.tensors) {
      if (m_producer[t.id] >= 0 || m_consumers[t.id].empty()) continue;
      const bool keep = t.is_parameter() ? ir::is_constant_name(t.name) : ir::is_graph_input_name(t.name);
      if (keep && !used.count(t.name)) {
        m_names[t.id] = t.name;
        used.insert(t.name);
      }
    }
    for (const ir::Tensor& t : m_g.tensors) {
      if (m_producer[t.id] >= 0) {
        if (t.role == ir::TensorRole::GraphOutput) m_output_names[t.id] = "output" + std::to_string(next_output++);
        continue;
      }
      if (m_consumers[t.id].empty() || !m_names[t.id].empty()) continue;
      if (t.is_parameter()) {
        std::string base = "constant_" + (t.name.empty() ? std::to_string(t.id) : t.name);
        std::string n = base;
        for (int k = 1; used.count(n); ++k) n = base + "_" + std::to_string(k);
        m_names[t.id] = n;
        used.insert(n);
      } else {
        m_names[t.id] = fresh_input();  // a graph input (or a tensor nothing produces)
        used.insert(m_names[t.id]);
      }
    }
  }

  // The graph's batch as the reader's check_batch takes it: the first layer's first input.
  void find_batch() {
    const Layer& f = m_g.layers.front();
    const ir::Shape& s = m_g.tensors[static_cast<size_t>(f.inputs[0])].shape;
    int bd = 0;
    if (f.input_batchdim.size() == f.inputs.size() && f.input_batchdim[0] >= 0 &&
        f.input_batchdim[0] < static_cast<int>(s.size()))
      bd = f.input_batchdim[0];
    m_batch = s[static_cast<size_t>(bd)];
  }

  ordered_json batchdims(const std::vector<int>& ids, const std::vector<int>& given) const {
    ordered_json a = ordered_json::array();
    bool use_given = given.size() == ids.size();
    for (size_t i = 0; use_given && i < ids.size(); ++i)
      use_given = given[i] >= -1 && given[i] < static_cast<int>(m_g.tensors[static_cast<size_t>(ids[i])].shape.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      const ir::Tensor& t = m_g.tensors[static_cast<size_t>(ids[i])];
      if (use_given)
        a.push_back(given[i]);
      else
        a.push_back(!t.is_parameter() && t.shape[0] == m_batch ? 0 : -1);
    }
    return a;
  }

  std::string source_name(int id) const {
    const int p = m_producer[static_cast<size_t>(id)];
    if (p < 0) return m_names[static_cast<size_t>(id)];
    // Output k > 0 of a multi-output op (split) is "<layer>:<k>" (docs/format_frontend_ir.md#npusim-extensions).
    const ir::Layer& prod = m_g.layers[static_cast<size_t>(p)];
    for (size_t k = 1; k < prod.outputs.size(); ++k)
      if (prod.outputs[k] == id) return prod.name + ":" + std::to_string(k);
    return prod.name;
  }

  static ordered_json stage(const ir::VpStage& s) {
    ordered_json j = ordered_json::object();
    for (const auto& [k, v] : s.numbers) j[k] = v;
    for (const auto& [k, v] : s.strings) j[k] = v;
    if (!s.input_shapes.empty()) j["input_shape"] = s.input_shapes;
    if (!s.output_shapes.empty()) j["output_shape"] = s.output_shapes;
    return j;
  }

  static void axis_attr(const Layer& l, ordered_json& j) {
    if (l.axes.size() == 1)
      j["axis"] = l.axes[0];
    else if (!l.axes.empty())
      j["axes"] = ints(l.axes);
  }

  // Attributes of the operation, only the ones it uses.
  static void op_attrs(const Layer& l, ordered_json& j) {
    const bool gemm = ir::runs_on_pe_array(l.op);
    if (gemm || !l.activation.empty()) {
      j["activation_type"] = l.activation.empty() ? ordered_json(nullptr) : ordered_json(l.activation);
      j["activation_attr"] = l.activation_attr ? ordered_json(*l.activation_attr) : ordered_json(nullptr);
    }
    switch (l.op) {
      case OpKind::Conv2d:
        j["kernel_size"] = pair(l.kernel);
        j["padding"] = {l.padding[0], l.padding[1], l.padding[2], l.padding[3]};
        j["stride"] = pair(l.stride);
        if (l.dilation != std::array<int, 2>{1, 1}) j["dilation"] = pair(l.dilation);
        if (l.groups != 1) j["groups"] = l.groups;
        break;
      case OpKind::MaxPool2d:
      case OpKind::AvgPool2d:
        j["pool_size"] = pair(l.pool);
        j["padding"] = {l.padding[0], l.padding[1], l.padding[2], l.padding[3]};
        j["stride"] = pair(l.stride);
        if (l.dilation != std::array<int, 2>{1, 1}) j["dilation"] = pair(l.dilation);
        j["ceil_mode"] = l.ceil_mode;
        break;
      case OpKind::MatMul:
      case OpKind::BatchMatMul:
        j["transpose_a"] = l.transpose_a;
        j["transpose_b"] = l.transpose_b;
        break;
      case OpKind::Softmax:
      case OpKind::Concat:
      case OpKind::Split:
      case OpKind::Gather: axis_attr(l, j); break;
      case OpKind::LayerNorm:
      case OpKind::RmsNorm:
        if (!l.axes.empty()) j["axes"] = ints(l.axes);
        j["epsilon"] = l.epsilon;
        break;
      case OpKind::ReduceSum:
      case OpKind::ReduceMean:
      case OpKind::ReduceMax:
        j["axes"] = ints(l.axes);
        j["keepdims"] = l.keepdims;
        break;
      case OpKind::Clip:
        j["clip_min"] = l.clip_min;
        j["clip_max"] = l.clip_max;
        break;
      case OpKind::Transpose: j["perm"] = ints(l.perm); break;
      case OpKind::Slice:
        j["starts"] = ints(l.starts);
        j["ends"] = ints(l.ends);
        if (!l.steps.empty()) j["steps"] = ints(l.steps);
        break;
      case OpKind::Pad: j["pads"] = ints(l.pads); break;
      case OpKind::Opaque:
        j["flops"] = l.opaque_flops;
        j["bytes"] = l.opaque_bytes;
        if (!l.opaque_label.empty()) j["label"] = l.opaque_label;
        break;
      default: break;
    }
  }

  // What the Gemini compiler adds (quantization, VP stages); present only on graphs read from
  // its files or built in its style.
  static void gemini_attrs(const Layer& l, ordered_json& j) {
    const ir::GeminiDetails& d = l.gemini;
    if (d.quant.present) {
      ordered_json q = ordered_json::object();
      auto put = [&](const char* k, const std::optional<double>& v) {
        if (v) q[k] = *v;
      };
      put("input_scale1", d.quant.input_scale1);
      put("input_zero_point1", d.quant.input_zero_point1);
      put("input_scale2", d.quant.input_scale2);
      put("input_zero_point2", d.quant.input_zero_point2);
      put("output_scale", d.quant.output_scale);
      put("output_zero_point", d.quant.output_zero_point);
      if (!d.quant.round_type.empty()) q["round_type"] = d.quant.round_type;
      j["quant_info"] = q;
    }
    if (d.tensor0_lut) j["tensor0_lut"] = *d.tensor0_lut;
    if (d.tensor1_lut) j["tensor1_lut"] = *d.tensor1_lut;
    if (d.tensor_mode) j["tensor_mode"] = *d.tensor_mode;
    if (!d.modules.empty()) {
      ordered_json ml = ordered_json::object();
      for (const ir::VpStage& s : d.modules) ml[s.kind] = stage(s);
      j["module_list"] = ml;
    }
    if (!d.ori_name.empty()) j["ori_name"] = d.ori_name;
    if (d.nhwc_consistant) j["nhwc_consistant"] = *d.nhwc_consistant;
  }

  ordered_json layer(const Layer& l, size_t index) const {
    ordered_json j;
    j["layer_index"] = index;
    j["name"] = l.name;
    j["operation"] = ir::op_name(l.op);
    j["device"] = l.device == ir::Device::Cpu ? "cpu" : "npu";
    ordered_json in_dt = ordered_json::array(), out_dt = ordered_json::array();
    ordered_json in_sh = ordered_json::array(), out_sh = ordered_json::array();
    ordered_json prev = ordered_json::array(), next = ordered_json::array();
    for (int id : l.inputs) {
      const ir::Tensor& t = m_g.tensors[static_cast<size_t>(id)];
      in_dt.push_back(ir::dtype_name(t.dtype));
      in_sh.push_back(t.shape);
      prev.push_back(source_name(id));
    }
    std::vector<std::string> next_names;
    for (int id : l.outputs) {
      const ir::Tensor& t = m_g.tensors[static_cast<size_t>(id)];
      out_dt.push_back(ir::dtype_name(t.dtype));
      out_sh.push_back(t.shape);
      for (int c : m_consumers[static_cast<size_t>(id)]) {
        const std::string& n = m_g.layers[static_cast<size_t>(c)].name;
        if (std::find(next_names.begin(), next_names.end(), n) == next_names.end()) next_names.push_back(n);
      }
      auto o = m_output_names.find(id);
      if (o != m_output_names.end()) next_names.push_back(o->second);
    }
    for (const std::string& n : next_names) next.push_back(n);
    j["input_dtype"] = in_dt;
    j["output_dtype"] = out_dt;
    j["input_shape"] = in_sh;
    j["output_shape"] = out_sh;
    j["previous_layer"] = prev;
    j["next_layer"] = next;
    if (!l.files.empty()) j["file_list"] = l.files;
    j["input_batchdim"] = batchdims(l.inputs, l.input_batchdim);
    j["output_batchdim"] = batchdims(l.outputs, l.output_batchdim);
    op_attrs(l, j);
    gemini_attrs(l, j);
    return j;
  }

  const ir::Graph& m_g;
  std::set<std::string> m_layer_names;
  std::vector<int> m_producer;
  std::vector<std::vector<int>> m_consumers;
  std::vector<std::string> m_names;
  std::unordered_map<int, std::string> m_output_names;
  int64_t m_batch = 1;
};

}  // namespace

ordered_json write_frontend_ir(const ir::Graph& g) {
  if (g.layers.empty()) throw InputError(g.source, "", "the workload has no operations");
  if (has_tensor_ids(g)) return Writer(g).write();
  ir::Graph linked = g;
  ir::link_tensors_by_name(linked);
  return Writer(linked).write();
}

}  // namespace npusim::frontends
