// Writer of the Frontend IR (Gemini-Compiler-IR) JSON for any workload graph: every operation of
// ir::OpKind, the eight of the real files and the npusim extensions
// (docs/format_frontend_ir.md#npusim-extensions). The result reads back with parse_frontend_ir to the same operations, shapes,
// dtypes and attributes.
//
// Names follow the reader's conventions: layers keep their names; tensors fed from outside are
// input<N>, parameter tensors (weights, biases, constants) constant_<name>, and tensors read
// outside the graph output<N>. Edges are written on both sides (previous_layer/next_layer),
// layer_index is the position in Graph::layers (a topological order). Batch axes: a layer's
// own input_batchdim/output_batchdim when they cover its tensors, otherwise -1 for parameters
// and 0 for tensors whose dim 0 is the graph's batch (dim 0 of the first layer's first input).
#pragma once
#include <nlohmann/json.hpp>

#include "sim/ir/graph.h"

namespace npusim::frontends {

// Throws InputError(g.source, layer pointer, why) if the graph cannot be written as Frontend IR
// (an operation without inputs, a rank-0 tensor, two operations with one name).
nlohmann::ordered_json write_frontend_ir(const ir::Graph& g);

}  // namespace npusim::frontends
