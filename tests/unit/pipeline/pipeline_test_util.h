// Shared by the pipeline tests: the committed examples (examples/pipelines, written by
// scripts/make_pipelines.py), a scratch folder per test, an fx graph builder that writes the
// torch.export graph schema as the producer does, safetensors bytes, and a small valid
// pipeline that the validation tests break one rule at a time.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontends/json_util.h"
#include "frontends/pipeline/fx_lower.h"
#include "frontends/pipeline/pipeline_reader.h"
#include "tests/unit/expect_input_error.h"

namespace npusim::test {

namespace fs = std::filesystem;
using json::Json;

inline std::string example_pipeline(const std::string& name) {
  return std::string(NPUSIM_SOURCE_DIR) + "/examples/pipelines/" + name;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::string& path, const std::string& data) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// A fresh folder for one test, removed at the end.
class Scratch {
 public:
  Scratch() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    m_dir = fs::path(::testing::TempDir()) / ("npusim_pipeline_" + std::string(info->test_suite_name()) + "_" + info->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  std::string path(const std::string& rel) const { return (m_dir / rel).string(); }
  std::string dir() const { return m_dir.string(); }

 private:
  fs::path m_dir;
};

// ---- safetensors ----

struct StEntry {
  std::string name, dtype;
  std::vector<int64_t> shape;
  int64_t begin, end;
};

inline std::string u64le(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A file with the given header entries (written as given) and `data_size` zero bytes.
inline std::string safetensors_raw(const std::string& header, int64_t data_size) {
  return u64le(header.size()) + header + std::string(static_cast<size_t>(data_size), '\0');
}

inline std::string safetensors_of(const std::vector<StEntry>& es, int64_t data_size, const Json& metadata = nullptr) {
  Json h = Json::object();
  if (!metadata.is_null()) h["__metadata__"] = metadata;
  for (const auto& e : es) h[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {e.begin, e.end}}};
  return safetensors_raw(h.dump(), data_size);
}

// ---- fx graphs (torch.export graph schema) ----

inline Json tensor_arg(const std::string& n) { return {{"as_tensor", {{"name", n}}}}; }
inline Json int_arg(int64_t v) { return {{"as_int", v}}; }
inline Json ints_arg(const std::vector<int64_t>& v) { return {{"as_ints", v}}; }
inline Json float_arg(double v) { return {{"as_float", v}}; }
inline Json bool_arg(bool v) { return {{"as_bool", v}}; }
inline Json none_arg() { return {{"as_none", true}}; }
inline Json tensors_arg(const std::vector<std::string>& ns) {
  Json a = Json::array();
  for (const auto& n : ns) a.push_back({{"name", n}});
  return {{"as_tensors", a}};
}

// ScalarType numbers of torch.export's schema.
constexpr int kBF16 = 13, kF32 = 7, kI64 = 5, kF16 = 6;

class FxGraph {
 public:
  std::string input(const std::vector<int64_t>& shape, int dtype = kF32) {
    const std::string n = "arg" + std::to_string(m_inputs.size()) + "_1";
    meta(n, shape, dtype);
    m_inputs.push_back(tensor_arg(n));
    return n;
  }
  // A node with named arguments and one output per shape; returns the output names.
  std::vector<std::string> node(const std::string& target, const std::vector<std::pair<std::string, Json>>& args,
                                const std::vector<std::vector<int64_t>>& shapes, int dtype = kF32, bool as_list = false) {
    std::vector<std::string> outs;
    Json out = Json::array();
    for (const auto& s : shapes) {
      const std::string n = "v" + std::to_string(m_count++);
      meta(n, s, dtype);
      outs.push_back(n);
    }
    if (as_list)
      out.push_back(tensors_arg(outs));
    else
      for (const auto& n : outs) out.push_back(tensor_arg(n));
    Json in = Json::array();
    for (const auto& [name, a] : args) in.push_back({{"name", name}, {"arg", a}, {"kind", 1}});
    m_nodes.push_back({{"target", target}, {"inputs", in}, {"outputs", out}, {"metadata", Json::object()}});
    return outs;
  }
  std::string op(const std::string& target, const std::vector<std::pair<std::string, Json>>& args,
                 const std::vector<int64_t>& shape, int dtype = kF32) {
    return node(target, args, {shape}, dtype)[0];
  }
  void output(const std::vector<std::string>& ns) {
    for (const auto& n : ns) m_outputs.push_back(tensor_arg(n));
  }
  void meta(const std::string& n, const std::vector<int64_t>& shape, int dtype) {
    Json sizes = Json::array();
    for (int64_t d : shape) sizes.push_back({{"as_int", d}});
    m_tv[n] = {{"dtype", dtype}, {"sizes", sizes}, {"requires_grad", false}, {"device", {{"type", "cpu"}, {"index", nullptr}}},
               {"strides", Json::array()}, {"storage_offset", {{"as_int", 0}}}, {"layout", 7}};
  }
  Json graph() const {
    return {{"inputs", m_inputs}, {"outputs", m_outputs}, {"nodes", m_nodes}, {"tensor_values", m_tv},
            {"sym_int_values", Json::object()}, {"sym_bool_values", Json::object()}, {"is_single_tensor_return", false}};
  }
  std::string payload() const { return frontends::pipeline::base64_encode(graph().dump()); }

 private:
  Json m_inputs = Json::array(), m_outputs = Json::array(), m_nodes = Json::array(), m_tv = Json::object();
  int m_count = 0;
};

inline frontends::pipeline::FxLowered lower(const FxGraph& g) {
  frontends::pipeline::FxLowerOptions o;
  o.source = "test.json";
  o.pointer = "/supertasks/1/data";
  o.name = "test";
  return frontends::pipeline::lower_fx_graph(g.graph(), o);
}

inline std::vector<std::string> op_names(const ir::Graph& g) {
  std::vector<std::string> r;
  for (const auto& l : g.layers) r.push_back(ir::op_name(l.op));
  return r;
}

// ---- a small valid pipeline ----
//
// devices a (npu:0), b (npu:1); the input supertask emits x_a, x_b; dfg compute on each
// device (ca reads the constant w_a) makes h_a, h_b; an all_reduce group "g" makes r_a, r_b;
// send "s" (a) / recv "r" (b) move r_a to t_b; the output takes t_b and r_b.
inline Json small_pipeline() {
  auto t = [](std::vector<int64_t> s) { return Json{{"shape", s}, {"dtype", "f32"}}; };
  Json p;
  p["name"] = "small";
  p["devices"] = {{"a", "npu:0"}, {"b", "npu:1"}};
  p["tensors"] = {{"x_a", t({4, 8})}, {"x_b", t({4, 8})}, {"h_a", t({4, 8})}, {"h_b", t({4, 8})}, {"r_a", t({4, 8})},
                  {"r_b", t({4, 8})}, {"t_b", t({4, 8})}};
  p["tensors"]["w_a"] = {{"shape", {8, 8}},
                         {"dtype", "f32"},
                         {"value", {{"param_file", "p"}, {"name", "w"}, {"name_in_graph", "w"}, {"placements", {{0, 8}, {0, 8}}}}}};
  p["param_files"] = {{"p", {{"path", "absent.safetensors"}, {"format", "safetensors"}}}};
  p["blobs"] = Json::object();
  Json st;
  st["in"] = {{"kind", "input"}, {"inputs", Json::array()}, {"outputs", {"x_a", "x_b"}}};
  st["ca"] = {{"kind", "dfg"}, {"inputs", {"x_a", "w_a"}}, {"outputs", {"h_a"}}, {"device", "a"}, {"data", "ZGZn"}};
  st["cb"] = {{"kind", "dfg"}, {"inputs", {"x_b"}}, {"outputs", {"h_b"}}, {"device", "b"}, {"data", "ZGZn"}};
  st["ar_a"] = {{"kind", "all_reduce"}, {"inputs", {"h_a"}}, {"outputs", {"r_a"}}, {"device", "a"}, {"group", "g"},
                {"device_idx", 0}, {"metadata", {{"reduce_op", "sum"}}}};
  st["ar_b"] = {{"kind", "all_reduce"}, {"inputs", {"h_b"}}, {"outputs", {"r_b"}}, {"device", "b"}, {"group", "g"},
                {"device_idx", 1}, {"metadata", {{"reduce_op", "sum"}}}};
  st["s"] = {{"kind", "send"}, {"inputs", {"r_a"}}, {"outputs", Json::array()}, {"device", "a"}, {"group", "p2p"},
             {"device_idx", 0}, {"metadata", Json::object()}};
  st["r"] = {{"kind", "recv"}, {"inputs", Json::array()}, {"outputs", {"t_b"}}, {"device", "b"}, {"group", "p2p"},
             {"device_idx", 1}, {"metadata", Json::object()}};
  st["out"] = {{"kind", "output"}, {"inputs", {"t_b", "r_b"}}, {"outputs", Json::array()}};
  p["supertasks"] = st;
  return p;
}

inline ir::System read_json(const Json& p, const std::string& base_dir = "",
                            const frontends::pipeline::PipelineReadOptions& opt = {}) {
  return frontends::pipeline::read_pipeline_text(p.dump(), "small.json", base_dir, opt);
}

}  // namespace npusim::test
