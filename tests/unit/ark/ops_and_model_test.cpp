// Op arguments (typed Args, Factor vs Value, Matmul derivation), model nodes (Op vs Ops,
// producer/consumer links) and ranges with a step, on mutated copies of real files.
#include <gtest/gtest.h>

#include "tests/unit/ark/ark_test_util.h"

namespace npusim::frontends {
namespace {

using json::Json;
using test::expect_ark_error;

// llama plan TaskInfo 15 (index 6): Matmul then ScalarMul with {"Factor": {"FLOAT": ...}}.
class ArkArgs : public ::testing::Test {
 protected:
  Json doc = test::ark_doc("llama/plan_llama2_7b_b1_s2048.json");
  Json& scalar_mul() { return doc["TaskInfos"][6]["Ops"][1]; }
  Json& matmul() { return doc["TaskInfos"][6]["Ops"][0]; }
  gpu::Program parse() { return parse_ark_plan(doc, "llama.json"); }
  std::string expect_error(const std::string& pointer, const std::string& fragment) {
    return expect_ark_error([&] { parse(); }, pointer, fragment);
  }
};

TEST_F(ArkArgs, ScalarMulTakesFactorOrValue) {
  EXPECT_DOUBLE_EQ(*parse().task_infos[6].ops[1].scalar, 0.0883883461356163);
  // The doc's spelling is accepted too.
  scalar_mul()["Args"] = Json{{"Value", {{"FLOAT", 2.5}}}};
  EXPECT_DOUBLE_EQ(*parse().task_infos[6].ops[1].scalar, 2.5);
  scalar_mul()["Args"] = Json::object();
  expect_error("/TaskInfos/6/Ops/1/Args", "ScalarMul needs argument 'Factor' (or 'Value') of type FLOAT");
  scalar_mul()["Args"] = Json{{"Factor", {{"INT", 2}}}};
  expect_error("/TaskInfos/6/Ops/1/Args/Factor", "must be FLOAT, got INT");
}

TEST_F(ArkArgs, TypedArgFormat) {
  scalar_mul()["Args"] = Json{{"Factor", {{"DOUBLE", 2.5}}}};
  std::string msg = expect_error("/TaskInfos/6/Ops/1/Args/Factor/DOUBLE", "unknown argument type 'DOUBLE'");
  EXPECT_NE(msg.find("INT, INT64, UINT64, UINT32, BOOL, FLOAT, DIMS, TENSOR, OFFSET"), std::string::npos);
  scalar_mul()["Args"] = Json{{"Factor", {{"FLOAT", 2.5}, {"INT", 2}}}};
  expect_error("/TaskInfos/6/Ops/1/Args/Factor", "expected one {TYPE: value} member, got 2");
  scalar_mul()["Args"] = Json{{"Factor", 2.5}};
  expect_error("/TaskInfos/6/Ops/1/Args/Factor", "expected an object");
  scalar_mul()["Args"] = Json{{"Factor", {{"FLOAT", 1.0}}}, {"X", {{"UINT32", -1}}}};
  expect_error("/TaskInfos/6/Ops/1/Args/X/UINT32", "between 0 and 4294967295");
  scalar_mul()["Args"] = Json{{"Factor", {{"FLOAT", 1.0}}}, {"X", {{"DIMS", {1, 2, 3, 4, 5}}}}};
  expect_error("/TaskInfos/6/Ops/1/Args/X/DIMS", "at most 4 integers, got 5");
}

TEST_F(ArkArgs, EveryArgTypeParses) {
  scalar_mul()["Args"] = Json{{"Factor", {{"FLOAT", 1.0}}},
                              {"I64", {{"INT64", 1LL << 40}}},
                              {"U64", {{"UINT64", 18446744073709551615ULL}}},
                              {"D", {{"DIMS", {1, 2}}}},
                              {"O", {{"OFFSET", {{"BufferId", 3}, {"Value", 64}}}}},
                              {"T", {{"TENSOR", doc["TaskInfos"][6]["Ops"][1]["ReadTensors"][0]}}}};
  gpu::Op op = parse().task_infos[6].ops[1];
  EXPECT_EQ(op.arg_int("I64"), 1LL << 40);
  EXPECT_EQ(op.arg("U64")->uint_value, 18446744073709551615ULL);
  EXPECT_EQ(op.arg_dims("D"), (gpu::Dims{1, 2}));
  EXPECT_EQ(op.arg("O")->offset_buffer_id, 3);
  EXPECT_EQ(op.arg("O")->offset_value, 64);
  ASSERT_TRUE(op.arg("T")->tensor);
  EXPECT_EQ(op.arg("T")->tensor->shape, (gpu::Dims{1, 32, 2048, 2048}));
  EXPECT_EQ(op.arg_bool("D"), std::nullopt);  // wrong type asked: nothing
}

TEST_F(ArkArgs, MatmulShapesMustAgree) {
  // [1,32,2048,128] x [1,32,2048,128]^T: make the other's K 64.
  matmul()["ReadTensors"][1]["Shape"] = Json::array({1, 32, 2048, 64});
  matmul()["ReadTensors"][1]["PaddedShape"] = Json::array({1, 32, 2048, 64});
  expect_error("/TaskInfos/6/Ops/0/ReadTensors/1/Shape", "Matmul inner dimensions differ");
  doc = test::ark_doc("llama/plan_llama2_7b_b1_s2048.json");
  matmul()["Args"]["ShapeMNK"] = Json{{"DIMS", {2048, 2048, 64}}};
  expect_error("/TaskInfos/6/Ops/0/Args/ShapeMNK", "disagrees with the tensors ([M,N,K] = [2048,2048,128])");
  matmul()["Args"]["ShapeMNK"] = Json{{"DIMS", {2048, 2048, 128}}};
  EXPECT_TRUE(parse().task_infos[6].ops[0].matmul->shape_from_args);
  matmul()["ReadTensors"].erase(1);
  expect_error("/TaskInfos/6/Ops/0/ReadTensors", "Matmul needs 2 read tensors (input, other), got 1");
}

TEST_F(ArkArgs, ReduceAndTransposeArgs) {
  Json& reduce = doc["TaskInfos"][0]["Ops"][2];  // ReduceMean over Axis 2 of [1,2048,4096]
  reduce["Args"]["Axis"] = Json{{"INT", 3}};
  expect_error("/TaskInfos/0/Ops/2/Args/Axis", "outside the 3 dimensions");
  reduce["Args"].erase("Axis");
  expect_error("/TaskInfos/0/Ops/2/Args", "ReduceMean needs argument 'Axis' of type INT or INT64");
}

TEST(ArkModel, OpAndOpsNodes) {
  Json doc = test::ark_doc("tutorial_v2/model.json");
  doc["Nodes"][0]["Ops"] = Json::array({doc["Nodes"][0]["Op"]});
  expect_ark_error([&] { parse_ark_model(doc, "m.json"); }, "/Nodes/0", "both 'Ops'");
  doc["Nodes"][0].erase("Op");
  gpu::Model m = parse_ark_model(doc, "m.json");  // one node with "Ops", the rest with "Op"
  EXPECT_EQ(m.nodes[0].ops[0].pointer, "/Nodes/0/Ops/0");
  EXPECT_EQ(m.nodes[1].ops[0].pointer, "/Nodes/1/Op");
  doc["Nodes"][0].erase("Ops");
  expect_ark_error([&] { parse_ark_model(doc, "m.json"); }, "/Nodes/0/Op", "missing required field 'Op'");
}

TEST(ArkModel, NodeLinks) {
  const Json base = test::ark_doc("tutorial_v2/model.json");
  Json doc = base;
  doc["Nodes"][1]["ProducerNodeIds"] = Json::array({7});
  expect_ark_error([&] { parse_ark_model(doc, "m.json"); }, "/Nodes/1/ProducerNodeIds/0", "unknown node id 7");
  doc = base;
  doc["Nodes"][1]["ProducerNodeIds"] = Json::array({0, 3});  // node 3 does not list 1
  expect_ark_error([&] { parse_ark_model(doc, "m.json"); }, "/Nodes/1/ProducerNodeIds/1",
                   "but node 3 (/Nodes/3) does not list 1 in ConsumerNodeIds");
  doc = base;
  doc["Nodes"][1]["Id"] = 0;
  expect_ark_error([&] { parse_ark_model(doc, "m.json"); }, "/Nodes/1/Id", "duplicate node Id 0");
  // 5 -> 0 closes the loop 0 -> 2 -> 4 -> 5 -> 0.
  doc = base;
  doc["Nodes"][5]["ConsumerNodeIds"] = Json::array({0});
  doc["Nodes"][0]["ProducerNodeIds"] = Json::array({5});
  expect_ark_error([&] { parse_ark_model(doc, "m.json"); }, "/Nodes/0", "cycle");
}

TEST(ArkModel, RankWithinWorldSize) {
  Json doc = test::ark_doc("tutorial/model.json");
  doc["Rank"] = 1;
  expect_ark_error([&] { parse_ark_model(doc, "m.json"); }, "/Rank", "between 0 and 0");
}

TEST(ArkRanges, StepsAreHonoured) {
  Json doc = test::ark_doc("tutorial/default_plan.json");
  Json& pg = doc["ProcessorGroups"][1];  // Sigmoid: 1 warp, 88064 tasks
  pg["ProcessorRange"] = Json::array({0, 108, 2});
  pg["ResourceGroups"][0]["ProcessorRange"] = Json::array({0, 108, 4});  // every 4th: inside
  pg["ResourceGroups"][0]["TaskGroups"][0]["TaskRange"] = Json::array({0, 88064, 3});
  gpu::Program p = parse_ark_plan(doc, "p.json");
  const gpu::ProcessorGroup& g = p.processor_groups[1];
  EXPECT_EQ(g.processor_range.size(), 54);  // 0,2,...,106
  EXPECT_EQ(g.processor_range.last(), 106);
  EXPECT_EQ(g.processor_range.str(), "[0,108,2]");
  EXPECT_EQ(g.resource_groups[0].processor_range.size(), 27);
  EXPECT_EQ(g.resource_groups[0].task_groups[0].task_range.size(), 29355);  // ceil(88064/3)
  // Odd processors are not in [0,108,2].
  pg["ResourceGroups"][0]["ProcessorRange"] = Json::array({1, 108, 2});
  expect_ark_error([&] { parse_ark_plan(doc, "p.json"); }, "/ProcessorGroups/1/ResourceGroups/0/ProcessorRange",
                   "processor 1 of [1,108,2] is not in the processor group's range [0,108,2]");
  // [0,88066,2] ends at 88064 >= NumTasks; [0,88065,2] ends at 88064 too.
  pg["ResourceGroups"][0]["ProcessorRange"] = Json::array({0, 108, 2});
  pg["ResourceGroups"][0]["TaskGroups"][0]["TaskRange"] = Json::array({0, 88065, 2});
  expect_ark_error([&] { parse_ark_plan(doc, "p.json"); },
                   "/ProcessorGroups/1/ResourceGroups/0/TaskGroups/0/TaskRange", "[0, 88064)");
  pg["ResourceGroups"][0]["TaskGroups"][0]["TaskRange"] = Json::array({0, 88064, 2});
  EXPECT_NO_THROW(parse_ark_plan(doc, "p.json"));
}

}  // namespace
}  // namespace npusim::frontends
