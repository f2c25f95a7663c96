// Shared by the unit tests of every reader: asserts that a call fails with an InputError at an
// exact place (JSON pointer) and with a given fragment in its message.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "sim/ir/error.h"

namespace npusim::test {

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
