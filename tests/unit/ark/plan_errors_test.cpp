// Every class of bad plan gives an InputError naming the file and the JSON pointer. Each case
// mutates an in-memory copy of a real plan.
#include <gtest/gtest.h>

#include "tests/unit/ark/ark_test_util.h"

namespace npusim::frontends {
namespace {

using json::Json;
using test::expect_ark_error;

class ArkPlanErrors : public ::testing::Test {
 protected:
  // tutorial/default_plan.json: 6 TaskInfos, one op each; PG i runs TaskId i on [0,108).
  Json doc = test::ark_doc("tutorial/default_plan.json");
  Json& rg0() { return doc["ProcessorGroups"][0]["ResourceGroups"][0]; }
  std::string expect_error(const std::string& pointer, const std::string& fragment) {
    return expect_ark_error([&] { parse_ark_plan(doc, "plan.json"); }, pointer, fragment);
  }
};

TEST_F(ArkPlanErrors, UnmodifiedParses) { EXPECT_EQ(parse_ark_plan(doc, "plan.json").task_infos.size(), 6u); }

TEST_F(ArkPlanErrors, MessageStartsWithFileAndPointer) {
  rg0()["TaskGroups"][0]["TaskRange"] = Json::array({0, 173});
  std::string msg = expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskRange", "[0, 172)");
  EXPECT_EQ(msg.rfind("plan.json: /ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskRange: TaskRange [0,173]", 0), 0u)
      << msg;
}

TEST_F(ArkPlanErrors, TaskRangeAtTheBoundary) {
  rg0()["TaskGroups"][0]["TaskRange"] = Json::array({171, 172});  // last task 171 < 172: fine
  EXPECT_NO_THROW(parse_ark_plan(doc, "plan.json"));
  rg0()["TaskGroups"][0]["TaskRange"] = Json::array({172, 174});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskRange", "must lie within [0, 172)");
}

TEST_F(ArkPlanErrors, TasksOfOneTaskInfoShareNumTasks) {
  // Fuse the Mul of TaskInfo 2 into TaskInfo 1 with a different NumTasks.
  Json mul = doc["TaskInfos"][2]["Ops"][0];
  mul["Config"]["NumTasks"] = 100;
  doc["TaskInfos"][1]["Ops"].push_back(mul);
  expect_error("/TaskInfos/1/Ops/1/Config/NumTasks", "differs from 88064 of /TaskInfos/1/Ops/0");
}

TEST_F(ArkPlanErrors, OpNeedsMoreWarpsThanItsTask) {
  doc["TaskInfos"][1]["Ops"][0]["Config"]["NumWarps"] = 2;  // TaskInfo 1 has NumWarps 1
  expect_error("/TaskInfos/1/Ops/0/Config/NumWarps", "TaskInfo has NumWarps 1");
}

TEST_F(ArkPlanErrors, TaskWarpsAboveWarpsPerProcessor) {
  doc["TaskInfos"][0]["NumWarps"] = 16;  // NumWarpsPerProcessor 8
  expect_error("/TaskInfos/0/NumWarps", "exceeds NumWarpsPerProcessor 8");
}

TEST_F(ArkPlanErrors, WarpRangeAboveWarpsPerProcessor) {
  rg0()["WarpRange"] = Json::array({0, 9});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/WarpRange", "exceeds NumWarpsPerProcessor 8");
}

TEST_F(ArkPlanErrors, ProcessorRangeWithinNumProcessors) {
  doc["ProcessorGroups"][0]["ProcessorRange"] = Json::array({0, 109});
  expect_error("/ProcessorGroups/0/ProcessorRange", "exceeds NumProcessors 108");
}

TEST_F(ArkPlanErrors, ResourceGroupWithinItsProcessorGroup) {
  doc["ProcessorGroups"][0]["ProcessorRange"] = Json::array({0, 64});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/ProcessorRange", "processor 64 of [0,108] is not in");
}

TEST_F(ArkPlanErrors, ZeroSlots) {
  // The Matmul task needs 147456 bytes; give it one byte less.
  rg0()["SramRange"] = Json::array({0, 147455});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0", "no slot for TaskId 0");
  rg0()["SramRange"] = Json::array({0, 147456});
  rg0()["WarpRange"] = Json::array({0, 7});  // 8 warps needed
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0", "7 warps (WarpRange [0,7])");
}

TEST_F(ArkPlanErrors, UnknownTaskId) {
  rg0()["TaskGroups"][0]["TaskId"] = 99;
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskId", "unknown TaskId 99 (TaskInfo ids: 0, 1, 2, 3, 4, 5)");
}

TEST_F(ArkPlanErrors, UnknownOpTypeListsValidOnes) {
  doc["TaskInfos"][0]["Ops"][0]["Type"] = "MatMul";
  std::string msg = expect_error("/TaskInfos/0/Ops/0/Type", "unknown op type 'MatMul'");
  EXPECT_NE(msg.find("Add, Cast, Copy"), std::string::npos) << msg;
  EXPECT_NE(msg.find("RecvReduceSend, DeviceSync"), std::string::npos) << msg;
}

TEST_F(ArkPlanErrors, MalformedRanges) {
  Json& r = rg0()["WarpRange"];
  r = Json::array({0});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/WarpRange", "got 1 elements");
  r = Json::array({0, 8, 1, 1});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/WarpRange", "got 4 elements");
  r = "0:8";
  expect_error("/ProcessorGroups/0/ResourceGroups/0/WarpRange", "expected a range [begin, end] or [begin, end, step], got string");
  r = Json::array({0, 8, 0});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/WarpRange", "step 0, must be >= 1");
  r = Json::array({4, 4});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/WarpRange", "is empty");
  r = Json::array({0, 8});
  rg0()["TaskGroups"][0]["TaskRange"] = Json::array({5, 2});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskRange", "ends before it begins");
  rg0()["TaskGroups"][0]["TaskRange"] = Json::array({-1, 2});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskRange", "begins below 0");
  rg0()["TaskGroups"][0]["TaskRange"] = Json::array({0, 2.5});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskRange/1", "expected an integer");
}

TEST_F(ArkPlanErrors, SramRangeStepMustBeOne) {
  rg0()["SramRange"] = Json::array({0, 147456, 2});
  expect_error("/ProcessorGroups/0/ResourceGroups/0/SramRange", "must have step 1");
}

TEST_F(ArkPlanErrors, GranularityPositive) {
  rg0()["TaskGroups"][0]["Granularity"] = 0;
  expect_error("/ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/Granularity", "between 1 and");
}

TEST_F(ArkPlanErrors, DuplicateTaskInfoId) {
  doc["TaskInfos"][1]["Id"] = 0;
  expect_error("/TaskInfos/1/Id", "duplicate TaskInfo Id 0 (also at /TaskInfos/0)");
}

TEST_F(ArkPlanErrors, MissingConfigAndFields) {
  doc["TaskInfos"][0]["Ops"][0].erase("Config");
  expect_error("/TaskInfos/0/Ops/0/Config", "missing required field 'Config'");
  doc = test::ark_doc("tutorial/default_plan.json");
  doc["TaskInfos"][0]["Ops"][0]["Config"].erase("NumTasks");
  expect_error("/TaskInfos/0/Ops/0/Config/NumTasks", "missing required field 'NumTasks'");
  doc = test::ark_doc("tutorial/default_plan.json");
  doc.erase("NumWarpsPerProcessor");
  expect_error("/NumWarpsPerProcessor", "missing required field");
}

TEST_F(ArkPlanErrors, TensorFields) {
  Json& t = doc["TaskInfos"][0]["Ops"][0]["ReadTensors"][0];  // [1,512,4096] FP16
  const Json orig = t;
  t["DataType"] = "FP64";
  std::string msg = expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/DataType", "unknown DataType 'FP64'");
  EXPECT_NE(msg.find("FP32, FP16, BF16, INT32, UINT32, INT8, UINT8, BYTE"), std::string::npos) << msg;
  t = orig;
  t["Offsets"] = Json::array({0, 1, 0});  // 1 + 512 > 512
  expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/Strides/1", "exceed Strides [1,512,4096]");
  t = orig;
  t["PaddedShape"] = Json::array({1, 511, 4096});
  expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/PaddedShape/1", "smaller than Shape");
  t = orig;
  t["Strides"] = Json::array({512, 4096});
  expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/Strides", "2 dimensions but Shape has 3");
  t = orig;
  t["Shape"] = Json::array({1, 1, 1, 512, 4096});
  expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/Shape", "1 to 4 dimensions, got 5");
}

TEST_F(ArkPlanErrors, BufferAppearancesMustAgree) {
  // Tensor 5 (buffer 4) is written by TaskInfo 0 and read by TaskInfo 1.
  doc["TaskInfos"][1]["Ops"][0]["ReadTensors"][0]["Buffer"]["Rank"] = 0;
  expect_error("/TaskInfos/1/Ops/0/ReadTensors/0/Buffer/Rank",
               "buffer 4 has Rank 0 here but -1 at /TaskInfos/0/Ops/0/WriteTensors/0/Buffer");
}

TEST_F(ArkPlanErrors, BufferRankAndTags) {
  Json& b = doc["TaskInfos"][0]["Ops"][0]["ReadTensors"][0]["Buffer"];
  b["Rank"] = 1;  // WorldSize 1
  expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/Buffer/Rank", "between -1 and 0");
  b["Rank"] = -1;
  b["SendTags"] = Json::array({Json::array({0})});
  expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/Buffer/SendTags/0", "expected 2 integers, got 1 elements");
  b["SendTags"] = Json::array({Json::array({0, 4294967296LL})});
  expect_error("/TaskInfos/0/Ops/0/ReadTensors/0/Buffer/SendTags/0/1", "must be between -2147483648 and 2147483647");
}

}  // namespace
}  // namespace npusim::frontends
