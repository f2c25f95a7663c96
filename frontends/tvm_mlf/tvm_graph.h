// TVM GraphExecutor JSON (graph.json / <module>.graph), checked as the GraphExecutor's Load
// reads it (src/runtime/graph_executor/graph_executor.h): top-level keys nodes, arg_nodes,
// node_row_ptr, heads, attrs (a "metadata" key is ignored, any other key is an error);
// nodes {op "null"|"tvm_op", name, inputs [[node, index, version?]...], attrs|attr};
// tvm_op attrs func_name, num_inputs, num_outputs, flatten_data (strings, or integers);
// attrs per entry: dltype ["list_str", [...]], storage_id ["list_int", [...]],
// shape ["list_shape", [...]], optional device_index ["list_int", [...]]. Entry of
// (node, index) = node_row_ptr[node] + index.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontends/json_util.h"
#include "sim/ir/graph.h"

namespace npusim::frontends::tvm {

struct EntryRef {
  int64_t node = 0;
  int64_t index = 0;
};

struct GraphNode {
  bool is_op = false;         // "tvm_op"; false for "null" (an input or a parameter)
  std::string name;
  std::vector<EntryRef> inputs;
  std::string func_name;      // tvm_op only
  int64_t num_outputs = 1;
  std::string pointer;        // "<member>: /nodes/<i>" (or "/nodes/<i>" for a bare file)
};

struct GraphEntry {
  ir::Shape shape;
  std::string dltype;
  ir::DType dtype = ir::DType::Float32;
  int64_t storage_id = -1;
  int64_t device_index = -1;  // -1 when the graph has none
};

struct ExecutorGraph {
  std::vector<GraphNode> nodes;
  std::vector<int64_t> arg_nodes;
  std::vector<int64_t> node_row_ptr;  // nodes.size() + 1 entries
  std::vector<EntryRef> heads;
  std::vector<GraphEntry> entries;
  int64_t entry_id(const EntryRef& r) const { return node_row_ptr[static_cast<size_t>(r.node)] + r.index; }
};

// Parses and checks a graph document. Errors: InputError(file, prefix + JSON pointer, what),
// where prefix is "<member>: " for a member of an archive and "" for a bare file.
ExecutorGraph parse_executor_graph(const json::Json& doc, const std::string& file, const std::string& prefix);

}  // namespace npusim::frontends::tvm
