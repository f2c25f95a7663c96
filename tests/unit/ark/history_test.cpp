// ARK files of May 2024 (docs/format_ark.md#format-history): tensors with "Pads" instead of
// "PaddedShape", plans with "WorldSize": 0, and the Args names ARK used before 2024-05-17 read
// exactly like the same files in the later form; what ARK refused stays refused. The files are
// under tests/data/ark_history/: one workload (Matmul -> Sigmoid -> ReduceSum) in each form.
#include <gtest/gtest.h>

#include "frontends/ark/ark_to_ir.h"
#include "frontends/frontend_ir/frontend_ir_writer.h"
#include "sim/report/gpu_report.h"
#include "tests/unit/ark/ark_test_util.h"

namespace npusim::frontends {
namespace {

using json::Json;
using test::expect_ark_error;

std::string history_file(const std::string& name) {
  return std::string(NPUSIM_SOURCE_DIR) + "/tests/data/ark_history/" + name;
}
Json history_doc(const std::string& name) { return json::read_json_file(history_file(name)); }

template <class F>
void for_each_tensor(const gpu::Program& p, F f) {
  for (const gpu::TaskInfo& t : p.task_infos)
    for (const gpu::Op& op : t.ops)
      for (const auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
        for (const gpu::Tensor& x : *list) f(x);
}

// Everything the simulator uses of a plan, as ARK's later file form.
std::string plan_text(const std::string& name) {
  return report::plan_to_json(read_ark_plan(history_file(name))).dump();
}

TEST(ArkHistory, PadsPlanReadsAsThePaddedShapePlan) {
  const gpu::Program p = read_ark_plan(history_file("plan_2024-05-18_pads.json"));
  int n = 0;
  for_each_tensor(p, [&](const gpu::Tensor& t) {
    EXPECT_EQ(t.padded_shape, t.shape) << t.pointer;
    ++n;
  });
  EXPECT_EQ(n, 10);
  // Pads [1,1,8] rounded the reduce output's row up to 8: Strides keeps that, the shape does not grow.
  const gpu::Tensor& r = p.task_infos.at(2).ops.at(0).write_tensors.at(0);
  EXPECT_EQ(r.strides, (gpu::Dims{1, 64, 8}));
  EXPECT_EQ(r.padded_shape, (gpu::Dims{1, 64, 1}));
  EXPECT_EQ(plan_text("plan_2024-05-18_pads.json"), plan_text("plan_paddedshape.json"));
}

TEST(ArkHistory, WorldSizeZeroPlanRunsAsOneProcess) {
  const gpu::Program p = read_ark_plan(history_file("plan_2024-05-16_worldsize0.json"));
  EXPECT_EQ(p.world_size, 1);
  EXPECT_EQ(p.rank, 0);
  // IsInputColumnMajor/IsOtherColumnMajor/KeepDims are stored under their later names.
  const gpu::Op& mm = p.task_infos.at(0).ops.at(0);
  ASSERT_TRUE(mm.matmul.has_value());
  EXPECT_FALSE(mm.matmul->transpose_input);
  EXPECT_TRUE(mm.matmul->transpose_other);
  EXPECT_EQ(mm.arg_bool("TransposeOther"), std::optional<bool>(true));
  EXPECT_EQ(mm.arg("IsOtherColumnMajor"), nullptr);
  EXPECT_EQ(p.task_infos.at(2).ops.at(0).arg_bool("KeepDim"), std::optional<bool>(true));
  EXPECT_EQ(plan_text("plan_2024-05-16_worldsize0.json"), plan_text("plan_paddedshape.json"));
}

TEST(ArkHistory, PadsModelReadsAsThePaddedShapeModel) {
  const gpu::Model old_model = read_ark_model(history_file("model_2024-05-18_pads.json"));
  for (const gpu::Node& node : old_model.nodes)
    for (const gpu::Op& op : node.ops)
      for (const auto* list : {&op.read_tensors, &op.write_tensors, &op.result_tensors})
        for (const gpu::Tensor& t : *list) EXPECT_EQ(t.padded_shape, t.shape) << t.pointer;
  const gpu::Model new_model = read_ark_model(history_file("model_paddedshape.json"));
  EXPECT_EQ(write_frontend_ir(ark_model_to_ir(old_model)).dump(), write_frontend_ir(ark_model_to_ir(new_model)).dump());
  // The model agrees with the plans of its day, the WorldSize-0 one included.
  EXPECT_NO_THROW(cross_check(old_model, read_ark_plan(history_file("plan_2024-05-16_worldsize0.json"))));
  EXPECT_NO_THROW(cross_check(old_model, read_ark_plan(history_file("plan_2024-05-18_pads.json"))));
}

// ---- what ARK refused stays refused ----

class ArkHistoryErrors : public ::testing::Test {
 protected:
  Json plan = history_doc("plan_2024-05-18_pads.json");
  Json ws0 = history_doc("plan_2024-05-16_worldsize0.json");
  Json model = history_doc("model_2024-05-18_pads.json");
  Json& reduce_out() { return plan["TaskInfos"][2]["Ops"][0]["WriteTensors"][0]; }
  static constexpr const char* kReduceOut = "/TaskInfos/2/Ops/0/WriteTensors/0";
  std::string plan_error(const Json& doc, const std::string& pointer, const std::string& fragment) {
    return expect_ark_error([&] { parse_ark_plan(doc, "plan.json"); }, pointer, fragment);
  }
};

TEST_F(ArkHistoryErrors, TensorWithNeitherPaddedShapeNorPads) {
  // ModelTensor::deserialize required one of them in every ARK of 2024.
  reduce_out().erase("Pads");
  const std::string msg = plan_error(plan, std::string(kReduceOut) + "/PaddedShape", "or 'Pads'");
  EXPECT_EQ(msg.rfind("plan.json: ", 0), 0u) << msg;
}

TEST_F(ArkHistoryErrors, PadsOfAnotherRank) {
  reduce_out()["Pads"] = Json::array({1, 8});
  plan_error(plan, std::string(kReduceOut) + "/Pads", "Pads has 2 dimensions but Shape has 3");
}

TEST_F(ArkHistoryErrors, PadsBelowOne) {
  reduce_out()["Pads"] = Json::array({1, 1, 0});  // ARK divided by it
  plan_error(plan, std::string(kReduceOut) + "/Pads/2", "pad must be >= 1, got 0");
  reduce_out()["Pads"] = Json::array({1, -1, 8});
  plan_error(plan, std::string(kReduceOut) + "/Pads/1", "pad must be >= 1, got -1");
}

TEST_F(ArkHistoryErrors, StridesNotAMultipleOfPads) {
  reduce_out()["Pads"] = Json::array({1, 1, 3});  // Strides [1,64,8]
  plan_error(plan, std::string(kReduceOut) + "/Strides/2", "is not a multiple of Pads [1,1,3]");
}

TEST_F(ArkHistoryErrors, PadsTensorOutsideItsBuffer) {
  reduce_out()["Offsets"] = Json::array({0, 0, 8});  // Offsets + Shape > Strides, as ARK checked
  plan_error(plan, std::string(kReduceOut) + "/Strides/2", "exceed Strides [1,64,8]");
}

TEST_F(ArkHistoryErrors, WorldSizeZeroNeedsRankZero) {
  ws0["Rank"] = 1;
  plan_error(ws0, "/Rank", "single process");
}

TEST_F(ArkHistoryErrors, WorldSizeZeroHasNoPeers) {
  // Without channels ARK could not compile communication; a remote buffer is out of range.
  ws0["TaskInfos"][0]["Ops"][0]["ReadTensors"][0]["Buffer"]["Rank"] = 1;
  plan_error(ws0, "/TaskInfos/0/Ops/0/ReadTensors/0/Buffer/Rank", "between -1 and 0");
}

TEST_F(ArkHistoryErrors, OtherWorldSizesStayRefused) {
  ws0["WorldSize"] = -1;
  plan_error(ws0, "/WorldSize", "between 1 and");
  ws0["WorldSize"] = 0.0;  // not the integer 0 ARK wrote
  plan_error(ws0, "/WorldSize", "");
  ws0.erase("WorldSize");
  plan_error(ws0, "/WorldSize", "missing required field 'WorldSize'");
}

TEST_F(ArkHistoryErrors, WorldSizeZeroModelStaysRefused) {
  // No ARK model file had 0: Rank and WorldSize entered it with the copy fix (b1d73e57).
  model["WorldSize"] = 0;
  expect_ark_error([&] { parse_ark_model(model, "model.json"); }, "/WorldSize", "between 1 and");
}

TEST_F(ArkHistoryErrors, OldArgNameOfTheWrongType) {
  ws0["TaskInfos"][0]["Ops"][0]["Args"]["IsInputColumnMajor"] = Json{{"INT", 1}};
  plan_error(ws0, "/TaskInfos/0/Ops/0/Args/IsInputColumnMajor", "must be BOOL, got INT");
}

TEST_F(ArkHistoryErrors, OldAndNewArgNamesMustAgree) {
  Json& args = ws0["TaskInfos"][0]["Ops"][0]["Args"];
  args["TransposeOther"] = Json{{"BOOL", true}};  // same as IsOtherColumnMajor: fine
  EXPECT_TRUE(parse_ark_plan(ws0, "plan.json").task_infos[0].ops[0].matmul->transpose_other);
  args["TransposeOther"] = Json{{"BOOL", false}};
  plan_error(ws0, "/TaskInfos/0/Ops/0/Args/IsOtherColumnMajor", "disagrees with 'TransposeOther'");
}

}  // namespace
}  // namespace npusim::frontends
