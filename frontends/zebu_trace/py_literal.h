// Parser for the Python-literal subset written by the Gemini assembler and the ZeBu trace
// dump (ZeBu_Trace_Format.md, ISA_Format.md): dicts, lists, tuples, single- or
// double-quoted strings, ints, floats (sign, exponent, inf/nan), True/False/None and enum
// reprs `<DataFmt.FP16: 3>`. Values become JSON: tuples are arrays and an enum is the object
// {"enum": "DataFmt.FP16", "value": 3}, so callers that only need the number can unwrap it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "frontends/json_util.h"

namespace npusim::frontends::zebu {

// A syntax error in a literal. `column` is 1-based within the parsed text.
struct PyLiteralError {
  size_t column;
  std::string what;
};

class PyLiteralParser {
 public:
  explicit PyLiteralParser(std::string_view text) : m_text(text) {}

  json::Json parse_value();
  // A bare identifier such as the instruction name in `[pe_conv, {...}]`.
  std::string parse_identifier();

  void skip_space();
  bool at_end() { skip_space(); return m_pos >= m_text.size(); }
  // Consumes `c` (after blanks) or throws PyLiteralError naming what was found instead.
  void expect(char c, const char* context);
  bool accept(char c);  // consumes `c` when it is next (after blanks)
  size_t pos() const { return m_pos; }

  [[noreturn]] void fail(const std::string& what) const;

 private:
  json::Json parse_dict();
  json::Json parse_sequence(char close);
  json::Json parse_string();
  json::Json parse_number();
  json::Json parse_enum();
  std::string describe_here() const;  // "'x'" or "end of line" for messages

  std::string_view m_text;
  size_t m_pos = 0;
  int m_depth = 0;
};

// The integer inside a value that may be an enum object ({"enum":..., "value": n}) or a plain
// integer; nullopt for anything else.
std::optional<int64_t> enum_or_int(const json::Json& v);

}  // namespace npusim::frontends::zebu
