#include "sim/sweep/expr.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "sim/ir/error.h"

namespace npusim::sweep {

struct Expr::Node {
  enum Kind { kNumber, kString, kName, kUnary, kBinary } kind = kNumber;
  double number = 0;
  std::string text;  // string literal, name, or operator
  std::shared_ptr<const Node> a, b;
};

namespace {

using NodeP = std::shared_ptr<const Expr::Node>;

struct Token {
  enum Kind { kEnd, kNumber, kString, kName, kOp } kind = kEnd;
  std::string text;
  double number = 0;
  size_t pos = 0;
};

class Parser {
 public:
  Parser(const std::string& text, const std::string& file, const std::string& where)
      : m_s(text), m_file(file), m_where(where) { next(); }

  NodeP parse_all(std::vector<std::string>& names) {
    m_names = &names;
    NodeP n = parse_or();
    if (m_tok.kind != Token::kEnd) fail("unexpected '" + m_tok.text + "'", m_tok.pos);
    return n;
  }

 private:
  [[noreturn]] void fail(const std::string& what, size_t pos) const {
    throw InputError(m_file, m_where, what + " at column " + std::to_string(pos + 1) + " of '" + m_s + "'");
  }

  void next() {
    while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i]))) ++m_i;
    m_tok = Token{};
    m_tok.pos = m_i;
    if (m_i >= m_s.size()) return;
    const char c = m_s[m_i];
    auto digit = [&](size_t i) { return i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[i])); };
    if (digit(m_i) || (c == '.' && digit(m_i + 1))) {
      char* end = nullptr;
      m_tok.number = std::strtod(m_s.c_str() + m_i, &end);
      const size_t n = static_cast<size_t>(end - (m_s.c_str() + m_i));
      m_tok.kind = Token::kNumber;
      m_tok.text = m_s.substr(m_i, n);
      m_i += n;
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = m_i;
      auto name_char = [](char x) { return std::isalnum(static_cast<unsigned char>(x)) || x == '_' || x == '.'; };
      while (j < m_s.size() && name_char(m_s[j])) ++j;
      m_tok.kind = Token::kName;
      m_tok.text = m_s.substr(m_i, j - m_i);
      m_i = j;
      return;
    }
    if (c == '\'' || c == '"') {
      const size_t close = m_s.find(c, m_i + 1);
      if (close == std::string::npos) fail("unterminated string", m_i);
      m_tok.kind = Token::kString;
      m_tok.text = m_s.substr(m_i + 1, close - m_i - 1);
      m_i = close + 1;
      return;
    }
    static const char* two[] = {"<=", ">=", "==", "!=", "&&", "||"};
    for (const char* op : two)
      if (m_s.compare(m_i, 2, op) == 0) {
        m_tok.kind = Token::kOp;
        m_tok.text = op;
        m_i += 2;
        return;
      }
    if (std::string("+-*/()<>!").find(c) != std::string::npos) {
      m_tok.kind = Token::kOp;
      m_tok.text = std::string(1, c);
      ++m_i;
      return;
    }
    fail(std::string("unexpected character '") + c + "'", m_i);
  }

  bool is_op(const char* op) const { return m_tok.kind == Token::kOp && m_tok.text == op; }

  static NodeP binary(const std::string& op, NodeP a, NodeP b) {
    auto n = std::make_shared<Expr::Node>();
    n->kind = Expr::Node::kBinary;
    n->text = op;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }

  // Left-associative level: operators ops, operands from sub.
  template <typename Sub>
  NodeP level(std::initializer_list<const char*> ops, Sub sub) {
    NodeP n = (this->*sub)();
    for (;;) {
      const char* hit = nullptr;
      for (const char* op : ops)
        if (is_op(op)) hit = op;
      if (!hit) return n;
      next();
      n = binary(hit, n, (this->*sub)());
    }
  }

  NodeP parse_or() { return level({"||"}, &Parser::parse_and); }
  NodeP parse_and() { return level({"&&"}, &Parser::parse_cmp); }
  NodeP parse_cmp() {
    NodeP n = parse_add();
    for (const char* op : {"<=", ">=", "==", "!=", "<", ">"})
      if (is_op(op)) {
        next();
        n = binary(op, n, parse_add());
        for (const char* again : {"<=", ">=", "==", "!=", "<", ">"})
          if (is_op(again)) fail("chained comparison: join comparisons with &&", m_tok.pos);
        return n;
      }
    return n;
  }
  NodeP parse_add() { return level({"+", "-"}, &Parser::parse_mul); }
  NodeP parse_mul() { return level({"*", "/"}, &Parser::parse_unary); }
  NodeP parse_unary() {
    if (is_op("-") || is_op("!")) {
      auto n = std::make_shared<Expr::Node>();
      n->kind = Expr::Node::kUnary;
      n->text = m_tok.text;
      next();
      n->a = parse_unary();
      return n;
    }
    return parse_primary();
  }
  NodeP parse_primary() {
    auto n = std::make_shared<Expr::Node>();
    switch (m_tok.kind) {
      case Token::kNumber: n->kind = Expr::Node::kNumber; n->number = m_tok.number; break;
      case Token::kString: n->kind = Expr::Node::kString; n->text = m_tok.text; break;
      case Token::kName:
        n->kind = Expr::Node::kName;
        n->text = m_tok.text;
        if (std::find(m_names->begin(), m_names->end(), n->text) == m_names->end()) m_names->push_back(n->text);
        break;
      case Token::kOp:
        if (m_tok.text == "(") {
          next();
          NodeP inner = parse_or();
          if (!is_op(")")) fail("expected ')'", m_tok.pos);
          next();
          return inner;
        }
        fail("expected a number, name or '(' but got '" + m_tok.text + "'", m_tok.pos);
      case Token::kEnd: fail("unexpected end of expression", m_tok.pos);
    }
    next();
    return n;
  }

  const std::string& m_s;
  const std::string& m_file;
  const std::string& m_where;
  size_t m_i = 0;
  Token m_tok;
  std::vector<std::string>* m_names = nullptr;
};

bool truth(const ExprValue& v) { return v.is_string ? !v.text.empty() : v.number != 0; }

}  // namespace

Expr Expr::parse(const std::string& text, const std::string& file, const std::string& where) {
  Expr e;
  e.m_text = text;
  e.m_file = file;
  e.m_where = where;
  e.m_root = Parser(text, file, where).parse_all(e.m_names);
  return e;
}

ExprValue Expr::eval(const std::function<ExprValue(const std::string&)>& lookup) const {
  std::function<ExprValue(const Node&)> ev = [&](const Node& n) -> ExprValue {
    auto need_number = [&](const ExprValue& v, const std::string& op) {
      if (v.is_string)
        throw InputError(m_file, m_where, "'" + op + "' needs numbers, got the string '" + v.text + "' in '" + m_text + "'");
      return v.number;
    };
    switch (n.kind) {
      case Node::kNumber: return ExprValue::num(n.number);
      case Node::kString: return ExprValue::str(n.text);
      case Node::kName: return lookup(n.text);
      case Node::kUnary: {
        const ExprValue a = ev(*n.a);
        if (n.text == "!") return ExprValue::num(truth(a) ? 0 : 1);
        return ExprValue::num(-need_number(a, n.text));
      }
      case Node::kBinary: break;
    }
    const std::string& op = n.text;
    if (op == "&&") return ExprValue::num(truth(ev(*n.a)) && truth(ev(*n.b)) ? 1 : 0);
    if (op == "||") return ExprValue::num(truth(ev(*n.a)) || truth(ev(*n.b)) ? 1 : 0);
    const ExprValue a = ev(*n.a), b = ev(*n.b);
    if (op == "==" || op == "!=") {
      if (a.is_string != b.is_string)
        throw InputError(m_file, m_where, "'" + op + "' compares a string with a number in '" + m_text + "'");
      const bool eq = a.is_string ? a.text == b.text : a.number == b.number;
      return ExprValue::num((op == "==") == eq ? 1 : 0);
    }
    const double x = need_number(a, op), y = need_number(b, op);
    if (op == "+") return ExprValue::num(x + y);
    if (op == "-") return ExprValue::num(x - y);
    if (op == "*") return ExprValue::num(x * y);
    if (op == "/") {
      if (y == 0) throw InputError(m_file, m_where, "division by zero in '" + m_text + "'");
      return ExprValue::num(x / y);
    }
    if (op == "<") return ExprValue::num(x < y);
    if (op == "<=") return ExprValue::num(x <= y);
    if (op == ">") return ExprValue::num(x > y);
    return ExprValue::num(x >= y);  // ">="
  };
  return ev(*m_root);
}

bool Expr::holds(const std::function<ExprValue(const std::string&)>& lookup) const { return truth(eval(lookup)); }

}  // namespace npusim::sweep
