#include "sim/check/golden_io.h"

#include <filesystem>

#include "models/functional/npy.h"
#include "sim/ir/error.h"

namespace npusim::check {

namespace fs = std::filesystem;
using functional::NpyArray;
using functional::NpyType;
using functional::Tensor;

std::string npy_path(const std::string& npy_dir, const std::string& name) {
  if (fs::path(name).is_absolute() || npy_dir.empty()) return name;
  return (fs::path(npy_dir) / name).lexically_normal().string();
}

namespace {

NpyArray read_existing(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw InputError(path, "", fs::exists(path, ec) ? "not a regular file" : "missing golden file (named by file_list)");
  return functional::read_npy(path);
}

Tensor to_tensor(const NpyArray& a, ir::DType t) {
  Tensor r;
  r.dtype = t;
  r.shape = a.shape;
  r.data = a.to_float();
  return r;
}

}  // namespace

Tensor load_activation(const std::string& path, ir::DType dtype, const ir::Shape& shape, const std::string& what) {
  NpyArray a = read_existing(path);
  if (dtype == ir::DType::BFloat16) {
    a = functional::as_bf16(std::move(a), path);
  } else {
    const auto t = functional::npy_ir_dtype(a.type);
    if (!t || *t != dtype)
      throw InputError(path, "header: descr",
                       std::string("holds ") + functional::npy_type_name(a.type) + " but the IR says " +
                           ir::dtype_name(dtype) + " for " + what);
  }
  if (a.shape != shape)
    throw InputError(path, "header: shape",
                     "holds " + ir::shape_str(a.shape) + " but the IR says " + ir::shape_str(shape) + " for " + what);
  return to_tensor(a, dtype);
}

Tensor load_constant(const std::string& path) {
  const NpyArray a = read_existing(path);
  const auto t = functional::npy_ir_dtype(a.type);
  if (!t || *t == ir::DType::Bool)
    throw InputError(path, "header: descr", std::string("holds ") + functional::npy_type_name(a.type) +
                                                "; weights and biases are float or signed integer arrays");
  return to_tensor(a, *t);
}

void save_tensor(const std::string& path, const Tensor& t) {
  NpyType type = NpyType::F32;
  switch (t.dtype) {
    case ir::DType::Int8: type = NpyType::I8; break;
    case ir::DType::UInt8: type = NpyType::U8; break;
    case ir::DType::Int16: type = NpyType::I16; break;
    case ir::DType::Int32: type = NpyType::I32; break;
    case ir::DType::Int64: type = NpyType::I64; break;
    case ir::DType::Float16: type = NpyType::F16; break;
    case ir::DType::BFloat16: type = NpyType::BF16; break;
    case ir::DType::Float32: type = NpyType::F32; break;
    case ir::DType::Float64: type = NpyType::F64; break;
    case ir::DType::Bool: type = NpyType::Bool; break;
    case ir::DType::Float8E4M3: case ir::DType::Float8E5M2:  // refused by check_graph
      throw InputError(path, "dtype", "float8 tensors have no .npy type");
  }
  const fs::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  if (ec) throw InputError(p.parent_path().string(), "", "cannot create folder: " + ec.message());
  functional::write_npy(path, functional::make_npy(type, t.shape, t.data));
}

}  // namespace npusim::check
