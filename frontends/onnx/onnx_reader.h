// ONNX reader: a .onnx file (protobuf ModelProto, read with Debian's libonnx / libprotobuf)
// lowered to the workload IR (sim/ir/graph.h). docs/format_onnx.md has the lowering table.
//
// What it checks before using anything: the file size (protobuf's 2 GiB limit), that the
// ModelProto parses, the default-domain opset (7 to 21), every initializer's data size
// against its dims x element type (external data: the file and its length), that every node
// input exists when the node runs, and that every value an op needs has a static shape
// (npusim's own rules give the shapes of the ops it lowers, checked against value_info;
// opaque ops take value_info, else libonnx's shape inference run on that node alone). Each
// failure is an InputError naming the file and the place:
// "model.onnx: /graph/node/12 (Conv_3): ...", "/graph/initializer/4 (fc.weight): ...".
//
// Lowering: Conv/Gemm/MatMul/pools/element-wise/normalizations/data movement to IR ops,
// BatchNormalization folded into the conv it follows, the Erf form of GELU, the opset<17
// form of LayerNorm and x*sigmoid(x) recognized as one op, shape computations (Shape,
// Gather, Concat, ConstantOfShape...) evaluated statically and dropped, Identity/Dropout
// dropped; every other op is an `opaque` op (label = op type, bytes = inputs + outputs)
// listed in OnnxReadInfo::opaque_types.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/ir/graph.h"

namespace npusim::frontends {

// What the reader did beyond the graph: the op types read as opaque and notes (symbolic dims
// bound to 1, Gemm beta folded into C, shape inference failures...).
struct OnnxReadInfo {
  int opset = 0;                              // default-domain opset of the model
  std::map<std::string, int> opaque_types;    // op type -> number of opaque ops
  std::map<std::string, int> fused;           // "gelu (Erf form)", "layer_norm (decomposed)", "batch_norm into conv" -> count
  int folded_nodes = 0;                       // nodes evaluated statically or dropped
  std::vector<std::string> notes;             // one line each
  // "3 opaque ops: Cast x2, Expand x1" or "" when there are none.
  std::string opaque_summary() const;
};

// Reads and lowers a .onnx file. The graph has passed ir::validate; graph.format = "onnx".
ir::Graph read_onnx(const std::string& path, OnnxReadInfo* info = nullptr);
// The same from the file's bytes already in memory (path is used for messages and to find
// external data files next to it).
ir::Graph read_onnx_bytes(const std::string& bytes, const std::string& path, OnnxReadInfo* info = nullptr);
// read_onnx_bytes, then one "sim: note: ..." line on stderr listing the opaque op types (the
// registry's reader for `sim --ir`).
ir::Graph read_onnx_workload(const std::string& bytes, const std::string& path);

// Whether the content is an ONNX ModelProto: it starts with field 1 (ir_version, varint tag
// 0x08) and its top-level fields are ModelProto's with their wire types (a file cut inside
// its last field is still taken, so that the reader can say it is truncated). Never looks at
// the file name.
bool sniff_onnx(std::string_view content);

}  // namespace npusim::frontends
