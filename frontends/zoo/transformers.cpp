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

#include "frontends/zoo/graph_builder.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

namespace {

using ir::DType;
using ir::OpKind;
using ir::Shape;
using ir::TensorRole;

enum class Family { Bert, Gpt2, Llama };

struct Def {
  Family family;
  int layers, d, heads, ffn, vocab;
  int max_pos;      // learned position table rows (0: rotary positions, any length)
  double eps;
  int kv_heads = 0;  // grouped-query attention: K/V heads (0: as many as query heads)
  int context = 0;   // max_position_embeddings of the Hugging Face config (0: max_pos)
};

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

const Def* find_def(const std::string& model) {
  for (const auto& [name, def] : defs())
    if (name == model) return &def;
  return nullptr;
}

constexpr int kMaxBatch = 65536;
constexpr int kMaxTokens = 1 << 20;

class Transformer {
 public:
  // shard T: one of T tensor-parallel ranks (Megatron): heads, K/V heads, FFN width and
  // vocabulary divided by T, the hidden size whole.
  Transformer(const Def& m, const ZooOptions& o, int seq, int kv, int layers, DType dt, int shard)
      : m_m(m), m_b("zoo", o.model), m_B(o.batch), m_S(seq), m_N(kv), m_T(kv + seq), m_L(layers),
        m_D(m.d), m_H(m.heads / shard), m_Hkv((m.kv_heads > 0 ? m.kv_heads : m.heads) / shard), m_dh(m.d / m.heads),
        m_F(m.ffn / shard), m_V(m.vocab / shard), m_dt(dt) {}

  ir::Graph build() {
    const bool bert = m_m.family == Family::Bert;
    int x = embeddings();
    m_scale = m_b.param("attention.scale", {1}, m_dt, TensorRole::Constant);  // 1/sqrt(dh)
    if (!bert && m_S > 1) m_mask = m_b.param("attention.causal_mask", {m_S, m_T}, m_dt, TensorRole::Constant);
    if (m_m.family == Family::Llama) {  // rotary tables for positions N..N+S-1
      m_cos = m_b.param("rotary.cos", {m_S, m_dh}, m_dt, TensorRole::Constant);
      m_sin = m_b.param("rotary.sin", {m_S, m_dh}, m_dt, TensorRole::Constant);  // rotate_half's sign folded in
    }
    for (int i = 0; i < m_L; ++i) x = block(x, i);
    if (!bert) {
      x = norm(x, m_m.family == Family::Gpt2 ? "transformer.ln_f" : "model.norm");
      if (m_m.family == Family::Gpt2)  // GPT-2 ties the LM head to the token embedding: x . wte^T
        x = m_b.op(OpKind::MatMul, "lm_head", {x, m_wte}, {m_B, m_S, m_V}, m_dt,
                   [](ir::Layer& l) { l.transpose_b = true; });
      else
        x = linear(x, "lm_head", m_V, false);
    }
    m_b.mark_output(x);
    return m_b.finish();
  }

 private:
  std::string p(int layer, const std::string& what) const {
    switch (m_m.family) {
      case Family::Bert: return "encoder.layer." + std::to_string(layer) + "." + what;
      case Family::Gpt2: return "transformer.h." + std::to_string(layer) + "." + what;
      case Family::Llama: return "model.layers." + std::to_string(layer) + "." + what;
    }
    return what;
  }

  int embeddings() {
    const int64_t V = m_V;
    int ids = m_b.input("input_ids", {m_B, m_S}, DType::Int32);
    // HF's input_ids.view(-1, S): it also makes the batch-carrying ids the first op's first
    // input, which is where Frontend IR readers take the graph's batch from.
    ids = m_b.op(OpKind::Reshape, "input_ids.view", {ids}, {m_B, m_S}, DType::Int32);
    const std::string word = m_m.family == Family::Bert ? "embeddings.word_embeddings"
                             : m_m.family == Family::Gpt2 ? "transformer.wte"
                                                          : "model.embed_tokens";
    m_wte = m_b.param(word + ".weight", {V, m_D}, m_dt);
    int x = m_b.op(OpKind::Gather, word, {m_wte, ids}, {m_B, m_S, m_D}, m_dt, [](ir::Layer& l) { l.axes = {0}; });
    if (m_m.max_pos > 0) {  // learned positions: rows N..N+S-1 of the table, added
      const std::string pos = m_m.family == Family::Bert ? "embeddings.position_embeddings" : "transformer.wpe";
      // (BERT's token-type row 0, for all-zero token_type_ids, is folded into this table.)
      int table = m_b.param(pos + ".weight", {m_m.max_pos, m_D}, m_dt);
      int rows = m_b.op(OpKind::Slice, pos, {table}, {m_S, m_D}, m_dt, [&](ir::Layer& l) {
        l.starts = {m_N, 0};
        l.ends = {m_N + m_S, m_D};
      });
      x = m_b.op(OpKind::ElementWiseAdd, pos + ".add", {x, rows}, {m_B, m_S, m_D}, m_dt);
    }
    if (m_m.family == Family::Bert) x = norm(x, "embeddings.LayerNorm");
    return x;
  }

  int norm(int x, const std::string& name) {
    const Shape s = m_b.shape(x);
    if (m_m.family == Family::Llama) {
      int g = m_b.param(name + ".weight", {m_D}, m_dt);
      return m_b.op(OpKind::RmsNorm, name, {x, g}, s, m_dt, [&](ir::Layer& l) { l.epsilon = m_m.eps; });
    }
    int g = m_b.param(name + ".weight", {m_D}, m_dt);
    int b = m_b.param(name + ".bias", {m_D}, m_dt, TensorRole::Bias);
    return m_b.op(OpKind::LayerNorm, name, {x, g, b}, s, m_dt, [&](ir::Layer& l) { l.epsilon = m_m.eps; });
  }

  // x [B,S,K] . W [K,N] (+ bias [N]).
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

  // [B,S,heads*dh] -> [B,heads,S,dh]
  int split_heads(int x, const std::string& name, int64_t heads) {
    int r = m_b.op(OpKind::Reshape, name + ".view", {x}, {m_B, m_S, heads, m_dh}, m_dt);
    return m_b.op(OpKind::Transpose, name + ".transpose", {r}, {m_B, heads, m_S, m_dh}, m_dt,
                  [](ir::Layer& l) { l.perm = {0, 2, 1, 3}; });
  }

  // HF's repeat_kv: [B,Hkv,T,dh] -> [B,H,T,dh], each K/V head shared by H / Hkv query heads.
  int repeat_kv(int x, const std::string& name) {
    if (m_Hkv == m_H) return x;
    const int64_t rep = m_H / m_Hkv;
    int r = m_b.op(OpKind::Reshape, name + ".expand_view", {x}, {m_B, m_Hkv, 1, m_T, m_dh}, m_dt);
    int c = m_b.op(OpKind::Concat, name + ".expand", std::vector<int>(static_cast<size_t>(rep), r),
                   {m_B, m_Hkv, rep, m_T, m_dh}, m_dt, [](ir::Layer& l) { l.axes = {2}; });
    return m_b.op(OpKind::Reshape, name + ".repeat", {c}, {m_B, m_H, m_T, m_dh}, m_dt);
  }

  // HF's apply_rotary_pos_emb: x * cos + rotate_half(x) * sin, with rotate_half(x) =
  // cat(-x2, x1); the sign sits in the sin table, so rotate_half is cat(x2, x1).
  int rope(int x, const std::string& name) {
    const int64_t half = m_dh / 2, heads = m_b.shape(x)[1];
    auto half_slice = [&](int64_t from, int64_t to, const std::string& n) {
      return m_b.op(OpKind::Slice, n, {x}, {m_B, heads, m_S, to - from}, m_dt, [&](ir::Layer& l) {
        l.starts = {0, 0, 0, from};
        l.ends = {m_B, heads, m_S, to};
      });
    };
    int x1 = half_slice(0, half, name + ".x1");
    int x2 = half_slice(half, m_dh, name + ".x2");
    int rot = m_b.op(OpKind::Concat, name + ".rotate_half", {x2, x1}, {m_B, heads, m_S, m_dh}, m_dt,
                     [](ir::Layer& l) { l.axes = {-1}; });
    int a = binary(OpKind::Mul, x, m_cos, name + ".mul_cos");
    int b = binary(OpKind::Mul, rot, m_sin, name + ".mul_sin");
    return binary(OpKind::ElementWiseAdd, a, b, name);
  }

  // The new k or v [B,H,S,dh]: a graph output (appended to the cache), joined after the
  // cached N positions when there are any.
  int with_cache(int kv, int layer, const std::string& which) {
    m_b.mark_output(kv);
    if (m_N == 0) return kv;
    int past = m_b.input("past_" + which + "." + std::to_string(layer), {m_B, m_Hkv, m_N, m_dh}, m_dt);
    return m_b.op(OpKind::Concat, p(layer, "attn.cat_" + which), {past, kv}, {m_B, m_Hkv, m_T, m_dh}, m_dt,
                  [](ir::Layer& l) { l.axes = {2}; });
  }

  int attention(int h, int i) {
    const bool bert = m_m.family == Family::Bert, llama = m_m.family == Family::Llama;
    const std::string a = bert ? "attention.self." : llama ? "self_attn." : "attn.";
    const std::string q_name = bert ? "query" : llama ? "q_proj" : "c_attn.q";
    const std::string k_name = bert ? "key" : llama ? "k_proj" : "c_attn.k";
    const std::string v_name = bert ? "value" : llama ? "v_proj" : "c_attn.v";
    const bool bias = !llama;
    int q = split_heads(linear(h, p(i, a + q_name), m_H * m_dh, bias), p(i, a + q_name), m_H);
    int k = split_heads(linear(h, p(i, a + k_name), m_Hkv * m_dh, bias), p(i, a + k_name), m_Hkv);
    int v = split_heads(linear(h, p(i, a + v_name), m_Hkv * m_dh, bias), p(i, a + v_name), m_Hkv);
    if (llama) {
      q = rope(q, p(i, a + "q_rope"));
      k = rope(k, p(i, a + "k_rope"));
    }
    if (!bert) {
      k = with_cache(k, i, "key");
      v = with_cache(v, i, "value");
    }
    k = repeat_kv(k, p(i, a + "k_repeat"));
    v = repeat_kv(v, p(i, a + "v_repeat"));
    int s = m_b.op(OpKind::BatchMatMul, p(i, a + "scores"), {q, k}, {m_B, m_H, m_S, m_T}, m_dt,
                   [](ir::Layer& l) { l.transpose_b = true; });
    s = binary(OpKind::Mul, s, m_scale, p(i, a + "scale"));
    if (m_mask >= 0) s = binary(OpKind::ElementWiseAdd, s, m_mask, p(i, a + "causal_mask"));
    s = m_b.op(OpKind::Softmax, p(i, a + "softmax"), {s}, m_b.shape(s), m_dt, [](ir::Layer& l) { l.axes = {-1}; });
    int c = m_b.op(OpKind::BatchMatMul, p(i, a + "context"), {s, v}, {m_B, m_H, m_S, m_dh}, m_dt);
    c = m_b.op(OpKind::Transpose, p(i, a + "context.transpose"), {c}, {m_B, m_S, m_H, m_dh}, m_dt,
               [](ir::Layer& l) { l.perm = {0, 2, 1, 3}; });
    c = m_b.op(OpKind::Reshape, p(i, a + "context.view"), {c}, {m_B, m_S, m_H * m_dh}, m_dt);
    const std::string o = bert ? "attention.output.dense" : llama ? "self_attn.o_proj" : "attn.c_proj";
    return linear(c, p(i, o), m_D, bias);
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
      case Family::Llama: {  // pre-RMSNorm, SiLU-gated MLP
        int y = attention(norm(x, p(i, "input_layernorm")), i);
        x = binary(OpKind::ElementWiseAdd, x, y, p(i, "self_attn.add"));
        const int h = norm(x, p(i, "post_attention_layernorm"));
        int g = unary(OpKind::Silu, linear(h, p(i, "mlp.gate_proj"), m_F, false), p(i, "mlp.act_fn"));
        int u = linear(h, p(i, "mlp.up_proj"), m_F, false);
        y = linear(binary(OpKind::Mul, g, u, p(i, "mlp.mul")), p(i, "mlp.down_proj"), m_D, false);
        return binary(OpKind::ElementWiseAdd, x, y, p(i, "mlp.add"));
      }
    }
    return x;
  }

  const Def& m_m;
  GraphBuilder m_b;
  int64_t m_B, m_S, m_N, m_T;
  int m_L;
  int64_t m_D, m_H, m_Hkv, m_dh, m_F, m_V;
  DType m_dt;
  int m_wte = -1, m_scale = -1, m_mask = -1, m_cos = -1, m_sin = -1;
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
  s.family = d->family == Family::Bert ? "bert" : d->family == Family::Gpt2 ? "gpt2" : "llama";
  s.layers = d->layers, s.d = d->d, s.heads = d->heads, s.kv_heads = d->kv_heads > 0 ? d->kv_heads : d->heads;
  s.ffn = d->ffn, s.vocab = d->vocab, s.eps = d->eps;
  s.context = d->context > 0 ? d->context : d->max_pos;
  s.rotary = d->max_pos == 0;
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
    throw InputError("zoo", "kv-len", o.model + " is an encoder without a K/V cache: --kv-len applies to the decoders (gpt2*, gpt3*, llama*)");
  const int seq = o.seq != 0 ? o.seq : o.kv_len > 0 ? 1 : 128;
  if (seq < 1 || seq > kMaxTokens)
    throw InputError("zoo", "seq", "seq must be in 1.." + std::to_string(kMaxTokens) + ", got " + std::to_string(seq));
  if (m->max_pos > 0 && int64_t{seq} + o.kv_len > m->max_pos)
    throw InputError("zoo", o.kv_len > 0 ? "kv-len" : "seq",
                     o.model + " has " + std::to_string(m->max_pos) + " learned positions; seq " + std::to_string(seq) +
                         " + kv-len " + std::to_string(o.kv_len) + " exceeds them");
  if (o.layers < 0 || o.layers > m->layers)
    throw InputError("zoo", "layers", o.model + " has " + std::to_string(m->layers) + " layers; --layers must be in 1.." +
                                          std::to_string(m->layers) + " (0: all), got " + std::to_string(o.layers));
  const int kv_heads = m->kv_heads > 0 ? m->kv_heads : m->heads;
  if (o.shard < 1 || m->heads % o.shard != 0 || kv_heads % o.shard != 0 || m->ffn % o.shard != 0 || m->vocab % o.shard != 0)
    throw InputError("zoo", "shard", "--shard " + std::to_string(o.shard) + " must divide " + o.model + "'s heads (" + std::to_string(m->heads) +
                                         "), K/V heads (" + std::to_string(kv_heads) + "), FFN width (" + std::to_string(m->ffn) +
                                         ") and vocabulary (" + std::to_string(m->vocab) + ")");
  Transformer t(*m, o, seq, o.kv_len, o.layers == 0 ? m->layers : o.layers, dt, o.shard);
  return t.build();
}

}  // namespace npusim::frontends::zoo
