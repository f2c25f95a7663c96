#include "frontends/zebu_trace/py_literal.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace npusim::frontends::zebu {
namespace {

constexpr int kMaxDepth = 64;  // nesting bound so that hostile input cannot overflow the stack

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::optional<int64_t> enum_or_int(const json::Json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_object() && v.contains("enum") && v.contains("value") && v["value"].is_number_integer())
    return v["value"].get<int64_t>();
  return std::nullopt;
}

void PyLiteralParser::fail(const std::string& what) const { throw PyLiteralError{m_pos + 1, what}; }

std::string PyLiteralParser::describe_here() const {
  if (m_pos >= m_text.size()) return "end of line";
  return std::string("'") + m_text[m_pos] + "'";
}

void PyLiteralParser::skip_space() {
  while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' || m_text[m_pos] == '\r'))
    ++m_pos;
}

bool PyLiteralParser::accept(char c) {
  skip_space();
  if (m_pos < m_text.size() && m_text[m_pos] == c) {
    ++m_pos;
    return true;
  }
  return false;
}

void PyLiteralParser::expect(char c, const char* context) {
  if (!accept(c)) fail(std::string("expected '") + c + "' " + context + ", found " + describe_here());
}

std::string PyLiteralParser::parse_identifier() {
  skip_space();
  size_t start = m_pos;
  if (m_pos >= m_text.size() || !is_ident_start(m_text[m_pos]))
    fail("expected a name, found " + describe_here());
  while (m_pos < m_text.size() && is_ident_char(m_text[m_pos])) ++m_pos;
  return std::string(m_text.substr(start, m_pos - start));
}

json::Json PyLiteralParser::parse_value() {
  skip_space();
  if (m_pos >= m_text.size()) fail("expected a value, found end of line");
  if (++m_depth > kMaxDepth) fail("nesting deeper than 64 levels");
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{m_depth};
  char c = m_text[m_pos];
  if (c == '{') return parse_dict();
  if (c == '[') { ++m_pos; return parse_sequence(']'); }
  if (c == '(') { ++m_pos; return parse_sequence(')'); }
  if (c == '\'' || c == '"') return parse_string();
  if (c == '<') return parse_enum();
  if (is_digit(c) || c == '-' || c == '+' || c == '.') return parse_number();
  if (is_ident_start(c)) {
    size_t start = m_pos;
    std::string word = parse_identifier();
    if (word == "True") return true;
    if (word == "False") return false;
    if (word == "None") return nullptr;
    if (word == "inf") return HUGE_VAL;
    if (word == "nan") return std::nan("");
    m_pos = start;
    fail("unknown name '" + word + "' (expected a literal)");
  }
  fail("unexpected character " + describe_here());
}

json::Json PyLiteralParser::parse_dict() {
  ++m_pos;  // '{'
  json::Json obj = json::Json::object();
  if (accept('}')) return obj;
  while (true) {
    skip_space();
    size_t key_pos = m_pos;
    json::Json key = parse_value();
    if (!key.is_string()) {
      m_pos = key_pos;
      fail("dict key must be a string");
    }
    std::string k = key.get<std::string>();
    if (obj.contains(k)) {
      m_pos = key_pos;
      fail("duplicate key '" + k + "'");
    }
    expect(':', "after a dict key");
    obj[k] = parse_value();
    if (accept('}')) return obj;
    expect(',', "or '}' in a dict");
    if (accept('}')) return obj;  // trailing comma
  }
}

json::Json PyLiteralParser::parse_sequence(char close) {
  json::Json arr = json::Json::array();
  const char* ctx = close == ']' ? "or ']' in a list" : "or ')' in a tuple";
  if (accept(close)) return arr;
  while (true) {
    arr.push_back(parse_value());
    if (accept(close)) return arr;
    expect(',', ctx);
    if (accept(close)) return arr;
  }
}

json::Json PyLiteralParser::parse_string() {
  char quote = m_text[m_pos++];
  std::string out;
  while (true) {
    if (m_pos >= m_text.size()) fail("unterminated string");
    char c = m_text[m_pos++];
    if (c == quote) return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (m_pos >= m_text.size()) fail("unterminated string");
    char e = m_text[m_pos++];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case '\\': case '\'': case '"': out += e; break;
      case 'x': case 'u': {
        int digits = e == 'x' ? 2 : 4;
        uint32_t cp = 0;
        for (int i = 0; i < digits; ++i) {
          int h = m_pos < m_text.size() ? hex_value(m_text[m_pos]) : -1;
          if (h < 0) fail(std::string("bad \\") + e + " escape in a string");
          cp = cp * 16 + static_cast<uint32_t>(h);
          ++m_pos;
        }
        append_utf8(out, cp);
        break;
      }
      default: out += '\\'; out += e;  // Python keeps unknown escapes verbatim
    }
  }
}

json::Json PyLiteralParser::parse_number() {
  size_t start = m_pos;
  if (m_pos >= m_text.size()) fail("expected a number, found end of line");
  if (m_text[m_pos] == '-' || m_text[m_pos] == '+') ++m_pos;
  if (m_pos < m_text.size() && is_ident_start(m_text[m_pos])) {  // -inf, -nan
    std::string word = parse_identifier();
    bool neg = m_text[start] == '-';
    if (word == "inf") return neg ? -HUGE_VAL : HUGE_VAL;
    if (word == "nan") return std::nan("");
    m_pos = start;
    fail("malformed number");
  }
  bool is_float = false;
  size_t digits = 0;
  while (m_pos < m_text.size() && is_digit(m_text[m_pos])) { ++m_pos; ++digits; }
  if (m_pos < m_text.size() && m_text[m_pos] == '.') {
    is_float = true;
    ++m_pos;
    while (m_pos < m_text.size() && is_digit(m_text[m_pos])) { ++m_pos; ++digits; }
  }
  if (digits == 0) {
    m_pos = start;
    fail("malformed number");
  }
  if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
    is_float = true;
    ++m_pos;
    if (m_pos < m_text.size() && (m_text[m_pos] == '-' || m_text[m_pos] == '+')) ++m_pos;
    size_t exp_digits = 0;
    while (m_pos < m_text.size() && is_digit(m_text[m_pos])) { ++m_pos; ++exp_digits; }
    if (exp_digits == 0) {
      m_pos = start;
      fail("malformed number (exponent without digits)");
    }
  }
  if (m_pos < m_text.size() && is_ident_char(m_text[m_pos])) {
    m_pos = start;
    fail("malformed number");
  }
  std::string tok(m_text.substr(start, m_pos - start));
  errno = 0;
  if (is_float) return std::strtod(tok.c_str(), nullptr);
  long long v = std::strtoll(tok.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    m_pos = start;
    fail("integer out of range: " + tok);
  }
  return static_cast<int64_t>(v);
}

json::Json PyLiteralParser::parse_enum() {
  ++m_pos;  // '<'
  std::string name = parse_identifier();
  while (m_pos < m_text.size() && m_text[m_pos] == '.') {
    ++m_pos;
    name += "." + parse_identifier();
  }
  if (name.find('.') == std::string::npos) fail("enum repr must look like <Type.MEMBER: n>");
  expect(':', "in an enum repr");
  skip_space();
  if (m_pos >= m_text.size() || !(is_digit(m_text[m_pos]) || m_text[m_pos] == '-'))
    fail("expected a number in an enum repr, found " + describe_here());
  json::Json value = parse_number();
  if (!value.is_number_integer()) fail("enum value must be an integer");
  expect('>', "to close an enum repr");
  json::Json out = json::Json::object();
  out["enum"] = name;
  out["value"] = value;
  return out;
}

}  // namespace npusim::frontends::zebu
