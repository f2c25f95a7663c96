// Hugging Face config.json -> ModelDef. Each architecture's fields as its transformers
// configuration class names them (LlamaConfig, Gemma2Config, GPTNeoXConfig, OPTConfig,
// GPT2Config, MixtralConfig, Qwen2MoeConfig), with that class's defaults for absent fields.
// A field that changes the computation in a way the graph builder does not model is refused by
// name rather than ignored.
#include "frontends/zoo/hf_config.h"

#include <algorithm>
#include <cmath>

#include "frontends/json_util.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 20;  // widths, vocabularies, positions
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxExperts = 4096;

// The architectures read, and the layout each one builds.
struct Arch {
  const char* name;
  Family family;
};
const std::vector<Arch>& arches() {
  static const std::vector<Arch> a = {
      {"LlamaForCausalLM", Family::Llama},   {"MistralForCausalLM", Family::Llama}, {"Qwen2ForCausalLM", Family::Llama},
      {"MixtralForCausalLM", Family::Llama}, {"Qwen2MoeForCausalLM", Family::Llama}, {"Gemma2ForCausalLM", Family::Gemma2},
      {"GPTNeoXForCausalLM", Family::NeoX},  {"OPTForCausalLM", Family::Opt},        {"GPT2LMHeadModel", Family::Gpt2},
      {"DeepseekV2ForCausalLM", Family::Llama}, {"DeepseekV3ForCausalLM", Family::Llama},
  };
  return a;
}

// Reads the fields of one config with the file and pointer in every message.
class Fields {
 public:
  explicit Fields(const json::Cursor& c) : c_(c) {}
  int dim(const std::string& key, int64_t max = kMaxDim) const { return checked(key, c_.get_int(key), 1, max); }
  int dim_or(const std::string& key, int fallback, int64_t max = kMaxDim) const {
    const auto v = c_.optional_int(key);
    return v ? checked(key, *v, 1, max) : fallback;
  }
  // A width that may be null (DeepSeek's q_lora_rank: null means no bottleneck).
  int dim_or_null(const std::string& key, int fallback, int64_t max = kMaxDim) const {
    const auto v = c_.find(key);
    return v && v->is_null() ? fallback : dim_or(key, fallback, max);
  }
  int count_or(const std::string& key, int fallback, int64_t max) const {  // may be 0
    const auto v = c_.optional_int(key);
    return v ? checked(key, *v, 0, max) : fallback;
  }
  double positive_or(const std::string& key, double fallback) const {
    const auto v = c_.optional_double(key);
    if (!v) return fallback;
    if (!(*v > 0) || !std::isfinite(*v)) c_.fail_at(key, "must be a positive number, got " + std::to_string(*v));
    return *v;
  }
  bool flag_or(const std::string& key, bool fallback) const {
    const auto v = c_.optional_bool_like(key);
    return v ? *v : fallback;
  }
  std::string text_or(const std::string& key, const std::string& fallback) const {
    const auto v = c_.optional_string(key);
    return v ? *v : fallback;
  }
  bool has(const std::string& key) const { return c_.find(key).has_value(); }
  [[noreturn]] void refuse(const std::string& key, const std::string& why) const { c_.fail_at(key, why); }
  const json::Cursor& cursor() const { return c_; }

 private:
  int checked(const std::string& key, int64_t v, int64_t lo, int64_t hi) const {
    if (v < lo || v > hi) c_.fail_at(key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + std::to_string(v));
    return static_cast<int>(v);
  }
  const json::Cursor& c_;
};

Activation activation(const Fields& f, const std::string& key, const std::string& fallback) {
  const std::string a = f.text_or(key, fallback);
  if (a == "silu" || a == "swish") return Activation::Silu;
  if (a == "gelu") return Activation::Gelu;
  if (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast" || a == "gelu_python") return Activation::GeluTanh;
  if (a == "relu") return Activation::Relu;
  f.refuse(key, "activation '" + a + "' is not modelled (silu, gelu, gelu_new, gelu_pytorch_tanh, relu)");
}

// RoPE scaling changes the rotary tables, not the shapes: the types vLLM runs are accepted and
// the context stays max_position_embeddings (which the stretched configs already state).
void check_rope_scaling(const Fields& f) {
  const auto rs = f.cursor().find("rope_scaling");
  if (!rs) return;
  rs->expect_object();
  std::string type = rs->optional_string("rope_type").value_or(rs->optional_string("type").value_or(""));
  static const std::vector<std::string> known = {"default", "linear", "dynamic", "llama3", "yarn", "longrope", "su"};
  if (std::find(known.begin(), known.end(), type) == known.end())
    f.refuse("rope_scaling", "RoPE scaling type '" + type + "' is not known (linear, dynamic, llama3, yarn, longrope)");
}

// The sizes every rotary family names alike (Llama's relatives, DeepSeek, GPT-NeoX); the context
// is max_position_embeddings, positions rotate (no learned table).
void read_rotary_shape(const Fields& f, ModelDef& m) {
  m.d = f.dim("hidden_size");
  m.layers = f.dim("num_hidden_layers", kMaxLayers);
  m.heads = f.dim("num_attention_heads");
  m.ffn = f.dim("intermediate_size");
  m.vocab = f.dim("vocab_size");
  m.context = f.dim("max_position_embeddings");
  m.max_pos = 0;
}

void read_moe(const Fields& f, const std::string& arch, ModelDef& m) {
  if (arch == "MixtralForCausalLM") {
    m.experts = f.dim("num_local_experts", kMaxExperts);
    m.experts_per_token = f.dim("num_experts_per_tok", kMaxExperts);
    m.expert_ffn = m.ffn;
  } else if (arch == "Qwen2MoeForCausalLM") {
    m.experts = f.dim("num_experts", kMaxExperts);
    m.experts_per_token = f.dim("num_experts_per_tok", kMaxExperts);
    m.expert_ffn = f.dim("moe_intermediate_size");
    m.shared_ffn = f.dim_or("shared_expert_intermediate_size", 0);
    m.shared_gate = true;
    m.moe_every = f.dim_or("decoder_sparse_step", 1, kMaxLayers);
    if (const auto only = f.cursor().find("mlp_only_layers")) {
      m.dense_layers = ",";
      for (int64_t l : only->as_int_array()) {
        if (l < 0 || l >= m.layers) f.refuse("mlp_only_layers", "layer " + std::to_string(l) + " is not one of the " + std::to_string(m.layers));
        m.dense_layers += std::to_string(l) + ",";
      }
      if (m.dense_layers == ",") m.dense_layers.clear();
    }
  } else {
    return;
  }
  if (m.experts_per_token > m.experts)
    f.refuse("num_experts_per_tok", std::to_string(m.experts_per_token) + " experts per token of " + std::to_string(m.experts));
}

// DeepSeek-V2/V3 (DeepseekV2Config / DeepseekV3Config): Llama's pre-RMSNorm blocks with
// multi-head latent attention, and from layer first_k_dense_replace on a mixture of routed
// experts beside n_shared_experts always-on ones. The router's group limits (n_group,
// topk_group) and score correction change which experts a token picks, not how many; the
// multi-token-prediction module (num_nextn_predict_layers) serves only speculative decoding
// and is not part of the model run here.
void read_deepseek(const Fields& f, ModelDef& m) {
  read_rotary_shape(f, m);
  m.kv_heads = m.heads;  // every head has its own keys, all rebuilt from one cached latent
  m.eps = f.positive_or("rms_norm_eps", 1e-6);
  m.act = activation(f, "hidden_act", "silu");
  m.tied_embeddings = f.flag_or("tie_word_embeddings", false);
  if (f.flag_or("attention_bias", false)) f.refuse("attention_bias", "DeepSeek attention with biases is not modelled");
  check_rope_scaling(f);
  m.q_lora_rank = f.dim_or_null("q_lora_rank", 0);
  m.kv_lora_rank = f.dim("kv_lora_rank");
  m.qk_nope_dim = f.dim("qk_nope_head_dim");
  m.qk_rope_dim = f.dim("qk_rope_head_dim");
  m.v_head_dim = f.dim("v_head_dim");
  if (m.qk_rope_dim % 2 != 0) f.refuse("qk_rope_head_dim", "rotary positions need an even number of dims");
  const auto routed = f.cursor().find("n_routed_experts");
  if (!routed || routed->is_null()) return;  // dense
  m.experts = f.dim("n_routed_experts", kMaxExperts);
  m.experts_per_token = f.dim("num_experts_per_tok", kMaxExperts);
  if (m.experts_per_token > m.experts)
    f.refuse("num_experts_per_tok", std::to_string(m.experts_per_token) + " experts per token of " + std::to_string(m.experts));
  m.expert_ffn = f.dim("moe_intermediate_size");
  m.shared_ffn = f.count_or("n_shared_experts", 0, kMaxExperts) * m.expert_ffn;
  const int first_moe = f.count_or("first_k_dense_replace", 0, m.layers);
  if (f.dim_or("moe_layer_freq", 1, kMaxLayers) != 1)
    f.refuse("moe_layer_freq", "mixtures on every n-th layer only are not modelled (DeepSeek's configs use 1)");
  if (first_moe > 0) {
    m.dense_layers = ",";
    for (int l = 0; l < first_moe; ++l) m.dense_layers += std::to_string(l) + ",";
  }
  const std::string scoring = f.text_or("scoring_func", "softmax");
  if (scoring != "softmax" && scoring != "sigmoid") f.refuse("scoring_func", "router scoring '" + scoring + "' is not modelled (softmax, sigmoid)");
  m.sigmoid_router = scoring == "sigmoid";
  const std::string method = f.text_or("topk_method", "greedy");
  static const std::vector<std::string> methods = {"greedy", "group_limited_greedy", "noaux_tc"};
  if (std::find(methods.begin(), methods.end(), method) == methods.end())
    f.refuse("topk_method", "expert selection '" + method + "' is not known (greedy, group_limited_greedy, noaux_tc)");
}

// Llama's layout and the families that share it (Mistral, Qwen2, Mixtral, Qwen2-MoE), and Gemma 2.
void read_llama_like(const Fields& f, const std::string& arch, ModelDef& m) {
  read_rotary_shape(f, m);
  m.kv_heads = f.dim_or("num_key_value_heads", m.heads);
  m.eps = f.positive_or("rms_norm_eps", 1e-6);
  m.head_dim = f.dim_or("head_dim", 0);
  const bool gemma = m.family == Family::Gemma2;
  m.act = activation(f, gemma && f.has("hidden_activation") ? "hidden_activation" : "hidden_act", gemma ? "gelu_pytorch_tanh" : "silu");
  m.tied_embeddings = f.flag_or("tie_word_embeddings", gemma);
  const bool bias = f.flag_or("attention_bias", false);
  m.qkv_bias = bias || arch == "Qwen2ForCausalLM" || arch == "Qwen2MoeForCausalLM";
  m.o_bias = bias;
  m.mlp_bias = f.flag_or("mlp_bias", false);
  check_rope_scaling(f);
  if (arch == "Qwen2ForCausalLM" || arch == "Qwen2MoeForCausalLM") {
    if (f.flag_or("use_sliding_window", false))
      f.refuse("use_sliding_window", "sliding windows on Qwen2's upper layers are not modelled");
  } else if (f.has("sliding_window")) {
    m.sliding_window = f.dim("sliding_window");
    if (gemma) m.window_layers = 2;  // Gemma 2: the even layers attend locally, the odd ones globally
  }
  if (gemma) {
    if (f.has("attn_logit_softcapping")) m.attn_softcap = f.positive_or("attn_logit_softcapping", 0);
    if (f.has("final_logit_softcapping")) m.final_softcap = f.positive_or("final_logit_softcapping", 0);
  }
  read_moe(f, arch, m);
}

void read_neox(const Fields& f, ModelDef& m) {
  read_rotary_shape(f, m);
  m.eps = f.positive_or("layer_norm_eps", 1e-5);
  m.act = activation(f, "hidden_act", "gelu");
  m.rotary_share = f.positive_or("rotary_pct", 1.0);
  if (m.rotary_share > 1) f.refuse("rotary_pct", "must be in (0, 1]");
  m.parallel_residual = f.flag_or("use_parallel_residual", true);
  m.tied_embeddings = f.flag_or("tie_word_embeddings", false);
  if (!f.flag_or("attention_bias", true)) f.refuse("attention_bias", "GPT-NeoX without attention biases is not modelled");
  check_rope_scaling(f);
}

void read_opt(const Fields& f, ModelDef& m) {
  m.d = f.dim("hidden_size");
  m.layers = f.dim("num_hidden_layers", kMaxLayers);
  m.heads = f.dim("num_attention_heads");
  m.ffn = f.dim("ffn_dim");
  m.vocab = f.dim("vocab_size");
  m.max_pos = f.dim("max_position_embeddings");
  m.context = m.max_pos;
  m.position_offset = 2;  // OPTLearnedPositionalEmbedding: positions start at row 2
  m.eps = 1e-5;
  m.act = activation(f, "activation_function", "relu");
  m.tied_embeddings = f.flag_or("tie_word_embeddings", true);
  if (!f.flag_or("do_layer_norm_before", true)) f.refuse("do_layer_norm_before", "post-LN OPT (opt-350m) is not modelled");
  if (f.dim_or("word_embed_proj_dim", m.d) != m.d)
    f.refuse("word_embed_proj_dim", "an embedding projected to another width (project_in/out) is not modelled");
  if (!f.flag_or("enable_bias", true)) f.refuse("enable_bias", "OPT without biases is not modelled");
  if (f.flag_or("_remove_final_layer_norm", false)) f.refuse("_remove_final_layer_norm", "OPT without its final layer norm is not modelled");
}

void read_gpt2(const Fields& f, ModelDef& m) {
  m.d = f.dim("n_embd");
  m.layers = f.dim("n_layer", kMaxLayers);
  m.heads = f.dim("n_head");
  m.ffn = f.dim_or("n_inner", 4 * m.d);
  m.vocab = f.dim("vocab_size");
  m.max_pos = f.dim("n_positions");
  m.context = 0;
  m.eps = f.positive_or("layer_norm_epsilon", 1e-5);
  m.act = activation(f, "activation_function", "gelu_new");
  m.tied_embeddings = true;
}

}  // namespace

const std::vector<std::string>& hf_architectures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Arch& a : arches()) n.push_back(a.name);
    return n;
  }();
  return names;
}

bool is_hf_config_path(const std::string& model) {
  return model.size() > 5 && model.compare(model.size() - 5, 5, ".json") == 0;
}

namespace {

ModelDef hf_config_from_json(const json::Json& doc, const std::string& path) {
  const json::Cursor c(doc, path);
  c.expect_object();
  const Fields f(c);
  const auto list = c.find("architectures");
  if (!list) c.fail_at("architectures", "missing: a Hugging Face config.json names its model class here (e.g. [\"LlamaForCausalLM\"])");
  const std::vector<std::string> names = list->as_string_array();
  if (names.size() != 1) list->fail("expected one architecture, got " + std::to_string(names.size()));
  const std::string& arch = names[0];
  std::string known;
  for (const Arch& a : arches()) known += (known.empty() ? "" : ", ") + std::string(a.name);
  const auto it = std::find_if(arches().begin(), arches().end(), [&](const Arch& a) { return arch == a.name; });
  if (it == arches().end()) list->at(0).fail("architecture '" + arch + "' is not read; read: " + known);
  ModelDef m{it->family, 0, 0, 0, 0, 0, 0, 1e-5};
  m.architecture = arch;
  switch (m.family) {
    case Family::Llama:
    case Family::Gemma2:
      if (arch.rfind("Deepseek", 0) == 0)
        read_deepseek(f, m);
      else
        read_llama_like(f, arch, m);
      break;
    case Family::NeoX: read_neox(f, m); break;
    case Family::Opt: read_opt(f, m); break;
    case Family::Gpt2: read_gpt2(f, m); break;
    case Family::Bert: break;
  }
  // Shapes the graph needs whole.
  if (m.head_dim == 0 && !m.mla() && m.d % m.heads != 0)
    c.fail_at("num_attention_heads", std::to_string(m.heads) + " heads do not divide the hidden size " + std::to_string(m.d));
  if (m.heads % m.kv_head_count() != 0)
    c.fail_at("num_key_value_heads", std::to_string(m.kv_head_count()) + " K/V heads do not divide " + std::to_string(m.heads) + " heads");
  if (m.max_pos == 0 && (m.head_size() % 2 != 0 || static_cast<int>(m.head_size() * m.rotary_share) % 2 != 0))
    c.fail_at(m.family == Family::NeoX ? "rotary_pct" : "hidden_size", "rotary positions need an even number of dims per head");
  // Every count below fits 64 bits: at most 10^14 parameters (100 T), estimated in floating point.
  const double d = m.d, q = static_cast<double>(m.heads) * m.head_size(),
               kv = static_cast<double>(m.kv_head_count()) * (m.mla() ? m.v_head_dim + m.kv_lora_rank : m.head_size());
  const double mlp = 3.0 * d * std::max<double>(m.ffn, static_cast<double>(m.experts) * m.expert_ffn + m.shared_ffn + m.experts);
  const double estimate = m.layers * (d * (2 * q + 2 * kv) + 3 * q + mlp + 6 * d) + 2.0 * m.vocab * d + (m.max_pos + 2.0) * d;
  if (estimate > 1e14) c.fail_at("hidden_size", "a model of about " + std::to_string(estimate / 1e12) + " T parameters is beyond what is simulated (100 T)");
  return m;
}

}  // namespace

ModelDef read_hf_config(const std::string& path) { return hf_config_from_json(json::read_json_file(path), path); }

ModelDef parse_hf_config(const std::string& text, const std::string& source) {
  return hf_config_from_json(json::parse_text(text, source), source);
}

}  // namespace npusim::frontends::zoo
