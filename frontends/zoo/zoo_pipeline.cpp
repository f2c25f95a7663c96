// `sim zoo MODEL --tp T --pp P`: a Llama model as a tensor- and pipeline-parallel pipeline
// (docs/system.md#zoo-pipelines) in furiosa-llm's format (docs/format_pipeline.md).
// Compute supertasks carry "fx" payloads: base64 of torch.export graph-schema JSON, written node
// by node as scripts/make_pipelines.py does (aten ops the pipeline reader lowers), one blob per
// distinct graph, so the system engine simulates each distinct supertask once.
//
// Megatron-style sharding per stage and tensor-parallel rank t of T: q/k/v column shards
// (H/T query heads, Hkv/T K/V heads), o row shard, gate/up column shards (F/T), down row shard,
// lm_head column shard (V/T). Per layer: attention supertask (residual add, rms_norm, q/k/v,
// rotary, attention, o) -> all_reduce -> MLP supertask (residual add, rms_norm, gate/up, silu,
// mul, down) -> all_reduce; the next supertask adds the reduced output to the residual stream.
// Stages hand the hidden state to the next stage's rank t by send/recv. A mixture of experts
// (Mixtral's layout) replaces the MLP supertask by three: route (residual add, rms_norm, the
// router's logits, softmax, the top-k pass, the assignments gathered by destination), experts
// (the rank's active experts as batched GEMMs, each expert's width over the tp ranks) and
// combine (the outputs back in token order, weighted, summed over k); with --ep the dispatched
// and the computed rows cross the ep groups by all_to_all (docs/system.md#expert-parallelism).
// DeepSeek's layout: multi-head latent attention per rank (its heads' shares of q_b, kv_b and o;
// the latent's projection and cache whole on every rank), dense MLPs on the first layers, then
// mixtures with ungated shared experts. Grouped-query attention
// multiplies the g = H/Hkv query heads of a K/V head as one [g*S, dh] block against its keys
// (no copies of K/V), as FlashAttention and vLLM do.
#include <algorithm>
#include <cmath>
#include <map>

#include "frontends/pipeline/fx_lower.h"
#include "frontends/zoo/model_def.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

namespace {

using Json = nlohmann::ordered_json;
using Dims = std::vector<int64_t>;

Json T(const std::string& n) { return {{"as_tensor", {{"name", n}}}}; }
Json I(int64_t v) { return {{"as_int", v}}; }
Json F(double v) { return {{"as_float", v}}; }
Json B(bool v) { return {{"as_bool", v}}; }
Json INTS(const Dims& v) { return {{"as_ints", v}}; }
Json TS(const std::vector<std::string>& names) {
  Json a = Json::array();
  for (const auto& n : names) a.push_back({{"name", n}});
  return {{"as_tensors", a}};
}

// A torch.export graph written node by node; values named as torch names them (mm, mm_1...).
class FxGraph {
 public:
  explicit FxGraph(int scalar) : m_scalar(scalar) {}

  std::string input(const Dims& shape, int scalar = -1) {
    const std::string name = "arg" + std::to_string(m_inputs.size()) + "_1";
    meta(name, shape, scalar);
    m_inputs.push_back(T(name));
    return name;
  }
  std::string call(const std::string& op, const std::vector<std::pair<std::string, Json>>& args, const Dims& shape,
                   const std::string& overload = "default") {
    std::string base = op;
    while (!base.empty() && base[0] == '_') base.erase(0, 1);
    const int k = m_counts[base]++;
    const std::string name = k == 0 ? base : base + "_" + std::to_string(k);
    meta(name, shape);
    Json ins = Json::array();
    for (const auto& [n, a] : args) ins.push_back({{"name", n}, {"arg", a}, {"kind", 1}});
    m_nodes.push_back({{"target", "torch.ops.aten." + op + "." + overload}, {"inputs", ins},
                       {"outputs", Json::array({T(name)})}, {"metadata", Json::object()}});
    m_names.push_back(name);
    return name;
  }
  void output(const std::vector<std::string>& names) {
    m_outputs = Json::array();
    for (const auto& n : names) m_outputs.push_back(T(n));
  }
  // base64(JSON) as furiosa-llm's serialize_gm writes it: the Graph plus its "metadata".
  std::string payload() const {
    Json g;
    g["inputs"] = m_inputs;
    g["outputs"] = m_outputs;
    g["nodes"] = m_nodes;
    g["tensor_values"] = m_tv;
    g["sym_int_values"] = Json::object();
    g["sym_bool_values"] = Json::object();
    g["is_single_tensor_return"] = false;
    g["custom_obj_values"] = Json::object();
    g["metadata"] = {{"node_metas", Json::object()},
                     {"node_dynamo_source_info", Json::object()},
                     {"node_names", m_names},
                     {"constant_saved_info", {{"param_files", Json::object()}, {"tensor_to_saved_file_id_and_saved_name", Json::object()}, {"blob", nullptr}}},
                     {"getattr_node_targets", Json::object()}};
    return pipeline::base64_encode(g.dump());
  }

  // ---- the aten ops the models use ----
  std::string mm(const std::string& a, const std::string& b, const Dims& s) { return call("mm", {{"self", T(a)}, {"mat2", T(b)}}, s); }
  std::string bmm(const std::string& a, const std::string& b, const Dims& s) { return call("bmm", {{"self", T(a)}, {"mat2", T(b)}}, s); }
  std::string add(const std::string& a, const std::string& b, const Dims& s) {
    return call("add", {{"self", T(a)}, {"other", T(b)}}, s, "Tensor");
  }
  std::string mul(const std::string& a, const std::string& b, const Dims& s) {
    return call("mul", {{"self", T(a)}, {"other", T(b)}}, s, "Tensor");
  }
  std::string reshape(const std::string& x, const Dims& s) { return call("reshape", {{"self", T(x)}, {"shape", INTS(s)}}, s); }
  std::string permute(const std::string& x, const Dims& dims, const Dims& s) {
    return call("permute", {{"self", T(x)}, {"dims", INTS(dims)}}, s);
  }
  std::string layer_norm(const std::string& x, const std::string& w, const std::string& b, int64_t d, double eps, const Dims& s) {
    return call("layer_norm", {{"input", T(x)}, {"normalized_shape", INTS({d})}, {"weight", T(w)}, {"bias", T(b)}, {"eps", F(eps)}}, s);
  }
  std::string rms_norm(const std::string& x, const std::string& w, int64_t d, double eps, const Dims& s) {
    return call("rms_norm", {{"input", T(x)}, {"normalized_shape", INTS({d})}, {"weight", T(w)}, {"eps", F(eps)}}, s);
  }
  std::string slice(const std::string& x, int64_t dim, int64_t start, int64_t end, const Dims& s) {
    return call("slice", {{"self", T(x)}, {"dim", I(dim)}, {"start", I(start)}, {"end", I(end)}, {"step", I(1)}}, s, "Tensor");
  }
  std::string cat(const std::vector<std::string>& xs, int64_t dim, const Dims& s) {
    return call("cat", {{"tensors", TS(xs)}, {"dim", I(dim)}}, s);
  }
  std::string index_select(const std::string& x, const std::string& idx, const Dims& s) {
    return call("index_select", {{"self", T(x)}, {"dim", I(0)}, {"index", T(idx)}}, s);
  }

 private:
  void meta(const std::string& name, const Dims& shape, int scalar = -1) {
    Json sizes = Json::array(), strides = Json::array();
    std::vector<int64_t> st(shape.size());
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) st[i] = s, s *= shape[i];
    for (size_t i = 0; i < shape.size(); ++i) sizes.push_back(I(shape[i])), strides.push_back(I(st[i]));
    m_tv[name] = {{"dtype", scalar >= 0 ? scalar : m_scalar}, {"sizes", sizes}, {"requires_grad", false}, {"device", {{"type", "cpu"}, {"index", nullptr}}},
                  {"strides", strides}, {"storage_offset", I(0)}, {"layout", 7}};
  }
  int m_scalar;
  Json m_inputs = Json::array(), m_outputs = Json::array(), m_nodes = Json::array(), m_tv = Json::object();
  std::vector<std::string> m_names;
  std::map<std::string, int> m_counts;
};

// One rank's share of the model and the pass's sizes.
struct Shard {
  int64_t B, S, N, Tk;  // batch, new tokens, cached tokens, keys (N + S)
  int64_t D, h, hkv, g, dh, f, v;  // model width, query / K/V heads, heads per K/V head, head dim, FFN and vocab shards
  bool qkv_bias = false;  // Qwen2: biases on q, k and v (their shards)
  double eps;
  int scalar;  // torch.export ScalarType of the activations
  std::string dtype;  // pipeline dtype name
  // Mixture of experts (E = 0: dense). The busiest rank's load, which every rank runs (a step
  // waits for it): its share of the assignments, its active experts padded to the busiest
  // expert's rows.
  int64_t E = 0, k = 0;   // experts, top-k
  int64_t A = 0;          // this group's assignments: B*S*k
  int64_t recv = 0;       // rows the rank's experts take (A when nothing crosses groups)
  int64_t el = 0, rows = 0;  // active experts of the rank, rows of each
  int64_t ef = 0;         // an expert's width shard
  int64_t sf = 0;         // the shared expert's width shard (0: none)
  bool shared_gate = true;      // Qwen2-MoE's sigmoid gate on it (DeepSeek: none)
  bool sigmoid_router = false;  // DeepSeek-V3: sigmoid scores plus a per-expert bias pick the experts
  int first_moe = 0;            // layers before it have a dense MLP (DeepSeek's first_k_dense_replace)
  // Multi-head latent attention (DeepSeek; r = 0: none): q through a rank-ql bottleneck (0: one
  // projection), keys of nope + rd dims, values of dv, a cached latent of r + rd per token.
  int64_t ql = 0, r = 0, nope = 0, rd = 0, dv = 0;
  // OPT's, GPT-2's and GPT-NeoX's layout: LayerNorms with biases, biases on every projection, a
  // two-matrix MLP (relu or gelu); OPT and GPT-2 add positions to the embedding (no rotary),
  // NeoX rotates the first rope_dims of a head and adds attention and MLP to one residual.
  bool layer_norm = false;
  bool rotary = true;
  int64_t rope_dims = 0;     // rotary dims of a head when fewer than dh (0: all)
  bool parallel = false;     // x + attn(ln1(x)) + mlp(ln2(x))
  std::string act = "silu";
  // Gemma 2: RMSNorms after attention and after the MLP too (each applied where its input is
  // whole: after the all_reduce, in the next supertask), soft-capped scores and logits. `first`:
  // the blob of a stage's first layer, whose residual input has no MLP output to normalise.
  bool gemma = false, first = false;
  double attn_cap = 0, final_cap = 0;
  int64_t rot() const { return r > 0 ? rd : rope_dims > 0 ? rope_dims : dh; }  // rotary dims of a head
};

// The block's norm: RMSNorm, or LayerNorm with its bias (the input after the weight).
std::string block_norm(FxGraph& g, const Shard& m, const std::string& x, const std::string& w, const std::string& b) {
  return m.layer_norm ? g.layer_norm(x, w, b, m.D, m.eps, {m.B * m.S, m.D}) : g.rms_norm(x, w, m.D, m.eps, {m.B * m.S, m.D});
}

constexpr int kInt32 = 4;  // torch.export ScalarType INT

// route: inputs x, r, norm weight, router, the dispatch order [, the shared expert's gate, up,
// down and its gate vector]. Outputs: the assignments in destination order [recv, D], their top-k
// weights [A, 1], x + r [, the shared expert's (partial, over tp) output scaled by its gate].
FxGraph moe_route(const Shard& m) {
  FxGraph g(m.scalar);
  const int64_t BS = m.B * m.S;
  const std::string x = g.input({BS, m.D}), r = g.input({BS, m.D}), wn = g.input({m.D}), wr = g.input({m.D, m.E});
  const std::string bias = m.sigmoid_router ? g.input({m.E}) : "";
  const std::string order = g.input({m.recv}, kInt32);
  const std::string sg = m.sf > 0 ? g.input({m.D, m.sf}) : "", su = m.sf > 0 ? g.input({m.D, m.sf}) : "",
                    sd = m.sf > 0 ? g.input({m.sf, m.D}) : "", sw = m.sf > 0 && m.shared_gate ? g.input({m.D, 1}) : "";
  const std::string h = g.add(x, r, {BS, m.D});
  const std::string ln = g.rms_norm(h, wn, m.D, m.eps, {BS, m.D});
  const std::string logits = g.mm(ln, wr, {BS, m.E});
  const std::string p = m.sigmoid_router ? g.call("sigmoid", {{"self", T(logits)}}, {BS, m.E})
                                         : g.call("_softmax", {{"self", T(logits)}, {"dim", I(-1)}, {"half_to_float", B(false)}}, {BS, m.E});
  const std::string choice = m.sigmoid_router ? g.add(p, bias, {BS, m.E}) : p;
  g.call("amax", {{"self", T(choice)}, {"dim", INTS({-1})}, {"keepdim", B(true)}}, {BS, 1});  // the top-k pass
  const std::string w = g.reshape(g.slice(p, -1, 0, m.k, {BS, m.k}), {m.A, 1});
  if (m.sf == 0) {
    g.output({g.index_select(ln, order, {m.recv, m.D}), w, h});
    return g;
  }
  const std::string gate = g.call("silu", {{"self", T(g.mm(ln, sg, {BS, m.sf}))}}, {BS, m.sf});
  const std::string shared = g.mm(g.mul(gate, g.mm(ln, su, {BS, m.sf}), {BS, m.sf}), sd, {BS, m.D});
  if (!m.shared_gate) {
    g.output({g.index_select(ln, order, {m.recv, m.D}), w, h, shared});
    return g;
  }
  const std::string scale = g.call("sigmoid", {{"self", T(g.mm(ln, sw, {BS, 1}))}}, {BS, 1});
  g.output({g.index_select(ln, order, {m.recv, m.D}), w, h, g.mul(shared, scale, {BS, m.D})});
  return g;
}

// experts: inputs the rows [recv, D], their places in the padded layout, w1, w3, w2 of the
// active experts. Output: the experts' (partial, over tp) outputs in the rows' order [recv, D].
FxGraph moe_experts(const Shard& m) {
  FxGraph g(m.scalar);
  const int64_t P = m.el * m.rows;
  const std::string x = g.input({m.recv, m.D}), pad = g.input({P}, kInt32), back = g.input({m.recv}, kInt32);
  const std::string w1 = g.input({m.el, m.D, m.ef}), w3 = g.input({m.el, m.D, m.ef}), w2 = g.input({m.el, m.ef, m.D});
  const std::string xe = g.reshape(g.index_select(x, pad, {P, m.D}), {m.el, m.rows, m.D});
  const std::string gate = g.call("silu", {{"self", T(g.bmm(xe, w1, {m.el, m.rows, m.ef}))}}, {m.el, m.rows, m.ef});
  const std::string up = g.mul(gate, g.bmm(xe, w3, {m.el, m.rows, m.ef}), {m.el, m.rows, m.ef});
  const std::string y = g.reshape(g.bmm(up, w2, {m.el, m.rows, m.D}), {P, m.D});
  g.output({g.index_select(y, back, {m.recv, m.D})});
  return g;
}

// combine: inputs the outputs [recv, D], each assignment's row, the top-k weights [, the shared
// expert's output]. Output: the layer's MLP output (partial over tp) [B*S, D].
FxGraph moe_combine(const Shard& m) {
  FxGraph g(m.scalar);
  const int64_t BS = m.B * m.S;
  const std::string y = g.input({m.recv, m.D}), unperm = g.input({m.A}, kInt32), w = g.input({m.A, 1});
  const std::string shared = m.sf > 0 ? g.input({BS, m.D}) : "";
  const std::string yw = g.mul(g.index_select(y, unperm, {m.A, m.D}), w, {m.A, m.D});
  std::string out = g.call("sum", {{"self", T(g.reshape(yw, {BS, m.k, m.D}))}, {"dim", INTS({1})}, {"keepdim", B(false)}}, {BS, m.D}, "dim_IntList");
  if (m.sf > 0) out = g.add(out, shared, {BS, m.D});
  g.output({out});
  return g;
}

// Rotary embedding as Hugging Face's apply_rotary_pos_emb: x*cos + rotate_half(x)*sin over the
// last dim (positions along dim -2).
std::string rope(FxGraph& g, const std::string& x, const std::string& cos, const std::string& sin, const Dims& s) {
  Dims half = s;
  half.back() /= 2;
  const int64_t dh = s.back();
  const std::string x1 = g.slice(x, -1, 0, dh / 2, half), x2 = g.slice(x, -1, dh / 2, dh, half);
  const std::string rot = g.cat({g.call("neg", {{"self", T(x2)}}, half), x1}, -1, s);
  return g.add(g.mul(x, cos, s), g.mul(rot, sin, s), s);
}

// Inputs: x, r (residual stream and the last reduced output), wq, wk, wv, wo, norm weight, cos,
// sin, scale, [mask when S > 1], [K and V caches when N > 0]. Outputs: o's partial sum, x + r.
FxGraph attention(const Shard& m) {
  FxGraph g(m.scalar);
  const int64_t BS = m.B * m.S, hd = m.h * m.dh, kvd = m.hkv * m.dh;
  const std::string x = g.input({BS, m.D}), r = g.input({BS, m.D});
  const std::string wq = g.input({m.D, hd}), wk = g.input({m.D, kvd}), wv = g.input({m.D, kvd}), wo = g.input({hd, m.D});
  const std::string wn = g.input({m.D});
  const std::string bq = m.qkv_bias ? g.input({hd}) : "", bk = m.qkv_bias ? g.input({kvd}) : "", bv = m.qkv_bias ? g.input({kvd}) : "";
  const std::string bn = m.layer_norm ? g.input({m.D}) : "", bo = m.layer_norm ? g.input({m.D}) : "";
  const std::string post = m.gemma && !m.first ? g.input({m.D}) : "";  // the previous layer's post-MLP norm
  const std::string cos = m.rotary ? g.input({m.S, m.rot()}) : "", sin = m.rotary ? g.input({m.S, m.rot()}) : "", scale = g.input({1});
  const std::string cap = m.attn_cap > 0 ? g.input({1}) : "";
  const std::string mask = m.S > 1 ? g.input({m.g * m.S, m.Tk}) : "";
  const std::string kc = m.N > 0 ? g.input({m.B * m.hkv, m.N, m.dh}) : "", vc = m.N > 0 ? g.input({m.B * m.hkv, m.N, m.dh}) : "";
  const std::string xs = g.add(x, post.empty() ? r : g.rms_norm(r, post, m.D, m.eps, {BS, m.D}), {BS, m.D});
  const std::string ln = block_norm(g, m, xs, wn, bn);
  std::string q = g.mm(ln, wq, {BS, hd}), k = g.mm(ln, wk, {BS, kvd}), v = g.mm(ln, wv, {BS, kvd});
  if (m.qkv_bias) q = g.add(q, bq, {BS, hd}), k = g.add(k, bk, {BS, kvd}), v = g.add(v, bv, {BS, kvd});
  // q: [B, S, Hkv, g, dh] -> [B, Hkv, g, S, dh], rotary, -> [B*Hkv, g*S, dh]
  const Dims qs{m.B, m.hkv, m.g, m.S, m.dh};
  std::string qh = g.permute(g.reshape(q, {m.B, m.S, m.hkv, m.g, m.dh}), {0, 2, 3, 1, 4}, qs);
  // Rotary dims: all of a head's, or its first rope_dims (NeoX's rotary_pct), the rest passed through.
  auto rotate = [&](const std::string& t, const Dims& s) {
    if (!m.rotary) return t;
    if (m.rot() == m.dh) return rope(g, t, cos, sin, s);
    Dims a = s, b = s;
    a.back() = m.rot(), b.back() = m.dh - m.rot();
    return g.cat({rope(g, g.slice(t, -1, 0, m.rot(), a), cos, sin, a), g.slice(t, -1, m.rot(), m.dh, b)}, -1, s);
  };
  qh = g.reshape(rotate(qh, qs), {m.B * m.hkv, m.g * m.S, m.dh});
  const Dims ks{m.B, m.hkv, m.S, m.dh};
  std::string kh = g.permute(g.reshape(k, {m.B, m.S, m.hkv, m.dh}), {0, 2, 1, 3}, ks);
  kh = g.reshape(rotate(kh, ks), {m.B * m.hkv, m.S, m.dh});
  std::string vh = g.reshape(g.permute(g.reshape(v, {m.B, m.S, m.hkv, m.dh}), {0, 2, 1, 3}, ks), {m.B * m.hkv, m.S, m.dh});
  if (m.N > 0) {
    kh = g.cat({kc, kh}, 1, {m.B * m.hkv, m.Tk, m.dh});
    vh = g.cat({vc, vh}, 1, {m.B * m.hkv, m.Tk, m.dh});
  }
  const std::string kt = g.permute(kh, {0, 2, 1}, {m.B * m.hkv, m.dh, m.Tk});
  const Dims ss{m.B * m.hkv, m.g * m.S, m.Tk};
  std::string sc = g.mul(g.bmm(qh, kt, ss), scale, ss);
  if (m.attn_cap > 0) sc = g.mul(g.call("tanh", {{"self", T(sc)}}, ss), cap, ss);  // c * tanh(x / c), 1/c in the scale
  if (m.S > 1) sc = g.add(sc, mask, ss);
  const std::string p = g.call("_softmax", {{"self", T(sc)}, {"dim", I(-1)}, {"half_to_float", B(false)}}, ss);
  std::string ctx = g.bmm(p, vh, {m.B * m.hkv, m.g * m.S, m.dh});
  ctx = g.permute(g.reshape(ctx, {m.B, m.hkv, m.g, m.S, m.dh}), {0, 3, 1, 2, 4}, {m.B, m.S, m.hkv, m.g, m.dh});
  ctx = g.reshape(ctx, {BS, hd});
  std::string out = g.mm(ctx, wo, {BS, m.D});
  // o's bias (LayerNorm layout) on every rank's partial sum: one add of [B*S, D], as its
  // place after the all_reduce would cost.
  if (m.layer_norm) out = g.add(out, bo, {BS, m.D});
  g.output({out, xs});
  return g;
}

// DeepSeek's multi-head latent attention on one rank's h heads, as the zoo's graph builds it
// (docs/llm_models.md#multi-head-latent-attention): a prefill rebuilds its heads' keys and values
// from the latents through its kv_b shard; a decode step absorbs W_UK and W_UV and attends the
// latent cache [B, T, r + rd] as one tensor of keys and values. Inputs: x, r, [q_a, q_a norm,
// q_b | q], kv_a, kv_a norm, [kv_b | W_UK, W_UV], o, norm weight, cos, sin, scale, [mask when
// S > 1], [the latent cache when N > 0]. Outputs: o's partial sum, x + r.
FxGraph mla_attention(const Shard& m) {
  FxGraph g(m.scalar);
  const int64_t BS = m.B * m.S, qk = m.nope + m.rd, lat = m.r + m.rd, h = m.h, nb = m.B, ns = m.S, tk = m.Tk;
  const bool absorbed = m.N > 0 && m.S == 1;
  const std::string x = g.input({BS, m.D}), r = g.input({BS, m.D});
  const std::string wqa = m.ql > 0 ? g.input({m.D, m.ql}) : "", wqan = m.ql > 0 ? g.input({m.ql}) : "";
  const std::string wq = g.input({m.ql > 0 ? m.ql : m.D, h * qk});
  const std::string wkva = g.input({m.D, lat}), wkvan = g.input({m.r});
  const std::string wkvb = absorbed ? "" : g.input({m.r, h * (m.nope + m.dv)});
  const std::string wuk = absorbed ? g.input({h, m.nope, m.r}) : "", wuv = absorbed ? g.input({h, m.r, m.dv}) : "";
  const std::string wo = g.input({h * m.dv, m.D}), wn = g.input({m.D});
  const std::string cos = g.input({ns, m.rd}), sin = g.input({ns, m.rd}), scale = g.input({1});
  const std::string mask = ns > 1 ? g.input({ns, tk}) : "";
  const std::string cache = m.N > 0 ? g.input({nb, m.N, lat}) : "";
  const std::string xs = g.add(x, r, {BS, m.D});
  const std::string ln = g.rms_norm(xs, wn, m.D, m.eps, {BS, m.D});
  const std::string qin = m.ql > 0 ? g.rms_norm(g.mm(ln, wqa, {BS, m.ql}), wqan, m.ql, m.eps, {BS, m.ql}) : ln;
  const std::string qh = g.permute(g.reshape(g.mm(qin, wq, {BS, h * qk}), {nb, ns, h, qk}), {0, 2, 1, 3}, {nb, h, ns, qk});
  const std::string qn = g.slice(qh, -1, 0, m.nope, {nb, h, ns, m.nope});
  const std::string qp = rope(g, g.slice(qh, -1, m.nope, qk, {nb, h, ns, m.rd}), cos, sin, {nb, h, ns, m.rd});
  // This pass's latents: the normed compressed K/V and the rotary key.
  const std::string kva = g.mm(ln, wkva, {BS, lat});
  const std::string c = g.rms_norm(g.slice(kva, -1, 0, m.r, {BS, m.r}), wkvan, m.r, m.eps, {BS, m.r});
  const std::string kp = rope(g, g.reshape(g.slice(kva, -1, m.r, lat, {BS, m.rd}), {nb, 1, ns, m.rd}), cos, sin, {nb, 1, ns, m.rd});
  const std::string latent = g.cat({g.reshape(c, {nb, ns, m.r}), g.reshape(kp, {nb, ns, m.rd})}, -1, {nb, ns, lat});
  const std::string all = m.N > 0 ? g.cat({cache, latent}, 1, {nb, tk, lat}) : latent;
  std::string o;  // [nb*ns, h*dv]
  if (absorbed) {
    std::string ql = g.bmm(g.reshape(g.permute(qn, {1, 0, 2, 3}, {h, nb, ns, m.nope}), {h, nb * ns, m.nope}), wuk, {h, nb * ns, m.r});
    ql = g.permute(g.reshape(ql, {h, nb, ns, m.r}), {1, 0, 2, 3}, {nb, h, ns, m.r});
    const std::string qf = g.reshape(g.cat({ql, qp}, -1, {nb, h, ns, lat}), {nb, h * ns, lat});
    const Dims ss{nb, h * ns, tk};
    const std::string sc = g.mul(g.bmm(qf, g.permute(all, {0, 2, 1}, {nb, lat, tk}), ss), scale, ss);
    const std::string p = g.call("_softmax", {{"self", T(sc)}, {"dim", I(-1)}, {"half_to_float", B(false)}}, ss);
    std::string ctx = g.slice(g.bmm(p, all, {nb, h * ns, lat}), -1, 0, m.r, {nb, h * ns, m.r});  // the rotary columns carry no value
    ctx = g.reshape(g.permute(g.reshape(ctx, {nb, h, ns, m.r}), {1, 0, 2, 3}, {h, nb, ns, m.r}), {h, nb * ns, m.r});
    const std::string v = g.bmm(ctx, wuv, {h, nb * ns, m.dv});
    o = g.reshape(g.permute(g.reshape(v, {h, nb, ns, m.dv}), {1, 2, 0, 3}, {nb, ns, h, m.dv}), {BS, h * m.dv});
  } else {
    const std::string cl = m.N > 0 ? g.slice(all, -1, 0, m.r, {nb, tk, m.r}) : g.reshape(c, {nb, ns, m.r});
    const std::string kr = m.N > 0 ? g.slice(all, -1, m.r, lat, {nb, tk, m.rd}) : g.reshape(kp, {nb, ns, m.rd});
    std::string kv = g.mm(g.reshape(cl, {nb * tk, m.r}), wkvb, {nb * tk, h * (m.nope + m.dv)});
    kv = g.permute(g.reshape(kv, {nb, tk, h, m.nope + m.dv}), {0, 2, 1, 3}, {nb, h, tk, m.nope + m.dv});
    const std::string kn = g.slice(kv, -1, 0, m.nope, {nb, h, tk, m.nope}), v = g.slice(kv, -1, m.nope, m.nope + m.dv, {nb, h, tk, m.dv});
    const std::string kr1 = g.reshape(kr, {nb, 1, tk, m.rd});
    const std::string kre = g.cat(std::vector<std::string>(static_cast<size_t>(h), kr1), 1, {nb, h, tk, m.rd});  // every head's rotary key
    const std::string k = g.reshape(g.cat({kn, kre}, -1, {nb, h, tk, qk}), {nb * h, tk, qk});
    const std::string qf = g.reshape(g.cat({qn, qp}, -1, {nb, h, ns, qk}), {nb * h, ns, qk});
    const Dims ss{nb * h, ns, tk};
    std::string sc = g.mul(g.bmm(qf, g.permute(k, {0, 2, 1}, {nb * h, qk, tk}), ss), scale, ss);
    if (ns > 1) sc = g.add(sc, mask, ss);
    const std::string p = g.call("_softmax", {{"self", T(sc)}, {"dim", I(-1)}, {"half_to_float", B(false)}}, ss);
    const std::string ctx = g.bmm(p, g.reshape(v, {nb * h, tk, m.dv}), {nb * h, ns, m.dv});
    o = g.reshape(g.permute(g.reshape(ctx, {nb, h, ns, m.dv}), {0, 2, 1, 3}, {nb, ns, h, m.dv}), {BS, h * m.dv});
  }
  g.output({g.mm(o, wo, {BS, m.D}), xs});
  return g;
}

// Inputs: x, r, norm weight, gate, up, down. Outputs: down's partial sum, x + r.
FxGraph mlp(const Shard& m) {
  FxGraph g(m.scalar);
  const int64_t BS = m.B * m.S;
  const std::string x = g.input({BS, m.D}), r = g.input({BS, m.D}), wn = g.input({m.D});
  if (m.layer_norm) {  // inputs: x, r, norm weight, fc1, fc2, norm bias, fc1's bias shard, fc2's bias
    const std::string w1 = g.input({m.D, m.f}), w2 = g.input({m.f, m.D}), bn = g.input({m.D}), b1 = g.input({m.f}), b2 = g.input({m.D});
    const std::string h = g.add(x, r, {BS, m.D});
    // NeoX's parallel residual: the MLP reads the block's input x, beside the attention.
    const std::string a = g.call(m.act, {{"self", T(g.add(g.mm(block_norm(g, m, m.parallel ? x : h, wn, bn), w1, {BS, m.f}), b1, {BS, m.f}))}}, {BS, m.f});
    g.output({g.add(g.mm(a, w2, {BS, m.D}), b2, {BS, m.D}), h});
    return g;
  }
  const std::string wg = g.input({m.D, m.f}), wu = g.input({m.D, m.f}), wd = g.input({m.f, m.D});
  const std::string post = m.gemma ? g.input({m.D}) : "";  // Gemma 2's post-attention norm
  const std::string h = g.add(x, post.empty() ? r : g.rms_norm(r, post, m.D, m.eps, {BS, m.D}), {BS, m.D});
  const std::string ln = g.rms_norm(h, wn, m.D, m.eps, {BS, m.D});
  const std::string gate = g.call(m.act, {{"self", T(g.mm(ln, wg, {BS, m.f}))}}, {BS, m.f});
  const std::string up = g.mul(gate, g.mm(ln, wu, {BS, m.f}), {BS, m.f});
  g.output({g.mm(up, wd, {BS, m.D}), h});
  return g;
}

// The residual stream's last add before a stage hands it on: x + r.
FxGraph residual(const Shard& m) {
  FxGraph g(m.scalar);
  const std::string x = g.input({m.B * m.S, m.D}), r = g.input({m.B * m.S, m.D});
  const std::string post = m.gemma ? g.input({m.D}) : "";
  g.output({g.add(x, post.empty() ? r : g.rms_norm(r, post, m.D, m.eps, {m.B * m.S, m.D}), {m.B * m.S, m.D})});
  return g;
}

// The last stage's end: x + r, the final rms_norm, the lm_head's vocabulary shard.
FxGraph head(const Shard& m) {
  FxGraph g(m.scalar);
  const int64_t BS = m.B * m.S;
  const std::string x = g.input({BS, m.D}), r = g.input({BS, m.D}), wn = g.input({m.D}), w = g.input({m.D, m.v});
  const std::string bn = m.layer_norm ? g.input({m.D}) : "";
  const std::string post = m.gemma ? g.input({m.D}) : "", cap = m.final_cap > 0 ? g.input({1}) : "";
  const std::string h = g.add(x, post.empty() ? r : g.rms_norm(r, post, m.D, m.eps, {BS, m.D}), {BS, m.D});
  std::string logits = g.mm(block_norm(g, m, h, wn, bn), w, {BS, m.v});
  if (m.final_cap > 0)  // c * tanh(x / c)
    logits = g.mul(g.call("tanh", {{"self", T(g.mul(logits, cap, {BS, m.v}))}}, {BS, m.v}), cap, {BS, m.v});
  g.output({logits});
  return g;
}

Json tensor(const Dims& shape, const std::string& dt) { return {{"shape", shape}, {"dtype", dt}}; }

// A weight (or other constant) stored in the pipeline's parameter file under `name`.
Json weight(const Dims& shape, const std::string& dt, const std::string& name) {
  Json placements = Json::array();
  for (int64_t d : shape) placements.push_back({0, d});
  return {{"shape", shape}, {"dtype", dt},
          {"value", {{"param_file", "0"}, {"name", name}, {"name_in_graph", name}, {"placements", placements}}}};
}

constexpr int kMaxDevices = 4096;

}  // namespace

nlohmann::ordered_json make_parallel_pipeline(const ZooOptions& o, const Parallelism& par) {
  const int tp = par.tp, pp = par.pp, ep = par.ep;
  const auto shape = transformer_shape(o.model);
  if (!shape) throw InputError("zoo", "model", "unknown transformer '" + o.model + "' (--tp and --pp take llama2-7b, llama2-13b, llama2-70b, llama3-8b)");
  // Mixtral's layout, or Qwen2-MoE's (q/k/v biases and a shared expert) with every layer a mixture.
  bool moe = shape->family == "llama-moe" ||
                   (shape->family == "llama-variant" && shape->experts > 0 && shape->every_layer_moe && !shape->o_bias && !shape->mlp_bias &&
                    shape->sliding_window == 0);
  // Llama's relatives: q/k/v biases (Qwen2), a sliding window on every layer (Mistral), tied
  // embeddings, a head size of its own; not biases on o or the MLP.
  const bool variant = shape->family == "llama-variant" && shape->experts == 0 && !shape->o_bias && !shape->mlp_bias &&
                       (shape->sliding_window == 0 || shape->every_layer_windowed);
  // DeepSeek-V2/V3: latent attention, dense first layers, then mixtures with shared experts.
  const bool deepseek = shape->family == "deepseek";
  if (deepseek && shape->experts > 0) moe = true;
  // OPT's and GPT-2's layout: LayerNorms and biases, learned positions, a two-matrix MLP.
  const bool layer_norm = shape->family == "opt" || shape->family == "gpt2" || shape->family == "neox";
  const bool gemma = shape->family == "gemma2";
  if (shape->family != "llama" && !moe && !variant && !deepseek && !layer_norm && !gemma)
    throw InputError("zoo", "--tp", "tensor- and pipeline-parallel pipelines are written for Llama's layout and its relatives (llama2-7b, llama2-13b, "
                                        "llama2-70b, llama3-8b, LlamaForCausalLM, MistralForCausalLM and Qwen2ForCausalLM config.json files: q/k/v biases, "
                                        "sliding windows, tied embeddings), the mixtures of experts of Mixtral and Qwen2-MoE, DeepSeek-V2/V3, OPT, GPT-2, GPT-NeoX and Gemma 2; " + o.model + " is not one" +
                                        (shape->architecture.empty() ? std::string() : " (" + shape->architecture + ", layout " + shape->family +
                                                                                               (shape->o_bias || shape->mlp_bias ? ", biases on o or the MLP" : "") + ")"));
  if (tp < 1 || pp < 1 || ep < 1 || int64_t{tp} * pp * ep > kMaxDevices)
    throw InputError("zoo", "--tp", "--tp, --pp and --ep must be at least 1 with tp x ep x pp <= " + std::to_string(kMaxDevices) + " devices");
  if (ep > 1 && !moe) throw InputError("zoo", "--ep", "expert parallelism needs a mixture-of-experts model; " + o.model + " is dense");
  if (moe && shape->experts % ep != 0)
    throw InputError("zoo", "--ep", o.model + "'s " + std::to_string(shape->experts) + " experts do not divide by --ep " + std::to_string(ep));
  for (const auto& [what, n] : std::vector<std::pair<std::string, int>>{{"attention heads", shape->heads},
                                                                       {"K/V heads", shape->kv_heads},
                                                                       {moe ? "expert width" : "FFN width", moe ? shape->expert_ffn : shape->ffn},
                                                                       {"shared expert width", moe ? shape->shared_ffn : 0},
                                                                       {"dense layers' FFN width", moe && shape->dense_first > 0 ? shape->ffn : 0},
                                                                       {"vocabulary", shape->vocab}})
    if (n % tp != 0)
      throw InputError("zoo", "--tp", o.model + "'s " + what + " (" + std::to_string(n) + ") do not divide by --tp " + std::to_string(tp));
  const int layers = o.layers == 0 ? shape->layers : o.layers;
  if (o.layers < 0 || o.layers > shape->layers)
    throw InputError("zoo", "layers", o.model + " has " + std::to_string(shape->layers) + " layers; --layers must be in 1.." +
                                          std::to_string(shape->layers) + " (0: all), got " + std::to_string(o.layers));
  if (pp > layers)
    throw InputError("zoo", "--pp", "--pp " + std::to_string(pp) + " stages for " + std::to_string(layers) + " layers: a stage needs a layer");
  const int M = par.microbatches;
  if (M < 1 || o.batch % M != 0)
    throw InputError("zoo", "--microbatches", "must be at least 1 and divide the batch (" + std::to_string(o.batch) + "), got " +
                                                  std::to_string(M));
  // Sizes as make_transformer checks them; it also validates the dtype and the skew.
  ZooOptions check = o;
  check.layers = 1;
  make_transformer(check);
  const ir::DType dt = zoo_dtype(o.dtype, ir::DType::Float16, "zoo", true);
  if (dt != ir::DType::Float16 && dt != ir::DType::BFloat16 && dt != ir::DType::Float32 && dt != ir::DType::Float8E4M3)
    throw InputError("zoo", "dtype", "pipelines are written in fp16, bf16, fp32 or fp8 (E4M3)");

  Shard m;
  // Per microbatch and group: each of the ep groups attends its share of the batch (a group
  // with fewer requests runs the fullest group's batch).
  m.B = (o.batch / M + ep - 1) / ep;
  m.S = o.seq != 0 ? o.seq : o.kv_len > 0 ? 1 : 128;
  // Cached keys a layer attends: a windowed layer the last window's (vLLM's sliding window); with
  // windows on alternate layers (Gemma 2: the even ones) those layers run a shard of their own.
  const bool alternate = shape->sliding_window > 0 && !shape->every_layer_windowed;
  const int64_t in_window = std::min<int64_t>(o.kv_len, std::max<int64_t>(0, shape->sliding_window - m.S));
  m.N = shape->sliding_window > 0 && !alternate ? in_window : o.kv_len;
  m.Tk = m.N + m.S;
  m.D = shape->d;
  m.h = shape->heads / tp;
  m.hkv = shape->kv_heads / tp;
  m.g = m.h / m.hkv;
  m.dh = shape->head_dim > 0 ? shape->head_dim : shape->d / shape->heads;
  m.qkv_bias = shape->qkv_bias;
  m.f = shape->ffn / tp;
  if (deepseek) {
    m.ql = shape->q_lora_rank, m.r = shape->kv_lora_rank, m.nope = shape->qk_nope_dim, m.rd = shape->qk_rope_dim, m.dv = shape->v_head_dim;
    m.first_moe = shape->experts > 0 ? shape->dense_first : layers;
  }
  m.shared_gate = shape->shared_gate, m.sigmoid_router = shape->sigmoid_router;
  if (layer_norm) m.layer_norm = true, m.qkv_bias = true, m.act = shape->activation, m.rotary = shape->family == "neox";
  if (gemma) m.gemma = true, m.act = shape->activation, m.attn_cap = shape->attn_softcap, m.final_cap = shape->final_softcap;
  if (shape->family == "neox") {
    m.rope_dims = static_cast<int64_t>(static_cast<double>(m.dh) * shape->rotary_share);
    m.parallel = shape->parallel_residual;
  }
  m.v = shape->vocab / tp;
  m.eps = shape->eps;
  m.scalar = dt == ir::DType::Float16 ? 6 : dt == ir::DType::BFloat16 ? 13 : dt == ir::DType::Float8E4M3 ? 29 : 7;
  m.dtype = dt == ir::DType::Float16 ? "f16" : dt == ir::DType::BFloat16 ? "bf16" : dt == ir::DType::Float8E4M3 ? "f8" : "f32";
  if (moe) {
    // Assignments spread over the experts uniform routing gives tokens, those evenly over the
    // groups; the busiest expert has skew x the mean (at most every token of every group once),
    // and its rank the mean of the others beside it.
    m.E = shape->experts, m.k = shape->experts_per_token, m.ef = shape->expert_ffn / tp, m.sf = shape->shared_ffn / tp;
    m.A = m.B * m.S * m.k;
    const int64_t active = active_experts(m.E, m.k, m.B * m.S * ep);
    const double mean = static_cast<double>(m.A * ep) / static_cast<double>(active);
    m.el = (active + ep - 1) / ep;
    m.rows = std::min<int64_t>(m.B * m.S * ep, static_cast<int64_t>(std::ceil(o.expert_skew * mean - 1e-9)));
    m.recv = ep == 1 ? m.A
                     : std::min<int64_t>({m.el * m.rows, m.A * ep, static_cast<int64_t>(std::ceil(mean * (o.expert_skew + static_cast<double>(m.el) - 1) - 1e-9))});
    m.recv = std::max(m.recv, m.A);
  }
  const std::string& d_t = m.dtype;
  Shard window = m;  // Gemma 2's windowed layers: the window's cached keys
  if (alternate) window.N = in_window, window.Tk = in_window + m.S;
  const bool own_window = alternate && window.Tk != m.Tk;
  // The attention blob of layer l (its window's, a stage's first layer's for Gemma 2), and the set written.
  std::map<std::string, Shard> attn_blobs;
  auto attn_blob = [&](int l, bool stage_first) {
    const bool win = own_window && l % 2 == 0;
    std::string name = std::string("attention") + (win ? "_window" : "") + (gemma && stage_first ? "_first" : "");
    Shard b = win ? window : m;
    b.first = stage_first;
    attn_blobs.emplace(name, b);
    return name;
  };
  const int64_t BS = m.B * m.S;
  const int W = tp * ep;  // devices per stage: slot s * W + e * tp + t is rank t of group e of stage s

  // A rank's weights of a layer, by name and shape.
  using Weights = std::vector<std::pair<std::string, Dims>>;
  Weights attn_w = {{"wq", {m.D, m.h * m.dh}}, {"wk", {m.D, m.hkv * m.dh}}, {"wv", {m.D, m.hkv * m.dh}}, {"wo", {m.h * m.dh, m.D}},
                    {"attn_norm", {m.D}}};
  if (m.qkv_bias) attn_w.insert(attn_w.end(), {{"bq", {m.h * m.dh}}, {"bk", {m.hkv * m.dh}}, {"bv", {m.hkv * m.dh}}});
  const bool absorbed = m.N > 0 && m.S == 1;  // MLA: a decode step's form
  if (m.r > 0) {  // in mla_attention's order; q_a, kv_a and their norms whole on every rank
    attn_w.clear();
    if (m.ql > 0) attn_w.insert(attn_w.end(), {{"wq_a", {m.D, m.ql}}, {"q_a_norm", {m.ql}}});
    attn_w.push_back({"wq", {m.ql > 0 ? m.ql : m.D, m.h * (m.nope + m.rd)}});
    attn_w.insert(attn_w.end(), {{"wkv_a", {m.D, m.r + m.rd}}, {"kv_a_norm", {m.r}}});
    if (absorbed) attn_w.insert(attn_w.end(), {{"w_uk", {m.h, m.nope, m.r}}, {"w_uv", {m.h, m.r, m.dv}}});
    else attn_w.push_back({"wkv_b", {m.r, m.h * (m.nope + m.dv)}});
    attn_w.insert(attn_w.end(), {{"wo", {m.h * m.dv, m.D}}, {"attn_norm", {m.D}}});
  }
  Weights moe_w = {{"mlp_norm", {m.D}}, {"router", {m.D, m.E}}};
  if (m.sigmoid_router) moe_w.push_back({"router_bias", {m.E}});
  Weights dense_w = m.layer_norm ? Weights{{"mlp_norm", {m.D}}, {"w_fc1", {m.D, m.f}}, {"w_fc2", {m.f, m.D}}, {"mlp_norm_b", {m.D}},
                                                 {"b_fc1", {m.f}}, {"b_fc2", {m.D}}}
                                       : Weights{{"mlp_norm", {m.D}}, {"w_gate", {m.D, m.f}}, {"w_up", {m.D, m.f}}, {"w_down", {m.f, m.D}}};
  if (m.layer_norm) attn_w.insert(attn_w.end(), {{"attn_norm_b", {m.D}}, {"bo", {m.D}}});
  if (m.gemma) dense_w.push_back({"post_attn_norm", {m.D}});
  // The shared expert (Qwen2-MoE's, DeepSeek's summed ones): on every group, its width over the tp ranks.
  Weights shared_w = {{"shared_gate", {m.D, m.sf}}, {"shared_up", {m.D, m.sf}}, {"shared_down", {m.sf, m.D}}};
  if (m.shared_gate) shared_w.push_back({"shared_gate_w", {m.D, 1}});
  const Weights expert_w = {{"w1", {m.el, m.D, m.ef}}, {"w3", {m.el, m.D, m.ef}}, {"w2", {m.el, m.ef, m.D}}};

  Json devices = Json::object(), tensors = Json::object(), st = Json::object();
  for (int d = 0; d < W * pp; ++d) devices[std::to_string(d)] = "npu:" + std::to_string(d) + ":*";
  Json in_outputs = Json::array(), out_inputs = Json::array();
  // Stage s takes layers [first(s), first(s + 1)): the first layers % pp stages one more.
  auto first = [&](int s) { return s * (layers / pp) + std::min(s, layers % pp); };
  // Microbatch k's activations, caches, supertasks and groups are prefixed "mbK." (M > 1); the
  // weights are shared. Microbatch by microbatch, so a stage starts microbatch k + 1 while the
  // next stage runs microbatch k (GPipe's schedule, forward only).
  for (int k = 0; k < M; ++k) {
    const std::string mb = M > 1 ? "mb" + std::to_string(k) + "." : "";
    for (int s = 0; s < pp; ++s) {
      for (int e = 0; e < ep; ++e)
      for (int t = 0; t < tp; ++t) {
        const int dev = s * W + e * tp + t;
        // Groups other than the first have names of their own (ep 1: the names as they were).
        const std::string grp = ep > 1 ? ".ep" + std::to_string(e) : "";
        const std::string D = std::to_string(dev), pre = "d" + D + ".", apre = mb + pre;
        // The residual stream enters as (x, 0): the embedding (looked up on the host) or the
        // previous stage's hidden state.
        std::string x = apre + "x", r = apre + "zero";
        tensors[x] = tensor({BS, m.D}, d_t);
        tensors[r] = tensor({BS, m.D}, d_t);
        in_outputs.push_back(r);
        if (s == 0) in_outputs.push_back(x);
        // Constants of this device's attention: rotary tables, 1/sqrt(dh), the causal mask.
        if (m.rotary) {
          tensors[pre + "rope_cos"] = weight({m.S, m.rot()}, d_t, pre + "rope_cos");
          tensors[pre + "rope_sin"] = weight({m.S, m.rot()}, d_t, pre + "rope_sin");
        }
        tensors[pre + "scale"] = weight({1}, d_t, pre + "scale");
        if (m.S > 1) tensors[pre + "mask"] = weight({m.g * m.S, m.Tk}, d_t, pre + "mask");
        if (m.S > 1 && own_window) tensors[pre + "mask_window"] = weight({m.g * m.S, window.Tk}, d_t, pre + "mask_window");
        if (m.attn_cap > 0) tensors[pre + "attn_cap"] = weight({1}, d_t, pre + "attn_cap");
        std::string post_mlp;  // Gemma 2: the last layer's post-MLP norm, applied by what reads its output
        for (int l = first(s); l < first(s + 1); ++l) {
          const std::string L = "layers." + std::to_string(l) + grp + ".tp" + std::to_string(t) + ".", AL = mb + L;
          const std::string lg = mb + "layers." + std::to_string(l) + grp;  // this layer's groups over t
          const bool win = own_window && l % 2 == 0;
          const Shard& ml = win ? window : m;
          Json ai = Json::array({x, r});
          for (const auto& [n, sh] : attn_w) tensors[L + n] = weight(sh, d_t, L + n), ai.push_back(L + n);
          if (!post_mlp.empty()) ai.push_back(post_mlp);
          for (const char* c : {"rope_cos", "rope_sin", "scale"})
            if (m.rotary || std::string(c) == "scale") ai.push_back(pre + c);
          if (m.attn_cap > 0) ai.push_back(pre + "attn_cap");
          if (m.S > 1) ai.push_back(pre + (win ? "mask_window" : "mask"));
          if (ml.N > 0 && m.r > 0)  // one latent cache, whole on every rank
            tensors[AL + "latent_cache"] = weight({m.B, ml.N, m.r + m.rd}, d_t, AL + "latent_cache"), ai.push_back(AL + "latent_cache");
          else if (ml.N > 0)  // each microbatch's requests have their own K/V caches
            for (const char* c : {"k_cache", "v_cache"}) tensors[AL + c] = weight({m.B * m.hkv, ml.N, m.dh}, d_t, AL + c), ai.push_back(AL + c);
          for (const std::string a : {"attn_out", "resid_a", "attn_sum", "mlp_out", "resid_m", "mlp_sum"})
            if (tp > 1 || a.find("_sum") == std::string::npos) tensors[AL + a] = tensor({BS, m.D}, d_t);  // sums: all_reduce outputs
          st[AL + "attn"] = {{"kind", "fx"}, {"inputs", ai}, {"outputs", {AL + "attn_out", AL + "resid_a"}}, {"device", D},
                             {"data", nullptr}, {"data_blob", attn_blob(l, l == first(s))}};
          std::string reduced = AL + "attn_out";
          if (tp > 1) {
            st[AL + "ar_attn"] = {{"kind", "all_reduce"}, {"inputs", {AL + "attn_out"}}, {"outputs", {AL + "attn_sum"}}, {"device", D},
                                  {"group", lg + ".ar_attn"}, {"device_idx", t},
                                  {"metadata", {{"reduce_op", "sum"}}}};
            reduced = AL + "attn_sum";
          }
          Json mi = Json::array({AL + "resid_a", reduced});
          const bool layer_moe = moe && l >= m.first_moe;
          for (const auto& [n, sh] : layer_moe ? moe_w : dense_w) tensors[L + n] = weight(sh, d_t, L + n), mi.push_back(L + n);
          if (!layer_moe) {
            st[AL + "mlp"] = {{"kind", "fx"}, {"inputs", mi}, {"outputs", {AL + "mlp_out", AL + "resid_m"}}, {"device", D},
                              {"data", nullptr}, {"data_blob", "mlp"}};
          } else {
            // route -> [all_to_all] -> experts -> [all_to_all] -> combine; the index tensors are
            // the router's choices, given as constants of the step (balanced or skewed as above).
            const std::string el = "layers." + std::to_string(l) + ".experts" + std::to_string(e) + ".tp" + std::to_string(t) + ".";
            for (const auto& [n, sh] : std::vector<std::pair<std::string, Dims>>{{"order", {m.recv}}, {"pad", {m.el * m.rows}},
                                                                                 {"back", {m.recv}}, {"unpermute", {m.A}}})
              tensors[AL + n] = weight(sh, "i32", AL + n);
            mi.push_back(AL + "order");
            Json route_out = Json::array({AL + "dispatch", AL + "topk_w", AL + "resid_m"});
            if (m.sf > 0) {
              for (const auto& [n, sh] : shared_w) tensors[L + n] = weight(sh, d_t, L + n), mi.push_back(L + n);
              tensors[AL + "shared_out"] = tensor({BS, m.D}, d_t);
              route_out.push_back(AL + "shared_out");
            }
            for (const char* a : {"dispatch", "expert_out"}) tensors[AL + a] = tensor({m.recv, m.D}, d_t);
            if (ep > 1)
              for (const char* a : {"expert_in", "expert_back"}) tensors[AL + a] = tensor({m.recv, m.D}, d_t);
            tensors[AL + "topk_w"] = tensor({m.A, 1}, d_t);
            st[AL + "route"] = {{"kind", "fx"}, {"inputs", mi}, {"outputs", route_out}, {"device", D},
                                {"data", nullptr}, {"data_blob", "moe_route"}};
            auto a2a = [&](const std::string& name, const std::string& in, const std::string& out) {
              st[AL + name] = {{"kind", "all_to_all"}, {"inputs", {AL + in}}, {"outputs", {AL + out}}, {"device", D},
                               {"group", mb + "layers." + std::to_string(l) + ".tp" + std::to_string(t) + "." + name}, {"device_idx", e},
                               {"metadata", {{"src_dim", 0}, {"dst_dim", 0}}}};
            };
            std::string rows_in = AL + "dispatch";
            if (ep > 1) a2a("a2a_dispatch", "dispatch", "expert_in"), rows_in = AL + "expert_in";
            Json xi = Json::array({rows_in, AL + "pad", AL + "back"});
            for (const auto& [n, sh] : expert_w)
              tensors[el + n] = weight(sh, d_t, el + n), xi.push_back(el + n);
            st[AL + "experts"] = {{"kind", "fx"}, {"inputs", xi}, {"outputs", {AL + "expert_out"}}, {"device", D}, {"data", nullptr},
                                  {"data_blob", "moe_experts"}};
            std::string rows_out = AL + "expert_out";
            if (ep > 1) a2a("a2a_combine", "expert_out", "expert_back"), rows_out = AL + "expert_back";
            Json ci = Json::array({rows_out, AL + "unpermute", AL + "topk_w"});
            if (m.sf > 0) ci.push_back(AL + "shared_out");
            st[AL + "combine"] = {{"kind", "fx"}, {"inputs", ci}, {"outputs", {AL + "mlp_out"}},
                                  {"device", D}, {"data", nullptr}, {"data_blob", "moe_combine"}};
          }
          x = AL + "resid_m", r = AL + "mlp_out";
          if (m.gemma) tensors[L + "post_mlp_norm"] = weight({m.D}, d_t, L + "post_mlp_norm"), post_mlp = L + "post_mlp_norm";
          if (tp > 1) {
            st[AL + "ar_mlp"] = {{"kind", "all_reduce"}, {"inputs", {AL + "mlp_out"}}, {"outputs", {AL + "mlp_sum"}}, {"device", D},
                                 {"group", lg + ".ar_mlp"}, {"device_idx", t},
                                 {"metadata", {{"reduce_op", "sum"}}}};
            r = AL + "mlp_sum";
          }
        }
        if (s + 1 < pp) {  // hand the hidden state to rank t of the next stage
          const std::string next = std::to_string(dev + W), h = apre + "hidden",
                            group = mb + "stage" + std::to_string(s) + grp + ".tp" + std::to_string(t);
          tensors[h] = tensor({BS, m.D}, d_t);
          Json ri = Json::array({x, r});
          if (!post_mlp.empty()) ri.push_back(post_mlp);
          st[apre + "residual"] = {{"kind", "fx"}, {"inputs", ri}, {"outputs", {h}}, {"device", D}, {"data", nullptr}, {"data_blob", "residual"}};
          st[apre + "send"] = {{"kind", "send"}, {"inputs", {h}}, {"outputs", Json::array()}, {"device", D}, {"group", group},
                               {"device_idx", 0}, {"metadata", Json::object()}};
          st[mb + "d" + next + ".recv"] = {{"kind", "recv"}, {"inputs", Json::array()}, {"outputs", {mb + "d" + next + ".x"}}, {"device", next},
                                           {"group", group}, {"device_idx", 1}, {"metadata", Json::object()}};
        } else {
          tensors[pre + "final_norm"] = weight({m.D}, d_t, "norm" + grp + ".tp" + std::to_string(t));
          tensors[pre + "lm_head"] = weight({m.D, m.v}, d_t, "lm_head" + grp + ".tp" + std::to_string(t));
          tensors[apre + "logits"] = tensor({BS, m.v}, d_t);
          Json hi = Json::array({x, r, pre + "final_norm", pre + "lm_head"});
          if (m.layer_norm) tensors[pre + "final_norm_b"] = weight({m.D}, d_t, "norm_b" + grp + ".tp" + std::to_string(t)), hi.push_back(pre + "final_norm_b");
          if (!post_mlp.empty()) hi.push_back(post_mlp);
          if (m.final_cap > 0) tensors[pre + "final_cap"] = weight({1}, d_t, pre + "final_cap"), hi.push_back(pre + "final_cap");
          st[apre + "head"] = {{"kind", "fx"}, {"inputs", hi}, {"outputs", {apre + "logits"}},
                               {"device", D}, {"data", nullptr}, {"data_blob", "head"}};
          out_inputs.push_back(apre + "logits");
        }
      }
    }
  }
  // Supertasks in an order where every input is produced first: the input, then by layer.
  Json ordered = Json::object();
  ordered["input"] = {{"kind", "input"}, {"inputs", Json::array()}, {"outputs", in_outputs}};
  for (auto& [k, v] : st.items()) ordered[k] = v;
  ordered["output"] = {{"kind", "output"}, {"inputs", out_inputs}, {"outputs", Json::array()}};

  Json blobs = Json::object();
  for (const auto& [name, b] : attn_blobs) blobs[name] = b.r > 0 ? mla_attention(b).payload() : attention(b).payload();
  if (moe) blobs["moe_route"] = moe_route(m).payload(), blobs["moe_experts"] = moe_experts(m).payload(), blobs["moe_combine"] = moe_combine(m).payload();
  if (!moe || m.first_moe > 0) blobs["mlp"] = mlp(m).payload();
  blobs["head"] = head(m).payload();
  if (pp > 1) blobs["residual"] = residual(m).payload();
  Json p;
  p["name"] = o.model + "_tp" + std::to_string(tp) + "_pp" + std::to_string(pp) + (ep > 1 ? "_ep" + std::to_string(ep) : "") +
              "_b" + std::to_string(o.batch) + "_s" +
              std::to_string(m.S) + (m.N > 0 ? "_kv" + std::to_string(m.N) : "") + (M > 1 ? "_mb" + std::to_string(M) : "");
  p["devices"] = devices;
  p["tensors"] = tensors;
  p["supertasks"] = ordered;
  p["metadata"] = {{"tensors", {{"inputs", Json::object()}, {"outputs", Json::object()}}},
                   {"tensor_slices", {{"inputs", Json::object()}, {"outputs", Json::object()}}}};
  p["blobs"] = blobs;
  p["param_files"] = {{"0", {{"path", o.model + ".safetensors"}, {"format", "safetensors"}}}};
  p["device_constraints"] = Json::array();
  p["version"] = "0.1.0";
  return p;
}

}  // namespace npusim::frontends::zoo
