// Element data types of tensors in every input format.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace npusim::ir {

// Float8E4M3 / Float8E5M2: the OCP 8-bit floats (E4M3 "fn": no infinities; E5M2 IEEE-like).
enum class DType { Int8, UInt8, Int16, Int32, Int64, Float16, BFloat16, Float32, Float64, Bool, Float8E4M3, Float8E5M2 };

// Bytes per element.
int dtype_bytes(DType t);
// Canonical name as Frontend IR writes it: "int8", "float16", "bfloat16", "float32"...
const char* dtype_name(DType t);
// Accepts the canonical names plus common aliases ("fp16", "half", "fp32", "float", "bf16", "i8",
// "fp8" for E4M3, "fp8_e5m2").
std::optional<DType> parse_dtype(const std::string& s);
bool is_float(DType t);
bool is_fp8(DType t);  // Float8E4M3 or Float8E5M2

}  // namespace npusim::ir
