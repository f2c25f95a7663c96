// A small expression language for sweep constraints (`npu.pe_array.rows * npu.pe_array.cols <=
// 16384`) and report objectives (`-pe_utilization`): numbers, 'strings', dotted names, + - * /,
// unary - and !, parentheses, < <= > >= == !=, && and ||. Values are numbers or strings; only
// == and != accept strings; a comparison or logic operator yields 1 or 0.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace npusim::sweep {

struct ExprValue {
  bool is_string = false;
  double number = 0;
  std::string text;
  static ExprValue num(double v) { return {false, v, {}}; }
  static ExprValue str(std::string s) { return {true, 0, std::move(s)}; }
};

class Expr {
 public:
  // Throws InputError(file, where, "... at column N") on a syntax error.
  static Expr parse(const std::string& text, const std::string& file, const std::string& where);

  const std::string& text() const { return m_text; }
  // Every dotted name in the expression, in order of first appearance.
  const std::vector<std::string>& names() const { return m_names; }

  // lookup gives the value of a name. Throws InputError(file, where, ...) on a type error
  // (e.g. a string in arithmetic) naming the expression.
  ExprValue eval(const std::function<ExprValue(const std::string&)>& lookup) const;
  // eval() as a truth value (non-zero number or non-empty string).
  bool holds(const std::function<ExprValue(const std::string&)>& lookup) const;

  struct Node;

 private:
  std::shared_ptr<const Node> m_root;
  std::string m_text, m_file, m_where;
  std::vector<std::string> m_names;
};

}  // namespace npusim::sweep
