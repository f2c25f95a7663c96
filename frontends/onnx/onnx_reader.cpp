// Entry points of the ONNX reader (onnx_reader.h): file and model checks, libonnx's shape
// inference, then the lowering (onnx_lower.cpp).
#include "frontends/onnx/onnx_reader.h"

#include <google/protobuf/io/coded_stream.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "frontends/onnx/onnx_internal.h"
#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

namespace npusim::frontends {

namespace {

namespace fs = std::filesystem;
using onnx_fe::kMaxOpset;
using onnx_fe::kMinOpset;

constexpr uint64_t kMaxBytes = INT_MAX;  // protobuf parses one message of at most 2 GiB

// ModelProto's fields: number -> wire type (0 varint, 2 length-delimited).
int model_wire_type(uint32_t field) {
  switch (field) {
    case 1: case 5: return 0;                       // ir_version, model_version
    case 2: case 3: case 4: case 6: case 7: case 8:  // producer_name/version, domain, doc_string, graph, opset_import
    case 14: case 20: case 25: return 2;            // metadata_props, training_info, functions
    default: return -1;
  }
}

// Every `string` field (names, op types, domains; not the `bytes` of tensor data) must be
// UTF-8: protobuf does not check proto2 strings, and the names end up in JSON reports. The
// place is the field path ("/graph/node/3/name").
void check_utf8(const google::protobuf::Message& msg, const std::string& path, const std::string& where) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = msg.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(msg, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->type() != FieldDescriptor::TYPE_STRING && f->type() != FieldDescriptor::TYPE_MESSAGE) continue;
    const std::string at = where + "/" + f->name();
    const int n = f->is_repeated() ? r->FieldSize(msg, f) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string ai = f->is_repeated() ? at + "/" + std::to_string(i) : at;
      if (f->type() == FieldDescriptor::TYPE_STRING) {
        std::string scratch;
        const std::string& v = f->is_repeated() ? r->GetRepeatedStringReference(msg, f, i, &scratch)
                                                : r->GetStringReference(msg, f, &scratch);
        if (const size_t bad = invalid_utf8_at(v); bad != std::string::npos)
          throw InputError(path, ai, "not UTF-8 text (byte " + std::to_string(bad) + " of the string)");
      } else if (f->type() == FieldDescriptor::TYPE_MESSAGE) {
        check_utf8(f->is_repeated() ? r->GetRepeatedMessage(msg, f, i) : r->GetMessage(msg, f), path, ai);
      }
    }
  }
}

void check_model(const onnx::ModelProto& m, const std::string& path, const std::string& dir, OnnxReadInfo& info) {
  check_utf8(m, path, "");
  if (!m.has_ir_version() || m.ir_version() < 1)
    throw InputError(path, "/ir_version", "the model has no ir_version");
  if (m.ir_version() < 3)
    throw InputError(path, "/ir_version", "IR version " + std::to_string(m.ir_version()) +
                                              " predates opset imports (ONNX 1.0): not read");
  int opset = -1, at = -1;
  for (int i = 0; i < m.opset_import_size(); ++i) {
    const auto& o = m.opset_import(i);
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version()), at = i;
  }
  if (opset < 0) throw InputError(path, "/opset_import", "no opset is imported for the default domain (ai.onnx)");
  if (opset < kMinOpset || opset > kMaxOpset)
    throw InputError(path, "/opset_import/" + std::to_string(at),
                     "opset " + std::to_string(opset) + " of the default domain is not supported: npusim reads opsets " +
                         std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
  if (!m.has_graph()) throw InputError(path, "/graph", "the model has no graph");
  const onnx::GraphProto& g = m.graph();
  if (g.node_size() == 0) throw InputError(path, "/graph/node", "the graph has no nodes");
  for (int i = 0; i < g.initializer_size(); ++i) {
    const std::string bad = onnx_fe::check_tensor_data(g.initializer(i), dir);
    if (!bad.empty())
      throw InputError(path, "/graph/initializer/" + std::to_string(i) + " (" + g.initializer(i).name() + ")", bad);
  }
  if (g.sparse_initializer_size() > 0)
    info.notes.push_back(std::to_string(g.sparse_initializer_size()) + " sparse initializers are not read");
}

// Symbolic or missing dims of graph inputs are taken as 1 (shape inference then sees them).
void bind_input_dims(onnx::ModelProto& m, OnnxReadInfo& info) {
  std::set<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.insert(t.name());
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    if (inits.count(in.name()) || !in.has_type() || !in.type().has_tensor_type() || !in.type().tensor_type().has_shape())
      continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int d = 0; d < shape->dim_size(); ++d) {
      auto* dim = shape->mutable_dim(d);
      if (dim->has_dim_value()) continue;
      const std::string sym = dim->has_dim_param() ? "'" + dim->dim_param() + "'" : "unnamed";
      info.notes.push_back("input '" + in.name() + "' dim " + std::to_string(d) + " (" + sym + ") is symbolic: taken as 1");
      dim->set_dim_value(1);
    }
  }
}

std::string model_dir(const std::string& path) {
  const fs::path p = fs::path(path).parent_path();
  return p.empty() ? "." : p.string();
}

}  // namespace

std::string OnnxReadInfo::opaque_summary() const {
  int total = 0;
  std::string list;
  for (const auto& [type, n] : opaque_types) {
    total += n;
    list += (list.empty() ? "" : ", ") + type + " x" + std::to_string(n);
  }
  if (total == 0) return "";
  return std::to_string(total) + " opaque op" + (total == 1 ? "" : "s") + ": " + list;
}

bool sniff_onnx(std::string_view content) {
  if (content.size() < 2 || static_cast<unsigned char>(content[0]) != 0x08) return false;
  const int size = static_cast<int>(std::min<size_t>(content.size(), kMaxBytes));
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(content.data()), size);
  bool graph = false;
  for (bool first = true;; first = false) {
    if (in.CurrentPosition() == size) return graph;
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return false;
    const uint32_t field = tag >> 3;
    const int wire = static_cast<int>(tag & 7);
    if (first && tag != 0x08) return false;
    if (model_wire_type(field) != wire) return false;
    if (wire == 0) {
      uint64_t v;
      if (!in.ReadVarint64(&v)) return false;
      if (field == 1 && (v == 0 || v > 100)) return false;  // ir_version
      continue;
    }
    uint32_t len;
    if (!in.ReadVarint32(&len)) return false;
    if (field == 7) graph = true;
    if (static_cast<uint64_t>(in.CurrentPosition()) + len > static_cast<uint64_t>(size))
      return graph || field == 8;  // cut inside its last field: the reader says it is truncated
    if (!in.Skip(static_cast<int>(len))) return false;
  }
}

ir::Graph read_onnx_bytes(const std::string& bytes, const std::string& path, OnnxReadInfo* info_out) {
  OnnxReadInfo local;
  OnnxReadInfo& info = info_out ? *info_out : local;
  if (bytes.empty()) throw InputError(path, "", "the file is empty, expected an ONNX model (protobuf ModelProto)");
  if (bytes.size() > kMaxBytes)
    throw InputError(path, "", "the file has " + std::to_string(bytes.size()) +
                                   " bytes: more than protobuf's 2 GiB limit for one message (store the weights as external data)");
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes)) {
    if (sniff_onnx(bytes))
      throw InputError(path, "", "truncated or corrupt ONNX model: the protobuf ModelProto does not parse (" +
                                     std::to_string(bytes.size()) + " bytes)");
    throw InputError(path, "", "not an ONNX model: the content does not parse as a protobuf ModelProto");
  }
  const std::string dir = model_dir(path);
  check_model(m, path, dir, info);
  bind_input_dims(m, info);
  // npusim's own rules give the shapes of the ops it lowers (and must agree with value_info);
  // opaque ops take theirs from value_info, else from libonnx's shape inference run on that
  // node alone (onnx_infer.cpp): libonnx 1.12's inference is not safe on unchecked graphs.
  onnx_fe::Lowerer lowerer(m, path, dir, info);
  return lowerer.run();
}

ir::Graph read_onnx(const std::string& path, OnnxReadInfo* info) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw InputError(path, "", "cannot open: no such file");
  if (fs::is_directory(st)) throw InputError(path, "", "cannot open: is a directory, expected an .onnx file");
  const auto size = fs::file_size(path, ec);
  if (!ec && size > kMaxBytes)
    throw InputError(path, "", "the file has " + std::to_string(size) +
                                   " bytes: more than protobuf's 2 GiB limit for one message (store the weights as external data)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string bytes;
  if (!ec) bytes.reserve(size);
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path, "", std::string("cannot read: ") + std::strerror(errno));
  return read_onnx_bytes(bytes, path, info);
}

ir::Graph read_onnx_workload(const std::string& bytes, const std::string& path) {
  OnnxReadInfo info;
  ir::Graph g = read_onnx_bytes(bytes, path, &info);
  const std::string opaque = info.opaque_summary();
  if (!opaque.empty()) std::cerr << "sim: note: " << path << ": " << opaque << " (costed from bytes, flagged in the report)\n";
  for (const std::string& n : info.notes) std::cerr << "sim: note: " << path << ": " << n << "\n";
  return g;
}

}  // namespace npusim::frontends
