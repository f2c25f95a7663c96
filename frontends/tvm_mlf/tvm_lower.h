// GraphExecutor graph -> workload IR (docs/format_tvm_mlf.md).
//
// Tensors: one per graph entry. A "null" node is a parameter when the .params file has its
// name (without a .params file: when it is named like relay.build's bound constants, p0,
// p1...), else a graph input. A parameter read as operand 1 of conv2d / dense / matmul /
// batch_matmul is a Weight, as operand 2 a Bias, otherwise a Constant. Outputs of tvm_op
// nodes are activations, or graph outputs when listed in heads.
//
// A tvm_op node lowers by its fused function name: the part after "fused_" (the prefix
// "tvmgen_<model>_" and a trailing "_<n>" dedup suffix are dropped) is split into relay op
// names ("nn_conv2d", "add", "nn_relu"...), lowered as a chain: the first op takes its
// operands from the node's inputs in order, each later op takes the previous value plus
// the next inputs it needs. conv2d / dense followed by add (or nn.bias_add) of a parameter
// with K elements take it as their bias input; a following nn.relu / clip becomes their
// fused activation ("relu" / "relu6"). Casts and requantisation steps (cast,
// fixed_point_multiply, round...) are folded into the op before them. Every other step is an
// IR op of its own, named "<node>/<relay op>"; a node that lowers to one op keeps its name.
// Window attributes are not in the graph: they are inferred from the shapes (NCHW, see
// infer_conv_axis / infer_pool_axis). A node whose name has an unknown op, whose inputs do
// not match its ops, with several outputs, or whose lowered ops break the IR's shape rules
// becomes one opaque op (bytes = inputs + outputs; FLOPs = 2 x MACs for a GEMM-like
// function, else one per output element) labelled "<func_name> (<why>)".
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontends/tvm_mlf/tvm_graph.h"
#include "frontends/tvm_mlf/tvm_params.h"
#include "sim/ir/graph.h"

namespace npusim::frontends::tvm {

struct LowerOptions {
  std::string source;  // Graph::source (the path given)
  std::string name;    // Graph::name
  // Names of the parameters (the .params file, already checked against the graph);
  // nullopt when there is no .params file.
  std::optional<std::set<std::string>> param_names;
};

struct Lowered {
  ir::Graph graph;     // derive_edges done, validated
  int num_opaque = 0;  // tvm_op nodes that became opaque
};

Lowered lower_executor_graph(const ExecutorGraph& eg, const LowerOptions& opt);

// Storage plan: sum over distinct storage ids of the largest entry placed there.
struct StorageUse {
  int64_t footprint_bytes = 0;
  int64_t entry_bytes = 0;
  int64_t num_storage_ids = 0;
};
StorageUse storage_use(const ExecutorGraph& eg);

// One spatial axis of a window op: kernel, stride, padding before and after.
struct WindowAxis {
  int64_t kernel = 1, stride = 1, pad_lo = 0, pad_hi = 0;
};
// conv2d (dilation 1): the smallest stride for which some total padding P in
// [0, 2 (kernel - 1)] gives `out` (then any P >= 0); within the feasible range of P the
// smallest even one (symmetric), else the smallest, split floor / ceil (extra at the end).
std::optional<WindowAxis> infer_conv_axis(int64_t in, int64_t out, int64_t kernel);
// Pooling: the window is not in the graph either; non-overlapping windows are assumed:
// kernel = stride, from floor(in / out) upwards, padding P in [0, 2 floor(kernel / 2)]
// chosen as for conv2d.
std::optional<WindowAxis> infer_pool_axis(int64_t in, int64_t out);

}  // namespace npusim::frontends::tvm
