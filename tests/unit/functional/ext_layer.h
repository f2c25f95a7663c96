// Helpers for the tests of the npusim extension ops' functional kernels: a layer record with
// the shapes and dtypes run_layer needs, and float comparisons of whole tensors.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "models/functional/layer.h"
#include "sim/ir/error.h"

namespace npusim::functional::ext_test {

using ir::DType;
using ir::OpKind;

// Layer "L" (pointer "/L") of op `op`; every input and output in dtype `dt`.
inline ir::Layer layer(OpKind op, std::vector<ir::Shape> in, std::vector<ir::Shape> out, DType dt = DType::Float32) {
  ir::Layer l;
  l.name = "L";
  l.pointer = "/L";
  l.op = op;
  l.input_shapes = std::move(in);
  l.output_shapes = std::move(out);
  l.input_dtypes.assign(l.input_shapes.size(), dt);
  l.output_dtypes.assign(l.output_shapes.size(), dt);
  l.files = {{"input_activation1", "L_in.npy"}};
  return l;
}

// Element by element within 1 float32 ULP-ish (EXPECT_FLOAT_EQ: 4 ULPs); NaN matches NaN.
inline void expect_floats(const std::vector<float>& got, const std::vector<float>& want, const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "] = " << got[i];
    } else {
      EXPECT_FLOAT_EQ(got[i], want[i]) << what << " [" << i << "]";
    }
  }
}

// The InputError of run_layer: "where" and message; where is "no error" when none is thrown.
struct Failure {
  std::string where, message;
};
inline Failure failure(const ir::Layer& l, const std::vector<Tensor>& in, const ParamMap& params = {}) {
  try {
    run_layer_outputs(l, in, params);
  } catch (const InputError& e) {
    return {e.where(), e.what()};
  }
  return {"no error", ""};
}

}  // namespace npusim::functional::ext_test
