// Workload zoo: well-known networks and single operations as workloads, without the compiler.
//
// CNNs (make_frontend_ir) are Frontend IR documents (specs/frontend_ir.md) in the style of the
// real Gemini compiler outputs (int8 ResNet-34/50, examples/frontend_ir/), so that any batch,
// input size and dtype can be simulated. The result is an ordered_json: layer order and key
// order inside a layer follow the real files (a plain nlohmann::json would sort keys).
// Quantization values are synthetic but deterministic (hashed from layer names) and obey the
// files' relations between layers.
//
// Transformers (make_transformer) and single operations (make_op_graph) are built as an
// ir::Graph by tensor ids and validated; frontends/frontend_ir/frontend_ir_writer.h writes them
// as Frontend IR with the npusim extension operations (docs/format_frontend_ir.md#npusim-extensions).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/ir/graph.h"

namespace npusim::frontends::zoo {

struct ZooOptions {
  std::string model;
  int batch = 1;
  // "int8", "fp16" or "fp32"; empty: the model's default (int8 for CNNs, fp16 for transformers).
  // CNN int8 means src_quantize + int8 layers; fp16/fp32 every tensor in that float type.
  std::string dtype;
  int height = 224;  // CNNs: input size
  int width = 224;
  // Transformers: seq tokens pass through the model (0: 128 without kv_len, 1 with it) after
  // kv_len cached ones (K/V caches of that length are graph inputs; 0: no cache, a prefill).
  int seq = 0;
  int kv_len = 0;
  int layers = 0;  // keep the first `layers` blocks (0: all)
  // Transformers: the graph of one of `shard` tensor-parallel ranks on one device (heads, K/V
  // heads, FFN width and vocabulary divided by it; no collectives), as Vidur and LLMServingSim
  // profile a rank. 1: the whole model.
  int shard = 1;
  // Decoders: the positions the LM head computes logits for. "all" (Hugging Face's forward, the
  // default) or "last" (each sequence's last token, as serving runtimes run a prefill:
  // logits_to_keep = 1); every device runs the graph as written (docs/llm_models.md#logits).
  std::string logits = "all";
  // Mixture of experts: the busiest expert's tokens over the mean (1: a balanced router). The
  // experts' batched GEMMs pad every expert to the busiest's rows (docs/llm_models.md#load-skew).
  double expert_skew = 1;
};

// CNNs: resnet18, resnet34, resnet50, resnet101, resnet152, vgg16, vgg19, mobilenetv2.
std::vector<std::string> model_names();
// Transformers: bert-base, gpt2, llama2-7b, llama3-8b ...
std::vector<std::string> transformer_names();
bool is_transformer(const std::string& model);

// A transformer's shape (Hugging Face config): nullopt for an unknown model. The model may be a
// zoo name or the path of a Hugging Face config.json (hf_config.h); a malformed config is an
// InputError naming it.
struct TransformerShape {
  std::string family;  // "bert", "gpt2", "llama" (Llama's layout: what pipelines are built for), "llama-moe",
                       // "llama-variant", "gemma2", "neox", "opt", "deepseek" (multi-head latent attention)
  std::string architecture;  // a config's architectures[0] ("" for zoo entries)
  int layers = 0, d = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
  int head_dim = 0;     // per head (Gemma 2 sets it apart from d / heads)
  double eps = 1e-5;
  int context = 0;      // tokens a sequence may hold (max_position_embeddings)
  bool rotary = false;  // rotary positions (RoPE): a context may be stretched by RoPE scaling
  int sliding_window = 0;  // keys a windowed layer attends (0: none)
  bool every_layer_windowed = true;  // with sliding_window: every layer (false: Gemma 2's even layers)
  bool qkv_bias = false, o_bias = false, mlp_bias = false, tied_embeddings = false;  // Llama layout's variants
  int experts = 0, experts_per_token = 0;  // mixture of experts (0: dense)
  int expert_ffn = 0;                      // an expert's intermediate size
  int shared_ffn = 0;                      // Qwen2-MoE: the shared expert's intermediate size (0: none)
  bool every_layer_moe = true;             // with experts: every layer's MLP is a mixture
  int64_t expert_parameters = 0;           // of parameters: the routed experts' (all layers)
  int64_t parameters = 0, active_parameters = 0;  // as a checkpoint stores them; active: top-k experts
  int64_t outside_layers = 0;  // of parameters: embeddings, positions, the head, the final norm
  int latent_kv = 0;  // multi-head latent attention: elements a token caches per layer (0: K and V of every K/V head)
  // DeepSeek: latent attention's widths (kv_lora_rank 0: none), the leading dense layers, the router.
  int q_lora_rank = 0, kv_lora_rank = 0, qk_nope_dim = 0, qk_rope_dim = 0, v_head_dim = 0;
  int dense_first = 0;          // layers with a dense MLP before the mixtures begin (first_k_dense_replace)
  bool shared_gate = false;     // the shared expert scaled by sigmoid(x w) (Qwen2-MoE; DeepSeek's are not)
  bool sigmoid_router = false;  // sigmoid scores and a per-expert bias (DeepSeek-V3)
  std::string activation;       // the MLP's: relu, gelu (exact or tanh) or silu
  double rotary_share = 1;      // GPT-NeoX: the share of a head's dims that rotate (rotary_pct)
  bool parallel_residual = false;  // GPT-NeoX: x + attn(ln1(x)) + mlp(ln2(x))
  double attn_softcap = 0, final_softcap = 0;  // Gemma 2: c * tanh(x / c) on the scores and the logits (0: none)
};
std::optional<TransformerShape> transformer_shape(const std::string& model);

// How a pipeline spreads the model: tp x ep devices per stage, pp stages, the batch in
// microbatches.
struct Parallelism {
  int tp = 1, pp = 1;
  int ep = 1;  // expert parallelism: groups of tp devices, each attending its share of the batch
  int microbatches = 1;
};

// `sim zoo llama2-70b --tp T --pp P` (zoo_pipeline.cpp, docs/system.md#zoo-pipelines): the
// model as a multi-device pipeline (docs/format_pipeline.md) on tp x ep x pp devices,
// Megatron-style: per layer and tensor-parallel rank an attention supertask (q/k/v column
// shards, o row shard) and an MLP supertask (gate/up column shards, down row shard), each
// followed by an all_reduce over the stage's tp ranks; pipeline stages of layers/pp layers
// joined by send/recv of the hidden state; the last stage ends with the final norm and a
// vocabulary-parallel lm_head. A mixture of experts (Mixtral's layout) with --ep E: E groups of
// tp devices, each attending 1/E of the batch; a layer's experts spread over the groups (E/ep
// each, every expert's width over the tp ranks) and reached by all_to_all dispatch and combine
// (docs/system.md#expert-parallelism). Llama models; batch, seq and kv_len as make_transformer.
// InputError("zoo", option, why) on bad options.
nlohmann::ordered_json make_parallel_pipeline(const ZooOptions& options, const Parallelism& par);

// CNNs. Throws npusim::InputError("zoo", "model"|"batch"|"dtype"|"input"|"seq"|..., why) on bad
// options (a transformer's name included: those are built by make_transformer).
nlohmann::ordered_json make_frontend_ir(const ZooOptions& options);

// Transformers, validated (ir::validate). InputError("zoo", option, why) on bad options.
ir::Graph make_transformer(const ZooOptions& options);

// `sim zoo op OP key=value ...`: one operation of any ir::OpKind with its inputs (graph inputs)
// and parameters (weights), validated. InputError("zoo op", key, why + the valid keys) for an
// unknown operation or key, a missing key or a bad value.
struct OpWorkload {
  std::string op;                  // op_name or alias (ir::parse_op)
  std::vector<std::string> args;   // "key=value"
  std::string dtype;               // int8, fp16 or fp32; empty: fp16
  int batch = 1;                   // default of n= (conv2d, dense, pools) and b= (matmul, batch_matmul)
};
ir::Graph make_op_graph(const OpWorkload& w);
// The keys an operation takes, "m, n, k, b, bias, transpose_a, transpose_b" (empty if unknown).
std::string op_keys(ir::OpKind k);

// Shared by every zoo builder: "int8"/"fp16"/"fp32" (and the dtype aliases of the IR);
// InputError(file, "dtype", ...) for anything else.
// bf16: also bf16 / bfloat16 and fp8 (E4M3) / fp8_e5m2 (the transformers and single ops; the
// CNNs follow the Gemini compiler's int8 / fp16 / fp32 files).
ir::DType zoo_dtype(const std::string& s, ir::DType fallback, const std::string& file, bool bf16 = false);

}  // namespace npusim::frontends::zoo
