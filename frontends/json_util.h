// Typed access to JSON input that names the file and the JSON pointer (RFC 6901) of every
// error, shared by all readers (Frontend IR, ARK, TVM, pipeline). Documents are
// nlohmann::ordered_json so that object members keep their file order (Frontend IR's
// module_list is a pipeline in file order).
#pragma once
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/ir/error.h"

namespace npusim::json {

// True while parse_text builds a document: its callback has already refused duplicate keys,
// so inserting a member needs no search.
inline thread_local bool g_parsing_unique_keys = false;

// nlohmann::ordered_map (members in file order) whose inserts during parse_text append without
// the linear search for an existing key, which made parsing quadratic in an object's size (a
// Frontend IR of 32,000 layers is one object of 32,000 members). Outside parse_text it is
// nlohmann's ordered_map unchanged.
template <class Key, class T, class IgnoredLess = std::less<Key>, class Allocator = std::allocator<std::pair<const Key, T>>>
struct ParseOrderedMap : nlohmann::ordered_map<Key, T, IgnoredLess, Allocator> {
  using Base = nlohmann::ordered_map<Key, T, IgnoredLess, Allocator>;
  using Base::Base;
  using Base::emplace;
  using Base::operator[];
  using typename Base::iterator;
  using typename Base::key_type;

  std::pair<iterator, bool> emplace(const key_type& key, T&& t) {
    if (!g_parsing_unique_keys) return Base::emplace(key, std::forward<T>(t));
    this->emplace_back(key, std::forward<T>(t));
    return {std::prev(this->end()), true};
  }
  T& operator[](const key_type& key) { return emplace(key, T{}).first->second; }
};

using Json = nlohmann::basic_json<ParseOrderedMap>;

// RFC 6901: '~' -> "~0", '/' -> "~1".
std::string escape_token(const std::string& token);
std::string pointer_join(const std::string& base, const std::string& key);
std::string pointer_join(const std::string& base, size_t index);

// "object", "array", "string", "integer", "number", "boolean", "null".
const char* type_name(const Json& v);

// 1-based line and column of a byte offset into text (offset counts from 0).
struct LineCol {
  int line = 1;
  int column = 1;
};
LineCol line_col(const std::string& text, size_t offset);

// Limits checked before any value is built (docs/hardening.md): a JSON text of at most
// kMaxJsonBytes, arrays and objects nested at most kMaxJsonDepth deep.
inline constexpr size_t kMaxJsonBytes = size_t{64} << 20;  // 64 MiB
inline constexpr int kMaxJsonDepth = 256;

// Parses text; a syntax error or a duplicate object key is an InputError naming `source`
// and "line L, column C" (syntax) or the pointer of the duplicate key. A text over
// kMaxJsonBytes or nested deeper than kMaxJsonDepth is an InputError naming the limit.
Json parse_text(const std::string& text, const std::string& source);
// Reads and parses a file; a missing, unreadable or malformed file, one that is not a regular
// file (a directory, device, FIFO) or one larger than kMaxJsonBytes is an InputError.
Json read_json_file(const std::string& path);

// A JSON value together with the file and the pointer that lead to it. Every accessor
// throws InputError(file, pointer, message) on a missing or mistyped value. A Cursor refers
// to the document it came from, which must outlive it.
class Cursor {
 public:
  Cursor(const Json& value, std::string file, std::string pointer = "");

  const Json& value() const { return *m_value; }
  const std::string& file() const { return m_file; }
  const std::string& pointer() const { return m_pointer; }

  [[noreturn]] void fail(const std::string& what) const;  // InputError at this value
  // InputError at the member `key` of this object (which may be absent).
  [[noreturn]] void fail_at(const std::string& key, const std::string& what) const;

  bool is_null() const { return m_value->is_null(); }
  void expect_object() const;
  void expect_array() const;
  size_t size() const;  // elements of an array or members of an object

  // Children. at(key) requires the member ("missing required field"); find(key) gives
  // nullopt when the member is absent or null (null means "not given" in these formats).
  bool has(const std::string& key) const;
  Cursor at(const std::string& key) const;
  std::optional<Cursor> find(const std::string& key) const;
  Cursor at(size_t index) const;
  std::vector<Cursor> elements() const;                            // of an array
  std::vector<std::pair<std::string, Cursor>> members() const;     // of an object, in file order

  // This value as a scalar. Integers accept integral numbers (3 and 3.0); doubles accept any
  // number; booleans accept true/false and 0/1 (as_bool_like).
  int64_t as_int() const;
  int64_t as_int_in(int64_t min, int64_t max) const;  // "must be between min and max"
  double as_double() const;
  std::string as_string() const;
  bool as_bool() const;
  bool as_bool_like() const;
  // Arrays. expected_len: "expected 2 integers, got 3".
  std::vector<int64_t> as_int_array(std::optional<size_t> expected_len = std::nullopt) const;
  std::vector<std::string> as_string_array() const;
  std::vector<int64_t> as_shape() const;                 // non-negative dims, bounded product
  std::vector<std::vector<int64_t>> as_shape_list() const;  // [[1,3,224,224],[64,3,7,7]]

  // Required members of this object.
  int64_t get_int(const std::string& key) const { return at(key).as_int(); }
  double get_double(const std::string& key) const { return at(key).as_double(); }
  std::string get_string(const std::string& key) const { return at(key).as_string(); }
  bool get_bool_like(const std::string& key) const { return at(key).as_bool_like(); }
  std::vector<int64_t> get_int_array(const std::string& key,
                                     std::optional<size_t> expected_len = std::nullopt) const {
    return at(key).as_int_array(expected_len);
  }
  std::vector<std::string> get_string_array(const std::string& key) const {
    return at(key).as_string_array();
  }
  std::vector<std::vector<int64_t>> get_shape_list(const std::string& key) const {
    return at(key).as_shape_list();
  }

  // Optional members: nullopt when absent or null.
  std::optional<int64_t> optional_int(const std::string& key) const;
  std::optional<double> optional_double(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  std::optional<bool> optional_bool_like(const std::string& key) const;
  std::optional<std::vector<int64_t>> optional_int_array(
      const std::string& key, std::optional<size_t> expected_len = std::nullopt) const;

 private:
  const Json* m_value;
  std::string m_file;
  std::string m_pointer;
};

}  // namespace npusim::json
