// libonnx's shape inference for one node the reader does not lower (onnx_internal.h).
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <set>

#include "frontends/onnx/onnx_internal.h"

namespace npusim::frontends::onnx_fe {

namespace {

using TP = onnx::TensorProto;

// The values of a small constant as a TensorProto of its type; false for types not written.
bool to_proto(const Value& v, const ConstData& d, TP& t) {
  t.set_data_type(v.onnx_type);
  for (int64_t dim : v.shape) t.add_dims(dim);
  for (size_t k = 0; k < d.size(); ++k) {
    switch (v.onnx_type) {
      case TP::FLOAT: t.add_float_data(static_cast<float>(d.get(k))); break;
      case TP::DOUBLE: t.add_double_data(d.get(k)); break;
      case TP::INT64: t.add_int64_data(d.get_int(k)); break;
      case TP::INT32: case TP::INT16: case TP::INT8: case TP::UINT16: case TP::UINT8: case TP::BOOL:
        t.add_int32_data(static_cast<int32_t>(d.get_int(k)));
        break;
      case TP::UINT32: case TP::UINT64: t.add_uint64_data(static_cast<uint64_t>(d.get_int(k))); break;
      default: return false;
    }
  }
  return true;
}

void set_type(onnx::ValueInfoProto* vi, const std::string& name, const Value& v) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(v.onnx_type);
  auto* s = tt->mutable_shape();
  for (int64_t d : v.shape) s->add_dim()->set_dim_value(d);
}

}  // namespace

// libonnx 1.12's convolution and pooling shape inference reads past what a malformed node
// gives it (a null read for a Conv of a rank-2 input: found by fuzz/fuzz_onnx). Such nodes
// are not given to it: their outputs stay without shape, which the caller reports.
bool Lowerer::libonnx_can_infer(const NodeRef& n) {
  const std::string& op = n.p->op_type();
  const bool conv = op == "Conv" || op == "ConvInteger" || op == "ConvTranspose" || op == "QLinearConv";
  const bool pool = op == "AveragePool" || op == "MaxPool" || op == "LpPool" || op == "MaxRoiPool" ||
                    op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool";
  if (!conv && !pool) return true;
  auto rank = [&](int i) -> int64_t {
    if (i >= n.p->input_size() || n.p->input(i).empty()) return -1;
    const ValuePtr v = find(n.p->input(i));
    return v ? static_cast<int64_t>(v->shape.size()) : -1;
  };
  const int64_t x = rank(0);
  if (x < 3) return false;
  if (conv) {
    const int64_t w = rank(op == "QLinearConv" ? 3 : 1);
    if (w != x) return false;
  }
  return true;
}

void Lowerer::infer_node(const NodeRef& n) {
  if (!libonnx_can_infer(n)) {
    m_info.notes.push_back(n.where + ": libonnx shape inference not run (input ranks it cannot take)");
    return;
  }
  onnx::ModelProto tiny;
  tiny.set_ir_version(m_model.ir_version());
  *tiny.mutable_opset_import() = m_model.opset_import();
  onnx::GraphProto* g = tiny.mutable_graph();
  g->set_name("node");
  *g->add_node() = *n.p;
  std::set<std::string> seen;
  for (const auto& name : n.p->input()) {
    if (name.empty() || !seen.insert(name).second) continue;
    ValuePtr v = find(name);
    if (!v) continue;
    set_type(g->add_input(), name, *v);
    if (v->is_const)
      if (const ConstData* d = data(v)) {
        TP t;
        if (to_proto(*v, *d, t)) {
          t.set_name(name);
          *g->add_initializer() = std::move(t);
        }
      }
  }
  for (const auto& name : n.p->output())
    if (!name.empty()) g->add_output()->set_name(name);
  try {
    onnx::ShapeInferenceOptions opts(/*check_type=*/false, /*error_mode=*/0, /*data_prop=*/true);
    onnx::shape_inference::InferShapes(tiny, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    m_info.notes.push_back(n.where + ": libonnx shape inference failed: " + e.what());
    return;
  }
  auto take = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.has_type() || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    auto it = m_vinfo.find(vi.name());
    if (it != m_vinfo.end() && it->second.has_shape &&
        std::all_of(it->second.dims.begin(), it->second.dims.end(), [](int64_t d) { return d >= 0; }))
      return;  // the file's own full shape stays
    VInfo v;
    v.elem_type = vi.type().tensor_type().elem_type();
    v.has_shape = true;
    for (const auto& d : vi.type().tensor_type().shape().dim()) v.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    if (v.elem_type == 0 && it != m_vinfo.end()) v.elem_type = it->second.elem_type;
    m_vinfo[vi.name()] = v;
  };
  for (const auto& vi : tiny.graph().output()) take(vi);
  for (const auto& vi : tiny.graph().value_info()) take(vi);
}

}  // namespace npusim::frontends::onnx_fe
