// Hugging Face config.json models (frontends/zoo/hf_config.h): the shipped configs of
// examples/hf read, parameter counts against the published ones, the graph's weights against
// the count, the zoo's entries and the same models' configs giving one graph, mixture-of-experts
// routing, sliding windows, and refusals by field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "frontends/zoo/hf_config.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace {

namespace zoo = npusim::frontends::zoo;
namespace ir = npusim::ir;
using npusim::InputError;

std::string example(const std::string& name) { return std::string(NPUSIM_SOURCE_DIR) + "/examples/hf/" + name + "/config.json"; }

zoo::ZooOptions tf(const std::string& model, int batch, int seq, int kv = 0, int layers = 0) {
  zoo::ZooOptions o;
  o.model = model;
  o.batch = batch;
  o.seq = seq;
  o.kv_len = kv;
  o.layers = layers;
  return o;
}

int64_t weights(const ir::Graph& g) {  // weights and biases, not buffers (scale, masks, rotary tables)
  int64_t n = 0;
  for (const ir::Tensor& t : g.tensors)
    if (t.role == ir::TensorRole::Weight || t.role == ir::TensorRole::Bias) n += ir::num_elements(t.shape);
  return n;
}

const ir::Tensor* tensor(const ir::Graph& g, const std::string& name) {
  for (const ir::Tensor& t : g.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

// Published totals (model cards; the Pythia paper and GPT-2's checkpoint give exact integers),
// in billions to the given number of decimals: the count within one unit of the last digit
// (Qwen2.5-7B's 7,615,616,512 is published as 7.61B, truncated).
struct Published {
  const char* model;
  double billions;
  int decimals;
  double active_billions = 0;  // mixture of experts: parameters used per token
};

TEST(HfConfig, ParameterCountsAreThePublishedOnes) {
  EXPECT_EQ(zoo::transformer_shape(example("gpt2"))->parameters, 124439808);
  EXPECT_EQ(zoo::transformer_shape(example("pythia-1.4b"))->parameters, 1414647808);
  const Published published[] = {
      {"Llama-3.1-8B", 8.03, 2},       {"Llama-3.1-70B", 70.6, 1},   {"Mistral-7B-v0.1", 7.24, 2},
      {"Qwen2.5-7B", 7.61, 2},         {"gemma-2-9b", 9.24, 2},      {"opt-1.3b", 1.3, 1},     {"opt-13b", 13, 0},
      {"Mixtral-8x7B-v0.1", 46.7, 1, 12.9}, {"Qwen1.5-MoE-A2.7B", 14.3, 1, 2.7},
  };
  for (const Published& p : published) {
    SCOPED_TRACE(p.model);
    const auto s = zoo::transformer_shape(example(p.model));
    ASSERT_TRUE(s);
    const double unit = std::pow(10.0, -p.decimals);
    EXPECT_LT(std::abs(static_cast<double>(s->parameters) / 1e9 - p.billions), unit);
    if (p.active_billions > 0)
      EXPECT_LT(std::abs(static_cast<double>(s->active_parameters) / 1e9 - p.active_billions), 0.1);
    else
      EXPECT_EQ(s->active_parameters, s->parameters);
  }
}

// DeepSeek-V3 by hand, per layer (hidden 7168, 128 heads, q bottleneck 1536, latent 512, head
// dims 128 + 64 rotary, values 128): q_a 7168x1536 + its norm 1536 + q_b 1536x(128x192) =
// 48,760,320; kv_a 7168x576 = 4,128,768 + its norm 512; kv_b 512x(128x256) = 16,777,216; o
// (128x128)x7168 = 117,440,512; two norms 14,336: 187,121,664. Layers 0-2 dense (3x7168x18432 =
// 396,361,728); 58 MoE layers: router 256x7168 + 256 biases = 1,835,264, 256 routed experts and
// one shared of 3x7168x2048 = 44,040,192 each. Embedding and head 2 x 129280 x 7168, final norm.
// Published: 671 B total; 36.6 B active "including 0.9 B for the output head" (the repository's
// README_WEIGHTS.md), i.e. without the input embedding. DeepSeek-V2-Lite: 15.7 B, 2.4 B active
// (the DeepSeek-V2 paper).
TEST(HfConfig, DeepSeekParameterCountsAreThePublishedOnes) {
  const auto v3 = zoo::transformer_shape(example("DeepSeek-V3"));
  ASSERT_TRUE(v3);
  const int64_t attn = 187121664, dense = 396361728, expert = 44040192, router = 1835264, emb = int64_t{129280} * 7168;
  EXPECT_EQ(v3->parameters, 3 * (attn + dense) + 58 * (attn + router + 257 * expert) + 2 * emb + 7168);
  EXPECT_EQ(v3->active_parameters, 3 * (attn + dense) + 58 * (attn + router + 9 * expert) + 2 * emb + 7168);
  EXPECT_NEAR(static_cast<double>(v3->parameters) / 1e9, 671, 0.5);
  EXPECT_NEAR(static_cast<double>(v3->active_parameters - emb) / 1e9, 36.6, 0.05);
  const auto lite = zoo::transformer_shape(example("DeepSeek-V2-Lite"));
  ASSERT_TRUE(lite);
  EXPECT_NEAR(static_cast<double>(lite->parameters) / 1e9, 15.7, 0.05);
  EXPECT_NEAR(static_cast<double>(lite->active_parameters - int64_t{102400} * 2048) / 1e9, 2.4, 0.1);  // 2.45, published to one decimal
  EXPECT_EQ(v3->family, "deepseek");
  EXPECT_EQ(v3->latent_kv, 512 + 64);
  EXPECT_EQ(v3->head_dim, 192);
}

// Multi-head latent attention: a prefill caches one latent of 512 + 64 per token and rebuilds
// every head's keys and values through kv_b_proj; a decode step reads the latent cache as one
// tensor, every head a query row, with kv_b_proj's halves absorbed (W_UK, W_UV: the same
// weights, split). Both graphs hold the counted weights (V2-Lite: q_proj without a bottleneck,
// 64 experts all with tokens at 128 of them, only the routed experts with tokens in a decode step).
TEST(HfConfig, LatentAttentionCachesOneLatentPerToken) {
  const std::string m = example("DeepSeek-V2-Lite");
  const auto s = zoo::transformer_shape(m);
  const ir::Graph prefill = zoo::make_transformer(tf(m, 1, 128));
  EXPECT_EQ(weights(prefill), s->parameters);
  EXPECT_EQ(tensor(prefill, "past_latent.0"), nullptr);
  EXPECT_EQ(tensor(prefill, "model.layers.0.self_attn.latent")->shape, (ir::Shape{1, 128, 576}));
  EXPECT_EQ(tensor(prefill, "model.layers.0.self_attn.kv_b_proj.weight")->shape, (ir::Shape{512, 16 * 256}));
  EXPECT_EQ(tensor(prefill, "model.layers.0.self_attn.scores")->shape, (ir::Shape{1, 16, 128, 128}));
  EXPECT_EQ(tensor(prefill, "model.layers.0.mlp.gate_proj.weight")->shape, (ir::Shape{2048, 10944}));  // first_k_dense_replace 1
  EXPECT_EQ(tensor(prefill, "model.layers.1.mlp.shared_experts.gate_proj.weight")->shape, (ir::Shape{2048, 2 * 1408}));
  EXPECT_EQ(tensor(prefill, "model.layers.1.mlp.experts.gate_proj.weight")->shape, (ir::Shape{64, 2048, 1408}));
  const ir::Graph decode = zoo::make_transformer(tf(m, 2, 1, 300, 2));
  EXPECT_EQ(tensor(decode, "past_latent.1")->shape, (ir::Shape{2, 300, 576}));
  EXPECT_EQ(tensor(decode, "past_key.1"), nullptr);
  EXPECT_EQ(tensor(decode, "model.layers.0.self_attn.kv_b_proj.k_absorbed.weight")->shape, (ir::Shape{16, 128, 512}));
  EXPECT_EQ(tensor(decode, "model.layers.0.self_attn.kv_b_proj.v_absorbed.weight")->shape, (ir::Shape{16, 512, 128}));
  EXPECT_EQ(tensor(decode, "model.layers.0.self_attn.scores")->shape, (ir::Shape{2, 1, 16, 301}));
  // 2 tokens x top-6 of 64: 64 (1 - (58/64)^2) = 11.4 -> 11 experts with tokens.
  EXPECT_EQ(tensor(decode, "model.layers.1.mlp.experts.gate_proj.weight")->shape, (ir::Shape{11, 2048, 1408}));
  const int64_t per_layer_unread = (64 - 11) * int64_t{3} * 2048 * 1408;
  const auto two = [&] {
    zoo::ZooOptions o = tf(m, 1, 128, 0, 2);
    return weights(zoo::make_transformer(o));
  }();
  EXPECT_EQ(weights(decode), two - per_layer_unread);
  // DeepSeek-V3 routes by sigmoid scores plus a per-expert bias.
  const ir::Graph v3 = zoo::make_transformer(tf(example("DeepSeek-V3"), 1, 1, 10, 4));
  EXPECT_EQ(tensor(v3, "model.layers.3.mlp.gate.e_score_correction_bias")->shape, (ir::Shape{256}));
  EXPECT_EQ(tensor(v3, "model.layers.0.self_attn.q_a_layernorm.weight")->shape, (ir::Shape{1536}));
}

// The graph holds every weight the count has (a prefill long enough that every expert gets
// tokens), for every shipped config and every zoo entry.
TEST(HfConfig, TheGraphHoldsTheCountedWeights) {
  for (const char* m : {"gpt2", "pythia-1.4b", "opt-1.3b", "Mistral-7B-v0.1", "Qwen2.5-7B", "gemma-2-9b", "Mixtral-8x7B-v0.1",
                        "Qwen1.5-MoE-A2.7B"}) {
    SCOPED_TRACE(m);
    const auto s = zoo::transformer_shape(example(m));
    // Two layers: the count scaled to them; 128 tokens: every one of Qwen's 60 experts is expected
    // to get a token (60 (1 - (56/60)^128) rounds to 60), and only experts with tokens are read.
    const zoo::ZooOptions o = tf(example(m), 1, 128, 0, 2);
    const int64_t per_layer = (s->parameters - s->outside_layers) / s->layers;
    EXPECT_EQ(weights(zoo::make_transformer(o)), s->outside_layers + 2 * per_layer);
  }
  for (const std::string& m : zoo::transformer_names()) {
    SCOPED_TRACE(m);
    EXPECT_EQ(weights(zoo::make_transformer(tf(m, 1, 8))), zoo::transformer_shape(m)->parameters);
  }
}

// A zoo entry and its model's config.json are read the same way: the same graph.
TEST(HfConfig, ZooEntriesAndTheirConfigsGiveOneGraph) {
  for (const auto& [name, dir] : {std::pair<std::string, std::string>{"gpt2", "gpt2"}, {"llama3-8b", "Llama-3.1-8B"}}) {
    SCOPED_TRACE(name);
    const ir::Graph a = zoo::make_transformer(tf(name, 2, 16, 40, 2)), b = zoo::make_transformer(tf(example(dir), 2, 16, 40, 2));
    ASSERT_EQ(a.layers.size(), b.layers.size());
    for (size_t i = 0; i < a.layers.size(); ++i) {
      EXPECT_EQ(a.layers[i].name, b.layers[i].name);
      EXPECT_EQ(a.layers[i].op, b.layers[i].op);
      EXPECT_EQ(a.layers[i].output_shapes, b.layers[i].output_shapes);
    }
    EXPECT_EQ(zoo::transformer_shape(name)->context, zoo::transformer_shape(example(dir))->context);
  }
}

// Mixtral routes each token to 2 of 8 experts: a decode step of one request runs 2 experts
// (only their weights read), a prefill of 32 tokens all 8 with 8 rows each.
TEST(HfConfig, MixtureOfExpertsRunsTheExpertsThatHaveTokens) {
  const std::string m = example("Mixtral-8x7B-v0.1");
  const ir::Graph decode = zoo::make_transformer(tf(m, 1, 1, 100, 1));
  const ir::Tensor* w1 = tensor(decode, "model.layers.0.block_sparse_moe.experts.w1.weight");
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->shape, (ir::Shape{2, 4096, 14336}));
  const ir::Graph prefill = zoo::make_transformer(tf(m, 1, 32, 0, 1));
  const ir::Tensor* x = tensor(prefill, "model.layers.0.block_sparse_moe.experts.w1");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->shape, (ir::Shape{8, 8, 14336}));  // 32 tokens x top-2 over 8 experts
  // A decode step of 4 requests: 8 assignments, but uniform routing leaves experts without a
  // token: 8 (1 - (3/4)^4) = 5.47 are expected to have one, so 5 experts of 2 rows.
  const ir::Graph four = zoo::make_transformer(tf(m, 4, 1, 100, 1));
  EXPECT_EQ(tensor(four, "model.layers.0.block_sparse_moe.experts.w1")->shape, (ir::Shape{5, 2, 14336}));
  // Qwen1.5-MoE: 60 experts, top-4, and a shared expert with its sigmoid gate.
  const ir::Graph q = zoo::make_transformer(tf(example("Qwen1.5-MoE-A2.7B"), 1, 1, 10, 1));
  EXPECT_EQ(tensor(q, "model.layers.0.mlp.experts.gate_proj.weight")->shape, (ir::Shape{4, 2048, 1408}));
  EXPECT_EQ(tensor(q, "model.layers.0.mlp.shared_expert.gate_proj.weight")->shape, (ir::Shape{2048, 5632}));
  EXPECT_NE(tensor(q, "model.layers.0.mlp.shared_expert_gate.sigmoid"), nullptr);
}

// Mistral attends the last 4,096 keys on every layer; Gemma 2 on its even layers only.
TEST(HfConfig, SlidingWindowsBoundTheKeysALayerAttends) {
  const ir::Graph m = zoo::make_transformer(tf(example("Mistral-7B-v0.1"), 1, 1, 6000, 2));
  EXPECT_EQ(tensor(m, "past_key.0")->shape, (ir::Shape{1, 8, 4095, 128}));
  EXPECT_EQ(tensor(m, "past_key.1")->shape, (ir::Shape{1, 8, 4095, 128}));
  const ir::Graph g = zoo::make_transformer(tf(example("gemma-2-9b"), 1, 1, 6000, 2));
  EXPECT_EQ(tensor(g, "past_key.0")->shape, (ir::Shape{1, 8, 4095, 256}));  // head_dim 256, not 3584 / 16
  EXPECT_EQ(tensor(g, "past_key.1")->shape, (ir::Shape{1, 8, 6000, 256}));
  // Below the window nothing changes.
  const ir::Graph s = zoo::make_transformer(tf(example("Mistral-7B-v0.1"), 1, 1, 100, 1));
  EXPECT_EQ(tensor(s, "past_key.0")->shape, (ir::Shape{1, 8, 100, 128}));
}

std::string write_config(const std::string& name, const std::string& text) {
  const std::string dir = testing::TempDir() + "/hf_config_test";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + ".json";
  std::ofstream(path) << text;
  return path;
}

void expect_refused(const std::string& path, const std::string& pointer, const std::string& words) {
  try {
    zoo::read_hf_config(path);
    ADD_FAILURE() << path << " was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(pointer), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(HfConfig, FieldsThatChangeTheComputationAreRefusedByName) {
  const std::string deepseek =
      R"("architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512, "kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16)";
  expect_refused(write_config("ds_freq", "{" + deepseek + R"(, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "moe_layer_freq": 2})"),
                 "/moe_layer_freq", "every n-th layer");
  expect_refused(write_config("ds_score", "{" + deepseek + R"(, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "scoring_func": "relu"})"),
                 "/scoring_func", "relu");
  std::string odd = deepseek;
  odd.replace(odd.find(R"("qk_rope_head_dim": 8)"), 21, R"("qk_rope_head_dim": 7)");
  expect_refused(write_config("ds_rope", "{" + odd + "}"), "/qk_rope_head_dim", "even");
  expect_refused(write_config("ds_lora", "{" + deepseek.substr(0, deepseek.find(R"(, "kv_lora_rank")")) + "}"), "/kv_lora_rank", "missing");
  const std::string llama =
      R"("hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512)";
  expect_refused(write_config("unknown", R"({"architectures": ["FalconForCausalLM"], )" + llama + "}"), "/architectures/0",
                 "'FalconForCausalLM' is not read");
  expect_refused(write_config("act", R"({"architectures": ["LlamaForCausalLM"], "hidden_act": "squared_relu", )" + llama + "}"),
                 "/hidden_act", "squared_relu");
  expect_refused(write_config("missing", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64})"), "/num_hidden_layers",
                 "missing");
  expect_refused(write_config("heads", R"({"architectures": ["LlamaForCausalLM"], "num_key_value_heads": 3, )" + llama + "}"),
                 "/num_key_value_heads", "do not divide");
  expect_refused(write_config("zero", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 0, "num_hidden_layers": 2})"),
                 "/hidden_size", "must be in 1..");
  expect_refused(write_config("rope", R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "mrope"}, )" + llama + "}"),
                 "/rope_scaling", "mrope");
  expect_refused(write_config("opt", R"({"architectures": ["OPTForCausalLM"], "do_layer_norm_before": false, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "ffn_dim": 128, "vocab_size": 100, "max_position_embeddings": 512})"),
                 "/do_layer_norm_before", "post-LN");
  expect_refused(write_config("moe", R"({"architectures": ["MixtralForCausalLM"], "num_local_experts": 2, "num_experts_per_tok": 3, )" + llama + "}"),
                 "/num_experts_per_tok", "3 experts per token of 2");
  expect_refused(write_config("syntax", "{\"architectures\": ["), "line", "");
  // A model name ending in .json is a config: an unreadable one is refused naming it.
  EXPECT_THROW(zoo::transformer_shape(testing::TempDir() + "/absent/config.json"), InputError);
  EXPECT_FALSE(zoo::transformer_shape("no-such-model"));
}

}  // namespace
