// Checks across files: model vs plan, plan vs device, and Send/Recv tag pairing across ranks.
#include <algorithm>

#include <gtest/gtest.h>

#include "tests/unit/ark/ark_test_util.h"

namespace npusim::frontends {
namespace {

using json::Json;
using test::ark_example;
using test::expect_ark_error;

const char* kTutorialPlans[] = {"default_plan.json", "plan.json", "plan_1_larger_tile.json",
                                "plan_2_split_k.json", "plan_3_overwrite.json"};

TEST(ArkCrossCheck, TutorialModelAgreesWithEveryPlan) {
  // Both layouts; the plans re-buffer (overwrite), split K and rename ops, which is allowed.
  for (const char* dir : {"tutorial/", "tutorial_v2/"}) {
    gpu::Model m = read_ark_model(ark_example(std::string(dir) + "model.json"));
    for (const char* plan : kTutorialPlans) {
      SCOPED_TRACE(std::string(dir) + plan);
      EXPECT_NO_THROW(cross_check(m, read_ark_plan(ark_example(std::string(dir) + plan))));
    }
  }
}

class ArkCrossCheckErrors : public ::testing::Test {
 protected:
  gpu::Model model = read_ark_model(ark_example("tutorial/model.json"));
  Json doc = test::ark_doc("tutorial/default_plan.json");
  std::string expect_error(const std::string& pointer, const std::string& fragment) {
    return expect_ark_error([&] { cross_check(model, parse_ark_plan(doc, "plan.json")); }, pointer, fragment);
  }
};

TEST_F(ArkCrossCheckErrors, TensorDataTypeDiffers) {
  // Tensor 5 (matmul result) read by the Sigmoid of TaskInfo 1.
  doc["TaskInfos"][1]["Ops"][0]["ReadTensors"][0]["DataType"] = "FP32";
  expect_error("/TaskInfos/1/Ops/0/ReadTensors/0",
               "tensor 5 is FP32 [1,512,11008] here but FP16 [1,512,11008] in the model");
}

TEST_F(ArkCrossCheckErrors, RankDiffers) {
  model.rank = 1;
  model.world_size = 2;
  expect_error("/Rank", "plan is for rank 0");
}

TEST_F(ArkCrossCheckErrors, ModelOpMissingFromPlan) {
  // The plan computes tensor 6 with a Relu instead of the model's Sigmoid.
  doc["TaskInfos"][1]["Ops"][0]["Type"] = "Relu";
  expect_error("/TaskInfos", "no Sigmoid op writes tensor 6, which model op 'sigmoid'");
}

TEST_F(ArkCrossCheckErrors, ModelInputUnused) {
  // Point the first matmul's weight (tensor 1, buffer 1) at a new buffer 40.
  doc["TaskInfos"][0]["Ops"][0]["ReadTensors"][1]["Id"] = 41;
  doc["TaskInfos"][0]["Ops"][0]["ReadTensors"][1]["Buffer"]["Id"] = 40;
  expect_error("/TaskInfos", "no op uses buffer 1 of model input tensor 1");
}

TEST(ArkDevice, TutorialPlanFitsAnA100) {
  // A100: 108 SMs, 164 KiB of shared memory per block; ARK launches 8 warps per SM here.
  gpu::Program p = read_ark_plan(ark_example("tutorial/plan.json"));
  EXPECT_NO_THROW(validate_against_device(p, 108, 32, 166912));
  expect_ark_error([&] { validate_against_device(p, 100, 32, 166912); }, "/NumProcessors",
                   "plan uses 108 processors, the device has 100");
  expect_ark_error([&] { validate_against_device(p, 108, 4, 166912); }, "/NumWarpsPerProcessor",
                   "at most 4");
  // 147456 + 128 reserved is the smallest shared memory that fits the matmul task.
  EXPECT_NO_THROW(validate_against_device(p, 108, 32, 147456 + 128));
  expect_ark_error([&] { validate_against_device(p, 108, 32, 147456 + 127); }, "/TaskInfos/0/SramBytes",
                   "task needs 147456 bytes");
}

TEST(ArkDevice, SramRangeBeyondDevice) {
  Json doc = test::ark_doc("tutorial/plan.json");
  doc["ProcessorGroups"][1]["ResourceGroups"][0]["SramRange"] = Json::array({0, 160000});
  gpu::Program p = parse_ark_plan(doc, "p.json");
  expect_ark_error([&] { validate_against_device(p, 108, 32, 150000); },
                   "/ProcessorGroups/1/ResourceGroups/0/SramRange", "SramRange [0,160000] reaches 160000");
}

std::vector<gpu::Program> all_reduce(const std::string& variant) {
  std::vector<gpu::Program> plans;
  for (int r = 0; r < 8; ++r)
    plans.push_back(read_ark_plan(ark_example(variant + "/plan_gpu" + std::to_string(r) + ".json")));
  return plans;
}

TEST(ArkSendRecv, BothAllReduceVariantsPair) {
  for (const char* v : {"allreduce-packet", "allreduce-sm"}) {
    SCOPED_TRACE(v);
    std::vector<gpu::Program> plans = all_reduce(v);
    EXPECT_NO_THROW(check_send_recv_pairs(plans));
    std::reverse(plans.begin(), plans.end());  // order does not matter
    EXPECT_NO_THROW(check_send_recv_pairs(plans));
  }
}

TEST(ArkSendRecv, SingleRankPlanHasNothingToPair) {
  EXPECT_NO_THROW(check_send_recv_pairs({read_ark_plan(ark_example("tutorial/plan.json"))}));
}

TEST(ArkSendRecv, UnmatchedSendNamesTheTag) {
  // allreduce-sm rank 0 receives from rank 1 with tag -2^31 through buffer 16 (Rank 0); drop
  // that tag in rank 0's plan. RecvReduceSend (TaskInfo 8) reads it as ReadTensors[1].
  std::vector<gpu::Program> plans = all_reduce("allreduce-sm");
  Json doc = test::ark_doc("allreduce-sm/plan_gpu0.json");
  Json& tags = doc["TaskInfos"][8]["Ops"][0]["ReadTensors"][1]["Buffer"]["RecvTags"];
  ASSERT_EQ(tags[0], Json::parse("[1,-2147483648]"));  // buffer 16 appears only here
  tags.erase(0);
  plans[0] = parse_ark_plan(doc, "gpu0.json");
  // Rank 1 declares the send twice (SendTags of its buffer 0, RecvTags of the descriptor of
  // rank 0's buffer 2); the first one found is reported, in rank 1's file.
  std::string msg = expect_ark_error([&] { check_send_recv_pairs(plans); },
                                     "/TaskInfos/0/Ops/0/ReadTensors/0/Buffer/SendTags/0",
                                     "rank 1 sends to rank 0 with tag -2147483648, but the plan of rank 0 (gpu0.json)");
  EXPECT_EQ(msg.rfind(ark_example("allreduce-sm/plan_gpu1.json"), 0), 0u) << msg;
}

TEST(ArkSendRecv, UnmatchedReceive) {
  // allreduce-packet rank 1 declares receives from every peer with tag -2^31 on buffer 8.
  // Change the tag of the one from rank 0: a receive with no send, and a send with no receive.
  std::vector<gpu::Program> plans = all_reduce("allreduce-packet");
  Json doc = test::ark_doc("allreduce-packet/plan_gpu1.json");
  doc["TaskInfos"][7]["Ops"][0]["ReadTensors"][1]["Buffer"]["RecvTags"][0] = Json::array({0, 5});
  plans[1] = parse_ark_plan(doc, "gpu1.json");
  // Rank 0 writes into rank 1's buffer through its descriptor (buffer 1, Rank 1, RecvTags [-1,t]).
  expect_ark_error([&] { check_send_recv_pairs(plans); }, "/TaskInfos/0/Ops/0/WriteTensors/0/Buffer/RecvTags/0",
                   "rank 0 sends to rank 1 with tag -2147483648");
  // Drop rank 0's send as well (in both appearances of buffer 1): only the stray receive is left.
  Json doc0 = test::ark_doc("allreduce-packet/plan_gpu0.json");
  Json& op0 = doc0["TaskInfos"][0]["Ops"][0];
  ASSERT_EQ(op0["WriteTensors"][0]["Buffer"]["Rank"], 1);
  ASSERT_EQ(op0["WriteTensors"][0]["Buffer"]["RecvTags"], Json::parse("[[-1,-2147483648]]"));
  op0["WriteTensors"][0]["Buffer"]["RecvTags"] = Json::array();
  op0["ResultTensors"][0]["Buffer"]["RecvTags"] = Json::array();
  plans[0] = parse_ark_plan(doc0, "gpu0.json");
  expect_ark_error([&] { check_send_recv_pairs(plans); }, "/TaskInfos/7/Ops/0/ReadTensors/1/Buffer/RecvTags/0",
                   "rank 1 receives from rank 0 with tag 5, but the plan of rank 0 (gpu0.json) declares no send");
}

TEST(ArkSendRecv, RanksMustBeCompleteAndDistinct) {
  std::vector<gpu::Program> plans = all_reduce("allreduce-sm");
  plans.pop_back();
  expect_ark_error([&] { check_send_recv_pairs(plans); }, "/WorldSize", "no plan of rank 7");
  plans.push_back(plans[0]);
  expect_ark_error([&] { check_send_recv_pairs(plans); }, "/Rank", "rank 0 also comes from");
}

}  // namespace
}  // namespace npusim::frontends
