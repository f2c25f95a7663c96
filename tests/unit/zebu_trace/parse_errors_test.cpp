// Malformed trace lines give InputError(file, "line N", what) and never crash.
#include <fstream>
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "frontends/zebu_trace/py_literal.h"
#include "frontends/zebu_trace/zebu_trace.h"

namespace npusim::frontends::zebu {
namespace {

const char* kGood =
    "[pe_conv, {'slyr': 3, 'clyr': [], 's_flyr': 0, 'c_flyr': [], 'wkl': 3, 'tile': 0}, "
    "{'inst_idx': 1, 'time': [10, 110]}, {'PS': 0, 'DF': <DataFmt.INT8: 1>, 'Prev_Insts': ['LW']}]";

// Parses `text` (line 1 = kGood, line 2 = bad) and returns the InputError; fails if none.
InputError error_of(const std::string& bad_line) {
  std::string text = std::string(kGood) + "\n" + bad_line + "\n";
  try {
    parse_zebu_trace(text, "t.txt");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError for: " << bad_line;
  return InputError("", "", "");
}

void expect_error(const std::string& bad_line, const std::string& fragment) {
  InputError e = error_of(bad_line);
  EXPECT_EQ(e.file(), "t.txt");
  EXPECT_EQ(e.where(), "line 2");
  EXPECT_NE(e.detail().find(fragment), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind("t.txt: line 2: ", 0), 0u) << e.what();
}

TEST(ZebuParseErrors, GoodLineParses) {
  Trace t = parse_zebu_trace(std::string(kGood) + "\n\n", "t.txt");
  ASSERT_EQ(t.instructions.size(), 1u);
  EXPECT_EQ(t.instructions[0].duration(), 100);
  EXPECT_EQ(enum_or_int(t.instructions[0].params["DF"]), 1);
}

TEST(ZebuParseErrors, TruncatedLine) {
  std::string good(kGood);
  std::string cut = good.substr(0, good.find("'wkl': ") + 7);  // stops where a value is due
  expect_error(cut, "expected a value, found end of line");
}

TEST(ZebuParseErrors, BadEnumForms) {
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, "
               "{'DF': <DataFmt.FP16 3>}]",
               "expected ':' in an enum repr");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, "
               "{'DF': <FP16: 3>}]",
               "enum repr must look like <Type.MEMBER: n>");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, "
               "{'DF': <DataFmt.FP16: x>}]",
               "expected a number");
}

TEST(ZebuParseErrors, UnbalancedBrackets) {
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [1, 2, 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {}]",
               "expected ',' or ']' in a list");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {}]]",
               "unexpected text after the instruction");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}}, {'inst_idx': 2, 'time': [0, 1]}, {}]",
               "expected ',' after the layer-mapping dict");
}

TEST(ZebuParseErrors, MissingOrBadTime) {
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2}, {}]", "missing 'time'");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'PS': 0}]", "missing 'inst_idx'");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [5]}, {}]",
               "'time' must be [start, end] integers");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [9, 5]}, {}]",
               "ends before it starts");
}

TEST(ZebuParseErrors, BadFieldsAndLiterals) {
  expect_error("[pe_conv, {'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {}]", "missing 'slyr'");
  expect_error("[pe_conv, {'slyr': 'x', 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {}]",
               "'slyr' must be an integer");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {'a': nope}]",
               "unknown name 'nope'");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {'a': 'x}]",
               "unterminated string");
  expect_error("[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {'a': 1e}]",
               "exponent without digits");
  expect_error("[pe_conv, {'slyr': 3, 'slyr': 4, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}]",
               "duplicate key 'slyr'");
  expect_error("[3, {}, {}, {}]", "expected a name");
  expect_error("pe_conv, {}", "expected '[' at the start of an instruction");
}

TEST(ZebuParseErrors, ColumnIsReported) {
  // "[pe_conv, {'slyr': 3, " is 22 characters; the bad token '@' is at column 23.
  InputError e = error_of("[pe_conv, {'slyr': 3, @");
  EXPECT_NE(e.detail().find("column 23"), std::string::npos) << e.what();
}

TEST(ZebuParseErrors, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "[pe_conv, {'slyr': 3, 'clyr': [], 'wkl': 3, 'tile': 0}, {'inst_idx': 2, 'time': [0, 1]}, {'a': " +
                     std::string(5000, '[') + std::string(5000, ']') + "}]";
  expect_error(deep, "nesting deeper than 64 levels");
}

TEST(ZebuParseErrors, MissingFile) {
  std::string path = ::testing::TempDir() + "no_such_dir/trace.txt";
  try {
    read_zebu_trace(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(e.detail().find("cannot open"), std::string::npos);
  }
}

TEST(ZebuParseErrors, FileErrorNamesThePath) {
  std::string path = ::testing::TempDir() + "bad_trace.txt";
  std::ofstream(path) << kGood << "\n" << "[pe_conv, {'slyr': 3\n";
  try {
    read_zebu_trace(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.where(), "line 2");
  }
}

TEST(PyLiteral, ScalarsAndContainers) {
  PyLiteralParser p("{'a': -1.5e-3, \"b\": (1, 2,), 'c': [True, False, None], 'd': 'it\\'s', 'e': -inf, 'f': +7}");
  json::Json v = p.parse_value();
  EXPECT_TRUE(p.at_end());
  EXPECT_DOUBLE_EQ(v["a"].get<double>(), -1.5e-3);
  EXPECT_EQ(v["b"], json::Json::array({1, 2}));
  EXPECT_EQ(v["c"], json::Json::array({true, false, nullptr}));
  EXPECT_EQ(v["d"], "it's");
  EXPECT_TRUE(std::isinf(v["e"].get<double>()));
  EXPECT_EQ(v["f"], 7);
}

}  // namespace
}  // namespace npusim::frontends::zebu
