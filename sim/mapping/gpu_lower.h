// Lowering of the workload IR (sim/ir/graph.h) to ARK's op set, so that any workload runs on
// the GPU model: `sim --ir X --hw <gpu config>` lowers X to a gpu::Model, plans it with ARK's
// DefaultPlanner (gpu_default_plan.h) and simulates it. Each IR op becomes one or more ARK ops
// named `<ir op name>` (the main op) or `<ir op name>/<step>`, with the tensors, buffers and
// Args ARK's model reader would fill (frontends/ark). The rules per op and their
// approximations: docs/gpu_ark.md. No SystemC here.
#pragma once
#include <map>
#include <string>

#include "sim/ir/dtype.h"
#include "sim/ir/gpu_program.h"
#include "sim/ir/graph.h"

namespace npusim::mapping {

// float16 -> FP16, bfloat16 -> BF16, float32 -> FP32, int8 -> INT8, uint8/bool -> UINT8,
// int32 -> INT32; the types ARK lacks go to one of the same or the nearest size: int16 ->
// FP16, int64 -> INT32, float64 -> FP32.
gpu::DataType ark_data_type(ir::DType t);

struct ArkLowering {
  gpu::Model model;  // rank 0 of 1; one node per ARK op, in IR order; costs derived
  std::map<std::string, std::string> ir_op;  // ARK op name -> kind of the IR op it came from ("conv2d")
};

// Lowers every op of g (any device: the GPU runs the whole workload). Throws InputError
// naming the op for shapes the rules cannot express (none are known for validated graphs).
ArkLowering lower_workload(const ir::Graph& g);
inline gpu::Model lower_to_ark(const ir::Graph& g) { return lower_workload(g).model; }

}  // namespace npusim::mapping
