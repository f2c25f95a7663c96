// Reader of the Frontend IR (Gemini-Compiler-IR) JSON: one object, layer name -> layer dict
// (specs/frontend_ir.md, docs/format_frontend_ir.md). Validates every field, the graph edges
// and the shapes per operation before anything is simulated; any problem is an InputError
// naming the file and the JSON pointer (e.g. "/Conv_0/stride").
#pragma once
#include <string>

#include "frontends/json_util.h"
#include "sim/ir/graph.h"

namespace npusim::frontends {

// Reads, parses and validates a Frontend IR file. graph.source = path, graph.name = file stem.
ir::Graph read_frontend_ir(const std::string& path);

// Validates an already parsed document; source_name is used in messages and as graph.source.
// Takes ordered_json so that module_list stages keep their file order.
ir::Graph parse_frontend_ir(const json::Json& doc, const std::string& source_name);

}  // namespace npusim::frontends
