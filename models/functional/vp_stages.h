// The vector processor's module_list stages, each as a function on float32 tensors, and the
// pipeline that runs a layer's module_list in file order (docs/functional.md#vector-processor-vp_stagesh).
// All stage arithmetic is float32 (the unit's stages are named fp32_*; the ISA's VF32 flag);
// reductions sum in float64 and round once, so their result does not depend on the tree shape.
#pragma once
#include <string>
#include <vector>

#include "models/functional/pool.h"
#include "models/functional/quant.h"
#include "models/functional/tensor.h"
#include "sim/ir/graph.h"

namespace npusim::functional {

enum class ReduceDim { Kernel, Channel };  // cmp_dim / acc_dim: pooling window, or over C

// pre_cal (dequantize): fl32(fl32(x * fl32(scale)) + fl32(zp)), per input (_a, _b).
Tensor pre_cal(const Tensor& x, double requan_scale, double requan_zp);
// compare_group, cmp_mode "cumulative": max (or min) over each window (padding never wins) or
// over C (output [N,1,H,W]).
Tensor compare_group(const Tensor& x, bool max, ReduceDim dim, const PoolParams& window);
// fp32_sum_sub_group<N>: fl32(a +/- b), b broadcast (b_mux "vector") ...
Tensor fp32_sum_sub_group(const Tensor& a, const Tensor& b, bool subtract);
// ... or a scalar (b_mux "scalar").
Tensor fp32_sum_sub_group(const Tensor& a, double b, bool subtract);
// relu_group: max(x, 0).
Tensor relu_group(const Tensor& x);
// fp32_mul_group: fl32(a * k), k a broadcast tensor (mux "vector") or fl32(scalar) ("scalar").
Tensor fp32_mul_group(const Tensor& a, const Tensor& k);
Tensor fp32_mul_group(const Tensor& a, double k_scalar);
// acc_tree_group, acc_tree_mode "acc": sum over each window (padding adds 0) or over C, in
// float64, rounded once to float32.
Tensor acc_tree_group(const Tensor& x, ReduceDim dim, const PoolParams& window);
// post_cal: requantize() per element (quant.h); dtype of the result = out.
Tensor post_cal(const Tensor& x, double mul_k, double sum_b, bool subtract, RoundMode carry, ir::DType out);

struct VpContext {
  PoolParams window;                          // geometry for cmp_dim / acc_dim "kernel"
  ir::DType out_dtype = ir::DType::Float32;   // the layer's output dtype
  std::string file;                           // named in InputError messages
  std::string where;                          // JSON pointer of the layer, e.g. "/MaxPool_2_1"
};

// Runs the stages in order on inputs[0] (operand a) and inputs[1] (operand b, optional):
// pre_cal dequantizes a (and b), compare/relu/acc/mul/sum_sub transform a (using b where the
// mux says "vector"), post_cal quantizes a to ctx.out_dtype. Without a post_cal the result is
// rounded to a float out_dtype; an integer out_dtype then is an InputError. Unknown stages,
// unknown or missing settings, a missing operand b and a stage whose result disagrees with its
// recorded output_shape are InputErrors at ctx.where + "/module_list/<stage>[/<key>]".
Tensor run_module_list(const std::vector<ir::VpStage>& stages, const std::vector<Tensor>& inputs,
                       const VpContext& ctx);

}  // namespace npusim::functional
