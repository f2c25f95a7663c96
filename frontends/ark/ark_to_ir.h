// An ARK model file (gpu::Model, read by read_ark_model) as the workload IR, so that an ARK
// model can run through the NPU mapping like any other workload (`sim --ir model.json`).
//
// Conversion rules (one IR op per ARK op, nodes and their ops in file order):
//   Matmul                      -> matmul, or batch_matmul when B has batch dims (> 1 element)
//                                  and A has rank >= 3; transpose flags from TransposeInput/Other
//   Add/Sub/Mul/Div             -> element_wise_add/sub/mul/div (numpy broadcasting)
//   Relu/Gelu/Sigmoid/Exp/Sqrt/Rsqrt -> the unary op of the same name
//   ReduceSum/Mean/Max          -> reduce_sum/mean/max over Axis; keepdims = KeepDim, or (absent)
//                                  whether the output keeps the input's rank (ARK's default: true)
//   Reshape                     -> reshape
//   Transpose                   -> transpose with Permutation (ARK's meaning: out[i] = in[perm[i]])
//   Embedding                   -> gather along axis 0, inputs reordered to (table, indices)
//   ScalarAdd/ScalarMul         -> element_wise_add/mul with a constant [1] tensor
//   Cast, Copy, ScalarAssign, Rope, Send, Recv, SendDone, *Packet, RecvReduceSend, DeviceSync
//                               -> opaque with ARK's FLOPs and bytes (read + written) and a label
//                                  saying what the op is ("Send to rank 1")
//   Noop, Tensor and other virtual ops (views) -> no IR op
// An op whose ARK shapes do not satisfy the IR's shape rule exactly (ARK pads and broadcasts
// shapes more freely than the IR's rules) becomes opaque with its ARK cost instead of failing.
//
// Tensors: data flows through ARK tensor ids and buffers. An op's ResultTensors (its
// WriteTensors when it has none) are its outputs; a later read of the same id, of the written
// tensor's id, or of a view of the same buffer region is a read of that output (a view with
// another shape becomes an extra reshape, or a zero-cost opaque "view" op when it covers part
// of or several writes). A tensor never written is a graph input, or a weight when every read
// of it is the second operand of a Matmul or the table of an Embedding. Outputs no op reads
// are graph outputs. An op that writes nothing (SendDone, DeviceSync) gets a one-byte token
// output. Data types: FP32 -> float32, FP16 -> float16, BF16 -> bfloat16, INT32 -> int32,
// UINT32 -> int32, INT8 -> int8, UINT8 and BYTE -> uint8.
#pragma once
#include "sim/ir/gpu_program.h"
#include "sim/ir/graph.h"

namespace npusim::frontends {

// g.format = "ark_model", g.source = m.source, g.name = the file stem; each op's ark details
// (op type, node id) and pointer ("/Nodes/2/Op", "/Nodes/0/Ops/1") are set. The graph has
// passed ir::derive_edges and ir::validate.
ir::Graph ark_model_to_ir(const gpu::Model& m);

// The ARK data type as an IR dtype (see above).
ir::DType ark_dtype(gpu::DataType t);

}  // namespace npusim::frontends
