// Input files read with their limits checked before any byte is read (docs/hardening.md):
// the path must name a regular file (links followed; a directory, device, FIFO or socket is an
// InputError naming what it is) of at most a documented size. Header-only: every reader (the
// workload registry, JSON files, ZeBu traces, .npy arrays, YAML descriptions) uses it.
#pragma once
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

#include "sim/ir/error.h"

namespace npusim {

// Largest workload, plan, trace, array or weights file read: 4 GiB.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{4} << 30;
// Largest YAML text (hardware descriptions, system configs, sweep specs): 16 MiB.
inline constexpr uint64_t kMaxYamlFileBytes = uint64_t{16} << 20;

namespace input_file_detail {

inline std::string bytes_text(uint64_t n) {
  if (n >= (uint64_t{1} << 30) && n % (uint64_t{1} << 30) == 0) return std::to_string(n >> 30) + " GiB";
  if (n >= (uint64_t{1} << 20) && n % (uint64_t{1} << 20) == 0) return std::to_string(n >> 20) + " MiB";
  return std::to_string(n) + " bytes";
}

inline const char* kind_of(const std::filesystem::file_status& st) {
  namespace fs = std::filesystem;
  switch (st.type()) {
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

[[noreturn]] inline void too_large(const std::string& path, uint64_t size, uint64_t max_bytes, const std::string& what) {
  throw InputError(path, "", "file too large: " + std::to_string(size) + " bytes, the limit for " + what + " is " +
                                 bytes_text(max_bytes) + " (docs/hardening.md)");
}

}  // namespace input_file_detail

// Throws InputError(path, "", ...) unless `path` names a regular file of at most max_bytes;
// `what` names the expected content ("a workload file"). Returns the file's size.
inline uint64_t check_input_file(const std::string& path, const std::string& what,
                                 uint64_t max_bytes = kMaxInputFileBytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found || path.empty()) throw InputError(path, "", "cannot open: no such file");
  if (ec) throw InputError(path, "", "cannot open: " + ec.message());
  if (fs::is_directory(st)) throw InputError(path, "", "cannot open: is a directory, expected " + what);
  if (!fs::is_regular_file(st))
    throw InputError(path, "", std::string("cannot open: ") + input_file_detail::kind_of(st) +
                                   ", not a regular file; expected " + what);
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InputError(path, "", "cannot open: " + ec.message());
  if (size > max_bytes) input_file_detail::too_large(path, size, max_bytes, what);
  return size;
}

// The offset of the first byte that is not part of well-formed UTF-8, or npos: names read
// from YAML or protobuf (which does not check proto2 strings) end up in JSON reports.
inline size_t invalid_utf8_at(std::string_view t) {
  size_t i = 0;
  const size_t n = t.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(t[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || (len == 2 && c < 0xC2) || (len == 4 && c > 0xF4) || i + len > n) return i;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(t[i + k]) & 0xC0) != 0x80) return i;
    if (len == 3) {  // no overlong forms, no surrogates
      const unsigned char d = static_cast<unsigned char>(t[i + 1]);
      if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d >= 0xA0)) return i;
    }
    if (len == 4) {
      const unsigned char d = static_cast<unsigned char>(t[i + 1]);
      if ((c == 0xF0 && d < 0x90) || (c == 0xF4 && d >= 0x90)) return i;
    }
    i += len;
  }
  return std::string::npos;
}

// check_input_file, then the whole content (a file that grows past max_bytes while being
// read is refused as well).
inline std::string read_input_file(const std::string& path, const std::string& what,
                                   uint64_t max_bytes = kMaxInputFileBytes) {
  const uint64_t size = check_input_file(path, what, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  text.reserve(static_cast<size_t>(size));
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    const std::streamsize got = in.gcount();
    if (got <= 0) break;
    if (text.size() + static_cast<uint64_t>(got) > max_bytes)
      input_file_detail::too_large(path, text.size() + static_cast<uint64_t>(got), max_bytes, what);
    text.append(chunk, static_cast<size_t>(got));
  }
  if (in.bad()) throw InputError(path, "", std::string("cannot read: ") + std::strerror(errno));
  return text;
}

}  // namespace npusim
