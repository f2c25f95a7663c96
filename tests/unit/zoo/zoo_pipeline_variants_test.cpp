// Tensor- and pipeline-parallel pipelines of Llama's relatives (issue 41): Qwen2's q/k/v biases,
// Mistral's sliding window, OPT's and GPT-2's LayerNorm layout; the same work as the model on one
// device; what is refused by name.
#include <gtest/gtest.h>

#include "frontends/pipeline/pipeline_reader.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {
namespace {

std::string example(const std::string& name) { return std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/" + name + "/config.json"; }

ZooOptions model(const std::string& name, int batch, int seq, int kv_len) {
  ZooOptions z;
  z.model = example(name);
  z.batch = batch, z.seq = seq, z.kv_len = kv_len, z.layers = 2;
  return z;
}

int64_t macs(const ir::Graph& g) {
  int64_t m = 0;
  for (const ir::Layer& l : g.layers) m += l.macs();
  return m;
}

int64_t pipeline_macs(const ZooOptions& z, const Parallelism& par) {
  const ir::System s = pipeline::read_pipeline_text(make_parallel_pipeline(z, par).dump(), "variant pipeline", ".");
  int64_t m = 0;
  for (const ir::SuperTask& t : s.supertasks)
    if (t.compute) m += t.compute->macs;
  return m;
}

TEST(ZooPipelineVariants, QwenAndMistralDoTheWorkOfTheModelOnOneDevice) {
  // Prefills and decode steps; Mistral's decode at 6,000 cached tokens attends the last 4,096.
  for (const ZooOptions& z : {model("Qwen2.5-7B", 2, 64, 0), model("Qwen2.5-7B", 4, 1, 300), model("Mistral-7B-v0.1", 2, 32, 0),
                              model("Mistral-7B-v0.1", 2, 1, 6000)}) {
    const int64_t one = macs(make_transformer(z));
    for (const Parallelism& par : {Parallelism{1, 1, 1, 1}, Parallelism{2, 1, 1, 1}, Parallelism{2, 2, 1, 1}})
      EXPECT_EQ(pipeline_macs(z, par), one) << z.model << " seq " << z.seq << " kv " << z.kv_len << " tp " << par.tp << " pp " << par.pp;
  }
}

TEST(ZooPipelineVariants, ShardsHoldTheBiasesAndTheWindow) {
  const auto q = make_parallel_pipeline(model("Qwen2.5-7B", 1, 16, 0), {2, 1, 1, 1});
  // 28 query heads of 128 over tp 2: 14 x 128 = 1792 q columns and biases; 4 K/V heads: 2 x 128.
  EXPECT_EQ(q["tensors"]["layers.0.tp1.bq"]["shape"], nlohmann::ordered_json({1792}));
  EXPECT_EQ(q["tensors"]["layers.0.tp1.bk"]["shape"], nlohmann::ordered_json({256}));
  const auto m = make_parallel_pipeline(model("Mistral-7B-v0.1", 1, 1, 6000), {2, 1, 1, 1});
  EXPECT_EQ(m["tensors"]["layers.1.tp0.k_cache"]["shape"], nlohmann::ordered_json({4, 4095, 128}));  // the window's keys
  EXPECT_FALSE(m["tensors"].contains("layers.0.tp0.bq"));
}

// OPT, GPT-2 and GPT-NeoX: LayerNorms with biases, biases on every projection (o's and fc2's on every
// rank's partial sum), learned positions (no rotary tables), a ReLU or GELU MLP of two matrices.
TEST(ZooPipelineVariants, OptGpt2AndNeoXRunTheirLayerNormLayout) {
  for (const ZooOptions& z : {model("opt-1.3b", 2, 64, 0), model("opt-1.3b", 4, 1, 300)}) {
    const int64_t one = macs(make_transformer(z));
    for (const Parallelism& par : {Parallelism{1, 1, 1, 1}, Parallelism{2, 1, 1, 1}, Parallelism{2, 2, 1, 1}})
      EXPECT_EQ(pipeline_macs(z, par), one) << z.model << " seq " << z.seq << " tp " << par.tp << " pp " << par.pp;
  }
  const auto o = make_parallel_pipeline(model("opt-1.3b", 1, 16, 0), {2, 1, 1, 1});
  EXPECT_EQ(o["tensors"]["layers.0.tp1.b_fc1"]["shape"], nlohmann::ordered_json({4096}));  // 8192 / tp 2
  EXPECT_EQ(o["tensors"]["layers.0.tp1.attn_norm_b"]["shape"], nlohmann::ordered_json({2048}));
  EXPECT_FALSE(o["tensors"].contains("d0.rope_cos"));
  // GPT-2 over 2 stages (its vocabulary of 50,257 does not split over tensor-parallel ranks).
  const ZooOptions g = model("gpt2", 2, 32, 0);
  EXPECT_EQ(pipeline_macs(g, {1, 2, 1, 1}), macs(make_transformer(g)));
  // GPT-NeoX (Pythia): the same layout with a quarter of each head's 128 dims rotating and the
  // attention and MLP reading the same residual (their outputs added to it together).
  for (const ZooOptions& z : {model("pythia-1.4b", 2, 32, 0), model("pythia-1.4b", 2, 1, 200)}) {
    const int64_t one = macs(make_transformer(z));
    for (const Parallelism& par : {Parallelism{1, 1, 1, 1}, Parallelism{2, 1, 1, 1}, Parallelism{2, 2, 1, 1}})
      EXPECT_EQ(pipeline_macs(z, par), one) << "seq " << z.seq << " tp " << par.tp << " pp " << par.pp;
  }
  EXPECT_EQ(make_parallel_pipeline(model("pythia-1.4b", 1, 16, 0), {2, 1, 1, 1})["tensors"]["d0.rope_cos"]["shape"],
            nlohmann::ordered_json({16, 32}));
}

// Gemma 2: RMSNorms after attention and the MLP (applied where their inputs are whole, after the
// all_reduce), soft-capped scores and logits, the even layers attending the last 4,096 keys: a
// decode step at 6,000 cached tokens reads 4,095 cached keys on layer 0 and 6,000 on layer 1.
TEST(ZooPipelineVariants, Gemma2KeepsItsWindowsAndPostNorms) {
  for (const ZooOptions& z : {model("gemma-2-9b", 2, 32, 0), model("gemma-2-9b", 2, 1, 6000)}) {
    const int64_t one = macs(make_transformer(z));
    for (const Parallelism& par : {Parallelism{1, 1, 1, 1}, Parallelism{2, 1, 1, 1}, Parallelism{2, 2, 1, 1}})
      EXPECT_EQ(pipeline_macs(z, par), one) << "seq " << z.seq << " tp " << par.tp << " pp " << par.pp;
  }
  const auto p = make_parallel_pipeline(model("gemma-2-9b", 1, 1, 6000), {2, 1, 1, 1});
  EXPECT_EQ(p["tensors"]["layers.0.tp0.k_cache"]["shape"], nlohmann::ordered_json({4, 4095, 256}));
  EXPECT_EQ(p["tensors"]["layers.1.tp0.k_cache"]["shape"], nlohmann::ordered_json({4, 6000, 256}));
  EXPECT_TRUE(p["tensors"].contains("layers.0.tp1.post_attn_norm"));
  EXPECT_TRUE(p["blobs"].contains("attention_window_first"));
  EXPECT_TRUE(p["blobs"].contains("attention"));
}

TEST(ZooPipelineVariants, LayoutsThePipelineDoesNotWriteAreRefusedByName) {
  for (const char* name : {"gpt2"}) {  // a vocabulary of 50,257 over 2 ranks
    try {
      make_parallel_pipeline(model(name, 1, 8, 0), {2, 1, 1, 1});
      FAIL() << name;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("vocabulary"), std::string::npos) << e.what();
    }
  }
  ZooOptions bert;
  bert.model = "bert-base";
  EXPECT_THROW(make_parallel_pipeline(bert, {2, 1, 1, 1}), InputError);
}

}  // namespace
}  // namespace npusim::frontends::zoo
