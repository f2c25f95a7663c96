// .npy reading and writing (docs/npy.md). The parser works on a bounded byte range with
// explicit length checks before every read, so any byte string is either an array or an
// InputError; tests/unit/npy fuzzes it with truncations and byte flips.
#include "models/functional/npy.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

namespace npusim::functional {

namespace {

constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kMaxDims = 64;  // numpy 2's NPY_MAXDIMS

bool host_is_little() {
  const uint16_t one = 1;
  uint8_t b = 0;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string shape_str(const std::vector<int64_t>& s) {  // Python tuple spelling
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

struct Header {
  bool has_descr = false, has_fortran = false, has_shape = false;
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

// Recursive-descent parser for the one dict literal numpy writes, with Python's freedom in
// key order, whitespace and trailing commas. Positions in errors are file offsets.
class HeaderParser {
 public:
  HeaderParser(const uint8_t* p, size_t n, size_t base, const std::string& name)
      : m_p(p), m_n(n), m_base(base), m_name(name) {}

  Header parse() {
    Header h;
    skip_ws();
    expect('{', "the header must be a dict literal '{...}'");
    skip_ws();
    while (!eat('}')) {
      const size_t key_pos = m_pos;
      const std::string key = string_literal();
      skip_ws();
      expect(':', "expected ':' after a key");
      skip_ws();
      if (key == "descr") {
        once(h.has_descr, key, key_pos);
        if (peek() == '[') fail("structured dtypes (descr as a list) are not supported");
        h.descr = string_literal();
      } else if (key == "fortran_order") {
        once(h.has_fortran, key, key_pos);
        h.fortran = boolean();
      } else if (key == "shape") {
        once(h.has_shape, key, key_pos);
        h.shape = tuple();
      } else {
        fail_at(key_pos, "unexpected key '" + key + "' (expected descr, fortran_order, shape)");
      }
      skip_ws();
      if (eat(',')) {
        skip_ws();
      } else if (peek() != '}') {
        fail("expected ',' or '}'");
      }
    }
    skip_ws();
    if (m_pos != m_n) fail("unexpected text after the dict");
    return h;
  }

 private:
  [[noreturn]] void fail_at(size_t pos, const std::string& what) const {
    throw InputError(m_name, "header (byte " + std::to_string(m_base + pos) + ")", what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(m_pos, what); }
  char peek() const { return m_pos < m_n ? static_cast<char>(m_p[m_pos]) : '\0'; }
  bool eat(char c) {
    if (m_pos < m_n && peek() == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) fail(what);
  }
  void skip_ws() {
    while (m_pos < m_n && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++m_pos;
  }
  void once(bool& seen, const std::string& key, size_t pos) {
    if (seen) fail_at(pos, "duplicate key '" + key + "'");
    seen = true;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    ++m_pos;
    std::string s;
    while (true) {
      if (m_pos >= m_n) fail("unterminated string");
      const char c = peek();
      if (c == q) break;
      if (c == '\\' || c == '\n') fail("escapes and newlines in strings are not supported");
      s += c;
      ++m_pos;
    }
    ++m_pos;
    return s;
  }
  bool word(const char* w) {
    const size_t len = std::strlen(w);
    if (m_n - m_pos < len || std::memcmp(m_p + m_pos, w, len) != 0) return false;
    m_pos += len;
    return true;
  }
  bool boolean() {
    if (word("True")) return true;
    if (word("False")) return false;
    fail("fortran_order must be True or False");
  }
  std::vector<int64_t> tuple() {
    if (peek() == '[') fail("shape must be a tuple '(...)', not a list");
    expect('(', "shape must be a tuple '(...)'");
    std::vector<int64_t> dims;
    bool comma_after_last = false;
    skip_ws();
    while (!eat(')')) {
      if (dims.size() == kMaxDims) fail("more than " + std::to_string(kMaxDims) + " dimensions");
      dims.push_back(integer());
      skip_ws();
      comma_after_last = eat(',');
      skip_ws();
      if (!comma_after_last && peek() != ')') fail("expected ',' or ')' in shape");
    }
    // Python: "(5)" is the integer 5, not a tuple; numpy rejects it, so do we.
    if (dims.size() == 1 && !comma_after_last) fail("shape (n) is not a tuple; write (n,)");
    return dims;
  }
  int64_t integer() {
    const size_t start = m_pos;
    if (eat('-')) {
      if (peek() >= '0' && peek() <= '9') fail_at(start, "negative dimension in shape");
      fail("expected a dimension");
    }
    if (peek() < '0' || peek() > '9') fail("expected a non-negative integer dimension");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int d = peek() - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) fail_at(start, "dimension too large");
      v = v * 10 + d;
      ++m_pos;
    }
    eat('L');  // Python 2 numpy wrote long literals: (3L, 4L)
    return v;
  }

  const uint8_t* m_p;
  size_t m_n;
  size_t m_pos = 0;
  size_t m_base;
  const std::string& m_name;
};

struct Descr {
  NpyType type;
  bool swap;  // stored in the other byte order than this host's
};

// The simple type codes read: kind letter and size. 'V2' is raw 2-byte records, the usual
// spelling of bfloat16 (ml_dtypes), so it reads as U16 raw bits (docs/npy.md).
struct TypeCode {
  const char* code;
  NpyType type;
};
constexpr TypeCode kTypeCodes[] = {
    {"f2", NpyType::F16}, {"f4", NpyType::F32}, {"f8", NpyType::F64}, {"i1", NpyType::I8},
    {"i2", NpyType::I16}, {"i4", NpyType::I32}, {"i8", NpyType::I64}, {"u1", NpyType::U8},
    {"u2", NpyType::U16}, {"u4", NpyType::U32}, {"u8", NpyType::U64}, {"b1", NpyType::Bool},
    {"V2", NpyType::U16}};

Descr parse_descr(const std::string& d, const std::string& name) {
  const bool has_order = !d.empty() && std::strchr("<>=|", d[0]) != nullptr;
  const std::string code = d.substr(has_order ? 1 : 0);
  for (const TypeCode& c : kTypeCodes) {
    if (code != c.code) continue;
    // '=' and '|' (and no prefix) mean native order, as numpy reads them.
    const bool little = has_order ? d[0] == '<' || (d[0] != '>' && host_is_little())
                                  : host_is_little();
    const bool multibyte_number = code[1] != '1' && code[0] != 'V';
    return {c.type, multibyte_number && little != host_is_little()};
  }
  throw InputError(name, "header: descr",
                   "unsupported dtype '" + d + "' (accepted: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 " +
                       "b1 V2, each with an optional byte order < > = |)");
}

void byteswap_all(std::vector<uint8_t>& d, int isz) {
  for (size_t i = 0; i + isz <= d.size(); i += isz)
    for (int a = 0, b = isz - 1; a < b; ++a, --b) std::swap(d[i + a], d[i + b]);
}

// Fortran order (first index fastest) to C order: walk the source in order with an index
// counter and keep the element's C offset up to date.
std::vector<uint8_t> fortran_to_c(const uint8_t* src, const std::vector<int64_t>& shape,
                                  int64_t count, int isz) {
  const size_t nd = shape.size();
  std::vector<uint8_t> dst(static_cast<size_t>(count) * isz);
  std::vector<int64_t> cstride(nd, 1), idx(nd, 0);
  for (size_t d = nd - 1; d-- > 0;) cstride[d] = cstride[d + 1] * shape[d + 1];
  int64_t off = 0;
  for (int64_t k = 0; k < count; ++k) {
    std::memcpy(dst.data() + off * isz, src + k * isz, isz);
    for (size_t d = 0; d < nd; ++d) {
      if (++idx[d] < shape[d]) {
        off += cstride[d];
        break;
      }
      off -= cstride[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
  return dst;
}

template <class T>
T load(const uint8_t* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <class Out>
std::vector<Out> convert(const NpyArray& a) {
  const int64_t n = a.size();
  if (static_cast<int64_t>(a.data.size()) != n * a.itemsize())
    throw InternalError("NpyArray data size does not match its shape");
  std::vector<Out> out(static_cast<size_t>(n));
  const uint8_t* p = a.data.data();
  for (int64_t i = 0; i < n; ++i) {
    Out v;
    switch (a.type) {
      case NpyType::F16: v = half_to_float(load<uint16_t>(p, i)); break;
      case NpyType::BF16: v = bf16_to_float(load<uint16_t>(p, i)); break;
      case NpyType::F32: v = static_cast<Out>(load<float>(p, i)); break;
      case NpyType::F64: v = static_cast<Out>(load<double>(p, i)); break;
      case NpyType::I8: v = load<int8_t>(p, i); break;
      case NpyType::U8: v = load<uint8_t>(p, i); break;
      case NpyType::I16: v = load<int16_t>(p, i); break;
      case NpyType::U16: v = load<uint16_t>(p, i); break;
      case NpyType::I32: v = static_cast<Out>(load<int32_t>(p, i)); break;
      case NpyType::U32: v = static_cast<Out>(load<uint32_t>(p, i)); break;
      case NpyType::I64: v = static_cast<Out>(load<int64_t>(p, i)); break;
      case NpyType::U64: v = static_cast<Out>(load<uint64_t>(p, i)); break;
      case NpyType::Bool: v = load<uint8_t>(p, i) != 0 ? 1 : 0; break;
      default: throw InternalError("unknown NpyType");
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

// Round to nearest even, saturate, NaN -> 0.
template <class T>
T saturate(float v) {
  if (std::isnan(v)) return 0;
  const float r = std::nearbyint(v);
  if (r <= static_cast<float>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (r >= static_cast<float>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

template <class T>
void store_all(std::vector<uint8_t>& d, const std::vector<float>& v, T (*f)(float)) {
  d.resize(v.size() * sizeof(T));
  for (size_t i = 0; i < v.size(); ++i) {
    const T x = f(v[i]);
    std::memcpy(d.data() + i * sizeof(T), &x, sizeof(T));
  }
}

}  // namespace

int npy_itemsize(NpyType t) {
  switch (t) {
    case NpyType::I8: case NpyType::U8: case NpyType::Bool: return 1;
    case NpyType::F16: case NpyType::BF16: case NpyType::I16: case NpyType::U16: return 2;
    case NpyType::F32: case NpyType::I32: case NpyType::U32: return 4;
    case NpyType::F64: case NpyType::I64: case NpyType::U64: return 8;
  }
  throw InternalError("unknown NpyType");
}

const char* npy_type_name(NpyType t) {
  switch (t) {
    case NpyType::F16: return "f16";
    case NpyType::BF16: return "bf16";
    case NpyType::F32: return "f32";
    case NpyType::F64: return "f64";
    case NpyType::I8: return "i8";
    case NpyType::U8: return "u8";
    case NpyType::I16: return "i16";
    case NpyType::U16: return "u16";
    case NpyType::I32: return "i32";
    case NpyType::U32: return "u32";
    case NpyType::I64: return "i64";
    case NpyType::U64: return "u64";
    case NpyType::Bool: return "bool";
  }
  throw InternalError("unknown NpyType");
}

std::string npy_descr(NpyType t) {
  switch (t) {
    case NpyType::F16: return "<f2";
    case NpyType::BF16: return "<u2";  // bfloat16 convention: raw bits
    case NpyType::F32: return "<f4";
    case NpyType::F64: return "<f8";
    case NpyType::I8: return "|i1";
    case NpyType::U8: return "|u1";
    case NpyType::I16: return "<i2";
    case NpyType::U16: return "<u2";
    case NpyType::I32: return "<i4";
    case NpyType::U32: return "<u4";
    case NpyType::I64: return "<i8";
    case NpyType::U64: return "<u8";
    case NpyType::Bool: return "|b1";
  }
  throw InternalError("unknown NpyType");
}

std::optional<ir::DType> npy_ir_dtype(NpyType t) {
  switch (t) {
    case NpyType::F16: return ir::DType::Float16;
    case NpyType::BF16: return ir::DType::BFloat16;
    case NpyType::F32: return ir::DType::Float32;
    case NpyType::F64: return ir::DType::Float64;
    case NpyType::I8: return ir::DType::Int8;
    case NpyType::U8: return ir::DType::UInt8;
    case NpyType::I16: return ir::DType::Int16;
    case NpyType::I32: return ir::DType::Int32;
    case NpyType::I64: return ir::DType::Int64;
    case NpyType::Bool: return ir::DType::Bool;
    default: return std::nullopt;
  }
}

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<float> NpyArray::to_float() const { return convert<float>(*this); }
std::vector<double> NpyArray::to_double() const { return convert<double>(*this); }

NpyArray parse_npy(const uint8_t* data, size_t n, const std::string& name) {
  // Check the magic over the bytes there are, so a truncated file reads as truncated.
  const size_t have = n < 6 ? n : 6;
  if (have > 0 && std::memcmp(data, kMagic, have) != 0)
    throw InputError(name, "byte 0", "not a .npy file (magic \\x93NUMPY missing)");
  if (n < 8)
    throw InputError(name, "byte " + std::to_string(n),
                     "truncated: " + std::to_string(n) + " bytes, shorter than the preamble");
  const int major = data[6], minor = data[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw InputError(name, "byte 6",
                     "unsupported format version " + std::to_string(major) + "." +
                         std::to_string(minor) + " (1.0, 2.0 and 3.0 are read)");
  const size_t len_bytes = major == 1 ? 2 : 4;
  const size_t pre = 8 + len_bytes;
  if (n < pre)
    throw InputError(name, "byte " + std::to_string(n),
                     "truncated: " + std::to_string(n) + " bytes, shorter than the preamble");
  size_t hlen = data[8] | (size_t{data[9]} << 8);
  if (len_bytes == 4) hlen |= (size_t{data[10]} << 16) | (size_t{data[11]} << 24);
  if (hlen > n - pre)
    throw InputError(name, "byte 8",
                     "header length " + std::to_string(hlen) + " runs past the end of the file (" +
                         std::to_string(n) + " bytes)");

  // 1.0/2.0 headers are latin1 and 3.0 ones utf8; only ASCII can spell a valid simple header,
  // so the parser compares raw bytes and rejects everything else as unexpected.
  const Header h = HeaderParser(data + pre, hlen, pre, name).parse();
  for (const auto& [has, key] : {std::pair{h.has_descr, "descr"},
                                 std::pair{h.has_fortran, "fortran_order"},
                                 std::pair{h.has_shape, "shape"}})
    if (!has) throw InputError(name, "header", std::string("missing key '") + key + "'");
  const Descr d = parse_descr(h.descr, name);
  const int isz = npy_itemsize(d.type);

  // Element count with overflow checks: count * itemsize must fit in int64.
  int64_t count = 1;
  bool empty = false;
  for (int64_t dim : h.shape) {
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (count > std::numeric_limits<int64_t>::max() / isz / dim)
      throw InputError(name, "header: shape", "shape " + shape_str(h.shape) +
                                                  " has more elements than a file can hold");
    count *= dim;
  }
  if (empty) count = 0;
  const size_t data_off = pre + hlen;
  const size_t payload = n - data_off;
  const uint64_t need = static_cast<uint64_t>(count) * isz;
  if (payload != need)
    throw InputError(name, "data (byte " + std::to_string(data_off) + ")",
                     "payload has " + std::to_string(payload) + " bytes but shape " +
                         shape_str(h.shape) + " of '" + h.descr + "' needs " +
                         std::to_string(need) +
                         (payload < need ? " (truncated file)" : " (trailing bytes)"));

  NpyArray a;
  a.type = d.type;
  a.shape = h.shape;
  if (h.fortran && h.shape.size() > 1)
    a.data = fortran_to_c(data + data_off, h.shape, count, isz);
  else
    a.data.assign(data + data_off, data + n);
  if (d.swap) byteswap_all(a.data, isz);
  return a;
}

NpyArray read_npy(const std::string& path) {
  // A regular file of at most kMaxInputFileBytes, checked before reading (sim/ir/input_file.h).
  const std::string buf = read_input_file(path, "a .npy array");
  return parse_npy(reinterpret_cast<const uint8_t*>(buf.data()), buf.size(), path);
}

NpyArray as_bf16(NpyArray a, const std::string& name) {
  if (a.type != NpyType::U16 && a.type != NpyType::I16 && a.type != NpyType::BF16)
    throw InputError(name, "header: descr",
                     std::string("holds ") + npy_type_name(a.type) +
                         "; bfloat16 is read from 16-bit raw bits ('<u2', '<i2' or '|V2')");
  a.type = NpyType::BF16;
  return a;
}

std::vector<uint8_t> serialize_npy(const NpyArray& a) {
  for (int64_t d : a.shape)
    if (d < 0) throw InternalError("NpyArray with a negative dimension");
  if (static_cast<int64_t>(a.data.size()) != a.size() * a.itemsize())
    throw InternalError("NpyArray data size does not match its shape");
  std::string dict = "{'descr': '" + npy_descr(a.type) +
                     "', 'fortran_order': False, 'shape': " + shape_str(a.shape) + ", }";
  // numpy pads with spaces and ends with '\n' so the data starts 64-byte aligned.
  size_t pre = 10;
  size_t total = (pre + dict.size() + 1 + 63) / 64 * 64;
  if (total - pre > 65535) {
    pre = 12;
    total = (pre + dict.size() + 1 + 63) / 64 * 64;
  }
  const size_t hlen = total - pre;
  dict.append(hlen - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(pre == 10 ? 1 : 2);
  out.push_back(0);
  for (size_t i = 0; i < pre - 8; ++i) out.push_back(static_cast<uint8_t>(hlen >> (8 * i)));
  out.insert(out.end(), dict.begin(), dict.end());
  const size_t data_off = out.size();
  out.insert(out.end(), a.data.begin(), a.data.end());
  if (!host_is_little() && a.itemsize() > 1) {
    std::vector<uint8_t> body(out.begin() + data_off, out.end());
    byteswap_all(body, a.itemsize());
    std::copy(body.begin(), body.end(), out.begin() + data_off);
  }
  return out;
}

void write_npy(const std::string& path, const NpyArray& a) {
  const std::vector<uint8_t> bytes = serialize_npy(a);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    throw InputError(path, "", std::string("cannot write: ") + std::strerror(errno));
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed)
    throw InputError(path, "",
                     std::string("cannot write: ") + std::strerror(written ? errno : err));
}

NpyArray make_npy(NpyType t, const std::vector<int64_t>& shape, const std::vector<float>& values) {
  NpyArray a;
  a.type = t;
  a.shape = shape;
  for (int64_t d : shape)
    if (d < 0) throw InternalError("make_npy: negative dimension");
  if (a.size() != static_cast<int64_t>(values.size()))
    throw InternalError("make_npy: " + std::to_string(values.size()) + " values for shape " +
                        shape_str(shape));
  switch (t) {
    case NpyType::F16: store_all<uint16_t>(a.data, values, float_to_half); break;
    case NpyType::BF16: store_all<uint16_t>(a.data, values, float_to_bf16); break;
    case NpyType::F32: store_all<float>(a.data, values, [](float v) { return v; }); break;
    case NpyType::F64:
      store_all<double>(a.data, values, [](float v) { return static_cast<double>(v); });
      break;
    case NpyType::I8: store_all<int8_t>(a.data, values, saturate<int8_t>); break;
    case NpyType::U8: store_all<uint8_t>(a.data, values, saturate<uint8_t>); break;
    case NpyType::I16: store_all<int16_t>(a.data, values, saturate<int16_t>); break;
    case NpyType::U16: store_all<uint16_t>(a.data, values, saturate<uint16_t>); break;
    case NpyType::I32: store_all<int32_t>(a.data, values, saturate<int32_t>); break;
    case NpyType::U32: store_all<uint32_t>(a.data, values, saturate<uint32_t>); break;
    case NpyType::I64: store_all<int64_t>(a.data, values, saturate<int64_t>); break;
    case NpyType::U64: store_all<uint64_t>(a.data, values, saturate<uint64_t>); break;
    case NpyType::Bool:
      store_all<uint8_t>(a.data, values, [](float v) -> uint8_t { return v != 0 ? 1 : 0; });
      break;
  }
  return a;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (man << 13));  // inf / NaN, payload kept
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t float_to_half(float f) {
  const uint32_t u = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t exp = (u >> 23) & 0xff, man = u & 0x7fffffu;
  if (exp == 255) {  // inf, or NaN with its top payload bits (as numpy; never rounded to inf)
    const uint32_t payload = man >> 13;
    return static_cast<uint16_t>(sign | 0x7c00u | (man == 0 ? 0u : payload == 0 ? 1u : payload));
  }
  if (exp > 127 + 15) return sign | 0x7c00u;  // beyond the half range
  if (exp >= 127 - 14) {                      // half normal: drop 13 mantissa bits, RNE
    uint32_t h = ((exp - 112) << 10) | (man >> 13);
    const uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;  // a carry may reach inf: correct
    return static_cast<uint16_t>(sign | h);
  }
  // Half subnormal (unit 2^-24): value = m * 2^(exp-150) = (m >> shift) units, shift = 126-exp.
  const uint32_t shift = 126 - exp;
  if (exp == 0 || shift > 24) return sign;  // below half of the smallest subnormal
  const uint32_t m = man | 0x800000u;
  uint32_t h = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_float(uint16_t b) { return bits_float(uint32_t{b} << 16); }

uint16_t float_to_bf16(float f) {
  const uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)  // NaN: keep the top payload bits, never round to inf
    return static_cast<uint16_t>((u >> 16) | ((u & 0x007f0000u) == 0 ? 1u : 0u));
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

}  // namespace npusim::functional
