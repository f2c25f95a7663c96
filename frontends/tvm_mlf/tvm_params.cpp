// TVM .params headers (tvm_params.h).
#include "frontends/tvm_mlf/tvm_params.h"

#include <map>

namespace npusim::frontends::tvm {

namespace {

constexpr uint64_t kListMagic = 0xF7E58D4F05049CB7ull;   // kTVMNDArrayListMagic
constexpr uint64_t kArrayMagic = 0xDD5E40F096B4A13Full;  // kTVMNDArrayMagic
constexpr uint64_t kMaxNameBytes = 1u << 16;
constexpr int64_t kMaxDims = 32;
constexpr int64_t kMaxElements = int64_t{1} << 40;  // as json::Cursor::as_shape

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%016llX", static_cast<unsigned long long>(v));
  return b;
}

class Reader {
 public:
  Reader(ByteStream& in, uint64_t size, std::string file, std::string prefix)
      : m_in(in), m_size(size), m_file(std::move(file)), m_prefix(std::move(prefix)) {}

  uint64_t pos() const { return m_pos; }
  uint64_t left() const { return m_size - m_pos; }

  [[noreturn]] void fail_at(uint64_t at, const std::string& what) const {
    throw InputError(m_file, m_prefix + "byte " + std::to_string(at), what);
  }

  // n more bytes must be in the file.
  void need(uint64_t n, const std::string& what) const {
    if (n > left())
      fail_at(m_pos, what + " needs " + std::to_string(n) + " bytes but only " + std::to_string(left()) +
                         " remain (the file has " + std::to_string(m_size) + " bytes)");
  }

  void read_exact(char* dst, uint64_t n) {
    uint64_t got = 0;
    while (got < n) {
      const size_t k = m_in.read(dst + got, static_cast<size_t>(n - got));
      if (k == 0) fail_at(m_pos + got, "unexpected end of data (the file should have " + std::to_string(m_size) + " bytes)");
      got += k;
    }
    m_pos += n;
  }

  uint64_t u64(const std::string& what) {
    need(8, what);
    unsigned char b[8];
    read_exact(reinterpret_cast<char*>(b), 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }
  int64_t i64(const std::string& what) { return static_cast<int64_t>(u64(what)); }
  uint32_t u32(const std::string& what) {
    need(4, what);
    unsigned char b[4];
    read_exact(reinterpret_cast<char*>(b), 4);
    return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
  }
  int32_t i32(const std::string& what) { return static_cast<int32_t>(u32(what)); }

  std::string bytes(uint64_t n, const std::string& what) {
    need(n, what);
    std::string s(static_cast<size_t>(n), '\0');
    read_exact(s.data(), n);
    return s;
  }

  void skip(uint64_t n, const std::string& what) {
    need(n, what);
    const uint64_t got = m_in.skip(n);
    if (got != n) fail_at(m_pos + got, "unexpected end of data (the file should have " + std::to_string(m_size) + " bytes)");
    m_pos += n;
  }

 private:
  ByteStream& m_in;
  uint64_t m_size, m_pos = 0;
  std::string m_file, m_prefix;
};

// DLDataType -> TVM's dtype string; "" if npusim has no such type.
std::string dl_dtype(unsigned code, unsigned bits) {
  static const std::map<std::pair<unsigned, unsigned>, const char*> names = {
      {{0, 8}, "int8"},     {{0, 16}, "int16"},   {{0, 32}, "int32"},     {{0, 64}, "int64"},
      {{1, 1}, "bool"},     {{1, 8}, "uint8"},    {{1, 16}, "uint16"},    {{1, 32}, "uint32"},
      {{1, 64}, "uint64"},  {{2, 16}, "float16"}, {{2, 32}, "float32"},   {{2, 64}, "float64"},
      {{4, 16}, "bfloat16"}};
  auto it = names.find({code, bits});
  return it == names.end() ? "" : it->second;
}

}  // namespace

uint64_t ByteStream::skip(uint64_t n) {
  char buf[65536];
  uint64_t done = 0;
  while (done < n) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, n - done));
    const size_t k = read(buf, want);
    if (k == 0) break;
    done += k;
  }
  return done;
}

std::optional<ir::DType> parse_tvm_dtype(const std::string& s) {
  static const std::map<std::string, ir::DType> names = {
      {"int8", ir::DType::Int8},       {"uint8", ir::DType::UInt8},       {"int16", ir::DType::Int16},
      {"uint16", ir::DType::Int16},    {"int32", ir::DType::Int32},       {"uint32", ir::DType::Int32},
      {"int64", ir::DType::Int64},     {"uint64", ir::DType::Int64},      {"float16", ir::DType::Float16},
      {"bfloat16", ir::DType::BFloat16}, {"float32", ir::DType::Float32}, {"float64", ir::DType::Float64},
      {"bool", ir::DType::Bool},       {"uint1", ir::DType::Bool}};
  auto it = names.find(s);
  if (it == names.end()) return std::nullopt;
  return it->second;
}

std::vector<ParamInfo> parse_params(ByteStream& in, uint64_t size, const std::string& file,
                                    const std::string& where_prefix) {
  Reader r(in, size, file, where_prefix);
  const uint64_t magic = r.u64("the magic number");
  if (magic != kListMagic)
    r.fail_at(0, "wrong magic " + hex(magic) + ": not a TVM .params file (expected " + hex(kListMagic) +
                     ", kTVMNDArrayListMagic)");
  r.u64("the reserved word");
  const uint64_t at_count = r.pos();
  const uint64_t num_names = r.u64("the name count");
  // Each name takes at least its 8-byte length: a count the file cannot hold is refused
  // before anything is allocated.
  if (num_names > r.left() / 8)
    r.fail_at(at_count, std::to_string(num_names) + " names need at least " + std::to_string(num_names) +
                            " x 8 bytes but only " + std::to_string(r.left()) + " remain (the file has " +
                            std::to_string(size) + " bytes)");
  std::vector<ParamInfo> params;
  params.reserve(static_cast<size_t>(num_names));
  for (uint64_t i = 0; i < num_names; ++i) {
    const uint64_t at = r.pos();
    const std::string what = "name " + std::to_string(i);
    const uint64_t len = r.u64(what + "'s length");
    if (len > kMaxNameBytes) r.fail_at(at, what + " is " + std::to_string(len) + " bytes long (at most 65536)");
    ParamInfo p;
    p.name = r.bytes(len, what);
    p.index = static_cast<int64_t>(i);
    params.push_back(std::move(p));
  }
  const uint64_t at_arrays = r.pos();
  const uint64_t num_arrays = r.u64("the array count");
  if (num_arrays != num_names)
    r.fail_at(at_arrays, "the file has " + std::to_string(num_names) + " names but " + std::to_string(num_arrays) +
                             " arrays (they match by position)");
  for (ParamInfo& p : params) {
    const std::string what = "array " + std::to_string(p.index) + " ('" + p.name + "')";
    p.offset = r.pos();
    const uint64_t am = r.u64(what + " magic");
    if (am != kArrayMagic)
      r.fail_at(p.offset, what + ": wrong magic " + hex(am) + " (expected " + hex(kArrayMagic) + ", kTVMNDArrayMagic)");
    r.u64(what + " reserved word");
    const uint64_t at_dev = r.pos();
    const int32_t device_type = r.i32(what + " device type");
    r.i32(what + " device id");
    if (device_type != 1)
      r.fail_at(at_dev, what + ": device_type " + std::to_string(device_type) + " is not kDLCPU (1); TVM loads CPU arrays only");
    const uint64_t at_ndim = r.pos();
    const int32_t ndim = r.i32(what + " ndim");
    if (ndim < 0 || ndim > kMaxDims)
      r.fail_at(at_ndim, what + ": ndim " + std::to_string(ndim) + " is out of range [0, " + std::to_string(kMaxDims) + "]");
    const uint64_t at_type = r.pos();
    char t[4];
    r.need(4, what + " dtype");
    r.read_exact(t, 4);
    const unsigned code = static_cast<unsigned char>(t[0]), bits = static_cast<unsigned char>(t[1]);
    const unsigned lanes = static_cast<unsigned char>(t[2]) | static_cast<unsigned>(static_cast<unsigned char>(t[3])) << 8;
    p.dltype = dl_dtype(code, bits);
    if (p.dltype.empty() || lanes != 1)
      r.fail_at(at_type, what + ": unsupported dtype (code " + std::to_string(code) + ", bits " + std::to_string(bits) +
                             ", lanes " + std::to_string(lanes) + ")");
    const uint64_t at_shape = r.pos();
    r.need(uint64_t(ndim) * 8, what + " shape");
    int64_t elements = 1;
    for (int32_t d = 0; d < ndim; ++d) {
      const int64_t v = r.i64(what + " shape");
      if (v < 0) r.fail_at(at_shape + 8 * d, what + ": negative dimension " + std::to_string(v));
      if (v > 0 && elements > kMaxElements / v)
        r.fail_at(at_shape + 8 * d, what + ": more than 2^40 elements");
      elements *= v;
      p.shape.push_back(v);
    }
    const uint64_t at_size = r.pos();
    const int64_t data_bytes = r.i64(what + " data size");
    const int64_t expect = elements * int64_t((bits + 7) / 8);
    if (data_bytes != expect)
      r.fail_at(at_size, what + ": data_byte_size " + std::to_string(data_bytes) + " differs from " + std::to_string(expect) +
                             " (" + ir::shape_str(p.shape) + " x " + p.dltype + ")");
    p.data_bytes = data_bytes;
    r.skip(static_cast<uint64_t>(data_bytes), what + " data");
  }
  if (r.left() != 0)
    r.fail_at(r.pos(), std::to_string(r.left()) + " bytes follow the last array");
  return params;
}

}  // namespace npusim::frontends::tvm
