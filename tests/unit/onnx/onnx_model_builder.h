// Builds small ONNX models in memory with libonnx's protobuf API (ModelProto ->
// SerializeAsString) for the reader's tests: nothing large is committed.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace npusim::test {

class OnnxBuilder {
 public:
  using TP = onnx::TensorProto;

  explicit OnnxBuilder(int opset = 13, int ir_version = 8) {
    m.set_ir_version(ir_version);
    m.set_producer_name("npusim-test");
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g = m.mutable_graph();
    g->set_name("test");
  }

  // A graph input with static dims (a negative dim becomes a symbolic "batch" dim).
  void input(const std::string& name, const std::vector<int64_t>& dims, int type = TP::FLOAT) {
    set_type(g->add_input(), name, dims, type, true);
  }
  // A graph output; shape optional (shape inference and the reader work it out).
  void output(const std::string& name, int type = TP::FLOAT) { set_type(g->add_output(), name, {}, type, false); }
  void output_shape(const std::string& name, const std::vector<int64_t>& dims, int type = TP::FLOAT) {
    set_type(g->add_output(), name, dims, type, true);
  }
  void value_info(const std::string& name, const std::vector<int64_t>& dims, int type = TP::FLOAT) {
    set_type(g->add_value_info(), name, dims, type, true);
  }

  // An initializer of zeros in raw_data (bytes_per_element for the type).
  TP* init(const std::string& name, const std::vector<int64_t>& dims, int type = TP::FLOAT) {
    TP* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    t->set_raw_data(std::string(static_cast<size_t>(n * elem_bytes(type)), '\0'));
    return t;
  }
  TP* init_ints(const std::string& name, const std::vector<int64_t>& v, bool scalar = false) {
    TP* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TP::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return t;
  }
  TP* init_floats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    TP* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TP::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    std::string raw(v.size() * 4, '\0');
    std::memcpy(raw.data(), v.data(), raw.size());
    t->set_raw_data(raw);
    return t;
  }
  // A Constant node holding a scalar float (value_float) or an int64 vector (value_ints).
  void const_float(const std::string& out, float v) {
    auto* n = node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value_float");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  void const_ints(const std::string& out, const std::vector<int64_t>& v) {
    auto* n = node("Constant", {}, {out});
    auto* a = n->add_attribute();
    a->set_name("value_ints");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
                        const std::string& name = "", const std::string& domain = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(g->node_size() - 1) : name);
    if (!domain.empty()) n->set_domain(domain);
    for (const auto& i : ins) n->add_input(i);
    for (const auto& o : outs) n->add_output(o);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  std::string bytes() const { return m.SerializeAsString(); }
  // Writes the model into dir/name and returns the path.
  std::string write(const std::filesystem::path& dir, const std::string& name) const {
    std::filesystem::create_directories(dir);
    const std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << bytes();
    return p;
  }

  static int64_t elem_bytes(int type) {
    switch (type) {
      case TP::UINT8: case TP::INT8: case TP::BOOL: return 1;
      case TP::FLOAT16: case TP::INT16: case TP::BFLOAT16: return 2;
      case TP::INT64: case TP::DOUBLE: return 8;
      default: return 4;
    }
  }

  onnx::ModelProto m;
  onnx::GraphProto* g;

 private:
  static void set_type(onnx::ValueInfoProto* v, const std::string& name, const std::vector<int64_t>& dims, int type,
                       bool with_shape) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    if (!with_shape) return;
    auto* s = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = s->add_dim();
      if (d < 0) dim->set_dim_param("batch");
      else dim->set_dim_value(d);
    }
  }
};

}  // namespace npusim::test
