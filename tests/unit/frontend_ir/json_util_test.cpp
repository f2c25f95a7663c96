// frontends/json_util: typed access that reports file + JSON pointer, file reading, parse errors.
#include "frontends/json_util.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/unit/frontend_ir/frontend_ir_test_util.h"

namespace npusim::json {
namespace {

using test::expect_input_error;

Json doc(const char* text) { return parse_text(text, "t.json"); }

std::string write_temp(const std::string& name, const std::string& content) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(JsonPointer, EscapesTildeAndSlashPerRfc6901) {
  EXPECT_EQ(escape_token("a/b~c"), "a~1b~0c");
  EXPECT_EQ(pointer_join("/Conv_0", "stride"), "/Conv_0/stride");
  EXPECT_EQ(pointer_join("/x", size_t{3}), "/x/3");
  EXPECT_EQ(pointer_join("", "fc/w~1"), "/fc~1w~01");
}

TEST(JsonLineCol, CountsLinesAndColumnsFromOne) {
  std::string t = "ab\ncd\n\nx";
  EXPECT_EQ(line_col(t, 0).line, 1);
  EXPECT_EQ(line_col(t, 0).column, 1);
  EXPECT_EQ(line_col(t, 4).line, 2);    // 'd'
  EXPECT_EQ(line_col(t, 4).column, 2);
  EXPECT_EQ(line_col(t, 7).line, 4);    // 'x' after an empty line
  EXPECT_EQ(line_col(t, 7).column, 1);
}

TEST(JsonParse, SyntaxErrorGivesLineAndColumn) {
  // The stray 'x' is line 3, column 3.
  std::string msg = expect_input_error([] { parse_text("{\n  \"a\": 1,\n  x\n}", "bad.json"); },
                                       "line 3, column 3", "malformed JSON");
  EXPECT_EQ(msg.rfind("bad.json: line 3, column 3: malformed JSON: ", 0), 0u) << msg;
}

TEST(JsonParse, EmptyTextIsMalformed) {
  expect_input_error([] { parse_text("", "empty.json"); }, "line 1, column 1", "malformed JSON");
}

TEST(JsonParse, NumberTooLargeForADouble) {
  expect_input_error([] { parse_text("{\"a\": [1,\n 2e999]}", "big.json"); }, "line 2, column 2",
                     "malformed JSON: number overflow");
}

TEST(JsonParse, DuplicateKeyIsReportedAtItsPointer) {
  expect_input_error([] { doc(R"({"L": {"stride": [1, 1], "stride": [2, 2]}})"); }, "/L/stride",
                     "duplicate key 'stride'");
  expect_input_error([] { doc(R"({"a": [{}, 7, {"k": 1, "k": 2}]})"); }, "/a/2/k", "duplicate key");
  // Same key in sibling objects is fine.
  EXPECT_NO_THROW(doc(R"({"a": {"k": 1}, "b": {"k": 2}})"));
}

TEST(JsonParse, KeepsObjectMemberOrder) {
  Json j = doc(R"({"zeta": 1, "alpha": 2, "mid": 3})");
  Cursor c(j, "t.json");
  auto m = c.members();
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].first, "zeta");
  EXPECT_EQ(m[1].first, "alpha");
  EXPECT_EQ(m[2].first, "mid");
}

TEST(JsonReadFile, MissingFile) {
  std::string path = ::testing::TempDir() + "no_such_dir/none.json";
  std::string msg = expect_input_error([&] { read_json_file(path); }, "", "no such file");
  EXPECT_NE(msg.find(path), std::string::npos);
}

TEST(JsonReadFile, DirectoryIsNotAFile) {
  expect_input_error([] { read_json_file(::testing::TempDir()); }, "", "is a directory");
}

TEST(JsonReadFile, MalformedFileNamesPathLineAndColumn) {
  // Line 2 is `"b": [1, 2,]`: the ']' at column 12 is where a value was expected.
  std::string path = write_temp("json_util_bad.json", "{\"a\": 1,\n\"b\": [1, 2,]\n}\n");
  std::string msg = expect_input_error([&] { read_json_file(path); }, "line 2, column 12", "malformed JSON");
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
}

TEST(JsonReadFile, ReadsValidFile) {
  std::string path = write_temp("json_util_ok.json", R"({"x": [1, 2]})");
  Json j = read_json_file(path);
  EXPECT_EQ(j["x"][1].get<int>(), 2);
}

TEST(JsonCursor, MissingRequiredFieldNamesItsPointer) {
  Json j = doc(R"({"Conv_0": {"kernel_size": [3, 3]}})");
  Cursor conv = Cursor(j, "t.json").at("Conv_0");
  expect_input_error([&] { conv.get_int_array("stride", 2); }, "/Conv_0/stride", "missing required field 'stride'");
}

TEST(JsonCursor, MistypedScalars) {
  Json j = doc(R"({"s": "abc", "i": 2.5, "b": 2, "n": null, "o": {}, "big": 18446744073709551615})");
  Cursor c(j, "t.json");
  expect_input_error([&] { c.get_int("s"); }, "/s", "expected an integer, got string \"abc\"");
  expect_input_error([&] { c.get_int("i"); }, "/i", "expected an integer, got number 2.5");
  expect_input_error([&] { c.get_int("big"); }, "/big", "integer out of range");
  expect_input_error([&] { c.get_string("b"); }, "/b", "expected a string, got integer 2");
  expect_input_error([&] { c.get_double("s"); }, "/s", "expected a number");
  expect_input_error([&] { c.get_bool_like("b"); }, "/b", "expected true, false, 0 or 1");
  expect_input_error([&] { c.get_bool_like("s"); }, "/s", "expected true, false, 0 or 1");
  expect_input_error([&] { c.get_int("n"); }, "/n", "got null");
  expect_input_error([&] { c.at("o").as_int_array(); }, "/o", "expected an array of integers, got object");
  expect_input_error([&] { c.at("s").get_int("x"); }, "/s", "expected an object");
}

TEST(JsonCursor, AcceptedScalarSpellings) {
  Json j = doc(R"({"i": 3.0, "neg": -4, "d": 7, "t": true, "f": false, "one": 1, "zero": 0})");
  Cursor c(j, "t.json");
  EXPECT_EQ(c.get_int("i"), 3);  // integral float
  EXPECT_EQ(c.get_int("neg"), -4);
  EXPECT_DOUBLE_EQ(c.get_double("d"), 7.0);
  EXPECT_TRUE(c.get_bool_like("t"));
  EXPECT_FALSE(c.get_bool_like("f"));
  EXPECT_TRUE(c.get_bool_like("one"));
  EXPECT_FALSE(c.get_bool_like("zero"));
  expect_input_error([&] { c.at("neg").as_int_in(0, 10); }, "/neg", "must be between 0 and 10");
}

TEST(JsonCursor, IntArrayLengthAndElementErrors) {
  Json j = doc(R"({"L": {"stride": [2, 2, 2], "pad": [1, "1"], "one": 5}})");
  Cursor l = Cursor(j, "m.json").at("L");
  std::string msg = expect_input_error([&] { l.get_int_array("stride", 2); }, "/L/stride", "expected 2 integers");
  EXPECT_EQ(msg, "m.json: /L/stride: expected 2 integers, got 3 elements");
  expect_input_error([&] { l.get_int_array("pad"); }, "/L/pad/1", "expected an integer");
  expect_input_error([&] { l.get_int_array("one", 2); }, "/L/one", "expected 2 integers, got integer 5");
  EXPECT_EQ(l.get_int_array("stride"), (std::vector<int64_t>{2, 2, 2}));
}

TEST(JsonCursor, OptionalFieldsAbsentOrNull) {
  Json j = doc(R"({"a": null, "b": 4, "c": [1, 2]})");
  Cursor c(j, "t.json");
  EXPECT_FALSE(c.optional_int("a").has_value());
  EXPECT_FALSE(c.optional_int("zz").has_value());
  EXPECT_EQ(c.optional_int("b").value(), 4);
  EXPECT_FALSE(c.optional_string("zz").has_value());
  EXPECT_FALSE(c.optional_double("a").has_value());
  EXPECT_FALSE(c.optional_bool_like("a").has_value());
  EXPECT_EQ(c.optional_int_array("c", 2).value(), (std::vector<int64_t>{1, 2}));
  expect_input_error([&] { c.optional_int_array("c", 3); }, "/c", "expected 3 integers");
  expect_input_error([&] { c.optional_string("b"); }, "/b", "expected a string");
  EXPECT_TRUE(c.has("a"));
  EXPECT_FALSE(c.has("zz"));
}

TEST(JsonCursor, ShapeLists) {
  Json j = doc(R"({"ok": [[1, 3, 224, 224], [64, 3, 7, 7]], "neg": [[1, -3]], "flat": [1, 2],
                  "huge": [[1048576, 1048576, 2]]})");
  Cursor c(j, "t.json");
  auto s = c.get_shape_list("ok");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1], (std::vector<int64_t>{64, 3, 7, 7}));
  expect_input_error([&] { c.get_shape_list("neg"); }, "/neg/0/1", "dimension must be >= 0");
  expect_input_error([&] { c.get_shape_list("flat"); }, "/flat/0", "expected a shape");
  // 2^20 * 2^20 * 2 = 2^41 elements, over the 2^40 bound.
  expect_input_error([&] { c.get_shape_list("huge"); }, "/huge/0", "more than 2^40 elements");
}

TEST(JsonCursor, KeysWithSlashAreEscapedInPointers) {
  Json j = doc(R"({"fc/w": {"k": "x"}})");
  Cursor c(j, "t.json");
  expect_input_error([&] { c.at("fc/w").get_int("k"); }, "/fc~1w/k", "expected an integer");
}

}  // namespace
}  // namespace npusim::json
