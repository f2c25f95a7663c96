// Reader of safetensors files (huggingface/safetensors), the parameter files of pipelines:
//   u64 N (little-endian) | N bytes of JSON header | data section
// The header maps each tensor name to {"dtype": "F32", "shape": [..], "data_offsets": [begin,
// end]} (offsets relative to the data section) and may hold "__metadata__": {str: str}. Every
// length and offset is checked against the file before it is used: the header length must fit in
// the file (and under the format's 100 MB limit), each tensor's [begin, end) must be ordered, lie
// inside the data section and hold shape x dtype bytes, and the tensors must cover the data
// section exactly, without overlaps or holes (as the reference implementation requires).
// Errors are InputError(path, "byte N" or the header's JSON pointer "/<tensor>/data_offsets",
// message naming the tensor).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/ir/dtype.h"
#include "sim/ir/graph.h"

namespace npusim::frontends::pipeline {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;            // as written: "F32", "BF16", "I64", "F8_E4M3"...
  ir::Shape shape;
  int64_t begin = 0, end = 0;   // data_offsets: relative to the data section
  int64_t file_offset = 0;      // byte of the file where the data starts
  int64_t bytes() const { return end - begin; }
};

struct SafetensorsFile {
  std::string path;
  int64_t file_size = 0;
  int64_t header_size = 0;  // N
  int64_t data_offset = 0;  // 8 + N: where the data section starts
  std::vector<SafetensorsTensor> tensors;       // header order
  std::map<std::string, std::string> metadata;  // "__metadata__"
  // The tensor stored under `name`; a name absent from the header but mapped by __metadata__ to
  // a stored one (a shared tensor, as the producer's loader resolves it) finds that one.
  const SafetensorsTensor* find(const std::string& name) const;
};

// Bytes per element of a safetensors dtype (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16,
// I32, U32, F32, F64, I64, U64); nullopt for any other.
std::optional<int> safetensors_dtype_bytes(const std::string& dtype);
// The IR dtype of the same size and kind (U16/U32/U64 read as the signed type, F8_* as uint8).
std::optional<ir::DType> safetensors_ir_dtype(const std::string& dtype);

// Reads and checks the header of a file (the data itself is not read).
SafetensorsFile read_safetensors(const std::string& path);
// The same from the file's first bytes (at least 8 + N of them) and its total size; `path`
// names it in errors (tests build malformed files in memory).
SafetensorsFile parse_safetensors(const std::string& head, int64_t file_size, const std::string& path);
// The raw bytes of one tensor (InputError if the name is not stored).
std::string read_safetensors_data(const SafetensorsFile& f, const std::string& name);

}  // namespace npusim::frontends::pipeline
