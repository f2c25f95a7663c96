// safetensors parameter files: a good file, and every malformed case as an InputError naming the
// file and the byte offset or the tensor.
#include <gtest/gtest.h>

#include "sim/ir/system.h"

#include "frontends/pipeline/safetensors.h"
#include "tests/unit/pipeline/pipeline_test_util.h"

namespace npusim::frontends::pipeline {
namespace {

using test::expect_input_error;
using test::safetensors_of;
using test::safetensors_raw;
using test::StEntry;

SafetensorsFile parse(const std::string& bytes) {
  return parse_safetensors(bytes, static_cast<int64_t>(bytes.size()), "p.safetensors");
}

TEST(Safetensors, GoodFile) {
  test::Scratch s;
  const std::string bytes = safetensors_of({{"w", "F32", {2, 3}, 0, 24}, {"b", "BF16", {3}, 24, 30}, {"e", "I64", {0}, 30, 30}},
                                           30, {{"format", "pt"}, {"alias", "w"}});
  test::spit(s.path("p.safetensors"), bytes);
  const SafetensorsFile f = read_safetensors(s.path("p.safetensors"));
  EXPECT_EQ(f.file_size, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(f.data_offset, 8 + f.header_size);
  ASSERT_EQ(f.tensors.size(), 3u);
  const SafetensorsTensor* w = f.find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, (ir::Shape{2, 3}));
  EXPECT_EQ(w->dtype, "F32");
  EXPECT_EQ(w->file_offset, f.data_offset);
  EXPECT_EQ(f.find("b")->file_offset, f.data_offset + 24);
  EXPECT_EQ(f.find("alias"), w);  // a shared tensor named through __metadata__
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_EQ(f.metadata.at("format"), "pt");
  EXPECT_EQ(read_safetensors_data(f, "b").size(), 6u);
  EXPECT_EQ(safetensors_dtype_bytes("BF16"), 2);
  EXPECT_EQ(safetensors_ir_dtype("F8_E4M3"), ir::DType::Float8E4M3);
  EXPECT_EQ(safetensors_ir_dtype("F8_E5M2"), ir::DType::Float8E5M2);
  EXPECT_FALSE(safetensors_dtype_bytes("F4"));
}

// The spec's "f8" names no variant: E4M3, the one inference runtimes store; one byte either way.
TEST(PipelineDtypes, F8IsFloat8E4M3) {
  EXPECT_EQ(ir::parse_pipeline_dtype("f8"), ir::DType::Float8E4M3);
  EXPECT_EQ(ir::dtype_bytes(*ir::parse_pipeline_dtype("f8")), 1);
  EXPECT_EQ(ir::parse_pipeline_dtype("u8"), ir::DType::UInt8);
}

TEST(Safetensors, TheCommittedExampleFilesRead) {
  for (const char* f : {"tp2_mlp.safetensors", "pp4_transformer.safetensors", "ag_rs8_layer.safetensors"}) {
    const SafetensorsFile st = read_safetensors(test::example_pipeline(f));
    EXPECT_FALSE(st.tensors.empty()) << f;
    EXPECT_EQ(st.header_size % 8, 0) << f;  // padded with spaces, as the reference writer does
  }
}

TEST(Safetensors, TooShortOrHeaderLengthBeyondTheFile) {
  expect_input_error([] { parse("abc"); }, "byte 0", "starts with an 8-byte header length");
  // Header length 1000 in a 40-byte file.
  const std::string b = test::u64le(1000) + std::string(32, ' ');
  std::string msg = expect_input_error([&] { parse(b); }, "byte 0", "header length 1000 runs past the end of the file (40 bytes");
  EXPECT_EQ(msg.rfind("p.safetensors: byte 0: ", 0), 0u) << msg;
  // The same from a real file: only the 8 bytes are read.
  test::Scratch s;
  test::spit(s.path("x.safetensors"), b);
  expect_input_error([&] { read_safetensors(s.path("x.safetensors")); }, "byte 0", "runs past the end");
  // Above the format's 100 MB header limit (the file is not that large, so it runs past first;
  // build a sparse file to reach the limit check).
  const std::string big = s.path("big.safetensors");
  {
    std::ofstream out(big, std::ios::binary);
    out << test::u64le(200'000'000);
    out.seekp(200'000'100);
    out.put('\0');
  }
  expect_input_error([&] { read_safetensors(big); }, "byte 0", "exceeds the format's limit");
  expect_input_error([&] { read_safetensors(s.path("missing.safetensors")); }, "", "cannot open: no such file");
}

TEST(Safetensors, BadJson) {
  // The error names the byte of the file where the JSON breaks: 8 + its offset in the header.
  std::string msg = expect_input_error([] { parse(safetensors_raw("{\"w\": {\"dtype\": }", 0)); }, "byte 24", "malformed JSON");
  expect_input_error([] { parse(safetensors_raw("[1, 2]", 0)); }, "byte 8", "does not start with '{'");
  expect_input_error([] { parse(safetensors_raw("{\"w\": 3}", 0)); }, "/w", "expected an object");
  expect_input_error([] { parse(safetensors_raw("{\"w\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4)); }, "/w/data_offsets",
                     "missing required field 'data_offsets'");
  expect_input_error([] { parse(safetensors_raw("{\"w\": {\"dtype\": \"Q7\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4)); },
                     "/w/dtype", "tensor 'w': unknown dtype 'Q7'");
  expect_input_error([] { parse(safetensors_raw("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, "
                                                "\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", 8)); },
                     "/w", "duplicate key");
  expect_input_error([] { parse(safetensors_raw("{\"__metadata__\": {\"a\": 1}}", 0)); }, "/__metadata__/a", "expected a string");
}

TEST(Safetensors, OffsetsOutsideTheData) {
  std::string msg = expect_input_error([] { parse(safetensors_of({{"w", "F32", {1024}, 0, 4096}}, 2048)); }, "/w/data_offsets",
                                       "tensor 'w': data_offsets [0, 4096] end past the data section, which has 2048 bytes");
  EXPECT_NE(msg.find("from byte "), std::string::npos) << msg;
  expect_input_error([] { parse(safetensors_of({{"w", "F32", {1}, -4, 0}}, 4)); }, "/w/data_offsets", "negative");
}

TEST(Safetensors, OverlappingUnorderedOrHoles) {
  expect_input_error([] { parse(safetensors_of({{"a", "F32", {2}, 0, 8}, {"b", "F32", {2}, 4, 12}}, 12)); }, "/b/data_offsets",
                     "tensor 'b': data_offsets [4, 12] overlap tensor 'a' [0, 8]");
  expect_input_error([] { parse(safetensors_of({{"a", "F32", {2}, 8, 0}}, 8)); }, "/a/data_offsets",
                     "out of order (begin > end)");
  expect_input_error([] { parse(safetensors_of({{"a", "F32", {1}, 0, 4}, {"b", "F32", {1}, 8, 12}}, 12)); }, "/b/data_offsets",
                     "leave bytes [4, 8) of the data section to no tensor");
  // Trailing data no tensor covers.
  const std::string b = safetensors_of({{"a", "F32", {1}, 0, 4}}, 10);
  expect_input_error([&] { parse(b); }, "byte " + std::to_string(b.size() - 6), "cover only 4");
}

TEST(Safetensors, SizeDisagreesWithDtypeAndShape) {
  expect_input_error([] { parse(safetensors_of({{"w", "F32", {2, 3}, 0, 20}}, 20)); }, "/w/data_offsets",
                     "tensor 'w': shape [2,3] of F32 needs 24 bytes but data_offsets [0, 20] hold 20");
  expect_input_error([] { parse(safetensors_of({{"w", "BF16", {4}, 0, 16}}, 16)); }, "/w/data_offsets", "needs 8 bytes");
}

}  // namespace
}  // namespace npusim::frontends::pipeline
