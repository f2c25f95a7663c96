// Shared by every libFuzzer target of fuzz/ (docs/hardening.md). A reader may refuse an input
// only with npusim::InputError (exit 2 in `sim`); any other exception is a finding and aborts,
// so libFuzzer saves the input. Memory and time limits come from scripts/fuzz (-rss_limit_mb,
// -timeout); address and undefined-behaviour reports come from the sanitizers.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/ir/error.h"

namespace npusim::fuzz {

template <class F>
void expect_input_errors_only(F&& f) {
  try {
    f();
  } catch (const InputError&) {
    // the documented refusal
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: not an InputError: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: a non-standard exception escaped\n");
    std::abort();
  }
}

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// A folder of this process for the readers that take a path (YAML, sweeps, archives).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::temp_directory_path() / ("npusim-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_scratch(const std::string& name, const std::string& bytes) {
  const std::filesystem::path p = scratch_dir() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p.string();
}

}  // namespace npusim::fuzz
