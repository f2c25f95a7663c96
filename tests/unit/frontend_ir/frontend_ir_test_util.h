// Shared helpers of the Frontend IR reader tests: paths of the real example files and an
// assertion that a call throws InputError at a given JSON pointer.
#pragma once
#include "tests/unit/expect_input_error.h"
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "sim/ir/error.h"

namespace npusim::test {

inline std::string frontend_ir_example(const std::string& file) {
  return std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/frontend_ir/" + file;
}

inline const char* kResNet50B4 = "int8_resnet50.sim_quantized_b4.json";
inline const char* kResNet34B4 = "int8_resnet34.sim_quantized_b4.json";


}  // namespace npusim::test
