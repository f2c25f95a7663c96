// Graph-level and per-operation checks of the Frontend IR reader (internal to the reader).
// Each throws InputError(file, pointer into the layer, message) on the first violation.
#pragma once
#include <string>

#include "sim/ir/graph.h"

namespace npusim::frontends::frontend_ir {

// previous_layer/next_layer: every name is a layer (listed back by it), a graph input or
// constant (previous) or a graph output (next). Fills graph_inputs / graph_outputs.
void check_edges(ir::Graph& g);
// No cycle among layers, and layer_index order (g.layers is sorted by it) is topological.
void check_order(const ir::Graph& g);
// Each layer input fed by a layer matches that producer's output shape and dtype.
void check_edge_tensors(const ir::Graph& g);
// Every tensor with a batch dimension has the graph's batch size there.
void check_batch(const ir::Graph& g);

}  // namespace npusim::frontends::frontend_ir
