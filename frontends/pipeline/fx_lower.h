// fx payloads of pipeline compute supertasks -> workload IR (docs/format_pipeline.md).
//
// The payload (furiosa-llm's serialize_gm) is base64 of the torch.export graph-schema JSON
// (torch/_export/serde/schema.py): a Graph {inputs, outputs, nodes, tensor_values, ...},
// optionally with an extra "metadata" key; a Graph under "graph", or an ExportedProgram's
// "graph_module": {"graph": ...} is read too. Arguments are unions written {"as_tensor":
// {"name": n}}, {"as_int": 3}, {"as_ints": [..]}, {"as_none": true}...; tensor_values[n] is a
// TensorMeta {dtype: ScalarType number (or its name), sizes: [{"as_int": d}...] (a symbolic size
// uses its hint)}. Graph input k is the supertask's input k and graph output k its output k
// (get_attr constants are lifted to inputs by the producer); their shapes must agree.
//
// Each node lowers by its target ("torch.ops.aten.mm.default": namespace aten, op mm,
// overload default) with the shapes of tensor_values:
//   mm, matmul (A rank 2)  -> matmul          bmm, matmul (A rank >= 3) -> batch_matmul
//   addmm                  -> matmul with bias (a bias of N elements; otherwise matmul + add)
//   linear                 -> dense (2-D input) or matmul with transposed B (higher rank)
//   convolution, conv2d    -> conv2d (stride, padding, dilation, groups; kernel from the weight)
//   add/sub/mul/div/rsub (.Tensor, .Scalar), maximum, minimum -> element-wise (a scalar operand
//                             becomes a [1] constant)
//   relu, gelu, silu, sigmoid, tanh, exp, sqrt, rsqrt, neg -> unary; hardtanh, clamp -> clip
//   softmax, _softmax, _log_softmax -> softmax     layer_norm, native_layer_norm -> layer_norm
//   rms_norm -> rms_norm    mean.dim, sum.dim_IntList, amax -> reduce_mean / reduce_sum / reduce_max
//   embedding, index_select -> gather
//   view, reshape, _unsafe_view, squeeze, unsqueeze, flatten, and the copies clone, contiguous,
//     detach, alias, lift_fresh_copy, _to_copy, to, expand (same element count) -> reshape:
//     data movement of the whole tensor (an expand that broadcasts becomes opaque, bytes = in +
//     out, as it materialises the larger tensor)
//   permute, transpose, t  -> transpose        cat -> concat      slice -> slice
//   split, split_with_sizes -> split           constant_pad_nd -> pad
// Anything else, a node whose lowered op breaks the IR's shape rules, and a transposed
// convolution become one opaque op: bytes = its tensor inputs + outputs, FLOPs = one per output
// element, label = the target (with the reason for a rule failure). Nodes without tensor outputs
// (sym_size, asserts) are skipped. Outputs of a node beyond those its op produces (the mean and
// rstd of native_layer_norm) are produced by an extra opaque op only when something reads them.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "frontends/json_util.h"
#include "sim/ir/graph.h"

namespace npusim::frontends::pipeline {

// A value the graph exchanges with the pipeline (graph input / output k = supertask's k-th).
struct FxBinding {
  std::string name;  // the pipeline tensor's name (the IR tensor takes it)
  ir::Shape shape;
  ir::DType dtype = ir::DType::Float32;
  bool constant = false;  // a parameter: weight, bias or constant by its first use
};

struct FxLowerOptions {
  std::string source;   // Graph::source and the file of errors
  std::string pointer;  // the payload's place in the file ("/supertasks/3/data"); errors and op
                        // pointers continue it with the pointer inside the decoded payload
  std::string name;     // Graph::name
  // The supertask's inputs and outputs; nullopt: the graph's own (shapes from tensor_values,
  // inputs are graph inputs, outputs graph outputs).
  std::optional<std::vector<FxBinding>> inputs, outputs;
};

struct FxLowered {
  ir::Graph graph;  // derive_edges done, validated; format "pipeline"
  int num_nodes = 0;
  int num_opaque = 0;   // ops lowered to opaque
  int num_skipped = 0;  // nodes without tensor outputs
  std::vector<std::string> opaque_targets;  // distinct targets that became opaque, first-seen order
};

// Lowers a decoded payload. InputError(opt.source, opt.pointer + pointer in the payload, ...)
// for anything it cannot read (no graph, an undefined tensor, a missing tensor_values entry,
// inputs / outputs that do not match the bindings...).
FxLowered lower_fx_graph(const json::Json& payload, const FxLowerOptions& opt);
// base64 -> JSON (InputError(source, pointer, ...) when it is not base64 or not JSON).
json::Json decode_fx_payload(const std::string& data, const std::string& source, const std::string& pointer);
// Standard or URL-safe alphabet, padding optional, white space ignored.
std::string base64_decode(const std::string& text, const std::string& source, const std::string& pointer);
std::string base64_encode(const std::string& bytes);

// The IR op an aten op name ("mm", "add", "_softmax"...) lowers to in the ordinary case; nullopt
// for the ops that become opaque. For documentation and tests.
std::optional<ir::OpKind> fx_lowered_op(const std::string& aten_op);

}  // namespace npusim::frontends::pipeline
