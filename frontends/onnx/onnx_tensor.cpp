// ONNX element types, tensor data size checks and decoding of small tensors (onnx_internal.h).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "frontends/onnx/onnx_internal.h"

namespace npusim::frontends::onnx_fe {

namespace {

using TP = onnx::TensorProto;

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0) v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31) v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

template <typename T>
std::vector<T> raw_as(const std::string& raw, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  if (n > 0) std::memcpy(v.data(), raw.data(), static_cast<size_t>(n) * sizeof(T));
  return v;
}

std::string dims_str(const google::protobuf::RepeatedField<int64_t>& dims) {
  std::string s = "[";
  for (int i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// The typed field that holds the values of a tensor of this type when raw_data is absent,
// and how many entries n elements take there.
struct TypedField {
  const char* name;
  int64_t count;
  int present;
};

TypedField typed_field(const TP& t, int64_t n) {
  switch (t.data_type()) {
    case TP::FLOAT: return {"float_data", n, t.float_data_size()};
    case TP::COMPLEX64: return {"float_data", 2 * n, t.float_data_size()};
    case TP::INT64: return {"int64_data", n, t.int64_data_size()};
    case TP::DOUBLE: return {"double_data", n, t.double_data_size()};
    case TP::COMPLEX128: return {"double_data", 2 * n, t.double_data_size()};
    case TP::UINT32:
    case TP::UINT64: return {"uint64_data", n, t.uint64_data_size()};
    case TP::STRING: return {"string_data", n, t.string_data_size()};
    case 21:
    case 22:
    case 23: return {"int32_data", (n + 1) / 2, t.int32_data_size()};
    default: return {"int32_data", n, t.int32_data_size()};
  }
}

}  // namespace

std::string onnx_type_name(int t) {
  static const char* names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1"};
  if (t >= 0 && t < static_cast<int>(sizeof names / sizeof names[0])) return names[t];
  return "type " + std::to_string(t);
}

std::optional<ir::DType> ir_dtype(int t) {
  using ir::DType;
  switch (t) {
    case TP::FLOAT: return DType::Float32;
    case TP::UINT8: return DType::UInt8;
    case TP::INT8: return DType::Int8;
    case TP::UINT16:
    case TP::INT16: return DType::Int16;
    case TP::INT32:
    case TP::UINT32: return DType::Int32;
    case TP::INT64:
    case TP::UINT64: return DType::Int64;
    case TP::BOOL: return DType::Bool;
    case TP::FLOAT16: return DType::Float16;
    case TP::DOUBLE: return DType::Float64;
    case TP::BFLOAT16: return DType::BFloat16;
    case 17: case 18: return DType::Float8E4M3;  // FLOAT8E4M3FN, FLOAT8E4M3FNUZ
    case 19: case 20: return DType::Float8E5M2;  // FLOAT8E5M2, FLOAT8E5M2FNUZ
    case 21: case 22: case 23:                   // 4-bit types: counted as one byte
      return DType::Int8;
    default: return std::nullopt;
  }
}

bool is_integer_type(int t) {
  switch (t) {
    case TP::UINT8: case TP::INT8: case TP::UINT16: case TP::INT16: case TP::INT32: case TP::INT64:
    case TP::BOOL: case TP::UINT32: case TP::UINT64: case 21: case 22:
      return true;
    default: return false;
  }
}

int64_t storage_bytes(int t, int64_t n) {
  switch (t) {
    case TP::UINT8: case TP::INT8: case TP::BOOL: case 17: case 18: case 19: case 20: return n;
    case TP::UINT16: case TP::INT16: case TP::FLOAT16: case TP::BFLOAT16: return 2 * n;
    case TP::FLOAT: case TP::INT32: case TP::UINT32: return 4 * n;
    case TP::INT64: case TP::DOUBLE: case TP::UINT64: case TP::COMPLEX64: return 8 * n;
    case TP::COMPLEX128: return 16 * n;
    case 21: case 22: case 23: return (n + 1) / 2;
    default: return -1;
  }
}

int64_t dims_elements(const google::protobuf::RepeatedField<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d > 0 && n > (int64_t{1} << 62) / d) return -1;
    n *= d;
  }
  return n;
}

std::string check_tensor_data(const TP& t, const std::string& model_dir) {
  for (int i = 0; i < t.dims_size(); ++i)
    if (t.dims(i) < 0) return "dims " + dims_str(t.dims()) + " has a negative dimension";
  const int64_t n = dims_elements(t.dims());
  if (n < 0) return "dims " + dims_str(t.dims()) + " have more than 2^62 elements";
  const int type = t.data_type();
  if (type == TP::UNDEFINED) return "has no data_type";
  if (type < 0 || type > 23) return "has an unknown data_type " + std::to_string(type);
  const int64_t need = storage_bytes(type, n);
  const std::string what = "dims " + dims_str(t.dims()) + " x " + onnx_type_name(type);
  if (t.data_location() == TP::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
      try {
        if (kv.key() == "location") location = kv.value();
        else if (kv.key() == "offset") offset = std::stoll(kv.value());
        else if (kv.key() == "length") length = std::stoll(kv.value());
      } catch (const std::exception&) {
        return "external_data " + kv.key() + " '" + kv.value() + "' is not a number";
      }
    }
    if (location.empty()) return "is stored as external data without a location";
    namespace fs = std::filesystem;
    const fs::path p = fs::path(model_dir) / location;
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (ec) return "external data file '" + p.string() + "' cannot be read: " + ec.message();
    if (offset < 0 || static_cast<uint64_t>(offset) > size)
      return "external data offset " + std::to_string(offset) + " is past the end of '" + p.string() + "' (" +
             std::to_string(size) + " bytes)";
    if (length < 0) length = static_cast<int64_t>(size) - offset;
    if (need >= 0 && length != need)
      return "external data has " + std::to_string(length) + " bytes but " + what + " need " + std::to_string(need);
    if (static_cast<uint64_t>(offset + length) > size)
      return "external data file '" + p.string() + "' has " + std::to_string(size) + " bytes, fewer than offset " +
             std::to_string(offset) + " + length " + std::to_string(length);
    return "";
  }
  if (t.has_raw_data()) {
    if (need < 0) return "raw_data cannot hold " + onnx_type_name(type) + " elements";
    if (static_cast<int64_t>(t.raw_data().size()) != need)
      return "raw_data has " + std::to_string(t.raw_data().size()) + " bytes but " + what + " need " +
             std::to_string(need);
    return "";
  }
  const TypedField f = typed_field(t, n);
  if (f.present != f.count) {
    if (f.present == 0)
      return "has no data (neither raw_data nor " + std::string(f.name) + ") but " + what + " need " +
             std::to_string(f.count) + " values";
    return std::string(f.name) + " has " + std::to_string(f.present) + " values but " + what + " need " +
           std::to_string(f.count);
  }
  return "";
}

int64_t ConstData::get_int(size_t k) const {
  if (is_int) return i[k];
  const double v = f[k];
  if (std::isnan(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::optional<ConstData> decode_tensor(const TP& t) {
  if (t.data_location() == TP::EXTERNAL) return std::nullopt;
  const int64_t n = dims_elements(t.dims());
  if (n < 0 || n > kEvalLimit) return std::nullopt;
  const bool raw = t.has_raw_data();
  const std::string& r = t.raw_data();
  if (raw && storage_bytes(t.data_type(), n) != static_cast<int64_t>(r.size())) return std::nullopt;
  ConstData d;
  auto ints = [&](auto vec) {
    d.is_int = true;
    d.i.assign(vec.begin(), vec.end());
  };
  auto floats = [&](auto vec) {
    d.is_int = false;
    d.f.assign(vec.begin(), vec.end());
  };
  switch (t.data_type()) {
    case TP::FLOAT:
      if (raw) floats(raw_as<float>(r, n));
      else floats(std::vector<float>(t.float_data().begin(), t.float_data().end()));
      break;
    case TP::DOUBLE:
      if (raw) floats(raw_as<double>(r, n));
      else floats(std::vector<double>(t.double_data().begin(), t.double_data().end()));
      break;
    case TP::FLOAT16:
    case TP::BFLOAT16: {
      std::vector<uint16_t> bits = raw ? raw_as<uint16_t>(r, n) : std::vector<uint16_t>(t.int32_data().begin(), t.int32_data().end());
      d.is_int = false;
      for (uint16_t b : bits) d.f.push_back(t.data_type() == TP::FLOAT16 ? half_to_float(b) : bf16_to_float(b));
      break;
    }
    case TP::INT8: raw ? ints(raw_as<int8_t>(r, n)) : ints(t.int32_data()); break;
    case TP::UINT8: raw ? ints(raw_as<uint8_t>(r, n)) : ints(t.int32_data()); break;
    case TP::BOOL: raw ? ints(raw_as<uint8_t>(r, n)) : ints(t.int32_data()); break;
    case TP::INT16: raw ? ints(raw_as<int16_t>(r, n)) : ints(t.int32_data()); break;
    case TP::UINT16: raw ? ints(raw_as<uint16_t>(r, n)) : ints(t.int32_data()); break;
    case TP::INT32: raw ? ints(raw_as<int32_t>(r, n)) : ints(t.int32_data()); break;
    case TP::INT64: raw ? ints(raw_as<int64_t>(r, n)) : ints(t.int64_data()); break;
    case TP::UINT32: raw ? ints(raw_as<uint32_t>(r, n)) : ints(t.uint64_data()); break;
    case TP::UINT64: {
      std::vector<uint64_t> u = raw ? raw_as<uint64_t>(r, n) : std::vector<uint64_t>(t.uint64_data().begin(), t.uint64_data().end());
      d.is_int = true;
      for (uint64_t x : u) d.i.push_back(x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(x));
      break;
    }
    default: return std::nullopt;
  }
  if (static_cast<int64_t>(d.size()) != n) return std::nullopt;
  if (t.data_type() == TP::BOOL)
    for (auto& x : d.i) x = x != 0;
  return d;
}

ir::Shape ir_shape(const ir::Shape& s) { return s.empty() ? ir::Shape{1} : s; }

}  // namespace npusim::frontends::onnx_fe
