// The headers of a TVM .params file (tvm.relay.save_param_dict / runtime.SaveParams), read
// from a stream of known size. Layout (little-endian, docs/format_tvm_mlf.md):
//   u64 0xF7E58D4F05049CB7, u64 reserved, u64 num_names, {u64 len, char name[len]}...,
//   u64 num_arrays (== num_names), then per array (DLTensor): u64 0xDD5E40F096B4A13F,
//   u64 reserved, i32 device_type (1 = CPU), i32 device_id, i32 ndim, u8 code, u8 bits,
//   u16 lanes, i64 shape[ndim], i64 data_byte_size, data.
// Every count and length is checked against the bytes left in the file before anything is
// allocated; the tensor data is skipped, never held.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/ir/error.h"
#include "sim/ir/graph.h"

namespace npusim::frontends::tvm {

// A source of bytes (a file of a directory, or a member of an archive).
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Up to n bytes; fewer only at the end of the data. May throw InputError.
  virtual size_t read(char* dst, size_t n) = 0;
  // Skips n bytes; returns how many were there (fewer at the end of the data).
  virtual uint64_t skip(uint64_t n);
};

struct ParamInfo {
  std::string name;
  ir::Shape shape;
  std::string dltype;      // TVM's spelling: "float32", "int8", "bool"...
  int64_t data_bytes = 0;
  int64_t index = 0;       // position in the file (names and arrays match by position)
  uint64_t offset = 0;     // byte offset of its DLTensor header
};

// Parses a .params stream of `size` bytes. Errors: InputError(file, where_prefix + "byte N", what).
std::vector<ParamInfo> parse_params(ByteStream& in, uint64_t size, const std::string& file,
                                    const std::string& where_prefix);

// TVM dtype strings: the IR type of "float32", "int8", "uint8", "bool", "bfloat16"...
// (uint16/32/64 map to the signed IR type of the same size); nullopt for anything else
// (vector lanes such as "float32x4", custom types).
std::optional<ir::DType> parse_tvm_dtype(const std::string& s);

}  // namespace npusim::frontends::tvm
