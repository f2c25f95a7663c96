// safetensors header reader (format and checks in safetensors.h).
#include "frontends/pipeline/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "frontends/json_util.h"
#include "sim/ir/error.h"

namespace npusim::frontends::pipeline {

namespace {

// The reference implementation refuses headers above 100 MB.
constexpr int64_t kMaxHeader = 100'000'000;

std::string byte_at(int64_t b) { return "byte " + std::to_string(b); }

std::string offsets_str(int64_t b, int64_t e) { return "[" + std::to_string(b) + ", " + std::to_string(e) + "]"; }

// The byte offset (from the start of `text`) of a 1-based line and column.
int64_t offset_of(const std::string& text, int line, int column) {
  int64_t off = 0;
  for (int l = 1; l < line && off < static_cast<int64_t>(text.size()); ++off)
    if (text[static_cast<size_t>(off)] == '\n') ++l;
  return off + column - 1;
}

}  // namespace

std::optional<int> safetensors_dtype_bytes(const std::string& d) {
  static const std::map<std::string, int> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};
  auto it = sizes.find(d);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

std::optional<ir::DType> safetensors_ir_dtype(const std::string& d) {
  using ir::DType;
  static const std::map<std::string, DType> types = {
      {"BOOL", DType::Bool},    {"U8", DType::UInt8},      {"I8", DType::Int8},     {"F8_E5M2", DType::Float8E5M2},
      {"F8_E4M3", DType::Float8E4M3}, {"I16", DType::Int16},    {"U16", DType::Int16},   {"F16", DType::Float16},
      {"BF16", DType::BFloat16}, {"I32", DType::Int32},    {"U32", DType::Int32},   {"F32", DType::Float32},
      {"F64", DType::Float64},  {"I64", DType::Int64},     {"U64", DType::Int64}};
  auto it = types.find(d);
  if (it == types.end()) return std::nullopt;
  return it->second;
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  auto alias = metadata.find(name);
  if (alias != metadata.end())
    for (const auto& t : tensors)
      if (t.name == alias->second) return &t;
  return nullptr;
}

SafetensorsFile parse_safetensors(const std::string& head, int64_t file_size, const std::string& path) {
  SafetensorsFile f;
  f.path = path;
  f.file_size = file_size;
  if (file_size < 8 || head.size() < 8)
    throw InputError(path, byte_at(0), "the file has " + std::to_string(file_size) +
                                           " bytes; a safetensors file starts with an 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[static_cast<size_t>(i)]);
  if (n > static_cast<uint64_t>(file_size - 8))
    throw InputError(path, byte_at(0), "header length " + std::to_string(n) + " runs past the end of the file (" +
                                           std::to_string(file_size) + " bytes; the header would end at byte " +
                                           std::to_string(n + 8) + ")");
  if (n > static_cast<uint64_t>(kMaxHeader))
    throw InputError(path, byte_at(0), "header length " + std::to_string(n) + " exceeds the format's limit of " +
                                           std::to_string(kMaxHeader) + " bytes");
  if (head.size() < 8 + n) throw InternalError("parse_safetensors: fewer bytes given than the header needs");
  f.header_size = static_cast<int64_t>(n);
  f.data_offset = 8 + f.header_size;
  const std::string header = head.substr(8, n);
  if (header.empty() || header[0] != '{')
    throw InputError(path, byte_at(8), "the header does not start with '{' (it must be a JSON object)");
  json::Json doc;
  try {
    doc = json::parse_text(header, path);
  } catch (const InputError& e) {
    int line = 0, column = 0;
    std::string where = e.where();
    if (std::sscanf(where.c_str(), "line %d, column %d", &line, &column) == 2)
      where = byte_at(8 + offset_of(header, line, column));
    throw InputError(path, where, "header: " + e.detail());
  }
  if (!doc.is_object()) throw InputError(path, byte_at(8), "the header is not a JSON object");
  const int64_t data_size = file_size - f.data_offset;
  json::Cursor root(doc, path);
  for (const auto& [name, c] : root.members()) {
    if (name == "__metadata__") {
      if (!c.value().is_object()) c.fail("__metadata__ must be an object of strings");
      for (const auto& [k, v] : c.members()) f.metadata[k] = v.as_string();
      continue;
    }
    c.expect_object();
    SafetensorsTensor t;
    t.name = name;
    t.dtype = c.get_string("dtype");
    const auto esize = safetensors_dtype_bytes(t.dtype);
    if (!esize)
      c.at("dtype").fail("tensor '" + name + "': unknown dtype '" + t.dtype +
                         "' (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64)");
    t.shape = c.at("shape").as_shape();
    const std::vector<int64_t> off = c.get_int_array("data_offsets", 2);
    const json::Cursor oc = c.at("data_offsets");
    t.begin = off[0];
    t.end = off[1];
    if (t.begin < 0 || t.end < 0) oc.fail("tensor '" + name + "': data_offsets " + offsets_str(t.begin, t.end) + " are negative");
    if (t.begin > t.end)
      oc.fail("tensor '" + name + "': data_offsets " + offsets_str(t.begin, t.end) + " are out of order (begin > end)");
    if (t.end > data_size)
      oc.fail("tensor '" + name + "': data_offsets " + offsets_str(t.begin, t.end) + " end past the data section, which has " +
              std::to_string(data_size) + " bytes (from byte " + std::to_string(f.data_offset) + " to the end of the file at byte " +
              std::to_string(file_size) + ")");
    const int64_t need = ir::num_elements(t.shape) * *esize;
    if (need != t.bytes())
      oc.fail("tensor '" + name + "': shape " + ir::shape_str(t.shape) + " of " + t.dtype + " needs " + std::to_string(need) +
              " bytes but data_offsets " + offsets_str(t.begin, t.end) + " hold " + std::to_string(t.bytes()));
    t.file_offset = f.data_offset + t.begin;
    f.tensors.push_back(std::move(t));
  }
  // The tensors tile the data section: sorted by offset, each starts where the previous ends.
  std::vector<const SafetensorsTensor*> sorted;
  for (const auto& t : f.tensors) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(), [](const SafetensorsTensor* a, const SafetensorsTensor* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  int64_t at = 0;
  const SafetensorsTensor* prev = nullptr;
  for (const SafetensorsTensor* t : sorted) {
    const std::string p = json::pointer_join(json::pointer_join("", t->name), "data_offsets");
    if (t->begin < at)
      throw InputError(path, p, "tensor '" + t->name + "': data_offsets " + offsets_str(t->begin, t->end) + " overlap tensor '" +
                                    prev->name + "' " + offsets_str(prev->begin, prev->end));
    if (t->begin > at)
      throw InputError(path, p, "tensor '" + t->name + "': data_offsets " + offsets_str(t->begin, t->end) + " leave bytes [" +
                                    std::to_string(at) + ", " + std::to_string(t->begin) +
                                    ") of the data section to no tensor (file bytes " + std::to_string(f.data_offset + at) +
                                    " to " + std::to_string(f.data_offset + t->begin) + ")");
    at = t->end;
    prev = t;
  }
  if (at != data_size)
    throw InputError(path, byte_at(f.data_offset + at),
                     "the data section has " + std::to_string(data_size) + " bytes but the tensors cover only " +
                         std::to_string(at) + "; bytes from " + byte_at(f.data_offset + at) + " belong to no tensor");
  return f;
}

SafetensorsFile read_safetensors(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) throw InputError(path, "", "cannot open: no such file");
  if (fs::is_directory(st)) throw InputError(path, "", "cannot open: is a directory, expected a safetensors file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw InputError(path, "", "cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  const int64_t file_size = static_cast<int64_t>(size);
  std::string head(static_cast<size_t>(std::min<int64_t>(file_size, 8)), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (file_size >= 8) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[static_cast<size_t>(i)]);
    // Only a header that fits in the file (and the limit) is read; parse_safetensors reports
    // the others from the first 8 bytes.
    if (n <= static_cast<uint64_t>(file_size - 8) && n <= static_cast<uint64_t>(kMaxHeader)) {
      head.resize(8 + n);
      in.read(head.data() + 8, static_cast<std::streamsize>(n));
    }
  }
  if (!in) throw InputError(path, "", std::string("cannot read: ") + std::strerror(errno));
  return parse_safetensors(head, file_size, path);
}

std::string read_safetensors_data(const SafetensorsFile& f, const std::string& name) {
  const SafetensorsTensor* t = f.find(name);
  if (!t) throw InputError(f.path, "", "tensor '" + name + "' is not stored in the file");
  std::ifstream in(f.path, std::ios::binary);
  if (!in) throw InputError(f.path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string data(static_cast<size_t>(t->bytes()), '\0');
  in.seekg(t->file_offset);
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  if (!in) throw InputError(f.path, byte_at(t->file_offset), "cannot read tensor '" + name + "': the file is shorter than its header says");
  return data;
}

}  // namespace npusim::frontends::pipeline
