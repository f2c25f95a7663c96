// Liveness and batch groups (docs/mapping.md (batch groups)): which activation bytes are live
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
  int64_t act_bytes = 0;  // L2 bytes its activations may use (0: the L2 activation share)
};

// Activation bytes live while each layer runs if everything stayed on chip (whole batch): its
// output plus every earlier output that a later (or this) layer still reads. Linear time.
std::vector<int64_t> whole_batch_live_bytes(const ir::Graph& g);

// Consecutive NPU layers of the Frontend IR's own ops form runs while their weights fit the
// weight storage together (WL0 + the L2 weight share: they stay resident while every group
// passes); a run's group is the activation share over the bytes live per image at its tightest
// layer. Only runs whose group is smaller than the batch are returned.
// With p.batch_groups_per_stage (the Gemini compiler's rule): each layer allows
// nb = the largest power of two <= batch_group_fill * L2 / (its live bytes per image); a stage
// (layers from the first point where one tensor alone is live after a change of the output
// H x W, to the next such point) takes the smallest nb of its layers. A stage
// whose group is larger than the current run's starts a new run; one whose group is not larger
// joins the run and shrinks its group. Runs still end where their weights stop fitting the
// weight storage. A run's activations may use the L2 minus the weights it stages there; runs
// on the whole batch (group == batch) are returned too, for that L2 split.
std::vector<Segment> plan_segments(const ir::Graph& g, const MapperParams& p);

}  // namespace npusim::mapping
