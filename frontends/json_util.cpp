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

Json parse_text(const std::string& text, const std::string& source) {
  if (text.size() > kMaxJsonBytes)
    throw InputError(source, "", "JSON text too large: " + std::to_string(text.size()) + " bytes, the limit is " +
                                     std::to_string(kMaxJsonBytes >> 20) + " MiB (docs/hardening.md)");
  // Track the pointer of the container being parsed, so that a duplicate key (which
  // nlohmann would silently collapse) is reported where it occurs.
  struct Frame {
    bool is_array;
    std::string pointer;
    size_t next_index = 0;
    std::string key;
    std::unordered_set<std::string> keys;
  };
  std::vector<Frame> stack;
  auto child_pointer = [&]() -> std::string {
    if (stack.empty()) return "";
    Frame& f = stack.back();
    return f.is_array ? pointer_join(f.pointer, f.next_index++) : pointer_join(f.pointer, f.key);
  };
  Json::parser_callback_t cb = [&](int depth, Json::parse_event_t ev, Json& parsed) {
    switch (ev) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        std::string p = child_pointer();
        // depth counts the enclosing containers: stop before a hostile nesting costs anything.
        if (depth >= kMaxJsonDepth) {
          if (p.size() > 64) p = p.substr(0, 64) + "...";
          throw InputError(source, p, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                          " levels (the limit, docs/hardening.md)");
        }
        stack.push_back(Frame{ev == Json::parse_event_t::array_start, std::move(p), 0, {}, {}});
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Json::parse_event_t::key: {
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second)
          throw InputError(source, pointer_join(f.pointer, f.key), "duplicate key '" + f.key + "'");
        break;
      }
      case Json::parse_event_t::value:
        if (!stack.empty() && stack.back().is_array) stack.back().next_index++;
        break;
    }
    return true;
  };
  try {
    return Json::parse(text, cb);
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
