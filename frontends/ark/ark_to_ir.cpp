// ARK model -> workload IR (rules in ark_to_ir.h).
#include "frontends/ark/ark_to_ir.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "sim/ir/error.h"

namespace npusim::frontends {

namespace {

using gpu::OpType;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string number_str(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// One write of an op's output into a buffer region (offsets/shape within the buffer's Strides).
struct Write {
  int tensor = -1;
  gpu::Dims offsets, shape, strides;
};

bool same_region(const gpu::Tensor& t, const Write& w) {
  return t.offsets == w.offsets && t.shape == w.shape && t.strides == w.strides;
}

// Whether the region of t meets the region of w. Views with another buffer layout (Strides)
// cannot be compared element by element: they are taken to overlap.
bool overlaps(const gpu::Dims& off, const gpu::Dims& shape, const gpu::Dims& strides, const Write& w) {
  if (strides != w.strides) return true;
  for (size_t i = 0; i < shape.size(); ++i)
    if (off[i] + shape[i] <= w.offsets[i] || w.offsets[i] + w.shape[i] <= off[i]) return false;
  return true;
}

bool covers_buffer(const gpu::Tensor& t) {
  return t.shape == t.strides && std::all_of(t.offsets.begin(), t.offsets.end(), [](int64_t o) { return o == 0; });
}

// A graph input or weight: a tensor no op writes.
struct Unwritten {
  int tensor = -1;
  bool weight_only = true;   // every read is a Matmul's B or an Embedding's table
  std::string first_reader;  // layer name, for the weight's name
  bool table = false;        // first weight read was an Embedding table
};

class Converter {
 public:
  explicit Converter(const gpu::Model& m) : m_model(m) {
    m_g.source = m.source;
    m_g.name = std::filesystem::path(m.source).stem().string();
    m_g.format = "ark_model";
  }

  ir::Graph run() {
    for (const gpu::Node& n : m_model.nodes)
      for (const gpu::Op& op : n.ops) convert(op, n.id);
    finish_roles();
    for (size_t i = 0; i < m_g.layers.size(); ++i) m_g.layers[i].index = static_cast<int>(i);
    ir::derive_edges(m_g);
    ir::validate(m_g);
    return std::move(m_g);
  }

 private:
  const gpu::Model& m_model;
  ir::Graph m_g;
  std::map<int64_t, int> m_by_id;                  // ARK tensor id -> IR tensor
  std::map<int64_t, std::vector<Write>> m_writes;  // buffer id -> live writes into it
  std::map<std::string, Unwritten> m_unwritten;    // buffer/offsets/shape key -> input or weight
  std::vector<int> m_op_outputs;                   // IR tensors written by ops
  std::set<std::string> m_names;                   // layer and tensor names in use

  std::string unique_name(const std::string& base) {
    std::string n = base.empty() ? "op" : base;
    for (int k = 1; m_names.count(n); ++k) n = base + "_" + std::to_string(k);
    m_names.insert(n);
    return n;
  }

  int new_tensor(const std::string& name, const ir::Shape& shape, ir::DType dt, ir::TensorRole role) {
    ir::Tensor t;
    t.name = name;
    t.shape = shape;
    t.dtype = dt;
    t.role = role;
    return m_g.add_tensor(std::move(t));
  }

  // A fresh op output with the shape and type of the ARK tensor, named like the Frontend IR
  // names outputs: the layer's name, then "name:1"...
  int output_tensor(const std::string& name, const gpu::Tensor& t) {
    const int id = new_tensor(name, t.shape, ark_dtype(t.dtype), ir::TensorRole::Activation);
    m_op_outputs.push_back(id);
    return id;
  }

  // Records that IR tensor `id` now holds the data of ARK tensor w (and of its result r).
  void record_write(const gpu::Tensor& w, const gpu::Tensor* r, int id) {
    m_by_id[w.id] = id;
    if (r) m_by_id[r->id] = id;
    std::vector<Write>& ws = m_writes[w.buffer_id];
    if (covers_buffer(w)) ws.clear();
    ws.erase(std::remove_if(ws.begin(), ws.end(), [&](const Write& x) { return same_region(w, x); }), ws.end());
    ws.push_back({id, w.offsets, w.shape, w.strides});
  }

  // The IR tensor an op reads for the ARK tensor t. `reader` is the reading layer (its name
  // and ARK details are given to any view op inserted before it).
  int resolve(const gpu::Tensor& t, bool weight_read, bool table_read, const ir::Layer& reader) {
    if (auto it = m_by_id.find(t.id); it != m_by_id.end()) return it->second;
    if (auto it = m_writes.find(t.buffer_id); it != m_writes.end()) {
      std::vector<int> sources;
      for (const Write& w : it->second)
        if (overlaps(t.offsets, t.shape, t.strides, w)) sources.push_back(w.tensor);
      if (sources.size() == 1 && std::any_of(it->second.begin(), it->second.end(), [&](const Write& w) {
            return w.tensor == sources[0] && same_region(t, w);
          })) {
        m_by_id[t.id] = sources[0];
        return sources[0];
      }
      if (!sources.empty()) return view(t, sources, reader);
    }
    // Never written: a graph input or a weight, one per buffer region.
    std::string key = std::to_string(t.buffer_id) + gpu::dims_str(t.offsets) + gpu::dims_str(t.shape) +
                      gpu::dims_str(t.strides);
    auto [it, fresh] = m_unwritten.try_emplace(key);
    Unwritten& u = it->second;
    if (fresh) {
      // Named in finish_roles, once the role is known.
      u.tensor = new_tensor("", t.shape, ark_dtype(t.dtype), ir::TensorRole::GraphInput);
      u.first_reader = reader.name;
      u.table = table_read;
    }
    u.weight_only = u.weight_only && weight_read;
    m_by_id[t.id] = u.tensor;
    return u.tensor;
  }

  // A view of data that earlier ops wrote into a buffer, with another shape than any one
  // write: a reshape of the single write it covers (same element count), else a zero-cost
  // opaque op that depends on every write it overlaps.
  int view(const gpu::Tensor& t, const std::vector<int>& sources, const ir::Layer& reader) {
    ir::Layer v;
    v.name = unique_name(reader.name + "_view");
    v.pointer = t.pointer;
    v.ark = ir::ArkDetails{"Tensor", reader.ark ? reader.ark->node_id : -1};
    v.inputs = sources;
    if (sources.size() == 1 && ir::num_elements(m_g.tensor(sources[0]).shape) == gpu::product(t.shape)) {
      v.op = ir::OpKind::Reshape;
    } else {
      v.op = ir::OpKind::Opaque;
      v.opaque_label = "view of ARK buffer " + std::to_string(t.buffer_id) + " at offsets " +
                       gpu::dims_str(t.offsets) + " (shape " + gpu::dims_str(t.shape) + ")";
    }
    const int out = output_tensor(v.name, t);
    v.outputs = {out};
    m_by_id[t.id] = out;
    m_g.layers.push_back(std::move(v));
    return out;
  }

  std::string remote_ranks(const gpu::Op& op) const {
    std::set<int> ranks;
    for (const auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
      for (const gpu::Tensor& t : *list)
        if (t.is_remote(m_model.rank)) ranks.insert(t.buffer_rank);
    std::string s;
    for (int r : ranks) s += (s.empty() ? "" : ",") + std::to_string(r);
    return s;
  }

  std::string opaque_label(const gpu::Op& op) const {
    const std::string type = gpu::op_type_name(op.type);
    const std::string peers = remote_ranks(op);
    auto with = [&](const std::string& word) { return peers.empty() ? "" : " " + word + " rank " + peers; };
    switch (op.type) {
      case OpType::Cast:
        if (!op.read_tensors.empty() && !op.write_tensors.empty())
          return type + " " + gpu::data_type_name(op.read_tensors[0].dtype) + " -> " +
                 gpu::data_type_name(op.write_tensors[0].dtype);
        return type;
      case OpType::ScalarAssign: return type + " (fill with " + number_str(op.scalar.value_or(0)) + ")";
      case OpType::Rope: return type + " (rotary position embedding)";
      case OpType::Send: return type + with("to");
      case OpType::SendPacket: return type + " (packet send" + with("to") + ")";
      case OpType::Recv: return type + with("from");
      case OpType::RecvPacket: return type + " (packet receive" + with("from") + ")";
      case OpType::SendDone: return type + " (wait until the send" + with("to") + " completed)";
      case OpType::RecvReduceSend:
      case OpType::RecvReduceSendPacket:
        return type + " (all-reduce step: receive, reduce, send" + with("with") + ")";
      case OpType::DeviceSync: return type + " (barrier between ranks)";
      default: return type;
    }
  }

  void make_opaque(ir::Layer& l, const gpu::Op& op, const std::string& why) {
    const gpu::OpCost c = gpu::op_cost(op, m_model.rank);
    l.op = ir::OpKind::Opaque;
    l.opaque_flops = c.flops;
    l.opaque_bytes = c.bytes_read + c.bytes_written;
    l.opaque_label = opaque_label(op) + why;
    l.transpose_a = l.transpose_b = false;
    l.axes.clear();
    l.perm.clear();
  }

  // The IR rule of l's op holds for its tensors; otherwise (ARK pads shapes and broadcasts
  // more freely than the IR's rules) the op becomes opaque with ARK's cost.
  void check_or_opaque(ir::Layer& l, const gpu::Op& op) {
    if (l.op == ir::OpKind::Opaque) return;
    ir::Layer probe = l;
    for (int id : probe.inputs) {
      probe.input_shapes.push_back(m_g.tensor(id).shape);
      probe.input_dtypes.push_back(m_g.tensor(id).dtype);
    }
    for (int id : probe.outputs) {
      probe.output_shapes.push_back(m_g.tensor(id).shape);
      probe.output_dtypes.push_back(m_g.tensor(id).dtype);
    }
    try {
      ir::check_op(probe, m_g.source);
    } catch (const InputError& e) {
      const std::string rule = ir::op_name(l.op);
      make_opaque(l, op, " (its shapes do not fit the IR's " + rule + " rule: " + e.detail() + ")");
    }
  }

  void convert(const gpu::Op& op, int64_t node_id) {
    // Views (Tensor and other virtual ops) and Noop run no code: later reads of their
    // results resolve through the buffer they view.
    if (op.type == OpType::Noop || op.type == OpType::Tensor) return;
    if (op.is_virtual && op.type != OpType::Reshape) return;
    ir::Layer l;
    l.name = unique_name(op.name.empty() ? lower(gpu::op_type_name(op.type)) : op.name);
    l.pointer = op.pointer;
    l.ark = ir::ArkDetails{gpu::op_type_name(op.type), node_id};
    const auto& rd = op.read_tensors;
    auto read_all = [&] {
      for (const gpu::Tensor& t : rd) l.inputs.push_back(resolve(t, false, false, l));
    };
    switch (op.type) {
      case OpType::Matmul: {
        l.inputs.push_back(resolve(rd[0], false, false, l));
        l.inputs.push_back(resolve(rd[1], true, false, l));
        const gpu::Dims& b = rd[1].shape;
        const int64_t b_batch = b.size() > 2 ? gpu::product(gpu::Dims(b.begin(), b.end() - 2)) : 1;
        l.op = b_batch > 1 && rd[0].shape.size() >= 3 ? ir::OpKind::BatchMatMul : ir::OpKind::MatMul;
        if (op.matmul) {
          l.transpose_a = op.matmul->transpose_input;
          l.transpose_b = op.matmul->transpose_other;
        } else {
          l.transpose_a = op.arg_bool("TransposeInput").value_or(false);
          l.transpose_b = op.arg_bool("TransposeOther").value_or(false);
        }
        break;
      }
      case OpType::Add: l.op = ir::OpKind::ElementWiseAdd; read_all(); break;
      case OpType::Sub: l.op = ir::OpKind::Sub; read_all(); break;
      case OpType::Mul: l.op = ir::OpKind::Mul; read_all(); break;
      case OpType::Div: l.op = ir::OpKind::Div; read_all(); break;
      case OpType::Relu: l.op = ir::OpKind::Relu; read_all(); break;
      case OpType::Gelu: l.op = ir::OpKind::Gelu; read_all(); break;
      case OpType::Sigmoid: l.op = ir::OpKind::Sigmoid; read_all(); break;
      case OpType::Exp: l.op = ir::OpKind::Exp; read_all(); break;
      case OpType::Sqrt: l.op = ir::OpKind::Sqrt; read_all(); break;
      case OpType::Rsqrt: l.op = ir::OpKind::Rsqrt; read_all(); break;
      case OpType::ReduceSum:
      case OpType::ReduceMean:
      case OpType::ReduceMax: {
        l.op = op.type == OpType::ReduceSum ? ir::OpKind::ReduceSum
               : op.type == OpType::ReduceMean ? ir::OpKind::ReduceMean
                                               : ir::OpKind::ReduceMax;
        read_all();
        l.axes = {op.arg_int("Axis").value_or(-1)};
        // ARK's default is keepdims; a file without KeepDim shows it in the output's rank.
        const bool same_rank = !rd.empty() && !op.write_tensors.empty() &&
                               rd[0].shape.size() == op.write_tensors[0].shape.size();
        l.keepdims = op.arg_bool("KeepDim").value_or(same_rank);
        break;
      }
      case OpType::Reshape: l.op = ir::OpKind::Reshape; read_all(); break;
      case OpType::Transpose:
        l.op = ir::OpKind::Transpose;
        read_all();
        l.perm = op.arg_dims("Permutation").value_or(gpu::Dims{});
        break;
      case OpType::Embedding:
        // ARK: (indices, weight); the IR's gather: (table, indices).
        l.op = ir::OpKind::Gather;
        if (rd.size() == 2) {
          l.inputs.push_back(resolve(rd[1], true, true, l));
          l.inputs.push_back(resolve(rd[0], false, false, l));
        } else {
          read_all();
        }
        l.axes = {0};
        break;
      case OpType::ScalarAdd:
      case OpType::ScalarMul: {
        l.op = op.type == OpType::ScalarAdd ? ir::OpKind::ElementWiseAdd : ir::OpKind::Mul;
        read_all();
        const ir::DType dt = rd.empty() ? ir::DType::Float32 : ark_dtype(rd[0].dtype);
        l.inputs.push_back(new_tensor(unique_name(l.name + "_scalar_" + number_str(op.scalar.value_or(0))), {1}, dt,
                                      ir::TensorRole::Constant));
        break;
      }
      default:  // Cast, Copy, ScalarAssign, Rope and communication
        read_all();
        make_opaque(l, op, "");
        break;
    }
    // Outputs: ResultTensors[i] is the result of WriteTensors[i].
    const auto& wr = op.write_tensors;
    const auto& res = op.result_tensors;
    const size_t n_out = std::max(wr.size(), res.size());
    for (size_t i = 0; i < n_out; ++i) {
      const gpu::Tensor& shape_of = i < res.size() ? res[i] : wr[i];
      const int id = output_tensor(i == 0 ? l.name : l.name + ":" + std::to_string(i), shape_of);
      l.outputs.push_back(id);
      if (i < wr.size()) record_write(wr[i], i < res.size() ? &res[i] : nullptr, id);
      else m_by_id[res[i].id] = id;
    }
    if (l.outputs.empty()) {
      // SendDone, DeviceSync: a token that orders the op (the IR wants one output).
      l.outputs.push_back(new_tensor(unique_name(l.name + "_done"), {1}, ir::DType::UInt8, ir::TensorRole::Activation));
      m_op_outputs.push_back(l.outputs.back());
    }
    check_or_opaque(l, op);
    m_g.layers.push_back(std::move(l));
  }

  void finish_roles() {
    std::vector<Unwritten*> order;
    for (auto& [key, u] : m_unwritten) order.push_back(&u);
    std::sort(order.begin(), order.end(), [](const Unwritten* a, const Unwritten* b) { return a->tensor < b->tensor; });
    int inputs = 0;
    for (Unwritten* u : order) {
      ir::Tensor& t = m_g.tensors[u->tensor];
      if (u->weight_only) {
        t.role = ir::TensorRole::Weight;
        t.name = unique_name(u->first_reader + (u->table ? "_table" : "_weight"));
      } else {
        t.role = ir::TensorRole::GraphInput;
        std::string n;
        do n = "input" + std::to_string(++inputs);
        while (m_names.count(n));
        t.name = unique_name(n);
      }
    }
    std::vector<bool> read(m_g.tensors.size(), false);
    for (const ir::Layer& l : m_g.layers)
      for (int id : l.inputs) read[id] = true;
    for (int id : m_op_outputs)
      if (!read[id]) m_g.tensors[id].role = ir::TensorRole::GraphOutput;
  }
};

}  // namespace

ir::DType ark_dtype(gpu::DataType t) {
  switch (t) {
    case gpu::DataType::FP32: return ir::DType::Float32;
    case gpu::DataType::FP16: return ir::DType::Float16;
    case gpu::DataType::BF16: return ir::DType::BFloat16;
    case gpu::DataType::INT32:
    case gpu::DataType::UINT32: return ir::DType::Int32;
    case gpu::DataType::INT8: return ir::DType::Int8;
    case gpu::DataType::UINT8:
    case gpu::DataType::BYTE: return ir::DType::UInt8;
    case gpu::DataType::FP8_E4M3: return ir::DType::Float8E4M3;
    case gpu::DataType::FP8_E5M2: return ir::DType::Float8E5M2;
  }
  return ir::DType::UInt8;
}

ir::Graph ark_model_to_ir(const gpu::Model& m) { return Converter(m).run(); }

}  // namespace npusim::frontends
