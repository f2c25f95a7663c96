// Helpers shared by the .npy tests: hex fixtures, hand-built files, error capture.
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "models/functional/npy.h"
#include "sim/ir/error.h"

namespace npy_test {

inline std::vector<uint8_t> from_hex(const char* hex) {
  std::vector<uint8_t> out;
  const auto nib = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; hex[i] != '\0' && hex[i + 1] != '\0'; i += 2)
    out.push_back(static_cast<uint8_t>(nib(hex[i]) * 16 + nib(hex[i + 1])));
  return out;
}

// A .npy image with the given header text (taken verbatim, no padding) and payload.
inline std::vector<uint8_t> build(const std::string& header, const std::vector<uint8_t>& payload,
                                  int major = 1) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  const size_t len_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i) b.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

inline std::vector<uint8_t> bytes_of(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline npusim::functional::NpyArray parse(const std::vector<uint8_t>& b) {
  return npusim::functional::parse_npy(b.data(), b.size(), "t.npy");
}

// The InputError parse throws, or nullopt if it parses.
inline std::optional<npusim::InputError> error_of(const std::vector<uint8_t>& b) {
  try {
    parse(b);
  } catch (const npusim::InputError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace npy_test
