// One IR layer on the functional reference: dispatch by op, using the layer's quant_info for
// the PE array (conv2d, dense) and its module_list for the vector processor
// (docs/functional.md#layers-run_layerlayer-inputs-params).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "models/functional/tensor.h"
#include "sim/ir/graph.h"

namespace npusim::functional {

// Constant inputs by file_list role: "k" (weights, KCRS or [K,C]), "b" (bias, K values) and,
// for int8 / int32 weights and biases, "k_scale" (1 or K values: real w = k * k_scale[k]).
using ParamMap = std::map<std::string, Tensor>;

// inputs: the activations in file_list order (input_activation1, input_activation2, ...);
// conv2d / dense take their weights from params["k"], else from inputs[1].
// Activation values are read in the layer's input_dtypes (int8 tensors hold integers).
// Returns the output in layer.output_dtypes[0] and layer.output_shapes[0].
// Bad input (wrong shapes, missing quant_info fields or weights, unsupported activation or
// module settings): InputError naming the layer's file (its input file, else its name) and the
// JSON pointer under layer.pointer.
Tensor run_layer(const ir::Layer& layer, const std::vector<Tensor>& inputs, const ParamMap& params);

// Every output of the layer in output order: one tensor for every op but split, which gives
// one per output_shapes entry (output k in output_dtypes[k]). run_layer returns element 0.
// The npusim extension ops (docs/functional.md#npusim-extension-ops) first pass the IR's shape
// rules (ir::check_op); opaque has no reference: InputError at <layer>/operation
// "opaque op '<label>' has no functional reference".
std::vector<Tensor> run_layer_outputs(const ir::Layer& layer, const std::vector<Tensor>& inputs, const ParamMap& params);

}  // namespace npusim::functional
