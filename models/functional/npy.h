// NumPy .npy reader/writer (format 1.0, 2.0, 3.0) and half / bfloat16 conversions.
// Accepted input, the bfloat16 convention and the error classes: docs/npy.md.
// Contract: parse_npy never reads outside [data, data + n); every malformed input is an
// npusim::InputError naming the file and the place ("byte 6", "header (byte 23)", "data").
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/ir/dtype.h"

namespace npusim::functional {

// BF16 never comes out of a file by itself: .npy has no bfloat16 code, so bf16 tensors are
// stored as raw bits ('<u2' and '|V2' read as U16, '<i2' as I16) and the caller asks for the
// bfloat16 reading with as_bf16(). Writing BF16 stores '<u2'.
enum class NpyType { F16, BF16, F32, F64, I8, U8, I16, U16, I32, U32, I64, U64, Bool };

int npy_itemsize(NpyType t);         // bytes per element
const char* npy_type_name(NpyType t);  // "f16", "bf16", "f32", ..., "bool"
std::string npy_descr(NpyType t);    // what write_npy stores: "<f4", "|i1", "<u2" for BF16...
// The matching ir::DType; nullopt for the unsigned types ir has no name for (u16, u32, u64).
std::optional<ir::DType> npy_ir_dtype(NpyType t);

struct NpyArray {
  NpyType type = NpyType::F32;
  std::vector<int64_t> shape;  // empty: scalar (one element)
  std::vector<uint8_t> data;   // C order, native endian, size() * itemsize() bytes

  int64_t size() const;  // element count: product of shape, 1 for a scalar
  int itemsize() const { return npy_itemsize(type); }
  // Every element as float / double, whatever the type: f16 and bf16 decoded exactly, Bool as
  // 0/1, integers rounded to the nearest float (exact up to 2^24 for float, 2^53 for double).
  std::vector<float> to_float() const;
  std::vector<double> to_double() const;
};

// Reads a whole file. Errors: InputError(path, place, what).
NpyArray read_npy(const std::string& path);
// Parses an in-memory .npy image; name is the file name used in errors.
NpyArray parse_npy(const uint8_t* data, size_t n, const std::string& name);

// Reinterprets 16-bit raw bits (U16, I16 or already BF16) as bfloat16; anything else is an
// InputError(name, "descr", ...) since the file then does not hold bfloat16 bits.
NpyArray as_bf16(NpyArray a, const std::string& name);

// Version 1.0 header (2.0 when the header exceeds 65535 bytes), C order, little endian.
// A write failure is an InputError(path, "", ...); an inconsistent array an InternalError.
void write_npy(const std::string& path, const NpyArray& a);
std::vector<uint8_t> serialize_npy(const NpyArray& a);

// Builds an array of type t from float values (values.size() must equal the shape's element
// count, else InternalError). F16/BF16: round to nearest even, overflow to inf. Integers:
// round to nearest even, saturate to the type's range, NaN -> 0. Bool: value != 0 (NaN -> true,
// as numpy's astype(bool)).
NpyArray make_npy(NpyType t, const std::vector<int64_t>& shape, const std::vector<float>& values);

// IEEE binary16 <-> binary32. float_to_half rounds to nearest even (subnormals included),
// overflows to +-inf and keeps NaN a NaN with its top payload bits (as numpy), so every half
// survives half -> float -> half bit for bit.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
// bfloat16 is the top half of a binary32: decoding is exact; encoding rounds to nearest even
// and keeps NaN a NaN with its top payload bits (bit-exact round trip like half).
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

}  // namespace npusim::functional
