// Shared helpers of the Frontend IR reader tests: paths of the real example files and an
// assertion that a call throws InputError at a given JSON pointer.
#pragma once
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

// Runs f, which must throw InputError whose `where` is exactly `pointer` and whose message
// contains the pointer and `fragment`. Returns the full message for further checks.
inline std::string expect_input_error(const std::function<void()>& f, const std::string& pointer,
                                      const std::string& fragment) {
  try {
    f();
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.where(), pointer) << msg;
    EXPECT_NE(msg.find(pointer), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InputError at " << pointer << ", got other exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InputError at " << pointer << ", nothing thrown";
  return "";
}

}  // namespace npusim::test
