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
  // Batch groups (docs/mapping.md#batch-groups): false: one run per stretch of layers whose
  // weights fit together, on groups set by its tightest layer and the L2 activation share;
  // true: the Gemini compiler's rule, groups of a power of two images sized per spatial stage
  // to fill `batch_group_fill` of the whole L2, a run's activations using the L2 its own
  // staged weights leave free.
  bool batch_groups_per_stage = false;
  double batch_group_fill = 1.0;
  // With serialize_layers: activation loads from DRAM of a layer wait for the NPU layer this
  // many earlier (1: the previous one, like its compute).
  int activation_prefetch_layers = 1;
  double host_cycles_per_byte = 0;
  int64_t host_op_cycles = 0;
  static MapperParams read(const config::HwConfig& c);
};

Program map_graph(const ir::Graph& g, const config::HwConfig& c);

}  // namespace npusim::mapping
