// The workload reader registry (frontends/registry/registry.h): sniffing each format from the
// content, forced formats, and the errors for unknown names, unrecognised, empty, missing and
// directory inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontends/registry/registry.h"
#include "tests/unit/expect_input_error.h"

namespace npusim::frontends {
namespace {

using test::expect_input_error;

std::string examples() { return std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/"; }
std::string frontend_ir_file() { return examples() + "frontend_ir/int8_resnet50.sim_quantized_b1.json"; }
std::string ark_model_file() { return examples() + "ark/tutorial_v2/model.json"; }
std::string ark_model_v1_file() { return examples() + "ark/tutorial/model.json"; }
std::string ark_plan_file() { return examples() + "ark/tutorial/plan.json"; }

// A scratch file with the given content; the extension is deliberately not .json.
std::string temp_file(const std::string& name, const std::string& text) {
  const std::string p = ::testing::TempDir() + "/registry_" + name + ".txt";
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

TEST(Registry, RegistersFrontendIrAndArkModel) {
  ASSERT_GE(workload_readers().size(), 2u);
  EXPECT_EQ(workload_readers()[0].name, "frontend_ir");
  EXPECT_EQ(workload_readers()[1].name, "ark_model");
  for (const WorkloadReader& r : workload_readers()) {
    EXPECT_FALSE(r.description.empty()) << r.name;
    EXPECT_TRUE(r.sniff) << r.name;
    EXPECT_TRUE(r.read) << r.name;
  }
  EXPECT_EQ(workload_format_names(), "frontend_ir, ark_model, onnx, tvm_mlf, pipeline");
  EXPECT_NE(find_workload_reader("ark_model"), nullptr);
  EXPECT_EQ(find_workload_reader("caffe"), nullptr);
  EXPECT_THROW(register_workload_reader({"ark_model", "again", nullptr, nullptr}), InternalError);
}

TEST(Registry, SniffsEachFormatFromTheContent) {
  EXPECT_EQ(sniff_workload(WorkloadSource(frontend_ir_file())), "frontend_ir");
  EXPECT_EQ(sniff_workload(WorkloadSource(ark_model_file())), "ark_model");
  EXPECT_EQ(sniff_workload(WorkloadSource(ark_model_v1_file())), "ark_model");
  EXPECT_EQ(sniff_workload(WorkloadSource(ark_plan_file())), "");
  // The content decides, not the name.
  EXPECT_EQ(sniff_workload(WorkloadSource("x.onnx", R"({"conv": {"layer_index": 0}})")), "frontend_ir");
  EXPECT_EQ(sniff_workload(WorkloadSource("x.json", R"(  {"conv": {"operation": "conv2d"}})")), "frontend_ir");
  EXPECT_EQ(sniff_workload(WorkloadSource("x.yaml", R"({"Rank": 0, "Nodes": []})")), "ark_model");
  EXPECT_EQ(sniff_workload(WorkloadSource("x.json", R"({"conv": {"name": "conv"}})")), "");
  EXPECT_EQ(sniff_workload(WorkloadSource("x.json", R"([{"operation": "conv2d"}])")), "");
  EXPECT_EQ(sniff_workload(WorkloadSource("x.json", "ONNX\x08\x01")), "");
  EXPECT_EQ(sniff_workload(WorkloadSource("x.json", "{ broken")), "");
  EXPECT_EQ(sniff_workload(WorkloadSource(std::string(NPUSIM_SOURCE_DIR) + "/examples/pipelines/tp2_mlp.json")), "pipeline");
  EXPECT_EQ(sniff_workload(WorkloadSource(std::string(NPUSIM_SOURCE_DIR) + "/tests/data/tvm_mlf/v6.tar.gz")), "tvm_mlf");
}

TEST(Registry, TvmFoldersAndModulesAndPipelinesGoWhereTheyBelong) {
  const std::string data = std::string(NPUSIM_SOURCE_DIR) + "/tests/data/tvm_mlf/";
  EXPECT_EQ(read_workload(data + "v5").format, "tvm_mlf");  // a folder
  EXPECT_EQ(read_workload(data + "v6.tar.gz").format, "tvm_mlf");
  expect_input_error([&] { read_workload(frontend_ir_file(), "", "cnn"); }, "cnn", "only TVM Model Library Format archives have modules");
  expect_input_error([&] { read_workload(std::string(NPUSIM_SOURCE_DIR) + "/examples/pipelines/tp2_mlp.json"); }, "",
                     "multi-device pipeline");
}

TEST(Registry, ReadsAValidatedGraphOfEachFormat) {
  const ir::Graph fir = read_workload(frontend_ir_file());
  EXPECT_EQ(fir.format, "frontend_ir");
  EXPECT_EQ(fir.source, frontend_ir_file());
  EXPECT_GT(fir.layers.size(), 50u);
  EXPECT_NO_THROW(ir::validate(fir));
  const ir::Graph ark = read_workload(ark_model_file());
  EXPECT_EQ(ark.format, "ark_model");
  EXPECT_EQ(ark.name, "model");
  EXPECT_EQ(ark.layers.size(), 6u);
  EXPECT_EQ(ark.layers[0].op, ir::OpKind::MatMul);
  EXPECT_NO_THROW(ir::validate(ark));
  // A file whose name says nothing about its format.
  std::ifstream in(ark_model_v1_file());
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(read_workload(temp_file("ark_no_ext", ss.str())).format, "ark_model");
}

TEST(Registry, AForcedFormatSkipsSniffing) {
  EXPECT_EQ(read_workload(ark_model_file(), "ark_model").format, "ark_model");
  EXPECT_EQ(read_workload(frontend_ir_file(), "frontend_ir").format, "frontend_ir");
  // The forced reader reports what it finds, as file + JSON pointer.
  std::string msg = expect_input_error([&] { read_workload(frontend_ir_file(), "ark_model"); }, "/WorldSize",
                                       "missing required field 'WorldSize'");
  EXPECT_EQ(msg.rfind(frontend_ir_file(), 0), 0u) << msg;
  expect_input_error([&] { read_workload(ark_model_file(), "frontend_ir"); }, "/Rank", "");
}

TEST(Registry, AnUnknownFormatNameListsTheNames) {
  std::string msg = expect_input_error([&] { read_workload(ark_model_file(), "caffe"); }, "caffe",
                                       "unknown workload format; valid: frontend_ir, ark_model, onnx, tvm_mlf, pipeline");
  EXPECT_EQ(msg.rfind("--format", 0), 0u) << msg;
  // Before the file is even opened.
  expect_input_error([&] { read_workload("/nonexistent/x.json", "tvm"); }, "tvm", "unknown workload format");
}

TEST(Registry, UnrecognisedContentListsWhatWasTried) {
  for (const std::string text : {R"({"a": 1})", "[1, 2, 3]", "hello world\n", "\x89PNG\r\n"}) {
    const std::string p = temp_file("unknown", text);
    try {
      read_workload(p);
      ADD_FAILURE() << "no error for " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), p);
      EXPECT_EQ(e.where(), "");
      EXPECT_NE(e.detail().find("not a workload format npusim reads; tried: frontend_ir ("), std::string::npos) << e.what();
      EXPECT_NE(e.detail().find("), ark_model ("), std::string::npos) << e.what();
    }
  }
  // An ARK plan gets a hint.
  expect_input_error([&] { read_workload(ark_plan_file()); }, "", "run plans with --plan");
}

TEST(Registry, BrokenJsonReportsItsSyntaxError) {
  const std::string p = temp_file("broken", "{\n  \"conv\": {\"layer_index\": 0,,}\n}");
  try {
    read_workload(p);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().rfind("line 2, column ", 0), 0u) << e.what();
    EXPECT_NE(e.detail().find("malformed JSON"), std::string::npos) << e.what();
  }
}

TEST(Registry, EmptyMissingAndDirectoryInputs) {
  for (const std::string text : {"", "  \n\t\n"})
    expect_input_error([&] { read_workload(temp_file("empty", text)); }, "",
                       "empty, so not a workload format npusim reads; tried: frontend_ir");
  expect_input_error([&] { read_workload(temp_file("empty", ""), "frontend_ir"); }, "", "empty file");
  std::string msg = expect_input_error([&] { read_workload("/nonexistent/model.json"); }, "", "cannot open: no such file");
  EXPECT_EQ(msg.rfind("/nonexistent/model.json", 0), 0u) << msg;
  expect_input_error([&] { read_workload(::testing::TempDir()); }, "", "is a directory");
}

}  // namespace
}  // namespace npusim::frontends
