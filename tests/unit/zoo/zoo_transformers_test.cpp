// The transformer zoo: MACs against the closed form from each model's dimensions, parameter
// counts against the published ones, batch on dim 0, decode steps with K/V caches, options,
// and the round trip through the Frontend IR writer and reader.
#include <string>

#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"
#include "tests/unit/zoo/roundtrip_util.h"

namespace {

using npusim::InputError;
using npusim::frontends::zoo::is_transformer;
using npusim::frontends::zoo::make_transformer;
using npusim::frontends::zoo::transformer_names;
using npusim::frontends::zoo::ZooOptions;
namespace ir = npusim::ir;

ZooOptions tf(const std::string& model, int batch = 1, int seq = 0, int kv = 0, int layers = 0,
              const std::string& dtype = "") {
  ZooOptions o;
  o.model = model;
  o.batch = batch;
  o.seq = seq;
  o.kv_len = kv;
  o.layers = layers;
  o.dtype = dtype;
  return o;
}

struct Dims {
  int64_t layers, d, ffn, vocab;
  int mlp_mats;  // 2 (fc, proj) or 3 (gate, up, down)
  bool lm_head;
  int64_t kv_d = 0;  // width of the K and V projections (grouped-query attention); 0: d
};

// The published configurations (Hugging Face config.json of each).
Dims dims(const std::string& m) {
  if (m == "bert-base") return {12, 768, 3072, 30522, 2, false};
  if (m == "bert-large") return {24, 1024, 4096, 30522, 2, false};
  if (m == "gpt2") return {12, 768, 3072, 50257, 2, true};
  if (m == "gpt2-medium") return {24, 1024, 4096, 50257, 2, true};
  if (m == "gpt2-large") return {36, 1280, 5120, 50257, 2, true};
  if (m == "gpt2-xl") return {48, 1600, 6400, 50257, 2, true};
  if (m == "gpt3-xl") return {24, 3072, 12288, 50257, 2, true};
  if (m == "gpt3-2.7b") return {32, 2560, 10240, 50257, 2, true};
  if (m == "llama2-13b") return {40, 5120, 13824, 32000, 3, true};
  if (m == "llama2-70b") return {80, 8192, 28672, 32000, 3, true, 1024};  // 8 K/V heads of 128
  if (m == "llama3-8b") return {32, 4096, 14336, 128256, 3, true, 1024};  // meta-llama/Llama-3.1-8B
  return {32, 4096, 11008, 32000, 3, true};  // llama2-7b
}

// Per layer: q, k, v, o projections (S x D x D each), the MLP matrices (S x D x F each), and
// the two attention matmuls Q.K^T and P.V (H x S x T x dh = S x T x D each); then the LM head.
int64_t closed_form_macs(const std::string& m, int64_t batch, int64_t s, int64_t t, int64_t layers) {
  const Dims d = dims(m);
  const int64_t kv = d.kv_d > 0 ? d.kv_d : d.d;
  const int64_t per_layer = 2 * s * d.d * d.d + 2 * s * d.d * kv + d.mlp_mats * s * d.d * d.ffn + 2 * s * t * d.d;
  return batch * (layers * per_layer + (d.lm_head ? s * d.d * d.vocab : 0));
}

int64_t weights(const ir::Graph& g) {  // weights and biases, not buffers (scale, mask, rotary)
  int64_t n = 0;
  for (const ir::Tensor& t : g.tensors)
    if (t.role == ir::TensorRole::Weight || t.role == ir::TensorRole::Bias) n += ir::num_elements(t.shape);
  return n;
}

TEST(ZooTransformers, Names) {
  EXPECT_EQ(transformer_names(),
            (std::vector<std::string>{"bert-base", "bert-large", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "gpt3-xl",
                                      "gpt3-2.7b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b"}));
  EXPECT_TRUE(is_transformer("gpt2"));
  EXPECT_FALSE(is_transformer("resnet50"));
}

TEST(ZooTransformers, MacsEqualTheClosedFormForPrefill) {
  for (const std::string& m : transformer_names()) {
    SCOPED_TRACE(m);
    const int64_t layers = dims(m).layers;
    EXPECT_EQ(zoo_test::total_macs(make_transformer(tf(m))), closed_form_macs(m, 1, 128, 128, layers));
    EXPECT_EQ(zoo_test::total_macs(make_transformer(tf(m, 3, 64, 0, 2))), closed_form_macs(m, 3, 64, 64, 2));
  }
  // BERT-base at 128 tokens: the well-known ~11.2 GMAC (22.4 GFLOP).
  EXPECT_EQ(zoo_test::total_macs(make_transformer(tf("bert-base"))), 11173625856);
}

TEST(ZooTransformers, MacsEqualTheClosedFormForADecodeStep) {
  for (const char* m : {"gpt2", "llama2-7b"}) {
    SCOPED_TRACE(m);
    // One new token over 512 cached ones: attention spans 513 keys.
    EXPECT_EQ(zoo_test::total_macs(make_transformer(tf(m, 2, 0, 512, 0))),
              closed_form_macs(m, 2, 1, 513, dims(m).layers));
    // A chunk of 16 tokens after 100 cached (chunked prefill).
    EXPECT_EQ(zoo_test::total_macs(make_transformer(tf(m, 1, 16, 100, 1))), closed_form_macs(m, 1, 16, 116, 1));
  }
}

// --logits last: the LM head of each sequence's last token only (a slice after the final norm),
// S x fewer head MACs; encoders and unknown values refused.
TEST(ZooTransformers, LastLogitsKeepOnePositionPerSequence) {
  for (const char* m : {"gpt2", "llama3-8b"}) {
    SCOPED_TRACE(m);
    ZooOptions all = tf(m, 2, 64, 0, 1), last = all;
    last.logits = "last";
    const ir::Graph a = make_transformer(all), b = make_transformer(last);
    const Dims d = dims(m);
    EXPECT_EQ(zoo_test::total_macs(a) - zoo_test::total_macs(b), 2 * 63 * d.d * d.vocab);
    EXPECT_EQ(b.layers.back().output_shapes.at(0), (ir::Shape{2, 1, d.vocab}));
  }
  ZooOptions bad = tf("gpt2", 1, 8);
  bad.logits = "first";
  EXPECT_THROW(make_transformer(bad), InputError);
}

TEST(ZooTransformers, ParameterCountsAreThePublishedOnes) {
  // Hugging Face: gpt2 124,439,808 (LM head tied to wte); Llama-2-7b 6,738,415,616;
  // bert-base-uncased 109,482,240 less the pooler (590,592) and token-type table (1,536).
  EXPECT_EQ(weights(make_transformer(tf("gpt2", 1, 8))), 124439808);
  EXPECT_EQ(weights(make_transformer(tf("llama2-7b", 1, 8))), 6738415616);
  EXPECT_EQ(weights(make_transformer(tf("bert-base", 1, 8))), 108890112);
  // bert-large-uncased 335,141,888 less its pooler (1,049,600) and token-type table (2,048);
  // gpt2-medium / -large / -xl; Llama-2-13b and -70b (grouped-query K/V projections).
  EXPECT_EQ(weights(make_transformer(tf("bert-large", 1, 8))), 334090240);
  EXPECT_EQ(weights(make_transformer(tf("gpt2-medium", 1, 8))), 354823168);
  EXPECT_EQ(weights(make_transformer(tf("gpt2-large", 1, 8))), 774030080);
  EXPECT_EQ(weights(make_transformer(tf("gpt2-xl", 1, 8))), 1557611200);
  EXPECT_EQ(weights(make_transformer(tf("llama2-13b", 1, 8))), 13015864320);
  EXPECT_EQ(weights(make_transformer(tf("llama2-70b", 1, 8))), 68976648192);
  // Llama-3.1-8B: 8,030,261,248 (untied 128256-row embedding and LM head).
  EXPECT_EQ(weights(make_transformer(tf("llama3-8b", 1, 8))), 8030261248);
}

// One tensor-parallel rank (--shard T): every projection, the MLP and the LM head divided by
// T, the norms (hidden size) whole; T ranks together hold the model's weights plus T - 1
// copies of the norms.
TEST(ZooTransformers, AShardIsOneTensorParallelRank) {
  for (const char* m : {"llama2-7b", "llama3-8b"}) {
    SCOPED_TRACE(m);
    ZooOptions whole = tf(m, 2, 16, 0, 2), half = whole;
    half.shard = 2;
    const ir::Graph a = make_transformer(whole), b = make_transformer(half);
    EXPECT_EQ(2 * zoo_test::total_macs(b), zoo_test::total_macs(a));
    int64_t norms = 0;
    for (const ir::Tensor& t : b.tensors)
      if (t.role == ir::TensorRole::Weight && t.shape.size() == 1) norms += ir::num_elements(t.shape);
    EXPECT_EQ(2 * weights(b) - norms, weights(a));
    for (const ir::Tensor& t : b.tensors) {
      if (t.name == "model.layers.0.self_attn.q_proj.weight") {
        EXPECT_EQ(t.shape, (ir::Shape{4096, 2048}));
      }
      if (t.name == "model.layers.0.self_attn.o_proj.weight") {
        EXPECT_EQ(t.shape, (ir::Shape{2048, 4096}));
      }
      if (t.name == "lm_head.weight") {
        EXPECT_EQ(t.shape[1], dims(m).vocab / 2);
      }
    }
  }
  ZooOptions bad = tf("gpt2", 1, 8);
  bad.shard = 2;  // 50257 vocabulary rows
  EXPECT_THROW(make_transformer(bad), InputError);
  bad = tf("llama3-8b", 1, 8);
  bad.shard = 16;  // 8 K/V heads
  EXPECT_THROW(make_transformer(bad), InputError);
}

TEST(ZooTransformers, BatchIsDimZeroOfEveryActivation) {
  for (const std::string& m : transformer_names()) {
    SCOPED_TRACE(m);
    const ir::Graph g = make_transformer(tf(m, 5, 24, 0, 1));
    EXPECT_EQ(g.batch(), 5);
    for (const ir::Tensor& t : g.tensors) {
      if (t.is_parameter()) continue;
      if (t.producer >= 0 && g.layers[static_cast<size_t>(t.producer)].op == ir::OpKind::Slice &&
          g.tensor(g.layers[static_cast<size_t>(t.producer)].inputs[0]).is_parameter())
        continue;  // rows of the position table: no batch
      EXPECT_EQ(t.shape[0], 5) << t.name;
    }
    // The writer's batch axes pass the reader's batch check at any batch.
    zoo_test::round_trip(g);
  }
}

TEST(ZooTransformers, DecodeStepReadsAndAppendsTheKvCache) {
  const ir::Graph g = make_transformer(tf("llama2-7b", 2, 0, 300, 2));
  int cache_inputs = 0, cat = 0;
  for (const ir::Tensor& t : g.tensors)
    if (t.role == ir::TensorRole::GraphInput && t.shape.size() == 4) {
      ++cache_inputs;
      EXPECT_EQ(t.shape, (ir::Shape{2, 32, 300, 128})) << t.name;
    }
  for (const ir::Layer& l : g.layers) {
    if (l.op == ir::OpKind::Concat && l.axes == std::vector<int64_t>{2}) {
      ++cat;
      EXPECT_EQ(l.output_shapes[0], (ir::Shape{2, 32, 301, 128}));
    }
    if (l.op == ir::OpKind::BatchMatMul && l.transpose_b) {
      EXPECT_EQ(l.output_shapes[0], (ir::Shape{2, 32, 1, 301}));
    }
    if (l.op == ir::OpKind::Softmax) {
      EXPECT_EQ(l.axes, std::vector<int64_t>{-1});
    }
  }
  EXPECT_EQ(cache_inputs, 4);  // K and V of 2 layers
  EXPECT_EQ(cat, 4);
  // logits + the new K and V of each layer
  EXPECT_EQ(g.graph_outputs.size(), 1u + 4u);
  EXPECT_EQ(g.layers.back().output_shapes[0], (ir::Shape{2, 1, 32000}));
}

TEST(ZooTransformers, ModelStructure) {
  const ir::Graph gpt = make_transformer(tf("gpt2", 1, 32, 0, 1));
  EXPECT_EQ(gpt.layers.front().op, ir::OpKind::Reshape);  // input_ids.view
  EXPECT_EQ(gpt.layers[1].op, ir::OpKind::Gather);
  const ir::Layer& head = gpt.layers.back();
  EXPECT_EQ(head.name, "lm_head");
  EXPECT_TRUE(head.transpose_b);                     // tied to wte [V, D]
  EXPECT_EQ(head.inputs[1], gpt.layers[1].inputs[0]);  // the same tensor as the embedding table
  int gelu = 0, ln = 0;
  for (const ir::Layer& l : gpt.layers) {
    gelu += l.op == ir::OpKind::Gelu;
    ln += l.op == ir::OpKind::LayerNorm;
  }
  EXPECT_EQ(gelu, 1);
  EXPECT_EQ(ln, 3);  // ln_1, ln_2, ln_f

  const ir::Graph llama = make_transformer(tf("llama2-7b", 1, 16, 0, 1));
  int rms = 0, silu = 0, matmul = 0;
  for (const ir::Layer& l : llama.layers) {
    rms += l.op == ir::OpKind::RmsNorm;
    silu += l.op == ir::OpKind::Silu;
    matmul += l.op == ir::OpKind::MatMul;
    if (l.op == ir::OpKind::MatMul) {
      EXPECT_EQ(l.inputs.size(), 2u) << l.name;  // no biases
    }
  }
  EXPECT_EQ(rms, 3);
  EXPECT_EQ(silu, 1);
  EXPECT_EQ(matmul, 4 + 3 + 1);
}

TEST(ZooTransformers, DtypeDefaultsToFp16AndFollowsTheOption) {
  for (const auto& [opt, want] : {std::pair<std::string, ir::DType>{"", ir::DType::Float16},
                                  {"fp32", ir::DType::Float32},
                                  {"int8", ir::DType::Int8}}) {
    const ir::Graph g = make_transformer(tf("bert-base", 1, 8, 0, 1, opt));
    for (const ir::Layer& l : g.layers)
      if (l.op == ir::OpKind::MatMul) {
        EXPECT_EQ(l.input_dtypes[0], want) << opt;
        EXPECT_EQ(l.input_dtypes[1], want) << opt;
      }
    EXPECT_EQ(g.tensor(g.layers[0].inputs[0]).dtype, ir::DType::Int32);  // token ids
  }
}

TEST(ZooTransformers, EveryModelRoundTripsThroughFrontendIr) {
  for (const std::string& m : transformer_names()) {
    SCOPED_TRACE(m);
    const ir::Graph g = make_transformer(tf(m, 2, 16, 0, m == "bert-base" || m == "gpt2" ? 0 : 2));
    const ir::Graph back = zoo_test::round_trip(g);
    EXPECT_EQ(zoo_test::compare_graphs(g, back), 0);
    ir::validate(back);
    if (m.rfind("bert", 0) != 0) {
      const ir::Graph d = make_transformer(tf(m, 2, 0, 40, 2));
      EXPECT_EQ(zoo_test::compare_graphs(d, zoo_test::round_trip(d)), 0);
    }
  }
}

TEST(ZooTransformers, FullLlamaBuildsQuickly) {
  // 32 layers: ~1400 operations through builder, validation, writer and reader.
  const ir::Graph g = make_transformer(tf("llama2-7b", 1, 128));
  const ir::Graph back = zoo_test::round_trip(g);
  EXPECT_EQ(back.layers.size(), g.layers.size());
  EXPECT_EQ(zoo_test::total_macs(back), closed_form_macs("llama2-7b", 1, 128, 128, 32));
}

void expect_error(const ZooOptions& o, const std::string& where, const std::string& text) {
  try {
    make_transformer(o);
    ADD_FAILURE() << "no error for " << where;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "zoo");
    EXPECT_EQ(e.where(), where);
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(ZooTransformers, BadOptionsAreInputErrors) {
  expect_error(tf("gpt3"), "model", "gpt2");
  expect_error(tf("gpt2", 0), "batch", "got 0");
  expect_error(tf("gpt2", 1, -1), "seq", "got -1");
  expect_error(tf("gpt2", 1, 1025), "seq", "1024 learned positions");
  expect_error(tf("gpt2", 1, 0, 1024), "kv-len", "1024 learned positions");
  expect_error(tf("bert-base", 1, 0, 8), "kv-len", "encoder");
  expect_error(tf("llama2-7b", 1, 0, 0, 33), "layers", "32 layers");
  expect_error(tf("gpt2", 1, 0, 0, 0, "int4"), "dtype", "int4");
}

}  // namespace
