// A dense NCHW tensor for the functional reference: shape, dtype tag and values held as float.
// Integer tensors (int8 activations, int32 biases) keep integral values in the floats; fp16 /
// bf16 tensors keep values that are exactly representable in those types (docs/functional.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sim/ir/dtype.h"
#include "sim/ir/graph.h"

namespace npusim::functional {

struct Tensor {
  ir::DType dtype = ir::DType::Float32;
  ir::Shape shape;
  std::vector<float> data;  // C order

  Tensor() = default;
  // Zeros.
  explicit Tensor(ir::Shape s, ir::DType t = ir::DType::Float32);
  // Takes the values; their count must equal the shape's element count (else InternalError).
  Tensor(ir::Shape s, std::vector<float> values, ir::DType t = ir::DType::Float32);

  static Tensor full(ir::Shape s, float value, ir::DType t = ir::DType::Float32);

  int64_t size() const { return static_cast<int64_t>(data.size()); }
  std::string describe() const;  // "int8[1,64,56,56]"
};

// Rank <= 4 shapes read as NCHW: [N,C] -> [N,C,1,1], [C] -> [1,C,1,1], [] -> [1,1,1,1];
// rank 3 is [N,C,L] -> [N,C,1,L]. Rank > 4 is an InternalError (callers validate first).
struct Nchw {
  int64_t n = 1, c = 1, h = 1, w = 1;
  static Tensor full(ir::Shape s, float value, ir::DType t = ir::DType::Float32);

  int64_t size() const { return n * c * h * w; }
};
Nchw as_nchw(const ir::Shape& s);

}  // namespace npusim::functional
