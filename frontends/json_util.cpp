#include "frontends/json_util.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "sim/ir/input_file.h"

namespace npusim::json {

std::string escape_token(const std::string& token) {
  std::string r;
  r.reserve(token.size());
  for (char c : token) {
    if (c == '~')
      r += "~0";
    else if (c == '/')
      r += "~1";
    else
      r += c;
  }
  return r;
}

std::string pointer_join(const std::string& base, const std::string& key) {
  return base + "/" + escape_token(key);
}

std::string pointer_join(const std::string& base, size_t index) {
  return base + "/" + std::to_string(index);
}

const char* type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::null: return "null";
    default: return "invalid value";
  }
}

namespace {

// "string \"abc\"" / "array" : enough of the value to recognise it in a message.
std::string describe(const Json& v) {
  if (v.is_object() || v.is_array() || v.is_null()) return type_name(v);
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return std::string(type_name(v)) + " " + s;
}

// Largest tensor accepted: 2^40 elements keeps every derived byte and MAC count far from
// int64 overflow while staying above any real workload.
constexpr int64_t kMaxElements = int64_t{1} << 40;

}  // namespace

LineCol line_col(const std::string& text, size_t offset) {
  LineCol lc;
  size_t end = std::min(offset, text.size());
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++lc.line;
      lc.column = 1;
    } else {
      ++lc.column;
    }
  }
  return lc;
}

namespace {
// Builds the document through nlohmann's SAX DOM builder, checking on the way: nesting depth
// (before a hostile nesting costs anything) and duplicate keys (which nlohmann would silently
// collapse), each reported at its JSON pointer. nlohmann's callback parser would do the same
// but rescans a parent object after each child ends: quadratic in the member count.
class CheckedDomBuilder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  CheckedDomBuilder(Json& result, const std::string& source) : m_dom(result, true), m_source(source) {}

  bool null() { return scalar(), m_dom.null(); }
  bool boolean(bool v) { return scalar(), m_dom.boolean(v); }
  bool number_integer(number_integer_t v) { return scalar(), m_dom.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return scalar(), m_dom.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& text) { return scalar(), m_dom.number_float(v, text); }
  bool string(string_t& v) { return scalar(), m_dom.string(v); }
  bool binary(binary_t& v) { return scalar(), m_dom.binary(v); }
  bool start_object(std::size_t n) { return open(false), m_dom.start_object(n); }
  bool start_array(std::size_t n) { return open(true), m_dom.start_array(n); }
  bool end_object() { return close(), m_dom.end_object(); }
  bool end_array() { return close(), m_dom.end_array(); }
  bool key(string_t& k) {
    Frame& f = m_stack.back();
    f.key = k;
    if (!f.keys.insert(k).second) throw InputError(m_source, pointer_join(f.pointer, k), "duplicate key '" + k + "'");
    return m_dom.key(k);
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return m_dom.parse_error(position, token, e);  // throws e
  }

 private:
  struct Frame {
    bool is_array;
    std::string pointer;
    size_t next_index = 0;
    std::string key;
    std::unordered_set<std::string> keys;
  };
  std::string child_pointer() {
    if (m_stack.empty()) return "";
    Frame& f = m_stack.back();
    return f.is_array ? pointer_join(f.pointer, f.next_index++) : pointer_join(f.pointer, f.key);
  }
  void scalar() {
    if (!m_stack.empty() && m_stack.back().is_array) m_stack.back().next_index++;
  }
  void open(bool is_array) {
    std::string p = child_pointer();
    // The depth counts the enclosing containers.
    if (m_stack.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      if (p.size() > 64) p = p.substr(0, 64) + "...";
      throw InputError(m_source, p, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                        " levels (the limit, docs/hardening.md)");
    }
    m_stack.push_back(Frame{is_array, std::move(p), 0, {}, {}});
  }
  void close() {
    if (!m_stack.empty()) m_stack.pop_back();
  }

  nlohmann::detail::json_sax_dom_parser<Json> m_dom;
  const std::string& m_source;
  std::vector<Frame> m_stack;
};
}  // namespace

Json parse_text(const std::string& text, const std::string& source) {
  if (text.size() > kMaxJsonBytes)
    throw InputError(source, "", "JSON text too large: " + std::to_string(text.size()) + " bytes, the limit is " +
                                     std::to_string(kMaxJsonBytes >> 20) + " MiB (docs/hardening.md)");
  // Members append without a search while this parse runs (the builder checks duplicates).
  struct UniqueKeys {
    bool was = g_parsing_unique_keys;
    UniqueKeys() { g_parsing_unique_keys = true; }
    ~UniqueKeys() { g_parsing_unique_keys = was; }
  };
  try {
    UniqueKeys unique_keys;
    Json result;
    CheckedDomBuilder builder(result, source);
    Json::sax_parse(text, &builder);
    return result;
  } catch (const Json::parse_error& e) {
    LineCol lc = line_col(text, e.byte > 0 ? e.byte - 1 : 0);
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error ..."; keep the part after the position, ours replaces it.
    std::string what = e.what();
    size_t at = what.find("parse error");
    size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    throw InputError(source,
                     "line " + std::to_string(lc.line) + ", column " + std::to_string(lc.column),
                     "malformed JSON: " + detail);
  } catch (const Json::out_of_range& e) {
    // A number too large for a double: "number overflow parsing '1e999'". nlohmann gives no
    // position, so find the literal in the text.
    std::string what = e.what();
    size_t q = what.find('\'');
    size_t q2 = q == std::string::npos ? q : what.find('\'', q + 1);
    std::string where;
    if (q2 != std::string::npos) {
      size_t at = text.find(what.substr(q + 1, q2 - q - 1));
      if (at != std::string::npos) {
        LineCol lc = line_col(text, at);
        where = "line " + std::to_string(lc.line) + ", column " + std::to_string(lc.column);
      }
    }
    size_t bracket = what.find("] ");
    throw InputError(source, where,
                     "malformed JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
}

Json read_json_file(const std::string& path) {
  return parse_text(read_input_file(path, "a JSON file", kMaxJsonBytes), path);
}

Cursor::Cursor(const Json& value, std::string file, std::string pointer)
    : m_value(&value), m_file(std::move(file)), m_pointer(std::move(pointer)) {}

void Cursor::fail(const std::string& what) const { throw InputError(m_file, m_pointer, what); }

void Cursor::fail_at(const std::string& key, const std::string& what) const {
  throw InputError(m_file, pointer_join(m_pointer, key), what);
}

void Cursor::expect_object() const {
  if (!m_value->is_object()) fail("expected an object, got " + describe(*m_value));
}

void Cursor::expect_array() const {
  if (!m_value->is_array()) fail("expected an array, got " + describe(*m_value));
}

size_t Cursor::size() const {
  if (!m_value->is_array() && !m_value->is_object())
    fail("expected an array or object, got " + describe(*m_value));
  return m_value->size();
}

bool Cursor::has(const std::string& key) const {
  expect_object();
  return m_value->contains(key);
}

Cursor Cursor::at(const std::string& key) const {
  expect_object();
  auto it = m_value->find(key);
  if (it == m_value->end()) fail_at(key, "missing required field '" + key + "'");
  return Cursor(*it, m_file, pointer_join(m_pointer, key));
}

std::optional<Cursor> Cursor::find(const std::string& key) const {
  expect_object();
  auto it = m_value->find(key);
  if (it == m_value->end() || it->is_null()) return std::nullopt;
  return Cursor(*it, m_file, pointer_join(m_pointer, key));
}

Cursor Cursor::at(size_t index) const {
  expect_array();
  if (index >= m_value->size())
    fail("expected at least " + std::to_string(index + 1) + " elements, got " +
         std::to_string(m_value->size()));
  return Cursor((*m_value)[index], m_file, pointer_join(m_pointer, index));
}

std::vector<Cursor> Cursor::elements() const {
  expect_array();
  std::vector<Cursor> r;
  r.reserve(m_value->size());
  for (size_t i = 0; i < m_value->size(); ++i)
    r.emplace_back((*m_value)[i], m_file, pointer_join(m_pointer, i));
  return r;
}

std::vector<std::pair<std::string, Cursor>> Cursor::members() const {
  expect_object();
  std::vector<std::pair<std::string, Cursor>> r;
  r.reserve(m_value->size());
  for (auto it = m_value->begin(); it != m_value->end(); ++it)
    r.emplace_back(it.key(), Cursor(it.value(), m_file, pointer_join(m_pointer, it.key())));
  return r;
}

int64_t Cursor::as_int() const {
  const Json& v = *m_value;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail("integer out of range: " + v.dump());
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    // 2^62 bound keeps the cast exact and defined.
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 4.6e18) return static_cast<int64_t>(d);
  }
  fail("expected an integer, got " + describe(v));
}

int64_t Cursor::as_int_in(int64_t min, int64_t max) const {
  int64_t x = as_int();
  if (x < min || x > max)
    fail("value " + std::to_string(x) + " must be between " + std::to_string(min) + " and " +
         std::to_string(max));
  return x;
}

double Cursor::as_double() const {
  if (!m_value->is_number()) fail("expected a number, got " + describe(*m_value));
  return m_value->get<double>();
}

std::string Cursor::as_string() const {
  if (!m_value->is_string()) fail("expected a string, got " + describe(*m_value));
  return m_value->get<std::string>();
}

bool Cursor::as_bool() const {
  if (!m_value->is_boolean()) fail("expected true or false, got " + describe(*m_value));
  return m_value->get<bool>();
}

bool Cursor::as_bool_like() const {
  const Json& v = *m_value;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_unsigned() && v.get<uint64_t>() <= 1) return v.get<uint64_t>() == 1;
  if (v.is_number_integer() && !v.is_number_unsigned() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
    return v.get<int64_t>() == 1;
  fail("expected true, false, 0 or 1, got " + describe(v));
}

std::vector<int64_t> Cursor::as_int_array(std::optional<size_t> expected_len) const {
  auto expected = [&]() {
    return "expected " + std::to_string(*expected_len) + (*expected_len == 1 ? " integer" : " integers");
  };
  if (!m_value->is_array()) {
    if (expected_len) fail(expected() + ", got " + describe(*m_value));
    fail("expected an array of integers, got " + describe(*m_value));
  }
  if (expected_len && m_value->size() != *expected_len)
    fail(expected() + ", got " + std::to_string(m_value->size()) + " elements");
  std::vector<int64_t> r;
  r.reserve(m_value->size());
  for (const Cursor& c : elements()) r.push_back(c.as_int());
  return r;
}

std::vector<std::string> Cursor::as_string_array() const {
  if (!m_value->is_array()) fail("expected an array of strings, got " + describe(*m_value));
  std::vector<std::string> r;
  r.reserve(m_value->size());
  for (const Cursor& c : elements()) r.push_back(c.as_string());
  return r;
}

std::vector<int64_t> Cursor::as_shape() const {
  if (!m_value->is_array()) fail("expected a shape (array of integers), got " + describe(*m_value));
  std::vector<int64_t> r;
  r.reserve(m_value->size());
  int64_t elements_so_far = 1;
  for (const Cursor& c : elements()) {
    int64_t d = c.as_int();
    if (d < 0) c.fail("dimension must be >= 0, got " + std::to_string(d));
    if (d > 0 && elements_so_far > kMaxElements / d)
      fail("shape has more than 2^40 elements");
    elements_so_far *= d;
    r.push_back(d);
  }
  return r;
}

std::vector<std::vector<int64_t>> Cursor::as_shape_list() const {
  if (!m_value->is_array()) fail("expected a list of shapes, got " + describe(*m_value));
  std::vector<std::vector<int64_t>> r;
  r.reserve(m_value->size());
  for (const Cursor& c : elements()) r.push_back(c.as_shape());
  return r;
}

std::optional<int64_t> Cursor::optional_int(const std::string& key) const {
  auto c = find(key);
  return c ? std::optional<int64_t>(c->as_int()) : std::nullopt;
}

std::optional<double> Cursor::optional_double(const std::string& key) const {
  auto c = find(key);
  return c ? std::optional<double>(c->as_double()) : std::nullopt;
}

std::optional<std::string> Cursor::optional_string(const std::string& key) const {
  auto c = find(key);
  return c ? std::optional<std::string>(c->as_string()) : std::nullopt;
}

std::optional<bool> Cursor::optional_bool_like(const std::string& key) const {
  auto c = find(key);
  return c ? std::optional<bool>(c->as_bool_like()) : std::nullopt;
}

std::optional<std::vector<int64_t>> Cursor::optional_int_array(const std::string& key,
                                                               std::optional<size_t> expected_len) const {
  auto c = find(key);
  return c ? std::optional<std::vector<int64_t>>(c->as_int_array(expected_len)) : std::nullopt;
}

}  // namespace npusim::json
