// Every class of bad Frontend IR gives an InputError naming the file and the JSON pointer.
// Most cases mutate the real ResNet-50 b4 file in memory.
#include <fstream>

#include <gtest/gtest.h>

#include "tests/unit/frontend_ir/frontend_ir_test_util.h"

namespace npusim::frontends {
namespace {

using json::Json;
using test::expect_input_error;
using test::kResNet50B4;


class FrontendIrErrors : public ::testing::Test {
 protected:
  static const Json& base() {
    static const Json d = json::read_json_file(test::frontend_ir_example(kResNet50B4));
    return d;
  }
  Json doc = base();
  // Parses `doc`; expects the error at `pointer` with `fragment` in the message.
  std::string expect_error(const std::string& pointer, const std::string& fragment) {
    return expect_input_error([&] { parse_frontend_ir(doc, kResNet50B4); }, pointer, fragment);
  }
};

TEST_F(FrontendIrErrors, UnmodifiedFileParses) { EXPECT_EQ(parse_frontend_ir(doc, kResNet50B4).layers.size(), 74u); }

TEST_F(FrontendIrErrors, MessageStartsWithFileAndPointer) {
  doc["Conv_0"]["stride"] = Json::array({2, 2, 2});
  std::string msg = expect_error("/Conv_0/stride", "expected 2 integers");
  EXPECT_EQ(msg, std::string(kResNet50B4) + ": /Conv_0/stride: expected 2 integers, got 3 elements");
}

TEST(FrontendIrFileErrors, MissingFile) {
  std::string path = ::testing::TempDir() + "does_not_exist/model.json";
  std::string msg = expect_input_error([&] { read_frontend_ir(path); }, "", "no such file");
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
}

TEST(FrontendIrFileErrors, MalformedJsonFile) {
  // Line 2 has 30 characters and the input ends there: the parser stops at column 31.
  std::string path = ::testing::TempDir() + "truncated_ir.json";
  std::ofstream(path) << "{\n  \"Conv_0\": {\"layer_index\": 1,";
  std::string msg = expect_input_error([&] { read_frontend_ir(path); }, "line 2, column 31", "malformed JSON");
  EXPECT_EQ(msg.rfind(path + ": line 2, column 31: ", 0), 0u) << msg;
}

TEST(FrontendIrFileErrors, RootMustBeANonEmptyObject) {
  expect_input_error([] { parse_frontend_ir(Json::array(), "x.json"); }, "", "expected an object of layers");
  expect_input_error([] { parse_frontend_ir(Json::object(), "x.json"); }, "", "no layers");
}

TEST_F(FrontendIrErrors, LayerMustBeAnObject) {
  doc["Conv_0"] = 5;
  expect_error("/Conv_0", "expected an object, got integer 5");
}

TEST_F(FrontendIrErrors, MissingField) {
  doc["Conv_0"].erase("operation");
  expect_error("/Conv_0/operation", "missing required field 'operation'");
}

TEST_F(FrontendIrErrors, MissingWindowFieldOfItsOperation) {
  doc["Conv_0"].erase("kernel_size");
  expect_error("/Conv_0/kernel_size", "missing required field");
  doc = base();
  doc["MaxPool_2_1"].erase("pool_size");
  expect_error("/MaxPool_2_1/pool_size", "missing required field");
}

TEST_F(FrontendIrErrors, MistypedFields) {
  doc["Conv_0"]["layer_index"] = "1";
  expect_error("/Conv_0/layer_index", "expected an integer, got string \"1\"");
  doc = base();
  doc["Conv_0"]["stride"] = Json::array({2, "2"});
  expect_error("/Conv_0/stride/1", "expected an integer");
  doc = base();
  doc["Conv_0"]["previous_layer"] = "src_quantize_1_1";
  expect_error("/Conv_0/previous_layer", "expected an array of strings");
  doc = base();
  doc["MaxPool_2_1"]["ceil_mode"] = "yes";
  expect_error("/MaxPool_2_1/ceil_mode", "expected true, false, 0 or 1");
  doc = base();
  doc["Conv_0"]["quant_info"]["output_scale"] = "big";
  expect_error("/Conv_0/quant_info/output_scale", "expected a number");
  doc = base();
  doc["MaxPool_2_1"]["module_list"]["post_cal"]["input_shape"] = Json::array({Json::array({4, "x"})});
  expect_error("/MaxPool_2_1/module_list/post_cal/input_shape/0/1", "expected an integer");
}

TEST_F(FrontendIrErrors, WrongArrayLengths) {
  doc["Conv_0"]["padding"] = Json::array({1, 1, 1});
  expect_error("/Conv_0/padding", "expected 4 integers");
  doc = base();
  doc["MaxPool_2_1"]["tensor0_lut"] = Json::array({1, 1});
  expect_error("/MaxPool_2_1/tensor0_lut", "expected 3 integers");
  doc = base();
  doc["Conv_0"]["input_dtype"] = Json::array({"int8"});
  expect_error("/Conv_0/input_dtype", "has 1 entry but input_shape has 2");
  doc = base();
  doc["Conv_0"]["previous_layer"] = Json::array({"src_quantize_1_1"});
  expect_error("/Conv_0/previous_layer", "has 1 entry but input_shape has 2");
  doc = base();
  doc["Conv_0"]["input_batchdim"] = Json::array({0, -1, 0});
  expect_error("/Conv_0/input_batchdim", "has 3 entries for 2 tensors");
}

TEST_F(FrontendIrErrors, ValuesOutOfRange) {
  doc["Conv_0"]["stride"] = Json::array({0, 2});
  expect_error("/Conv_0/stride/0", "must be between 1 and");
  doc = base();
  doc["Conv_0"]["input_batchdim"] = Json::array({4});
  expect_error("/Conv_0/input_batchdim/0", "must be between -1 and 3");
  doc = base();
  doc["MaxPool_2_1"]["tensor0_lut"] = Json::array({1, 2, 1});
  expect_error("/MaxPool_2_1/tensor0_lut/1", "must be between 0 and 1");
  doc = base();
  doc["Conv_0"]["output_shape"] = Json::array({Json::array({4, 0, 112, 112})});
  expect_error("/Conv_0/output_shape/0/1", "dimension must be >= 1");
}

TEST_F(FrontendIrErrors, UnknownOperation) {
  doc["Conv_0"]["operation"] = "conv3d";
  expect_error("/Conv_0/operation",
               "unknown operation 'conv3d'; valid: quantize, dequantize, conv2d, dense, max_pool2d, avg_pool2d, "
               "element_wise_add, reshape");
}

TEST_F(FrontendIrErrors, UnknownEnumsElsewhere) {
  doc["Conv_0"]["device"] = "gpu";
  expect_error("/Conv_0/device", "unknown device 'gpu'; valid: npu, cpu");
  doc = base();
  doc["Conv_0"]["quant_info"]["round_type"] = "nearest";
  expect_error("/Conv_0/quant_info/round_type", "unknown round_type 'nearest'");
  doc = base();
  doc["MaxPool_2_1"]["module_list"]["post_call"] = Json::object();
  expect_error("/MaxPool_2_1/module_list/post_call", "unknown module 'post_call'");
}

TEST_F(FrontendIrErrors, BadDtype) {
  doc["Conv_0"]["input_dtype"][1] = "int9";
  expect_error("/Conv_0/input_dtype/1", "unknown dtype 'int9'; valid: int8, uint8");
}

TEST_F(FrontendIrErrors, DuplicateLayerIndex) {
  doc["Conv_3"]["layer_index"] = 1;  // Conv_0's; Conv_0 comes first in the file
  expect_error("/Conv_3/layer_index", "duplicate layer_index 1, also used by 'Conv_0'");
}

TEST_F(FrontendIrErrors, NameDiffersFromKey) {
  doc["Conv_0"]["name"] = "Conv_X";
  expect_error("/Conv_0/name", "name 'Conv_X' differs from its key 'Conv_0'");
}

TEST_F(FrontendIrErrors, KeyWithSlashIsEscapedInThePointer) {
  Json conv = doc["Conv_0"];  // a copy: inserting may move the members
  doc["Conv/0"] = conv;       // its name stays "Conv_0"
  expect_error("/Conv~10/name", "differs from its key 'Conv/0'");
}

TEST_F(FrontendIrErrors, DanglingReferences) {
  doc["Conv_3"]["previous_layer"][0] = "Nope";
  expect_error("/Conv_3/previous_layer/0", "dangling reference: 'Nope'");
  doc = base();
  doc["Gemm_121_reshape_output0"]["next_layer"][0] = "result";
  expect_error("/Gemm_121_reshape_output0/next_layer/0", "dangling reference: 'result'");
}

TEST_F(FrontendIrErrors, OneSidedEdges) {
  // MaxPool_2_1 no longer lists Conv_8 as a consumer, but Conv_8 still reads it.
  doc["MaxPool_2_1"]["next_layer"] = Json::array({"Conv_3"});
  expect_error("/Conv_8/previous_layer/0", "'MaxPool_2_1' does not list 'Conv_8' in its next_layer");
  doc = base();
  doc["Conv_0"]["next_layer"].push_back("Conv_5");
  expect_error("/Conv_0/next_layer/1", "'Conv_5' does not list 'Conv_0' in its previous_layer");
}

TEST_F(FrontendIrErrors, Cycle) {
  // Conv_3 -> Conv_5 -> Conv_3, edges listed on both sides.
  doc["MaxPool_2_1"]["next_layer"] = Json::array({"Conv_8"});
  doc["Conv_3"]["previous_layer"][0] = "Conv_5";
  doc["Conv_5"]["next_layer"].push_back("Conv_3");
  expect_error("/Conv_3/previous_layer", "cycle: Conv_3 -> Conv_5 -> Conv_3");
}

TEST_F(FrontendIrErrors, LayerIndexNotTopological) {
  doc["Conv_3"]["layer_index"] = 5;
  doc["Conv_5"]["layer_index"] = 3;
  expect_error("/Conv_5/layer_index", "not a topological order: 'Conv_5' (layer_index 3) reads 'Conv_3' (layer_index 5)");
}

TEST_F(FrontendIrErrors, ConvOutputShape) {
  doc["Conv_0"]["output_shape"][0] = Json::array({4, 64, 111, 112});
  expect_error("/Conv_0/output_shape/0", "should be [4,64,112,112]");
  // Dilation 2: floor((224 + 6 - 2*6 - 1) / 2) + 1 = 109.
  doc = base();
  doc["Conv_0"]["dilation"] = Json::array({2, 2});
  expect_error("/Conv_0/output_shape/0", "should be [4,64,109,109]");
}

TEST_F(FrontendIrErrors, ConvWeightAndGroups) {
  doc["Conv_0"]["input_shape"][1] = Json::array({64, 4, 7, 7});
  expect_error("/Conv_0/input_shape/1", "must have C/groups = 3");
  doc = base();
  doc["Conv_0"]["kernel_size"] = Json::array({3, 3});
  expect_error("/Conv_0/kernel_size", "kernel_size 3x3 differs from the weight's 7x7");
  doc = base();
  doc["Conv_0"]["groups"] = 2;
  expect_error("/Conv_0/groups", "groups 2 does not divide the input channels 3");
  // Zero groups would divide by zero in the shape rule (a fuzz finding through TVM's reader).
  doc = base();
  doc["Conv_0"]["groups"] = 0;
  expect_error("/Conv_0/groups", "");
}

TEST_F(FrontendIrErrors, PoolCeilModeShape) {
  // ceil((112 + 2 - 3) / 2) + 1 = 57, and window 57 starts at 112 < 112 + 1: kept.
  doc["MaxPool_2_1"]["ceil_mode"] = 1;
  expect_error("/MaxPool_2_1/output_shape/0", "should be [4,64,57,57]");
}

TEST_F(FrontendIrErrors, EdgeShapeAndDtypeMustMatchProducer) {
  doc["MaxPool_2_1"]["ceil_mode"] = true;
  doc["MaxPool_2_1"]["output_shape"][0] = Json::array({4, 64, 57, 57});
  expect_error("/Conv_3/input_shape/0", "differs from the output [4,64,57,57] of its producer 'MaxPool_2_1'");
  doc = base();
  doc["Conv_3"]["input_dtype"][0] = "float16";
  expect_error("/Conv_3/input_dtype/0", "differs from the output dtype int8 of its producer 'MaxPool_2_1'");
}

TEST_F(FrontendIrErrors, ElementWiseMismatch) {
  doc["Add_9_1"]["input_shape"][1] = Json::array({4, 256, 28, 28});
  expect_error("/Add_9_1/input_shape/1", "neither equals the output [4,256,56,56]");
}

TEST_F(FrontendIrErrors, DenseMismatch) {
  doc["Gemm_121"]["input_shape"][1] = Json::array({1000, 1024, 1, 1});
  expect_error("/Gemm_121/input_shape/1", "must have C = 2048");
  doc = base();
  doc["Gemm_121"]["output_shape"][0] = Json::array({4, 999, 1, 1});
  expect_error("/Gemm_121/output_shape/0", "should be [4,1000] or [4,1000,1,1]");
}

TEST_F(FrontendIrErrors, QuantizeShapeMismatch) {
  doc["src_quantize_1_1"]["output_shape"][0] = Json::array({4, 3, 224, 225});
  expect_error("/src_quantize_1_1/output_shape/0", "must equal its input [4,3,224,224]");
}

TEST_F(FrontendIrErrors, ReshapeElementCount) {
  doc["Gemm_121_reshape_output0"]["output_shape"][0] = Json::array({4, 999});
  expect_error("/Gemm_121_reshape_output0/output_shape/0", "has 3996 elements but its input [4,1000,1,1] has 4000");
}

TEST_F(FrontendIrErrors, BatchDimensionInconsistent) {
  // Same element count, so only the batch check sees it.
  doc["Gemm_121_reshape_output0"]["output_shape"][0] = Json::array({2, 2000});
  expect_error("/Gemm_121_reshape_output0/output_shape/0", "is 2 but the graph's batch is 4");
}

TEST_F(FrontendIrErrors, UnknownExtraFieldsAreAccepted) {
  doc["Conv_0"]["my_new_field"] = {{"x", Json::array({1, 2})}};
  doc["Conv_0"]["quant_info"]["per_channel"] = false;
  doc["MaxPool_2_1"]["module_list"]["compare_group"]["extra_table"] = Json::array({1, 2, 3});
  ir::Graph g = parse_frontend_ir(doc, kResNet50B4);
  EXPECT_EQ(g.layers.size(), 74u);
  EXPECT_DOUBLE_EQ(g.find("Conv_0")->gemini.quant.output_scale.value(), 43.62298146446928);
}

}  // namespace
}  // namespace npusim::frontends
