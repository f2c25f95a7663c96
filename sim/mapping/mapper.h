// Lowers an ir::Graph onto the NPU of a HwConfig: tiles every layer so its working set fits the
// buffers, chooses what stays in L2, and emits DMA / PE / VP / host commands with dependencies
// (double buffering and weight prefetch are expressed as dependencies, not overlap factors).
#pragma once
#include "sim/config/hw_config.h"
#include "sim/ir/graph.h"
#include "sim/mapping/program.h"

namespace npusim::mapping {

struct MapperParams {
  int64_t l2_bytes = 0;
  int64_t l2_weight_bytes = 0;  // share of L2 for prefetched weights
  int64_t l2_act_bytes = 0;     // the rest: activations
  int64_t weight_buffer_bytes = 0;
  int weight_prefetch_layers = 2;
  int staged_prefetch_layers = 3;
  bool serialize_layers = false;
  bool keep_activations_on_chip = true;
  double host_cycles_per_byte = 0;
  int64_t host_op_cycles = 0;
  static MapperParams read(const config::HwConfig& c);
};

Program map_graph(const ir::Graph& g, const config::HwConfig& c);

}  // namespace npusim::mapping
