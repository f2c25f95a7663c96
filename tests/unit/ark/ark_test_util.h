// Shared helpers of the ARK reader tests: paths of the real example files, cached parsed
// documents to mutate in memory, and an assertion that a call throws InputError at a pointer.
#pragma once
#include "tests/unit/expect_input_error.h"
#include <functional>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "frontends/ark/ark_reader.h"
#include "sim/ir/error.h"

namespace npusim::test {

// rel: path under shared/examples/ark, e.g. "tutorial/plan.json".
inline std::string ark_example(const std::string& rel) {
  return std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/ark/" + rel;
}

// The parsed document of an example, read once per test binary.
inline const json::Json& ark_doc(const std::string& rel) {
  static std::map<std::string, json::Json> cache;
  auto it = cache.find(rel);
  if (it == cache.end()) it = cache.emplace(rel, json::read_json_file(ark_example(rel))).first;
  return it->second;
}

// The shared InputError assertion, under the name the ARK tests use.
inline std::string expect_ark_error(const std::function<void()>& f, const std::string& pointer,
                                    const std::string& fragment) {
  return expect_input_error(f, pointer, fragment);
}

}  // namespace npusim::test
