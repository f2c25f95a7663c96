// A transformer's definition: the zoo's hand-written entries and the decoders read from Hugging
// Face config.json files (hf_config.h) are the same struct, built by the same graph builder
// (transformers.cpp) and sized by the same parameter count.
#pragma once
#include <cstdint>
#include <string>

namespace npusim::frontends::zoo {

// The module layouts: BertModel (post-LN encoder), GPT2LMHeadModel, LlamaForCausalLM (and the
// families that share its layout: Mistral, Qwen2, Mixtral, Qwen2-MoE), Gemma2ForCausalLM,
// GPTNeoXForCausalLM, OPTForCausalLM.
enum class Family { Bert, Gpt2, Llama, Gemma2, NeoX, Opt };
enum class Activation { Gelu, GeluTanh, Silu, Relu };

struct ModelDef {
  Family family;
  int layers, d, heads, ffn, vocab;
  int max_pos;  // learned position table rows (0: rotary positions, any length)
  double eps;
  int kv_heads = 0;  // grouped-query attention: K/V heads (0: as many as query heads)
  int context = 0;   // max_position_embeddings of the Hugging Face config (0: max_pos)
  // ---- beyond the zoo's first families (Hugging Face configs) ----
  int head_dim = 0;                  // 0: d / heads (Gemma 2 sets it apart)
  bool qkv_bias = false;             // Llama layout: biases on q, k, v (Qwen2, attention_bias)
  bool o_bias = false;               // Llama layout: a bias on o_proj (attention_bias)
  bool mlp_bias = false;             // Llama layout: biases on gate, up, down (mlp_bias)
  bool tied_embeddings = false;      // Llama layout: lm_head is the token embedding transposed
  Activation act = Activation::Silu;  // Llama/Gemma 2/NeoX/OPT MLPs (BERT, GPT-2: GELU)
  double rotary_share = 1;           // NeoX: the share of a head's dims that rotate (rotary_pct)
  bool parallel_residual = true;     // NeoX: x + attn(ln1(x)) + mlp(ln2(x))
  int sliding_window = 0;            // keys a windowed layer attends (0: none)
  int window_layers = 0;             // 0: every layer windowed; 2: the even layers (Gemma 2)
  double attn_softcap = 0, final_softcap = 0;  // Gemma 2: c * tanh(x / c) (0: none)
  int position_offset = 0;           // OPT: the position table has this many rows more (2)
  // ---- mixture of experts (Mixtral, Qwen2-MoE) ----
  int experts = 0;                   // routed experts per MoE layer (0: dense)
  int experts_per_token = 0;         // top-k
  int expert_ffn = 0;                // an expert's intermediate size
  int shared_ffn = 0;                // Qwen2-MoE: the shared expert's intermediate size (0: none)
  int moe_every = 1;                 // layer i is MoE when (i + 1) % moe_every == 0 (decoder_sparse_step)
  std::string dense_layers;          // Qwen2-MoE mlp_only_layers, as ",3,7," (empty: none)
  bool shared_gate = false;          // Qwen2-MoE: the shared expert scaled by sigmoid(x W) (DeepSeek: unscaled)
  bool sigmoid_router = false;       // DeepSeek-V3: sigmoid scores with a per-expert bias (V2: softmax)
  // ---- multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank > 0) ----
  int q_lora_rank = 0;               // queries through a rank-q_lora_rank bottleneck (0: one q_proj)
  int kv_lora_rank = 0;              // the cached latent's width
  int qk_nope_dim = 0, qk_rope_dim = 0;  // a query/key head: its position-free and rotary dims
  int v_head_dim = 0;                // a value head
  std::string architecture;          // the config's architectures[0] ("" for zoo entries)

  bool mla() const { return kv_lora_rank > 0; }

  int head_size() const { return mla() ? qk_nope_dim + qk_rope_dim : head_dim > 0 ? head_dim : d / heads; }
  int kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
  bool is_moe_layer(int i) const {
    return experts > 0 && (i + 1) % moe_every == 0 && dense_layers.find("," + std::to_string(i) + ",") == std::string::npos;
  }
  bool windowed(int i) const { return sliding_window > 0 && (window_layers == 0 || i % window_layers == 0); }
};

// Parameters of the whole model as a checkpoint stores them (a tied embedding once); active:
// with top-k experts per MoE layer instead of all (the same as total for a dense model).
int64_t parameter_count(const ModelDef& m, bool active = false);

// Experts that get at least one of `tokens` tokens when each picks top_k of them at random
// (uniform routing, a balanced router's expectation): a token misses an expert with probability
// 1 - k/E, so E (1 - (1 - k/E)^T), rounded, at least k and at most min(E, T k).
int64_t active_experts(int64_t experts, int64_t top_k, int64_t tokens);

}  // namespace npusim::frontends::zoo
