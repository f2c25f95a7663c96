// Mixture-of-experts pipelines (issue 41): Mixtral's layout as a tp x ep x pp pipeline, its
// experts spread over the ep groups and reached by all_to_all; the same work as the model on
// one device; load skew; what is refused.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "frontends/pipeline/pipeline_reader.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {
namespace {

const std::string kMixtral = std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/Mixtral-8x7B-v0.1/config.json";

ZooOptions mixtral(int batch, int seq, int kv_len) {
  ZooOptions z;
  z.model = kMixtral;
  z.batch = batch;
  z.seq = seq;
  z.kv_len = kv_len;
  z.layers = 2;
  return z;
}

ir::System read(const ZooOptions& z, const Parallelism& par) {
  return pipeline::read_pipeline_text(make_parallel_pipeline(z, par).dump(), "moe pipeline", ".");
}

int64_t graph_macs(const ir::Graph& g) {
  int64_t m = 0;
  for (const ir::Layer& l : g.layers) m += l.macs();
  return m;
}

int64_t pipeline_macs(const ir::System& s) {
  int64_t m = 0;
  for (const ir::SuperTask& t : s.supertasks)
    if (t.compute) m += t.compute->macs;
  return m;
}

TEST(ZooMoePipeline, ExpertParallelGroupsHoldTheirShareOfTheExperts) {
  // 8 devices: 4 groups of tp 2, each attending 16 / 4 = 4 prompts of 32 tokens.
  const ir::System s = read(mixtral(16, 32, 0), {2, 1, 4, 1});
  EXPECT_EQ(s.devices.size(), 8u);
  std::map<std::string, std::set<std::string>> a2a;  // group -> its devices
  int experts = 0;
  for (const ir::SuperTask& t : s.supertasks) {
    if (t.comm && t.comm->kind == ir::CollectiveKind::AllToAll) a2a[t.comm->group].insert(t.device);
    if (t.id.find(".experts") != std::string::npos) ++experts;
  }
  // Per layer and tp rank: a dispatch and a combine among the 4 groups.
  EXPECT_EQ(a2a.size(), 2u * 2 * 2);
  for (const auto& [g, devs] : a2a) EXPECT_EQ(devs.size(), 4u) << g;
  EXPECT_EQ(experts, 2 * 8);  // a layer's experts supertask on every device
  const auto p = make_parallel_pipeline(mixtral(16, 32, 0), {2, 1, 4, 1});
  // 8 experts over 4 groups: 2 each, every expert's width 14336 over tp 2. Attention: 32 heads / 2.
  EXPECT_EQ(p["tensors"]["layers.1.experts3.tp1.w1"]["shape"], nlohmann::ordered_json({2, 4096, 7168}));
  EXPECT_EQ(p["tensors"]["layers.1.experts3.tp1.w2"]["shape"], nlohmann::ordered_json({2, 7168, 4096}));
  EXPECT_EQ(p["tensors"]["layers.0.ep2.tp0.wq"]["shape"], nlohmann::ordered_json({4096, 2048}));
  // 4 x 32 tokens x top-2 = 256 assignments per group; balanced, each rank's experts take as many.
  EXPECT_EQ(p["tensors"]["layers.0.ep0.tp0.dispatch"]["shape"], nlohmann::ordered_json({256, 4096}));
}

TEST(ZooMoePipeline, TheSameWorkAsTheModelOnOneDevice) {
  // Balanced and divisible: every expert gets 2 x 64 x 2 / 8 = 32 rows however the model is spread.
  ZooOptions z = mixtral(2, 64, 0);
  z.logits = "all";
  const int64_t one = graph_macs(make_transformer(z));
  // Beyond it only the router, which every tp rank runs over all its group's tokens (replicated,
  // as vLLM runs it): 2 layers x 128 tokens x 4096 x 8 experts per extra rank.
  const int64_t router = 2 * 128 * 4096 * 8;
  for (const Parallelism& par : {Parallelism{1, 1, 1, 1}, Parallelism{2, 1, 1, 1}, Parallelism{1, 1, 2, 1}, Parallelism{2, 2, 2, 1}})
    EXPECT_EQ(pipeline_macs(read(z, par)), one + (par.tp - 1) * router) << "tp " << par.tp << " pp " << par.pp << " ep " << par.ep;
}

TEST(ZooMoePipeline, ASkewedRouterLoadsTheBusiestExpert) {
  ZooOptions z = mixtral(4, 16, 0);
  const auto balanced = make_parallel_pipeline(z, {1, 1, 2, 1});
  z.expert_skew = 2;
  const auto skewed = make_parallel_pipeline(z, {1, 1, 2, 1});
  // Per group 2 prompts x 16 tokens x top-2 = 64 assignments; 128 over 8 experts, 16 each on
  // average: the busiest takes 32, each of the rank's 4 experts padded to it; the rank receives
  // 32 + 3 x 16 = 80 rows.
  EXPECT_EQ(balanced["tensors"]["layers.0.ep0.tp0.dispatch"]["shape"], nlohmann::ordered_json({64, 4096}));
  EXPECT_EQ(skewed["tensors"]["layers.0.ep0.tp0.dispatch"]["shape"], nlohmann::ordered_json({80, 4096}));
  EXPECT_EQ(skewed["tensors"]["layers.0.ep0.tp0.pad"]["shape"], nlohmann::ordered_json({4 * 32}));
  EXPECT_GT(pipeline_macs(pipeline::read_pipeline_text(skewed.dump(), "s", ".")),
            pipeline_macs(pipeline::read_pipeline_text(balanced.dump(), "b", ".")));
  // On one device the batched GEMMs pad the same way.
  ZooOptions one = mixtral(4, 16, 0);
  const int64_t even = graph_macs(make_transformer(one));
  one.expert_skew = 2;
  EXPECT_GT(graph_macs(make_transformer(one)), even);
  one.expert_skew = 0.5;
  EXPECT_THROW(make_transformer(one), InputError);
}

TEST(ZooMoePipeline, ExpertParallelismOfWhatCannotBeSpreadIsRefused) {
  ZooOptions dense;
  dense.model = "llama2-7b";
  dense.layers = 2;
  try {
    make_parallel_pipeline(dense, {1, 1, 2, 1});
    FAIL() << "a dense model with --ep";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--ep"), std::string::npos) << e.what();
  }
  try {
    make_parallel_pipeline(mixtral(3, 8, 0), {1, 1, 3, 1});  // 8 experts over 3 groups
    FAIL() << "experts that do not divide";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("do not divide by --ep 3"), std::string::npos) << e.what();
  }
  ZooOptions gemma = mixtral(1, 8, 0);  // not a Llama layout
  gemma.model = std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/gemma-2-9b/config.json";
  EXPECT_THROW(make_parallel_pipeline(gemma, {2, 1, 2, 1}), InputError);
}

// Qwen2-MoE: q/k/v biases, 60 experts top-4 and a shared expert scaled by a sigmoid gate; the
// shared expert on every group, its width over the tp ranks. The same work as the model on one
// device, but for the router and the shared expert's gate vector, which every tp rank runs.
TEST(ZooMoePipeline, QwenMoeSpreadsItsExpertsAndKeepsItsSharedExpertOnEveryGroup) {
  ZooOptions z = mixtral(2, 64, 0);
  z.model = std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/Qwen1.5-MoE-A2.7B/config.json";
  const int64_t one = graph_macs(make_transformer(z));
  // 2 layers x 128 tokens x 2048 x (60 router columns + 1 gate column) per extra tp rank.
  const int64_t replicated = 2 * 128 * 2048 * (60 + 1);
  for (const Parallelism& par : {Parallelism{1, 1, 1, 1}, Parallelism{2, 1, 1, 1}, Parallelism{2, 1, 2, 1}, Parallelism{1, 2, 2, 1}})
    EXPECT_EQ(pipeline_macs(read(z, par)), one + (par.tp - 1) * replicated) << "tp " << par.tp << " pp " << par.pp << " ep " << par.ep;
  const auto p = make_parallel_pipeline(z, {2, 1, 2, 1});
  EXPECT_EQ(p["tensors"]["layers.1.ep1.tp1.shared_up"]["shape"], nlohmann::ordered_json({2048, 2816}));  // 5632 / tp 2
  EXPECT_EQ(p["tensors"]["layers.1.experts1.tp1.w1"]["shape"], nlohmann::ordered_json({30, 2048, 704}));  // 60 / ep 2, 1408 / tp 2
  EXPECT_EQ(p["tensors"]["layers.0.ep0.tp0.bq"]["shape"], nlohmann::ordered_json({1024}));               // 16 heads / 2 x 128
}

// DeepSeek-V2-Lite (latent attention, layer 0 dense, then 64 experts top-6 and two shared ones):
// the same work as the model on one device but for what every tp rank runs whole, the latent's
// projection (2048 x 576) and the router (2048 x 64), for a prefill and for a decode step (whose
// attention absorbs kv_b_proj). The latent cache is whole on every rank; the heads are split.
TEST(ZooMoePipeline, DeepSeekSplitsItsHeadsAndKeepsTheLatentWhole) {
  ZooOptions z = mixtral(2, 64, 0);
  z.model = std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/DeepSeek-V2-Lite/config.json";
  z.logits = "all";
  const int64_t one = graph_macs(make_transformer(z));
  // 128 tokens: 2 layers' latent projections, 1 MoE layer's router, per extra tp rank.
  const int64_t replicated = 128 * 2048 * (2 * 576 + 64);
  for (const Parallelism& par : {Parallelism{1, 1, 1, 1}, Parallelism{2, 1, 1, 1}, Parallelism{2, 1, 2, 1}, Parallelism{1, 2, 2, 1}})
    EXPECT_EQ(pipeline_macs(read(z, par)), one + (par.tp - 1) * replicated) << "tp " << par.tp << " pp " << par.pp << " ep " << par.ep;
  ZooOptions d = z;
  d.seq = 1, d.kv_len = 100;
  const int64_t one_step = graph_macs(make_transformer(d));
  EXPECT_EQ(pipeline_macs(read(d, {2, 1, 1, 1})), one_step + 2 * 2048 * (2 * 576 + 64));
  const auto p = make_parallel_pipeline(d, {2, 1, 1, 1});
  EXPECT_EQ(p["tensors"]["layers.0.tp1.latent_cache"]["shape"], nlohmann::ordered_json({2, 100, 576}));
  EXPECT_EQ(p["tensors"]["layers.0.tp1.w_uk"]["shape"], nlohmann::ordered_json({8, 128, 512}));  // 16 heads / tp 2
  EXPECT_EQ(p["tensors"]["layers.0.tp1.w_gate"]["shape"], nlohmann::ordered_json({2048, 5472}));  // the dense layer: 10944 / 2
  EXPECT_EQ(p["tensors"]["layers.1.tp1.shared_up"]["shape"], nlohmann::ordered_json({2048, 1408}));  // 2 x 1408 / 2
  EXPECT_FALSE(p["tensors"].contains("layers.1.tp1.shared_gate_w"));  // DeepSeek's shared experts are not gated
  const auto prefill = make_parallel_pipeline(z, {2, 1, 1, 1});
  EXPECT_EQ(prefill["tensors"]["layers.0.tp0.wkv_b"]["shape"], nlohmann::ordered_json({512, 8 * 256}));
}

}  // namespace
}  // namespace npusim::frontends::zoo
