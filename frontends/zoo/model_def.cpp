// Parameter counts as a checkpoint stores them (tested against published counts).
#include "frontends/zoo/model_def.h"

#include <algorithm>
#include <cmath>

namespace npusim::frontends::zoo {

int64_t parameter_count(const ModelDef& m, bool active) {
  const int64_t D = m.d, V = m.vocab, F = m.ffn, dh = m.head_size(), H = m.heads, Hkv = m.kv_head_count();
  const int64_t q = H * dh, kv = Hkv * dh;
  auto norm = [&](bool bias) { return bias ? 2 * D : D; };
  auto gated = [&](int64_t f, bool bias) { return 3 * D * f + (bias ? 2 * f + D : 0); };
  int64_t total = V * D;  // token embedding
  switch (m.family) {
    case Family::Bert:  // (the embedding LN in place of a final one; token types folded into positions)
    case Family::Gpt2:
    case Family::NeoX:
    case Family::Opt: {  // biases everywhere, LayerNorms, a two-matrix MLP
      const int64_t layer = D * (q + 2 * kv) + q + 2 * kv + q * D + D + 2 * norm(true) + 2 * D * F + F + D;
      const int64_t positions = m.max_pos > 0 ? int64_t{m.max_pos + m.position_offset} * D : 0;
      const bool tied = m.family == Family::Gpt2 || m.family == Family::Bert || m.tied_embeddings;
      return total + int64_t{m.layers} * layer + positions + norm(true) + (tied ? 0 : V * D);
    }
    case Family::Llama:
    case Family::Gemma2: {
      int64_t layer_attn = D * (q + 2 * kv) + (m.qkv_bias ? q + 2 * kv : 0) + q * D + (m.o_bias ? D : 0);
      if (m.mla()) {  // q (through its bottleneck and norm), the latent and rotary key, its norm, up-projection, o
        const int64_t ql = m.q_lora_rank, r = m.kv_lora_rank;
        layer_attn = (ql > 0 ? D * ql + ql + ql * q : D * q) + D * (r + m.qk_rope_dim) + r +
                     r * H * (m.qk_nope_dim + m.v_head_dim) + H * m.v_head_dim * D;
      }
      const int64_t per_layer_norms = (m.family == Family::Gemma2 ? 4 : 2) * D;
      for (int i = 0; i < m.layers; ++i) {
        total += layer_attn + per_layer_norms;
        if (!m.is_moe_layer(i)) {
          total += gated(F, m.mlp_bias);
          continue;
        }
        const int64_t used = active ? m.experts_per_token : m.experts;
        total += D * m.experts + used * gated(m.expert_ffn, false);  // router and experts
        if (m.sigmoid_router) total += m.experts;                      // DeepSeek-V3's score correction bias
        if (m.shared_ffn > 0) total += gated(m.shared_ffn, false) + (m.shared_gate ? D : 0);  // the shared expert (and its gate)
      }
      return total + D + (m.tied_embeddings ? 0 : V * D);
    }
  }
  return total;
}

int64_t active_experts(int64_t experts, int64_t top_k, int64_t tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  const double miss = std::pow(1.0 - static_cast<double>(top_k) / static_cast<double>(experts), static_cast<double>(tokens));
  const int64_t expected = std::llround(static_cast<double>(experts) * (1.0 - miss));
  return std::clamp<int64_t>(expected, std::min(top_k, experts), std::min(experts, tokens * top_k));
}

}  // namespace npusim::frontends::zoo
