// A hand-made golden set for the check tests: a three-layer Frontend IR and its .npy files,
// every expected value computed by hand in the comments (never by the functional kernels).
//   q0   quantize float16 -> int8 [1,1,1,2]: pre_cal(1, 0), post_cal(mul_k 2, sum_b 1, round)
//   c1   conv2d 1x1 int8 -> int8 [1,2,1,2]: int8 k with k_scale and a float bias, relu
//   r2   reshape on cpu, int8 [1,2,1,2] -> [1,4]
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "models/functional/npy.h"
#include "sim/ir/error.h"

namespace check_test {

namespace fs = std::filesystem;
using npusim::functional::make_npy;
using npusim::functional::NpyType;
using npusim::functional::write_npy;

inline std::string scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("npusim_check_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// q0: x = [4.25, -2.25] -> x*2 + 1 = [9.5, -3.5] -> round half away from zero: [10, -4].
// c1: input [10, -4] (its golden input_activation1, equal to q0's output) read with
//     input_scale1 0.5, input_zero_point1 0: real [5, -2].
//     w = k * k_scale = [3*0.25, -1*2] = [0.75, -2]; b = [0.5, 1]
//     ch0: 0.5 + 0.75*[5, -2] = [4.25, -1]; ch1: 1 - 2*[5, -2] = [-9, 5]; relu -> [4.25, 0, 0, 5]
//     *2 - 3 = [5.5, -3, -3, 7] -> [6, -3, -3, 7].
// r2: its golden input is c1's output; the same values as [1,4].
inline const std::vector<float> kQ0In = {4.25f, -2.25f};
inline const std::vector<float> kQ0Out = {10, -4};
inline const std::vector<float> kC1Out = {6, -3, -3, 7};

inline const char* kTinyIr = R"({
 "q0": {"layer_index": 0, "name": "q0", "operation": "quantize", "device": "npu",
  "input_dtype": ["float16"], "output_dtype": ["int8"], "input_shape": [[1, 1, 1, 2]], "output_shape": [[1, 1, 1, 2]],
  "file_list": {"input_activation1": "q0_in.npy", "output_activation1": "q0_out.npy"},
  "previous_layer": ["input1"], "next_layer": ["c1"], "tensor0_lut": [1, 1, 1], "tensor_mode": 0,
  "module_list": {"pre_cal": {"input_shape": [[1, 1, 1, 2]], "output_shape": [[1, 1, 1, 2]], "requan_scale_a": 1, "requan_zp_a": 0},
   "post_cal": {"mul_k": 2.0, "sum_b": 1.0, "sumsub_mode": "add", "carry_sel": "round",
    "input_shape": [[1, 1, 1, 2]], "output_shape": [[1, 1, 1, 2]]}},
  "input_batchdim": [0], "output_batchdim": [0]},
 "c1": {"layer_index": 1, "name": "c1", "operation": "conv2d", "device": "npu",
  "input_dtype": ["int8", "int8"], "output_dtype": ["int8"], "input_shape": [[1, 1, 1, 2], [2, 1, 1, 1]],
  "output_shape": [[1, 2, 1, 2]],
  "quant_info": {"input_scale1": 0.5, "input_zero_point1": 0.0, "output_scale": 2.0, "output_zero_point": -3.0, "round_type": "round"},
  "previous_layer": ["q0", "constant_c1_weight"], "next_layer": ["r2"],
  "file_list": {"input_activation1": "c1_in.npy", "output_activation1": "c1_out.npy", "k": "w/c1_k.npy",
   "k_scale": "w/c1_k_scale.npy", "b": "w/c1_b.npy"},
  "input_batchdim": [0, -1], "output_batchdim": [0], "activation_type": "relu", "activation_attr": null,
  "kernel_size": [1, 1], "padding": [0, 0, 0, 0], "stride": [1, 1]},
 "r2": {"layer_index": 2, "name": "r2", "operation": "reshape", "device": "cpu",
  "input_dtype": ["int8"], "output_dtype": ["int8"], "input_shape": [[1, 2, 1, 2]], "output_shape": [[1, 4]],
  "previous_layer": ["c1"], "next_layer": ["output1"],
  "file_list": {"input_activation1": "r2_in.npy", "output_activation1": "r2_out.npy"},
  "input_batchdim": [0], "output_batchdim": [0], "nhwc_consistant": true}
}
)";

// Writes tiny.json and its .npy files into dir; returns the IR path.
inline std::string write_tiny_set(const std::string& dir) {
  fs::create_directories(fs::path(dir) / "w");
  write_text(dir + "/tiny.json", kTinyIr);
  write_npy(dir + "/q0_in.npy", make_npy(NpyType::F16, {1, 1, 1, 2}, kQ0In));
  write_npy(dir + "/q0_out.npy", make_npy(NpyType::I8, {1, 1, 1, 2}, kQ0Out));
  write_npy(dir + "/c1_in.npy", make_npy(NpyType::I8, {1, 1, 1, 2}, kQ0Out));
  write_npy(dir + "/c1_out.npy", make_npy(NpyType::I8, {1, 2, 1, 2}, kC1Out));
  write_npy(dir + "/w/c1_k.npy", make_npy(NpyType::I8, {2, 1, 1, 1}, {3, -1}));
  write_npy(dir + "/w/c1_k_scale.npy", make_npy(NpyType::F32, {2}, {0.25f, 2.0f}));
  write_npy(dir + "/w/c1_b.npy", make_npy(NpyType::F32, {2}, {0.5f, 1.0f}));
  write_npy(dir + "/r2_in.npy", make_npy(NpyType::I8, {1, 2, 1, 2}, kC1Out));
  write_npy(dir + "/r2_out.npy", make_npy(NpyType::I8, {1, 4}, kC1Out));
  return dir + "/tiny.json";
}

// The message of the InputError f throws ("" if none).
template <class F>
std::string input_error_of(F f) {
  try {
    f();
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace check_test
