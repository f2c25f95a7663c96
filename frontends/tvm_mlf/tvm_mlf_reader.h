// TVM Model Library Format reader (docs/format_tvm_mlf.md).
//
// Reads what `tvm.micro.export_model_library_format` writes: a directory or a .tar / .tar.gz
// (found by magic bytes, not by extension) holding metadata.json (versions 5, 6 and 7), the
// GraphExecutor configuration (executor-config/graph/graph.json up to version 6,
// executor-config/graph/<module>.graph in version 7) and parameters/<name>.params (the binary
// layout of tvm.relay.save_param_dict). A bare GraphExecutor graph.json (an object with
// "nodes", "arg_nodes" and "heads") is read too, without parameters.
//
// Every tvm_op node lowers by its fused function name to one or more IR ops
// (frontends/tvm_mlf/tvm_lower.h has the table); a function that cannot be recognised, or
// whose shapes do not satisfy the IR's shape rule, becomes an `opaque` op. Errors are
// InputError(path, "<member>: <place>", what): the archive or directory, the member
// ("executor-config/graph/graph.json", "parameters/default.params") and the JSON pointer,
// "line L, column C" or "byte N" in it; links, absolute member names and names with ".."
// are refused. Op pointers read "executor-config/graph/graph.json: /nodes/12".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontends/json_util.h"
#include "sim/ir/graph.h"

namespace npusim::frontends {

// The graph and what the reader learnt beside it.
struct TvmMlfResult {
  ir::Graph graph;                 // validated; format "tvm_mlf", source = the path given
  int metadata_version = 0;        // 5, 6 or 7; 0 for a bare graph.json
  std::string module;              // v7: the module key; v5/v6: model_name; bare graph.json: ""
  std::string graph_member;        // "executor-config/graph/graph.json" ("" for a bare file)
  std::string params_member;       // "parameters/default.params", or "" when there is none
  int num_params = 0;              // tensors in the .params file
  // Graph executor memory from the storage_id plan: entries sharing a storage id share one
  // buffer, as large as its largest entry. footprint = the sum over distinct storage ids
  // (inputs, parameters and activations alike); entry_bytes = the sum over all entries
  // without sharing. Bytes = elements x dtype bytes.
  int64_t memory_footprint_bytes = 0;
  int64_t entry_bytes = 0;
  int64_t num_storage_ids = 0;
  int num_opaque_ops = 0;          // tvm_op nodes that became opaque ops
};

// Reads a directory, .tar / .tar.gz archive or bare graph.json. `module` picks one module
// of a version 7 archive with several (required then: the error lists the names); for one
// model it may be empty or name that model.
TvmMlfResult read_tvm_mlf_detailed(const std::string& path, const std::string& module = "");
ir::Graph read_tvm_mlf(const std::string& path, const std::string& module = "");
// The storage-id memory footprint of that graph (TvmMlfResult::memory_footprint_bytes).
int64_t tvm_memory_footprint_bytes(const std::string& path, const std::string& module = "");

// A bare GraphExecutor JSON document already in memory; `source` names it in messages.
TvmMlfResult read_tvm_graph_json(const json::Json& doc, const std::string& source);

// The module names of an archive or directory (v7: the keys of "modules"; v5/v6: the
// model_name), or an empty list for a bare graph.json. InputError if it is neither.
std::vector<std::string> tvm_mlf_modules(const std::string& path);

// Content sniffers (never throw). sniff_tvm_mlf: a directory with metadata.json; a file
// whose magic bytes are tar (ustar at 257) or gzip / bzip2 / xz around a tar that has a
// metadata.json member; or a JSON object with "nodes", "arg_nodes" and "heads".
bool sniff_tvm_mlf(const std::string& path);
// The same on content already read (the registry's WorkloadSource text); `doc` is its parsed
// JSON when the caller has it (else the text is parsed when it starts with '{').
bool sniff_tvm_mlf_bytes(std::string_view bytes, const json::Json* doc = nullptr);
// A parsed document is a GraphExecutor graph: an object with "nodes", "arg_nodes", "heads".
bool looks_like_tvm_graph_json(const json::Json& doc);

}  // namespace npusim::frontends
