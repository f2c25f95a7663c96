// The constraint/objective expression language: precedence, comparisons, logic, strings, and
// errors that name the expression and the column.
#include "sim/sweep/expr.h"

#include <map>

#include "tests/unit/sweep/sweep_test_util.h"

using namespace npusim::sweep;
using sweep_test::error_of;

namespace {
double eval(const std::string& text, const std::map<std::string, ExprValue>& vars = {}) {
  const Expr e = Expr::parse(text, "f.yaml", "constraints");
  const ExprValue v = e.eval([&](const std::string& n) { return vars.at(n); });
  EXPECT_FALSE(v.is_string) << text;
  return v.number;
}
}  // namespace

TEST(SweepExpr, ArithmeticFollowsPrecedenceAndParentheses) {
  EXPECT_EQ(eval("2 + 3 * 4"), 14);        // * before +
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("20 / 4 / 5"), 1);        // left-associative: (20/4)/5
  EXPECT_EQ(eval("10 - 4 - 3"), 3);
  EXPECT_EQ(eval("-2 * -3"), 6);
  EXPECT_EQ(eval("1.5e3 + .5"), 1500.5);
}

TEST(SweepExpr, ComparisonsAndLogicGiveOneOrZero) {
  EXPECT_EQ(eval("128 * 128 <= 16384"), 1);  // 16384 <= 16384
  EXPECT_EQ(eval("128 * 129 <= 16384"), 0);  // 16512
  EXPECT_EQ(eval("1 < 2 && 3 > 4"), 0);
  EXPECT_EQ(eval("1 < 2 || 3 > 4"), 1);
  EXPECT_EQ(eval("1 || 0 && 0"), 1);  // && binds tighter: 1 || (0 && 0)
  EXPECT_EQ(eval("!(2 == 2)"), 0);
  EXPECT_EQ(eval("2 != 3"), 1);
}

TEST(SweepExpr, DottedNamesAreLookedUpAndListedOnce) {
  const std::map<std::string, ExprValue> v = {{"npu.pe_array.rows", ExprValue::num(128)},
                                               {"npu.pe_array.cols", ExprValue::num(64)}};
  EXPECT_EQ(eval("npu.pe_array.rows * npu.pe_array.cols <= 16384", v), 1);  // 8192
  const Expr e = Expr::parse("npu.pe_array.rows * npu.pe_array.cols + npu.pe_array.rows", "f", "w");
  EXPECT_EQ(e.names(), (std::vector<std::string>{"npu.pe_array.rows", "npu.pe_array.cols"}));
}

TEST(SweepExpr, StringsCompareWithEqualityOnly) {
  const std::map<std::string, ExprValue> v = {{"df", ExprValue::str("weight_stationary")}, {"r", ExprValue::num(8)}};
  EXPECT_EQ(eval("df == 'weight_stationary' && r < 16", v), 1);
  EXPECT_EQ(eval("df != \"weight_stationary\"", v), 0);
  EXPECT_NE(error_of([&] { eval("df + 1", v); }).find("needs numbers"), std::string::npos);
  EXPECT_NE(error_of([&] { eval("df == 1", v); }).find("compares a string with a number"), std::string::npos);
}

TEST(SweepExpr, SyntaxErrorsNameFilePlaceAndColumn) {
  const std::string e = error_of([] { Expr::parse("rows * < 3", "s.yaml", "constraints (line 9)"); });
  EXPECT_NE(e.find("s.yaml: constraints (line 9)"), std::string::npos) << e;
  EXPECT_NE(e.find("column 8"), std::string::npos) << e;  // the '<' is the 8th character
  EXPECT_NE(error_of([] { Expr::parse("(1 + 2", "f", "w"); }).find("expected ')'"), std::string::npos);
  EXPECT_NE(error_of([] { Expr::parse("1 < 2 < 3", "f", "w"); }).find("chained comparison"), std::string::npos);
  EXPECT_NE(error_of([] { Expr::parse("1 $ 2", "f", "w"); }).find("unexpected character '$'"), std::string::npos);
  EXPECT_NE(error_of([] { Expr::parse("'abc", "f", "w"); }).find("unterminated string"), std::string::npos);
  EXPECT_NE(error_of([] { Expr::parse("", "f", "w"); }).find("unexpected end"), std::string::npos);
  EXPECT_NE(error_of([] { eval("1 / 0"); }).find("division by zero"), std::string::npos);
}
