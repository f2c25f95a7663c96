// One `sim zoo op` example per operation of the workload IR, by its IR name: shared by the zoo
// unit tests and the integration test that simulates every op on the NPU and the GPU.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace npusim::test {

// One example per operation, by its IR name.
inline const std::map<std::string, std::vector<std::string>>& op_examples() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"quantize", {"shape=4x64x8x8"}},
      {"dequantize", {"shape=4x64x8x8"}},
      {"conv2d", {"n=1", "c=64", "h=56", "w=56", "k=64", "r=3", "s=3", "stride=1", "pad=1"}},
      {"dense", {"n=2", "c=2048", "k=1000", "bias=1"}},
      {"max_pool2d", {"n=1", "c=64", "h=112", "w=112", "r=3", "stride=2", "pad=1"}},
      {"avg_pool2d", {"n=1", "c=64", "h=15", "w=15", "r=2", "ceil_mode=1"}},
      {"element_wise_add", {"shape=1048576"}},
      {"reshape", {"shape=8x512x64", "to=8x32768"}},
      {"requantize", {"shape=1024"}},
      {"matmul", {"m=512", "n=11008", "k=4096"}},
      {"batch_matmul", {"b=2", "h=12", "m=128", "n=128", "k=64", "transpose_b=1"}},
      {"global_avg_pool2d", {"n=2", "c=2048", "h=7", "w=7"}},
      {"global_max_pool2d", {"n=2", "c=512", "h=7", "w=7"}},
      {"element_wise_sub", {"shape=4x256", "shape2=256"}},
      {"element_wise_mul", {"shape=4x1x256", "shape2=4x8x1"}},
      {"element_wise_div", {"shape=64x64"}},
      {"element_wise_max", {"shape=64x64", "shape2=1"}},
      {"element_wise_min", {"shape=64x64"}},
      {"relu", {"shape=1x64x56x56"}},
      {"relu6", {"shape=1x64x56x56"}},
      {"gelu", {"shape=512x3072"}},
      {"silu", {"shape=512x11008"}},
      {"sigmoid", {"shape=1000"}},
      {"tanh", {"shape=1000"}},
      {"exp", {"shape=1000"}},
      {"sqrt", {"shape=1000"}},
      {"rsqrt", {"shape=1000"}},
      {"neg", {"shape=1000"}},
      {"clip", {"shape=1x32x112x112", "min=-1.5", "max=6"}},
      {"softmax", {"shape=512x4096"}},
      {"layer_norm", {"shape=512x4096", "epsilon=1e-12"}},
      {"rms_norm", {"shape=512x4096"}},
      {"reduce_sum", {"shape=512x4096", "axis=-1"}},
      {"reduce_mean", {"shape=2x64x7x7", "axes=2,3", "keepdims=0"}},
      {"reduce_max", {"shape=512x4096", "axis=0"}},
      {"transpose", {"shape=8x128x64", "perm=0,2,1"}},
      {"concat", {"shape=1x12x100x64", "inputs=3", "axis=2"}},
      {"split", {"shape=10x2304", "axis=1", "parts=3"}},
      {"slice", {"shape=512x4096", "starts=0,1024", "ends=256,-1", "steps=1,2"}},
      {"gather", {"vocab=32000", "dim=4096", "indices=4x128"}},
      {"pad", {"shape=1x3x224x224", "pads=0,0,0,0,3,3,3,3"}},
      {"opaque", {"shape=1x128", "out=1x16", "flops=1000000", "bytes=4096", "label=topk"}},
  };
  return m;
}

}  // namespace npusim::test
