// Golden tensors on disk for `sim --check`: .npy files named by a layer's file_list, read into
// functional::Tensor with the dtype and shape the IR promises, and computed tensors written
// back (docs/golden.md). SystemC-free.
#pragma once
#include <string>

#include "models/functional/tensor.h"
#include "sim/ir/graph.h"

namespace npusim::check {

// Path of a file_list entry: names are relative to the npy folder and may hold subfolders
// ("../weights/Conv_1_k.npy"); an absolute name is used as it is.
std::string npy_path(const std::string& npy_dir, const std::string& name);

// An activation: the file must hold `dtype` (bfloat16: raw 16-bit bits, docs/npy.md) in
// `shape`. `what` names the tensor in messages, e.g. "Conv_0 input 1".
// Errors: InputError(path, ...) for a missing or malformed file, another dtype or shape.
functional::Tensor load_activation(const std::string& path, ir::DType dtype, const ir::Shape& shape,
                                   const std::string& what);

// A constant (weights k, bias b, k_scale): any numeric dtype and shape; the tensor keeps the
// file's dtype (integer weights then need k_scale, docs/functional.md#weights-and-bias).
functional::Tensor load_constant(const std::string& path);

// Writes t as .npy in its own dtype (float16 as '<f2', int8 as '|i1', bfloat16 as '<u2').
// Creates the parent folder. Errors: InputError(path, ...).
void save_tensor(const std::string& path, const functional::Tensor& t);

}  // namespace npusim::check
