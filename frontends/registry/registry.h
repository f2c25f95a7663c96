// The workload reader registry: every format `sim --ir` reads, found from the file's content
// (never from its extension) or forced by name (`--format NAME`). Each reader has a name, a
// one-line description, a sniffer that looks at the content (first bytes, parsed top level)
// and a read function that returns an ir::Graph that has passed ir::validate.
//
// Registered: "frontend_ir" (frontends/frontend_ir: an object of layers with "operation" /
// "layer_index") and "ark_model" (frontends/ark: an object with "Nodes", converted by
// ark_model_to_ir). docs/formats.md#reader-registry.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontends/json_util.h"
#include "sim/ir/graph.h"

namespace npusim::frontends {

// A workload file read once, for every sniffer and then the chosen reader. Constructing it
// reads the file: a missing file, a directory or an unreadable file is an InputError.
class WorkloadSource {
 public:
  explicit WorkloadSource(std::string path);
  WorkloadSource(std::string name, std::string text);  // in-memory content (tests)

  const std::string& path() const { return m_path; }
  const std::string& text() const { return m_text; }
  std::string_view head(size_t n = 4096) const;  // the first bytes
  bool empty() const;                            // nothing but white space
  // The first character that is not white space is '{' or '['.
  bool looks_like_json() const;
  // The parsed document, or nullptr when the content is not (valid) JSON. Parsed once.
  const json::Json* json() const;
  // The parsed document; a syntax error is the InputError of json::parse_text (line, column).
  const json::Json& json_or_throw() const;

 private:
  std::string m_path, m_text;
  mutable bool m_parsed = false;
  mutable std::unique_ptr<json::Json> m_doc;
  mutable std::optional<InputError> m_parse_error;
};

struct WorkloadReader {
  std::string name;         // "frontend_ir": what --format takes and Graph::format says
  std::string description;  // one line, for messages and --help
  std::function<bool(const WorkloadSource&)> sniff;
  std::function<ir::Graph(const WorkloadSource&)> read;  // validated graph
};

// Readers in sniffing order.
const std::vector<WorkloadReader>& workload_readers();
// Adds a reader (InternalError if the name is taken).
void register_workload_reader(WorkloadReader r);
const WorkloadReader* find_workload_reader(const std::string& name);  // nullptr if none
// "frontend_ir, ark_model" and "frontend_ir (...), ark_model (...)" for messages.
std::string workload_format_names();
std::string workload_format_list();

// The name of the first reader whose sniffer accepts the content, or "" if none does.
std::string sniff_workload(const WorkloadSource& src);

// Reads a workload: `format` empty finds the reader from the content, a name forces that
// reader. InputErrors: unknown format name ("--format: NAME: ..." listing the names); a file
// no reader recognizes (path: "not a workload format npusim reads; tried: ..."); a missing
// file or a directory (path: "cannot open: ..."); and anything the reader finds (file + JSON
// pointer). The graph has passed ir::validate; graph.format names the reader.
// `module`: a TVM Model Library Format archive's module (--module); a folder is read as an
// MLF directory.
ir::Graph read_workload(const std::string& path, const std::string& format = "", const std::string& module = "");
ir::Graph read_workload(const WorkloadSource& src, const std::string& format = "");

}  // namespace npusim::frontends
