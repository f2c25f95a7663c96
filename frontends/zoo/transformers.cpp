// The zoo's transformers, built as an ir::Graph the way Hugging Face's eager modules run them
// (BertModel, GPT2LMHeadModel, LlamaForCausalLM): one matmul per projection with a [K, N]
// weight, heads split by reshape + transpose, the two attention matmuls as batch_matmul. The
// batch stays dim 0 of every activation ([B,S,D], [B,H,S,dh], [B,H,S,T]).
//
// One pass handles S new tokens after N cached ones: the prefill is N = 0; one decode step is
// S = 1 with K/V caches [B,H,N,dh] as graph inputs, concatenated with the new k/v (which are
// graph outputs: the cache append). Attention then spans T = N + S keys.
#include <cmath>
#include <functional>
#include <map>
#include <mutex>

#include "frontends/zoo/graph_builder.h"
#include "frontends/zoo/hf_config.h"
#include "frontends/zoo/model_def.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::TensorRole;

using Def = ModelDef;

// Hugging Face configs (bert-base-uncased, bert-large-uncased, gpt2[-medium|-large|-xl],
// meta-llama/Llama-2-{7,13,70}b-hf, meta-llama/Llama-3.1-8B); gpt3-xl and gpt3-2.7b are GPT-2 modules of the shapes
// NeuSight measured (../shared/validation/neusight_e2e_inference_h100_a100: 24 x 3072 / 24 heads,
// 32 x 2560 / 32 heads, 2048 positions).
const std::vector<std::pair<std::string, Def>>& defs() {
  static const std::vector<std::pair<std::string, Def>> d = {
      {"bert-base", {Family::Bert, 12, 768, 12, 3072, 30522, 512, 1e-12}},
      {"bert-large", {Family::Bert, 24, 1024, 16, 4096, 30522, 512, 1e-12}},
      {"gpt2", {Family::Gpt2, 12, 768, 12, 3072, 50257, 1024, 1e-5}},
      {"gpt2-medium", {Family::Gpt2, 24, 1024, 16, 4096, 50257, 1024, 1e-5}},
      {"gpt2-large", {Family::Gpt2, 36, 1280, 20, 5120, 50257, 1024, 1e-5}},
      {"gpt2-xl", {Family::Gpt2, 48, 1600, 25, 6400, 50257, 1024, 1e-5}},
      {"gpt3-xl", {Family::Gpt2, 24, 3072, 24, 12288, 50257, 2048, 1e-5}},
      {"gpt3-2.7b", {Family::Gpt2, 32, 2560, 32, 10240, 50257, 2048, 1e-5}},
      {"llama2-7b", {Family::Llama, 32, 4096, 32, 11008, 32000, 0, 1e-5, 0, 4096}},
      {"llama2-13b", {Family::Llama, 40, 5120, 40, 13824, 32000, 0, 1e-5, 0, 4096}},
      {"llama2-70b", {Family::Llama, 80, 8192, 64, 28672, 32000, 0, 1e-5, 8, 4096}},
      {"llama3-8b", {Family::Llama, 32, 4096, 32, 14336, 128256, 0, 1e-5, 8, 131072}},  // Llama-3 and 3.1 8B: the same shape; 3.1's context
  };
  return d;
}

// A zoo entry, or a Hugging Face config.json read once per process (a path ending in .json).
const Def* find_def(const std::string& model) {
  for (const auto& [name, def] : defs())
    if (name == model) return &def;
  if (!is_hf_config_path(model)) return nullptr;
  static std::mutex mutex;
  static std::map<std::string, Def> read;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = read.find(model);
  if (it == read.end()) it = read.emplace(model, read_hf_config(model)).first;
  return &it->second;
}

constexpr int kMaxBatch = 65536;
constexpr int kMaxTokens = 1 << 20;

class Transformer {
 public:
  // shard T: one of T tensor-parallel ranks (Megatron): heads, K/V heads, FFN width and
  // vocabulary divided by T, the hidden size whole.
  Transformer(const Def& m, const ZooOptions& o, int seq, int kv, int layers, DType dt, int shard)
      : m_m(m), m_b("zoo", o.model), m_B(o.batch), m_S(seq), m_N(kv), m_T(kv + seq), m_L(layers),
        m_D(m.d), m_H(m.heads / shard), m_Hkv(m.kv_head_count() / shard), m_dh(m.head_size()),
        m_F(m.ffn / shard), m_V(m.vocab / shard), m_EF(m.expert_ffn / shard), m_SF(m.shared_ffn / shard), m_dt(dt),
        m_last_logits(o.logits == "last"), m_skew(o.expert_skew) {}

  ir::Graph build() {
    const bool bert = m_m.family == Family::Bert;
    int x = embeddings();
    m_scale = m_b.param("attention.scale", {1}, m_dt, TensorRole::Constant);  // 1/sqrt(dh)
    if (!bert && m_S > 1) m_mask = m_b.param("attention.causal_mask", {m_S, m_T}, m_dt, TensorRole::Constant);
    if (rotary()) {  // rotary tables for positions N..N+S-1
      m_cos = m_b.param("rotary.cos", {m_S, rotary_dims()}, m_dt, TensorRole::Constant);
      m_sin = m_b.param("rotary.sin", {m_S, rotary_dims()}, m_dt, TensorRole::Constant);  // rotate_half's sign folded in
    }
    for (int i = 0; i < m_L; ++i) x = block(x, i);
    if (!bert) {
      x = norm(x, final_norm_name());
      if (m_last_logits && m_S > 1)  // logits_to_keep = 1: the last position of each sequence
        x = m_b.op(OpKind::Slice, "logits_to_keep", {x}, {m_B, 1, m_D}, m_dt, [&](ir::Layer& l) {
          l.starts = {0, m_S - 1, 0};
          l.ends = {m_B, m_S, m_D};
        });
      if (m_m.family == Family::Gpt2 || m_m.tied_embeddings)  // the LM head tied to the token embedding: x . wte^T
        x = m_b.op(OpKind::MatMul, "lm_head", {x, m_wte}, {m_B, m_b.shape(x)[1], m_V}, m_dt,
                   [](ir::Layer& l) { l.transpose_b = true; });
      else
        x = linear(x, m_m.family == Family::NeoX ? "embed_out" : "lm_head", m_V, false);
      if (m_m.final_softcap > 0) x = softcap(x, "final_logit_softcapping");
    }
    m_b.mark_output(x);
    return m_b.finish();
  }

 private:
  bool rms() const { return m_m.family == Family::Llama || m_m.family == Family::Gemma2; }
  bool rotary() const { return m_m.family == Family::Llama || m_m.family == Family::Gemma2 || m_m.family == Family::NeoX; }
  int64_t rotary_dims() const {
    return m_m.mla() ? m_m.qk_rope_dim : static_cast<int64_t>(static_cast<double>(m_dh) * m_m.rotary_share);
  }
  // Cached keys a layer attends: a windowed layer the last window's (vLLM's sliding window).
  int64_t cached(int layer) const {
    return m_m.windowed(layer) ? std::min<int64_t>(m_N, std::max<int64_t>(0, m_m.sliding_window - m_S)) : m_N;
  }

  std::string final_norm_name() const {
    switch (m_m.family) {
      case Family::Gpt2: return "transformer.ln_f";
      case Family::NeoX: return "gpt_neox.final_layer_norm";
      case Family::Opt: return "model.decoder.final_layer_norm";
      default: return "model.norm";
    }
  }

  std::string p(int layer, const std::string& what) const {
    switch (m_m.family) {
      case Family::Bert: return "encoder.layer." + std::to_string(layer) + "." + what;
      case Family::Gpt2: return "transformer.h." + std::to_string(layer) + "." + what;
      case Family::NeoX: return "gpt_neox.layers." + std::to_string(layer) + "." + what;
      case Family::Opt: return "model.decoder.layers." + std::to_string(layer) + "." + what;
      case Family::Llama:
      case Family::Gemma2: return "model.layers." + std::to_string(layer) + "." + what;
    }
    return what;
  }

  int embeddings() {
    const int64_t V = m_V;
    int ids = m_b.input("input_ids", {m_B, m_S}, DType::Int32);
    // HF's input_ids.view(-1, S): it also makes the batch-carrying ids the first op's first
    // input, which is where Frontend IR readers take the graph's batch from.
    ids = m_b.op(OpKind::Reshape, "input_ids.view", {ids}, {m_B, m_S}, DType::Int32);
    const std::string word = m_m.family == Family::Bert  ? "embeddings.word_embeddings"
                             : m_m.family == Family::Gpt2 ? "transformer.wte"
                             : m_m.family == Family::NeoX ? "gpt_neox.embed_in"
                             : m_m.family == Family::Opt  ? "model.decoder.embed_tokens"
                                                          : "model.embed_tokens";
    m_wte = m_b.param(word + ".weight", {V, m_D}, m_dt);
    int x = m_b.op(OpKind::Gather, word, {m_wte, ids}, {m_B, m_S, m_D}, m_dt, [](ir::Layer& l) { l.axes = {0}; });
    if (m_m.family == Family::Gemma2) {  // Gemma scales the embedding by sqrt(hidden size)
      int c = m_b.param("model.embed_scale", {1}, m_dt, TensorRole::Constant);
      x = binary(OpKind::Mul, x, c, "model.embed_scale");
    }
    if (m_m.max_pos > 0) {  // learned positions: rows N..N+S-1 of the table (OPT: 2 rows later), added
      const std::string pos = m_m.family == Family::Bert  ? "embeddings.position_embeddings"
                              : m_m.family == Family::Opt ? "model.decoder.embed_positions"
                                                          : "transformer.wpe";
      const int64_t off = m_m.position_offset;
      // (BERT's token-type row 0, for all-zero token_type_ids, is folded into this table.)
      int table = m_b.param(pos + ".weight", {m_m.max_pos + off, m_D}, m_dt);
      int rows = m_b.op(OpKind::Slice, pos, {table}, {m_S, m_D}, m_dt, [&](ir::Layer& l) {
        l.starts = {m_N + off, 0};
        l.ends = {m_N + off + m_S, m_D};
      });
      x = m_b.op(OpKind::ElementWiseAdd, pos + ".add", {x, rows}, {m_B, m_S, m_D}, m_dt);
    }
    if (m_m.family == Family::Bert) x = norm(x, "embeddings.LayerNorm");
    return x;
  }

  int norm(int x, const std::string& name) {
    const Shape s = m_b.shape(x);
    const int64_t w = s.back();  // the hidden size, or a bottleneck's width (MLA's q_a and kv_a norms)
    if (rms()) {
      int g = m_b.param(name + ".weight", {w}, m_dt);
      return m_b.op(OpKind::RmsNorm, name, {x, g}, s, m_dt, [&](ir::Layer& l) { l.epsilon = m_m.eps; });
    }
    int g = m_b.param(name + ".weight", {w}, m_dt);
    int b = m_b.param(name + ".bias", {w}, m_dt, TensorRole::Bias);
    return m_b.op(OpKind::LayerNorm, name, {x, g, b}, s, m_dt, [&](ir::Layer& l) { l.epsilon = m_m.eps; });
  }

  // x [.., K] . W [K,N] (+ bias [N]).
  int linear(int x, const std::string& name, int64_t n, bool bias) {
    Shape s = m_b.shape(x);
    const int64_t k = s.back();
    s.back() = n;
    std::vector<int> ins{x, m_b.param(name + ".weight", {k, n}, m_dt)};
    if (bias) ins.push_back(m_b.param(name + ".bias", {n}, m_dt, TensorRole::Bias));
    return m_b.op(OpKind::MatMul, name, ins, s, m_dt);
  }

  int unary(OpKind k, int x, const std::string& name) { return m_b.op(k, name, {x}, m_b.shape(x), m_dt); }

  int binary(OpKind k, int a, int b, const std::string& name) {
    return m_b.op(k, name, {a, b}, m_b.shape(a), m_dt);
  }

  int activate(int x, const std::string& name) {
    const OpKind k = m_m.act == Activation::Silu ? OpKind::Silu : m_m.act == Activation::Relu ? OpKind::Relu : OpKind::Gelu;
    return unary(k, x, name);
  }

  // Gemma 2's logit soft-capping, c * tanh(x / c) (1/c folded into the scale before it).
  int softcap(int x, const std::string& name) {
    int c = m_b.param(name + ".cap", {1}, m_dt, TensorRole::Constant);
    if (name == "final_logit_softcapping") x = binary(OpKind::Mul, x, c, name + ".div");
    return binary(OpKind::Mul, unary(OpKind::Tanh, x, name + ".tanh"), c, name);
  }

  // [B,S,heads*dh] -> [B,heads,S,dh]
  int split_heads(int x, const std::string& name, int64_t heads) {
    int r = m_b.op(OpKind::Reshape, name + ".view", {x}, {m_B, m_S, heads, m_dh}, m_dt);
    return m_b.op(OpKind::Transpose, name + ".transpose", {r}, {m_B, heads, m_S, m_dh}, m_dt,
                  [](ir::Layer& l) { l.perm = {0, 2, 1, 3}; });
  }

  // HF's repeat_kv: [B,Hkv,T,dh] -> [B,H,T,dh], each K/V head shared by H / Hkv query heads.
  int repeat_kv(int x, const std::string& name, int64_t t) {
    if (m_Hkv == m_H) return x;
    const int64_t rep = m_H / m_Hkv;
    int r = m_b.op(OpKind::Reshape, name + ".expand_view", {x}, {m_B, m_Hkv, 1, t, m_dh}, m_dt);
    int c = m_b.op(OpKind::Concat, name + ".expand", std::vector<int>(static_cast<size_t>(rep), r),
                   {m_B, m_Hkv, rep, t, m_dh}, m_dt, [](ir::Layer& l) { l.axes = {2}; });
    return m_b.op(OpKind::Reshape, name + ".repeat", {c}, {m_B, m_H, t, m_dh}, m_dt);
  }

  // HF's apply_rotary_pos_emb: x * cos + rotate_half(x) * sin, with rotate_half(x) =
  // cat(-x2, x1); the sign sits in the sin table, so rotate_half is cat(x2, x1). GPT-NeoX
  // rotates the first rotary_pct of a head's dims and passes the rest through.
  int rope(int x, const std::string& name) {
    const int64_t rd = rotary_dims(), half = rd / 2, heads = m_b.shape(x)[1], width = m_b.shape(x).back();
    int rot_in = rd == width ? x : slice_last(x, 0, rd, name + ".x_rot");
    int x1 = slice_last(rot_in, 0, half, name + ".x1");
    int x2 = slice_last(rot_in, half, rd, name + ".x2");
    int rot = m_b.op(OpKind::Concat, name + ".rotate_half", {x2, x1}, {m_B, heads, m_S, rd}, m_dt,
                     [](ir::Layer& l) { l.axes = {-1}; });
    int a = binary(OpKind::Mul, rot_in, m_cos, name + ".mul_cos");
    int b = binary(OpKind::Mul, rot, m_sin, name + ".mul_sin");
    if (rd == width) return binary(OpKind::ElementWiseAdd, a, b, name);
    int y = binary(OpKind::ElementWiseAdd, a, b, name + ".rotated");
    int pass = slice_last(x, rd, width, name + ".x_pass");
    return m_b.op(OpKind::Concat, name, {y, pass}, {m_B, heads, m_S, width}, m_dt, [](ir::Layer& l) { l.axes = {-1}; });
  }

  // Columns [a, b) of the last axis.
  int slice_last(int x, int64_t a, int64_t b, const std::string& name) {
    const Shape s = m_b.shape(x);
    Shape out = s;
    out.back() = b - a;
    return m_b.op(OpKind::Slice, name, {x}, out, m_dt, [&](ir::Layer& l) {
      l.starts.assign(s.size(), 0);
      l.starts.back() = a;
      l.ends = s;
      l.ends.back() = b;
    });
  }

  int reshape(int x, const std::string& name, const Shape& to) { return m_b.op(OpKind::Reshape, name, {x}, to, m_dt); }
  int transpose(int x, const std::string& name, const std::vector<int64_t>& perm) {
    const Shape s = m_b.shape(x);
    Shape out(s.size());
    for (size_t j = 0; j < perm.size(); ++j) out[j] = s[static_cast<size_t>(perm[j])];
    return m_b.op(OpKind::Transpose, name, {x}, out, m_dt, [&](ir::Layer& l) { l.perm = perm; });
  }
  int concat_last(const std::vector<int>& xs, const std::string& name) {
    Shape out = m_b.shape(xs[0]);
    out.back() = 0;
    for (int x : xs) out.back() += m_b.shape(x).back();
    return m_b.op(OpKind::Concat, name, xs, out, m_dt, [](ir::Layer& l) { l.axes = {-1}; });
  }

  // The new k or v [B,H,S,dh]: a graph output (appended to the cache), joined after the
  // n cached positions when there are any.
  int with_cache(int kv, int layer, int64_t n, const std::string& which) {
    m_b.mark_output(kv);
    if (n == 0) return kv;
    int past = m_b.input("past_" + which + "." + std::to_string(layer), {m_B, m_Hkv, n, m_dh}, m_dt);
    return m_b.op(OpKind::Concat, p(layer, "attn.cat_" + which), {past, kv}, {m_B, m_Hkv, n + m_S, m_dh}, m_dt,
                  [](ir::Layer& l) { l.axes = {2}; });
  }

  // The causal mask of S queries over t keys (a windowed layer's shorter span: its own table).
  int mask(int64_t t) {
    if (t == m_T || m_mask < 0) return m_mask;
    auto it = m_window_masks.find(t);
    if (it == m_window_masks.end())
      it = m_window_masks.emplace(t, m_b.param("attention.window_mask." + std::to_string(t), {m_S, t}, m_dt, TensorRole::Constant)).first;
    return it->second;
  }

  struct AttnNames {
    std::string prefix, q, k, v, o;
    bool qkv_bias, o_bias;
  };
  AttnNames attn_names() const {
    switch (m_m.family) {
      case Family::Bert: return {"attention.self.", "query", "key", "value", "attention.output.dense", true, true};
      case Family::Gpt2: return {"attn.", "c_attn.q", "c_attn.k", "c_attn.v", "attn.c_proj", true, true};
      case Family::NeoX:
        return {"attention.", "query_key_value.q", "query_key_value.k", "query_key_value.v", "attention.dense", true, true};
      case Family::Opt: return {"self_attn.", "q_proj", "k_proj", "v_proj", "self_attn.out_proj", true, true};
      case Family::Llama:
      case Family::Gemma2: break;
    }
    return {"self_attn.", "q_proj", "k_proj", "v_proj", "self_attn.o_proj", m_m.qkv_bias, m_m.o_bias};
  }

  // DeepSeek's multi-head latent attention as vLLM runs it (docs/llm_models.md#multi-head-latent-attention).
  // Each token caches one latent: kv_lora_rank normed dims of x W_kv_a and qk_rope_head_dim rotary
  // key dims shared by every head ([B, T, r + rd]: past_latent.L in, this pass's rows out). A
  // prefill (and any pass of several tokens) rebuilds every head's keys and values from the
  // latents through kv_b_proj and attends as usual, keys of nope + rope dims and values of
  // v_head_dim. A decode step absorbs kv_b_proj's key half into the queries (q_nope W_UK per
  // head: queries in the latent's space) and attends the latent cache itself, every head a
  // query row of one shared key-and-value tensor (FlashMLA), then applies the value half W_UV
  // per head to the context: the cache is read once, never expanded.
  int mla_attention(int h, int i) {
    const std::string a = "self_attn.";
    const int64_t nope = m_m.qk_nope_dim, rd = m_m.qk_rope_dim, r = m_m.kv_lora_rank, dv = m_m.v_head_dim, qk = nope + rd;
    int q = m_m.q_lora_rank > 0 ? linear(norm(linear(h, p(i, a + "q_a_proj"), m_m.q_lora_rank, false), p(i, a + "q_a_layernorm")),
                                         p(i, a + "q_b_proj"), m_H * qk, false)
                                : linear(h, p(i, a + "q_proj"), m_H * qk, false);
    q = split_heads(q, p(i, a + "q"), m_H);  // [B,H,S,nope+rope]
    int q_nope = slice_last(q, 0, nope, p(i, a + "q_nope"));
    int q_pe = rope(slice_last(q, nope, qk, p(i, a + "q_pe")), p(i, a + "q_rope"));
    // This pass's latents: the normed compressed K/V and the rotary key.
    int kv_a = linear(h, p(i, a + "kv_a_proj_with_mqa"), r + rd, false);
    int c = norm(slice_last(kv_a, 0, r, p(i, a + "compressed_kv")), p(i, a + "kv_a_layernorm"));
    int k_pe = reshape(slice_last(kv_a, r, r + rd, p(i, a + "k_pe")), p(i, a + "k_pe.view"), {m_B, 1, m_S, rd});
    k_pe = reshape(rope(k_pe, p(i, a + "k_rope")), p(i, a + "k_rope.view"), {m_B, m_S, rd});
    int latent = concat_last({c, k_pe}, p(i, a + "latent"));  // [B,S,r+rd]: appended to the cache
    m_b.mark_output(latent);
    const int64_t n = cached(i), t = n + m_S;
    int all = latent;
    if (n > 0) {
      int past = m_b.input("past_latent." + std::to_string(i), {m_B, n, r + rd}, m_dt);
      all = m_b.op(OpKind::Concat, p(i, a + "cat_latent"), {past, latent}, {m_B, t, r + rd}, m_dt, [](ir::Layer& l) { l.axes = {1}; });
    }
    int ctx;  // [B,S,H*dv]
    if (n > 0 && m_S == 1) {
      // Queries in the latent space: per head [B*S, nope] . W_UK [nope, r].
      int qn = reshape(transpose(q_nope, p(i, a + "q_nope.heads_first"), {1, 0, 2, 3}), p(i, a + "q_nope.view"), {m_H, m_B * m_S, nope});
      int w_uk = m_b.param(p(i, a + "kv_b_proj.k_absorbed.weight"), {m_H, nope, r}, m_dt);
      int ql = m_b.op(OpKind::BatchMatMul, p(i, a + "q_absorb"), {qn, w_uk}, {m_H, m_B * m_S, r}, m_dt);
      ql = transpose(reshape(ql, p(i, a + "q_absorb.view"), {m_H, m_B, m_S, r}), p(i, a + "q_absorb.transpose"), {1, 0, 2, 3});
      int qf = reshape(concat_last({ql, q_pe}, p(i, a + "q_latent")), p(i, a + "q_latent.view"), {m_B, 1, m_H * m_S, r + rd});
      int kv = reshape(all, p(i, a + "latent.view"), {m_B, 1, t, r + rd});
      int s = m_b.op(OpKind::BatchMatMul, p(i, a + "scores"), {qf, kv}, {m_B, 1, m_H * m_S, t}, m_dt, [](ir::Layer& l) { l.transpose_b = true; });
      s = binary(OpKind::Mul, s, m_scale, p(i, a + "scale"));
      s = m_b.op(OpKind::Softmax, p(i, a + "softmax"), {s}, m_b.shape(s), m_dt, [](ir::Layer& l) { l.axes = {-1}; });
      int cl = m_b.op(OpKind::BatchMatMul, p(i, a + "context"), {s, kv}, {m_B, 1, m_H * m_S, r + rd}, m_dt);
      cl = slice_last(cl, 0, r, p(i, a + "context.latent"));  // the rotary columns carry no value
      cl = reshape(transpose(reshape(cl, p(i, a + "context.view"), {m_B, m_H, m_S, r}), p(i, a + "context.heads_first"), {1, 0, 2, 3}),
                   p(i, a + "context.heads"), {m_H, m_B * m_S, r});
      int w_uv = m_b.param(p(i, a + "kv_b_proj.v_absorbed.weight"), {m_H, r, dv}, m_dt);
      int o = m_b.op(OpKind::BatchMatMul, p(i, a + "v_absorb"), {cl, w_uv}, {m_H, m_B * m_S, dv}, m_dt);
      o = transpose(reshape(o, p(i, a + "v_absorb.view"), {m_H, m_B, m_S, dv}), p(i, a + "v_absorb.transpose"), {1, 2, 0, 3});
      ctx = reshape(o, p(i, a + "context.flat"), {m_B, m_S, m_H * dv});
    } else {
      // Every head's keys and values rebuilt from the latents.
      int cl = n > 0 ? slice_last(all, 0, r, p(i, a + "latent.compressed")) : c;
      int kr = n > 0 ? slice_last(all, r, r + rd, p(i, a + "latent.rope")) : k_pe;
      int kv = linear(cl, p(i, a + "kv_b_proj"), m_H * (nope + dv), false);
      kv = transpose(reshape(kv, p(i, a + "kv_b_proj.view"), {m_B, t, m_H, nope + dv}), p(i, a + "kv_b_proj.transpose"), {0, 2, 1, 3});
      int k_nope = slice_last(kv, 0, nope, p(i, a + "k_nope"));
      int v = slice_last(kv, nope, nope + dv, p(i, a + "value"));
      int kr1 = reshape(kr, p(i, a + "k_rope.heads"), {m_B, 1, t, rd});
      int kre = m_b.op(OpKind::Concat, p(i, a + "k_rope.expand"), std::vector<int>(static_cast<size_t>(m_H), kr1), {m_B, m_H, t, rd}, m_dt,
                       [](ir::Layer& l) { l.axes = {1}; });
      int k = concat_last({k_nope, kre}, p(i, a + "key"));
      int qf = concat_last({q_nope, q_pe}, p(i, a + "query"));
      int s = m_b.op(OpKind::BatchMatMul, p(i, a + "scores"), {qf, k}, {m_B, m_H, m_S, t}, m_dt, [](ir::Layer& l) { l.transpose_b = true; });
      s = binary(OpKind::Mul, s, m_scale, p(i, a + "scale"));
      if (const int mk = mask(t); mk >= 0) s = binary(OpKind::ElementWiseAdd, s, mk, p(i, a + "causal_mask"));
      s = m_b.op(OpKind::Softmax, p(i, a + "softmax"), {s}, m_b.shape(s), m_dt, [](ir::Layer& l) { l.axes = {-1}; });
      int o = m_b.op(OpKind::BatchMatMul, p(i, a + "context"), {s, v}, {m_B, m_H, m_S, dv}, m_dt);
      ctx = reshape(transpose(o, p(i, a + "context.transpose"), {0, 2, 1, 3}), p(i, a + "context.view"), {m_B, m_S, m_H * dv});
    }
    return linear(ctx, p(i, a + "o_proj"), m_D, false);
  }

  int attention(int h, int i) {
    if (m_m.mla()) return mla_attention(h, i);
    const bool bert = m_m.family == Family::Bert;
    const AttnNames n = attn_names();
    const std::string& a = n.prefix;
    int q = split_heads(linear(h, p(i, a + n.q), m_H * m_dh, n.qkv_bias), p(i, a + n.q), m_H);
    int k = split_heads(linear(h, p(i, a + n.k), m_Hkv * m_dh, n.qkv_bias), p(i, a + n.k), m_Hkv);
    int v = split_heads(linear(h, p(i, a + n.v), m_Hkv * m_dh, n.qkv_bias), p(i, a + n.v), m_Hkv);
    if (rotary()) {
      q = rope(q, p(i, a + "q_rope"));
      k = rope(k, p(i, a + "k_rope"));
    }
    const int64_t cached_n = bert ? 0 : cached(i), t = cached_n + m_S;
    if (!bert) {
      k = with_cache(k, i, cached_n, "key");
      v = with_cache(v, i, cached_n, "value");
    }
    k = repeat_kv(k, p(i, a + "k_repeat"), t);
    v = repeat_kv(v, p(i, a + "v_repeat"), t);
    int s = m_b.op(OpKind::BatchMatMul, p(i, a + "scores"), {q, k}, {m_B, m_H, m_S, t}, m_dt,
                   [](ir::Layer& l) { l.transpose_b = true; });
    s = binary(OpKind::Mul, s, m_scale, p(i, a + "scale"));
    if (m_m.attn_softcap > 0) s = softcap(s, p(i, a + "softcap"));
    if (const int mk = mask(t); mk >= 0) s = binary(OpKind::ElementWiseAdd, s, mk, p(i, a + "causal_mask"));
    s = m_b.op(OpKind::Softmax, p(i, a + "softmax"), {s}, m_b.shape(s), m_dt, [](ir::Layer& l) { l.axes = {-1}; });
    int c = m_b.op(OpKind::BatchMatMul, p(i, a + "context"), {s, v}, {m_B, m_H, m_S, m_dh}, m_dt);
    c = m_b.op(OpKind::Transpose, p(i, a + "context.transpose"), {c}, {m_B, m_S, m_H, m_dh}, m_dt,
               [](ir::Layer& l) { l.perm = {0, 2, 1, 3}; });
    c = m_b.op(OpKind::Reshape, p(i, a + "context.view"), {c}, {m_B, m_S, m_H * m_dh}, m_dt);
    return linear(c, p(i, n.o), m_D, n.o_bias);
  }

  // act(x W_gate) * (x W_up), then W_down: the Llama-layout MLP (an expert, the shared expert).
  int gated_mlp(int h, const std::string& gate, const std::string& up, const std::string& down, const std::string& pre, int64_t f,
                bool bias) {
    int g = activate(linear(h, gate, f, bias), pre + "act_fn");
    int u = linear(h, up, f, bias);
    return linear(binary(OpKind::Mul, g, u, pre + "mul"), down, m_D, bias);
  }

  // A mixture-of-experts MLP (Mixtral's block_sparse_moe, Qwen2-MoE's sparse block) as vLLM's
  // fused MoE runs it: the router's logits, softmax and top-k; the tokens gathered expert by
  // expert (B*S*k assignments spread evenly over the experts, as a balanced router gives them,
  // each expert's rows padded to the most any expert gets); the experts' gated MLPs as batched
  // GEMMs over the experts that have tokens (one without reads no weights); the outputs back in
  // token order, weighted and summed over each token's k experts. Qwen2-MoE adds its shared
  // expert scaled by a sigmoid gate, DeepSeek its shared experts (one MLP of their summed width)
  // as they are; DeepSeek-V3 scores the experts with a sigmoid and picks by score + a bias.
  int moe(int h, int i) {
    const bool mixtral = m_m.architecture == "MixtralForCausalLM";
    const std::string pre = mixtral ? "block_sparse_moe." : "mlp.";
    const int64_t tok = m_B * m_S, k = m_m.experts_per_token, assignments = tok * k;
    // Experts with tokens as uniform routing expects them; rows of each: the busiest's (skew x
    // the mean, at most every token once).
    const int64_t active = active_experts(m_m.experts, k, tok);
    const int64_t rows = std::min<int64_t>(tok, static_cast<int64_t>(std::ceil(m_skew * static_cast<double>(assignments) / static_cast<double>(active) - 1e-9)));
    int x = m_b.op(OpKind::Reshape, p(i, pre + "flatten"), {h}, {tok, m_D}, m_dt);
    int logits = linear(x, p(i, pre + "gate"), m_m.experts, false);
    int probs = m_m.sigmoid_router
                    ? unary(OpKind::Sigmoid, logits, p(i, pre + "routing"))
                    : m_b.op(OpKind::Softmax, p(i, pre + "routing"), {logits}, {tok, m_m.experts}, m_dt, [](ir::Layer& l) { l.axes = {-1}; });
    int choice = probs;
    if (m_m.sigmoid_router)
      choice = binary(OpKind::ElementWiseAdd, probs,
                      m_b.param(p(i, pre + "gate.e_score_correction_bias"), {m_m.experts}, m_dt, TensorRole::Bias), p(i, pre + "routing.bias"));
    // top-k: one pass over each token's probabilities, and their k weights
    m_b.op(OpKind::ReduceMax, p(i, pre + "topk"), {choice}, {tok, 1}, m_dt, [](ir::Layer& l) {
      l.axes = {-1};
      l.keepdims = true;
    });
    int weights = m_b.op(OpKind::Slice, p(i, pre + "topk_weights"), {probs}, {tok, k}, m_dt, [&](ir::Layer& l) {
      l.starts = {0, 0};
      l.ends = {tok, k};
    });
    weights = m_b.op(OpKind::Reshape, p(i, pre + "topk_weights.view"), {weights}, {assignments, 1}, m_dt);
    // Dispatch: each active expert's rows (token indices, padding included).
    const std::string ex = pre + "experts.";
    int idx = m_b.input(p(i, ex + "tokens"), {active * rows}, DType::Int32);
    int xe = m_b.op(OpKind::Gather, p(i, ex + "dispatch"), {x, idx}, {active * rows, m_D}, m_dt, [](ir::Layer& l) { l.axes = {0}; });
    xe = m_b.op(OpKind::Reshape, p(i, ex + "dispatch.view"), {xe}, {active, rows, m_D}, m_dt);
    auto expert_gemm = [&](int in, const std::string& name, int64_t kdim, int64_t n) {
      int w = m_b.param(p(i, ex + name + ".weight"), {active, kdim, n}, m_dt);
      return m_b.op(OpKind::BatchMatMul, p(i, ex + name), {in, w}, {active, rows, n}, m_dt);
    };
    int g = activate(expert_gemm(xe, mixtral ? "w1" : "gate_proj", m_D, m_EF), p(i, ex + "act_fn"));
    int u = expert_gemm(xe, mixtral ? "w3" : "up_proj", m_D, m_EF);
    int y = expert_gemm(binary(OpKind::Mul, g, u, p(i, ex + "mul")), mixtral ? "w2" : "down_proj", m_EF, m_D);
    // Combine: back in token order (padding rows dropped), weighted, summed over k.
    y = m_b.op(OpKind::Reshape, p(i, pre + "combine.flatten"), {y}, {active * rows, m_D}, m_dt);
    int order = m_b.input(p(i, pre + "combine.order"), {assignments}, DType::Int32);
    y = m_b.op(OpKind::Gather, p(i, pre + "combine.unpermute"), {y, order}, {assignments, m_D}, m_dt, [](ir::Layer& l) { l.axes = {0}; });
    y = m_b.op(OpKind::Mul, p(i, pre + "combine.weight"), {y, weights}, {assignments, m_D}, m_dt);
    y = m_b.op(OpKind::Reshape, p(i, pre + "combine.view"), {y}, {tok, k, m_D}, m_dt);
    y = m_b.op(OpKind::ReduceSum, p(i, pre + "combine"), {y}, {tok, m_D}, m_dt, [](ir::Layer& l) {
      l.axes = {1};
      l.keepdims = false;
    });
    if (m_SF > 0) {
      const std::string se = pre + (m_m.shared_gate ? "shared_expert." : "shared_experts.");
      int s = gated_mlp(x, p(i, se + "gate_proj"), p(i, se + "up_proj"), p(i, se + "down_proj"), p(i, se), m_SF, false);
      if (m_m.shared_gate) {
        int sg = unary(OpKind::Sigmoid, linear(x, p(i, pre + "shared_expert_gate"), 1, false), p(i, pre + "shared_expert_gate.sigmoid"));
        s = m_b.op(OpKind::Mul, p(i, se + "scale"), {s, sg}, {tok, m_D}, m_dt);
      }
      y = binary(OpKind::ElementWiseAdd, y, s, p(i, se + "add"));
    }
    return m_b.op(OpKind::Reshape, p(i, pre + "unflatten"), {y}, {m_B, m_S, m_D}, m_dt);
  }

  int llama_mlp(int h, int i) {
    if (m_m.is_moe_layer(i)) return moe(h, i);
    return gated_mlp(h, p(i, "mlp.gate_proj"), p(i, "mlp.up_proj"), p(i, "mlp.down_proj"), p(i, "mlp."), m_F, m_m.mlp_bias);
  }

  // Two matrices with biases and an activation between: GPT-NeoX's and OPT's MLPs.
  int plain_mlp(int h, const std::string& in, const std::string& out, const std::string& act) {
    return linear(activate(linear(h, in, m_F, true), act), out, m_D, true);
  }

  int block(int x, int i) {
    switch (m_m.family) {
      case Family::Bert: {  // post-LN
        int y = attention(x, i);
        x = norm(binary(OpKind::ElementWiseAdd, x, y, p(i, "attention.output.add")), p(i, "attention.output.LayerNorm"));
        y = linear(x, p(i, "intermediate.dense"), m_F, true);
        y = unary(OpKind::Gelu, y, p(i, "intermediate.gelu"));
        y = linear(y, p(i, "output.dense"), m_D, true);
        return norm(binary(OpKind::ElementWiseAdd, x, y, p(i, "output.add")), p(i, "output.LayerNorm"));
      }
      case Family::Gpt2: {  // pre-LN
        int y = attention(norm(x, p(i, "ln_1")), i);
        x = binary(OpKind::ElementWiseAdd, x, y, p(i, "attn.add"));
        y = linear(norm(x, p(i, "ln_2")), p(i, "mlp.c_fc"), m_F, true);
        y = unary(OpKind::Gelu, y, p(i, "mlp.gelu"));
        y = linear(y, p(i, "mlp.c_proj"), m_D, true);
        return binary(OpKind::ElementWiseAdd, x, y, p(i, "mlp.add"));
      }
      case Family::Llama: {  // pre-RMSNorm, SiLU-gated MLP (or a mixture of experts)
        int y = attention(norm(x, p(i, "input_layernorm")), i);
        x = binary(OpKind::ElementWiseAdd, x, y, p(i, "self_attn.add"));
        y = llama_mlp(norm(x, p(i, "post_attention_layernorm")), i);
        return binary(OpKind::ElementWiseAdd, x, y, p(i, "mlp.add"));
      }
      case Family::Gemma2: {  // RMSNorms before and after both attention and MLP
        int y = norm(attention(norm(x, p(i, "input_layernorm")), i), p(i, "post_attention_layernorm"));
        x = binary(OpKind::ElementWiseAdd, x, y, p(i, "self_attn.add"));
        y = norm(llama_mlp(norm(x, p(i, "pre_feedforward_layernorm")), i), p(i, "post_feedforward_layernorm"));
        return binary(OpKind::ElementWiseAdd, x, y, p(i, "mlp.add"));
      }
      case Family::NeoX: {  // x + attn(ln1(x)) + mlp(ln2(x)), or one after the other
        int y = attention(norm(x, p(i, "input_layernorm")), i);
        if (m_m.parallel_residual) {
          int m = plain_mlp(norm(x, p(i, "post_attention_layernorm")), p(i, "mlp.dense_h_to_4h"), p(i, "mlp.dense_4h_to_h"), p(i, "mlp.act"));
          return binary(OpKind::ElementWiseAdd, binary(OpKind::ElementWiseAdd, m, y, p(i, "attn.add")), x, p(i, "mlp.add"));
        }
        x = binary(OpKind::ElementWiseAdd, x, y, p(i, "attn.add"));
        y = plain_mlp(norm(x, p(i, "post_attention_layernorm")), p(i, "mlp.dense_h_to_4h"), p(i, "mlp.dense_4h_to_h"), p(i, "mlp.act"));
        return binary(OpKind::ElementWiseAdd, x, y, p(i, "mlp.add"));
      }
      case Family::Opt: {  // pre-LN, ReLU MLP
        int y = attention(norm(x, p(i, "self_attn_layer_norm")), i);
        x = binary(OpKind::ElementWiseAdd, x, y, p(i, "self_attn.add"));
        y = plain_mlp(norm(x, p(i, "final_layer_norm")), p(i, "fc1"), p(i, "fc2"), p(i, "activation_fn"));
        return binary(OpKind::ElementWiseAdd, x, y, p(i, "mlp.add"));
      }
    }
    return x;
  }

  const Def& m_m;
  GraphBuilder m_b;
  int64_t m_B, m_S, m_N, m_T;
  int m_L;
  int64_t m_D, m_H, m_Hkv, m_dh, m_F, m_V, m_EF, m_SF;
  DType m_dt;
  bool m_last_logits;
  double m_skew;  // the busiest expert's tokens over the mean
  int m_wte = -1, m_scale = -1, m_mask = -1, m_cos = -1, m_sin = -1;
  std::map<int64_t, int> m_window_masks;  // key span -> mask
};

}  // namespace

std::vector<std::string> transformer_names() {
  std::vector<std::string> n;
  for (const auto& d : defs()) n.push_back(d.first);
  return n;
}

bool is_transformer(const std::string& model) { return find_def(model) != nullptr; }

std::optional<TransformerShape> transformer_shape(const std::string& model) {
  const Def* d = find_def(model);
  if (!d) return std::nullopt;
  TransformerShape s;
  // Llama's own layout (no biases, MoE, windows, ties or odd head sizes) is what tensor- and
  // pipeline-parallel pipelines are built for: "llama"; its relatives are named by their layout.
  const bool plain_llama = d->family == Family::Llama && !d->qkv_bias && !d->o_bias && !d->mlp_bias && !d->tied_embeddings &&
                           d->experts == 0 && d->sliding_window == 0 && d->head_size() * d->heads == d->d;
  switch (d->family) {
    case Family::Bert: s.family = "bert"; break;
    case Family::Gpt2: s.family = "gpt2"; break;
    case Family::Llama: {
      // Mixtral's layout: Llama's with every MLP a mixture of experts, none shared.
      const bool plain_moe = d->experts > 0 && !d->qkv_bias && !d->o_bias && !d->mlp_bias && !d->tied_embeddings && d->sliding_window == 0 &&
                             d->head_size() * d->heads == d->d && d->shared_ffn == 0 && d->moe_every == 1 && d->dense_layers.empty();
      s.family = d->mla() ? "deepseek" : plain_llama ? "llama" : plain_moe ? "llama-moe" : "llama-variant";
      break;
    }
    case Family::Gemma2: s.family = "gemma2"; break;
    case Family::NeoX: s.family = "neox"; break;
    case Family::Opt: s.family = "opt"; break;
  }
  s.architecture = d->architecture;
  s.layers = d->layers, s.d = d->d, s.heads = d->heads, s.kv_heads = d->kv_head_count();
  s.ffn = d->ffn, s.vocab = d->vocab, s.eps = d->eps, s.head_dim = d->head_size();
  s.context = d->context > 0 ? d->context : d->max_pos;
  s.rotary = d->max_pos == 0;
  s.sliding_window = d->sliding_window;
  s.every_layer_windowed = d->window_layers == 0;
  s.qkv_bias = d->qkv_bias, s.o_bias = d->o_bias, s.mlp_bias = d->mlp_bias, s.tied_embeddings = d->tied_embeddings;
  s.experts = d->experts, s.experts_per_token = d->experts_per_token, s.expert_ffn = d->expert_ffn;
  s.shared_ffn = d->shared_ffn, s.every_layer_moe = d->moe_every == 1 && d->dense_layers.empty();
  if (d->mla()) s.latent_kv = d->kv_lora_rank + d->qk_rope_dim;
  s.q_lora_rank = d->q_lora_rank, s.kv_lora_rank = d->kv_lora_rank, s.qk_nope_dim = d->qk_nope_dim, s.qk_rope_dim = d->qk_rope_dim;
  s.v_head_dim = d->v_head_dim, s.shared_gate = d->shared_gate, s.sigmoid_router = d->sigmoid_router;
  s.rotary_share = d->rotary_share;
  s.attn_softcap = d->attn_softcap, s.final_softcap = d->final_softcap;
  s.parallel_residual = d->family == Family::NeoX && d->parallel_residual;
  s.activation = d->family == Family::Gpt2 || d->family == Family::Bert ? "gelu"
                 : d->act == Activation::Relu                          ? "relu"
                 : d->act == Activation::Silu                          ? "silu"
                                                                       : "gelu";
  while (d->experts > 0 && s.dense_first < d->layers && !d->is_moe_layer(s.dense_first)) ++s.dense_first;
  s.parameters = parameter_count(*d), s.active_parameters = parameter_count(*d, true);
  // The routed experts: (total - active) counts E - k of them in every MoE layer.
  if (d->experts > d->experts_per_token)
    s.expert_parameters = (s.parameters - s.active_parameters) / (d->experts - d->experts_per_token) * d->experts;
  Def no_layers = *d;
  no_layers.layers = 0;
  s.outside_layers = parameter_count(no_layers);
  return s;
}

ir::Graph make_transformer(const ZooOptions& o) {
  const Def* m = find_def(o.model);
  if (!m) {
    std::string valid;
    for (const std::string& n : transformer_names()) valid += (valid.empty() ? "" : ", ") + n;
    throw InputError("zoo", "model", "unknown transformer '" + o.model + "'; valid: " + valid);
  }
  if (o.batch < 1 || o.batch > kMaxBatch)
    throw InputError("zoo", "batch", "batch must be in 1.." + std::to_string(kMaxBatch) + ", got " + std::to_string(o.batch));
  const DType dt = zoo_dtype(o.dtype, DType::Float16, "zoo", true);
  if (o.kv_len < 0 || o.kv_len > kMaxTokens)
    throw InputError("zoo", "kv-len", "kv-len must be in 0.." + std::to_string(kMaxTokens) + ", got " + std::to_string(o.kv_len));
  if (o.kv_len > 0 && m->family == Family::Bert)
    throw InputError("zoo", "kv-len", o.model + " is an encoder without a K/V cache: --kv-len applies to the decoders (gpt2*, gpt3*, llama*, configs)");
  const int seq = o.seq != 0 ? o.seq : o.kv_len > 0 ? 1 : 128;
  if (seq < 1 || seq > kMaxTokens)
    throw InputError("zoo", "seq", "seq must be in 1.." + std::to_string(kMaxTokens) + ", got " + std::to_string(seq));
  if (m->max_pos > 0 && int64_t{seq} + o.kv_len > m->max_pos)
    throw InputError("zoo", o.kv_len > 0 ? "kv-len" : "seq",
                     o.model + " has " + std::to_string(m->max_pos) + " learned positions; seq " + std::to_string(seq) +
                         " + kv-len " + std::to_string(o.kv_len) + " exceeds them");
  if (o.logits != "all" && o.logits != "last")
    throw InputError("zoo", "logits", "--logits takes all or last, got '" + o.logits + "'");
  if (!(o.expert_skew >= 1 && o.expert_skew <= 1e6))
    throw InputError("zoo", "expert_skew", "the busiest expert's load over the mean must be in [1, 1e6], got " + std::to_string(o.expert_skew));
  if (o.layers < 0 || o.layers > m->layers)
    throw InputError("zoo", "layers", o.model + " has " + std::to_string(m->layers) + " layers; --layers must be in 1.." +
                                          std::to_string(m->layers) + " (0: all), got " + std::to_string(o.layers));
  const int kv_heads = m->kv_head_count();
  if (o.shard < 1 || m->heads % o.shard != 0 || kv_heads % o.shard != 0 || m->ffn % o.shard != 0 || m->vocab % o.shard != 0 ||
      m->expert_ffn % o.shard != 0 || m->shared_ffn % o.shard != 0)
    throw InputError("zoo", "shard", "--shard " + std::to_string(o.shard) + " must divide " + o.model + "'s heads (" + std::to_string(m->heads) +
                                         "), K/V heads (" + std::to_string(kv_heads) + "), FFN width (" + std::to_string(m->ffn) +
                                         (m->experts > 0 ? "), expert width (" + std::to_string(m->expert_ffn) : std::string()) +
                                         ") and vocabulary (" + std::to_string(m->vocab) + ")");
  Transformer t(*m, o, seq, o.kv_len, o.layers == 0 ? m->layers : o.layers, dt, o.shard);
  return t.build();
}

}  // namespace npusim::frontends::zoo
