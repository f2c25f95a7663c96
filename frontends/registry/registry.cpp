// The workload reader registry (registry.h): sniffing, forced formats and the two readers.
#include "frontends/registry/registry.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontends/ark/ark_reader.h"
#include "frontends/ark/ark_to_ir.h"
#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "frontends/onnx/onnx_reader.h"
#include "frontends/pipeline/pipeline_reader.h"
#include "frontends/tvm_mlf/tvm_mlf_reader.h"
#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

namespace npusim::frontends {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

char first_char(const std::string& s) {
  for (char c : s)
    if (!is_space(c)) return c;
  return '\0';
}

// Frontend IR: an object of layers (name -> layer) whose layers carry "operation" or
// "layer_index". Any one such layer is enough: the reader reports what else is wrong.
bool sniff_frontend_ir(const WorkloadSource& src) {
  if (first_char(src.text()) != '{') return false;
  const json::Json* doc = src.json();
  if (!doc || !doc->is_object()) return false;
  for (const auto& [key, v] : doc->items())
    if (v.is_object() && (v.contains("operation") || v.contains("layer_index"))) return true;
  return false;
}

// ARK model file: an object with "Nodes" (an ARK plan has "TaskInfos" instead).
bool sniff_ark_model(const WorkloadSource& src) {
  if (first_char(src.text()) != '{') return false;
  const json::Json* doc = src.json();
  return doc && doc->is_object() && doc->contains("Nodes");
}

ir::Graph read_frontend_ir_source(const WorkloadSource& src) {
  return parse_frontend_ir(src.json_or_throw(), src.path());
}

ir::Graph read_ark_model_source(const WorkloadSource& src) {
  return ark_model_to_ir(parse_ark_model(src.json_or_throw(), src.path()));
}

std::vector<WorkloadReader>& registry() {
  static std::vector<WorkloadReader> r{
      {"frontend_ir", "Gemini Frontend IR: an object of layers with \"operation\" and \"layer_index\"",
       sniff_frontend_ir, read_frontend_ir_source},
      {"ark_model", "ARK model file: an object with \"Nodes\"", sniff_ark_model, read_ark_model_source},
      {"onnx", "ONNX model: a protobuf ModelProto (.onnx)", [](const WorkloadSource& s) { return sniff_onnx(s.text()); },
       [](const WorkloadSource& s) { return read_onnx_workload(s.text(), s.path()); }},
      {"tvm_mlf", "TVM Model Library Format (.tar/.tar.gz or folder with metadata.json) or a GraphExecutor graph.json",
       [](const WorkloadSource& s) { return sniff_tvm_mlf_bytes(s.text(), s.json()); },
       [](const WorkloadSource& s) {
         return s.looks_like_json() ? read_tvm_graph_json(s.json_or_throw(), s.path()).graph : read_tvm_mlf(s.path());
       }},
      // A pipeline is a multi-device system, not one graph: `sim --ir` runs it on a system
      // config before the registry is asked (sim/cli/run_npu.cpp); elsewhere it is an error.
      {"pipeline", "multi-device pipeline (devices, tensors, supertasks): runs with --hw SYSTEM.yaml",
       [](const WorkloadSource& s) { return s.json() && pipeline::sniff_pipeline(*s.json()); },
       [](const WorkloadSource& s) -> ir::Graph {
         throw InputError(s.path(), "", "a multi-device pipeline runs as `sim --ir PIPELINE --hw SYSTEM.yaml` (docs/system.md), "
                                        "not as a single workload here");
       }},
  };
  return r;
}

// What a file no reader took looks like, when that helps ("an ARK plan: give it to --plan").
std::string hint(const WorkloadSource& src) {
  const json::Json* doc = src.json();
  if (doc && doc->is_object() && doc->contains("TaskInfos"))
    return " (it looks like an ARK plan file: run plans with --plan)";
  return "";
}

}  // namespace

WorkloadSource::WorkloadSource(std::string path) : m_path(std::move(path)) {
  // A regular file of at most kMaxInputFileBytes (sim/ir/input_file.h), checked before reading.
  m_text = read_input_file(m_path, "a workload file");
}

WorkloadSource::WorkloadSource(std::string name, std::string text) : m_path(std::move(name)), m_text(std::move(text)) {}

std::string_view WorkloadSource::head(size_t n) const { return std::string_view(m_text).substr(0, n); }

// Nothing but white space (a NUL byte is content: a binary file is not "empty").
bool WorkloadSource::empty() const { return m_text.find_first_not_of(" \t\n\r\f\v") == std::string::npos; }

bool WorkloadSource::looks_like_json() const {
  const char c = first_char(m_text);
  return c == '{' || c == '[';
}

const json::Json* WorkloadSource::json() const {
  if (!m_parsed) {
    m_parsed = true;
    if (looks_like_json()) {
      try {
        m_doc = std::make_unique<json::Json>(json::parse_text(m_text, m_path));
      } catch (const InputError& e) {
        m_parse_error = e;
      }
    }
  }
  return m_doc.get();
}

const json::Json& WorkloadSource::json_or_throw() const {
  if (const json::Json* d = json()) return *d;
  if (m_parse_error) throw *m_parse_error;
  if (empty()) throw InputError(m_path, "", "empty file, expected JSON");
  throw InputError(m_path, "", "not JSON: the content does not start with '{' or '['");
}

const std::vector<WorkloadReader>& workload_readers() { return registry(); }

void register_workload_reader(WorkloadReader r) {
  if (find_workload_reader(r.name)) throw InternalError("workload reader '" + r.name + "' is registered twice");
  registry().push_back(std::move(r));
}

const WorkloadReader* find_workload_reader(const std::string& name) {
  for (const WorkloadReader& r : registry())
    if (r.name == name) return &r;
  return nullptr;
}

std::string workload_format_names() {
  std::string s;
  for (const WorkloadReader& r : registry()) s += (s.empty() ? "" : ", ") + r.name;
  return s;
}

std::string workload_format_list() {
  std::string s;
  for (const WorkloadReader& r : registry()) s += (s.empty() ? "" : ", ") + r.name + " (" + r.description + ")";
  return s;
}

std::string sniff_workload(const WorkloadSource& src) {
  for (const WorkloadReader& r : registry())
    if (r.sniff(src)) return r.name;
  return "";
}

ir::Graph read_workload(const WorkloadSource& src, const std::string& format) {
  const WorkloadReader* reader = nullptr;
  if (!format.empty()) {
    reader = find_workload_reader(format);
    if (!reader) throw InputError("--format", format, "unknown workload format; valid: " + workload_format_names());
  } else {
    const std::string name = sniff_workload(src);
    if (name.empty()) {
      if (src.empty())
        throw InputError(src.path(), "", "the file is empty, so not a workload format npusim reads; tried: " +
                                             workload_format_list());
      // Broken JSON: its syntax error says more than "not a workload".
      (void)src.json();
      if (src.looks_like_json() && !src.json()) src.json_or_throw();
      throw InputError(src.path(), "", "not a workload format npusim reads; tried: " + workload_format_list() + hint(src));
    }
    reader = find_workload_reader(name);
  }
  ir::Graph g = reader->read(src);
  g.format = reader->name;
  if (g.source.empty()) g.source = src.path();
  ir::validate(g);  // every reader validates already; this keeps the promise for new ones
  return g;
}

ir::Graph read_workload(const std::string& path, const std::string& format, const std::string& module) {
  // An unknown --format is reported before the file is read.
  if (!format.empty() && !find_workload_reader(format))
    throw InputError("--format", format, "unknown workload format; valid: " + workload_format_names());
  // A TVM Model Library Format folder, or a module picked from an archive (--module).
  std::error_code ec;
  const bool dir = std::filesystem::is_directory(path, ec);
  if ((dir || !module.empty()) && (format.empty() || format == "tvm_mlf") && sniff_tvm_mlf(path))
    return read_tvm_mlf(path, module);
  if (!module.empty()) throw InputError("--module", module, "only TVM Model Library Format archives have modules");
  return read_workload(WorkloadSource(path), format);
}

}  // namespace npusim::frontends
