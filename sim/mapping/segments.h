// Liveness and batch groups (docs/mapping.md#batch-groups): which activation bytes are live
// while each layer runs, and the runs of layers that execute depth-first on groups of images
// when a batch's activations do not fit the L2 activation share. Pure functions of the graph
// and the mapper's parameters (tests/unit/mapping/segments_test.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "sim/ir/graph.h"
#include "sim/mapping/mapper.h"

namespace npusim::mapping {

// A run of consecutive layers [first, first + count) that runs on groups of `group` images.
struct Segment {
  size_t first = 0, count = 0;
  int64_t group = 1;
};

// Activation bytes live while each layer runs if everything stayed on chip (whole batch): its
// output plus every earlier output that a later (or this) layer still reads. Linear time.
std::vector<int64_t> whole_batch_live_bytes(const ir::Graph& g);

// Consecutive NPU layers of the Frontend IR's own ops form runs while their weights fit the
// weight storage together (WL0 + the L2 weight share: they stay resident while every group
// passes); a run's group is the activation share over the bytes live per image at its tightest
// layer. Only runs whose group is smaller than the batch are returned.
std::vector<Segment> plan_segments(const ir::Graph& g, const MapperParams& p);

}  // namespace npusim::mapping
