#include "sim/ir/dtype.h"

#include <map>

namespace npusim::ir {

int dtype_bytes(DType t) {
  switch (t) {
    case DType::Int8: case DType::UInt8: case DType::Bool: case DType::Float8E4M3: case DType::Float8E5M2: return 1;
    case DType::Int16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: return 8;
  }
  return 1;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Bool: return "bool";
    case DType::Float8E4M3: return "float8_e4m3fn";
    case DType::Float8E5M2: return "float8_e5m2";
  }
  return "?";
}

std::optional<DType> parse_dtype(const std::string& s) {
  static const std::map<std::string, DType> names = {
      {"int8", DType::Int8},       {"i8", DType::Int8},         {"uint8", DType::UInt8},
      {"u8", DType::UInt8},        {"int16", DType::Int16},     {"int32", DType::Int32},
      {"int64", DType::Int64},     {"float16", DType::Float16}, {"fp16", DType::Float16},
      {"half", DType::Float16},    {"bfloat16", DType::BFloat16}, {"bf16", DType::BFloat16},
      {"float32", DType::Float32}, {"fp32", DType::Float32},    {"float", DType::Float32},
      {"float64", DType::Float64}, {"bool", DType::Bool},
      {"float8_e4m3fn", DType::Float8E4M3}, {"float8_e4m3", DType::Float8E4M3}, {"fp8", DType::Float8E4M3},
      {"fp8_e4m3", DType::Float8E4M3},      {"e4m3", DType::Float8E4M3},        {"float8_e5m2", DType::Float8E5M2},
      {"fp8_e5m2", DType::Float8E5M2},      {"e5m2", DType::Float8E5M2}};
  auto it = names.find(s);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

bool is_fp8(DType t) { return t == DType::Float8E4M3 || t == DType::Float8E5M2; }

bool is_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64 ||
         is_fp8(t);
}

}  // namespace npusim::ir
