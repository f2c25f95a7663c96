// Serving arithmetic (docs/llm.md).
#include "sim/llm/serving.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <random>

#include "sim/ir/error.h"

namespace npusim::llm {

ModelMemory model_memory(const ModelShape& m, double dtype_bytes, int tp, int pp, int ep) {
  const double dh = m.head_dim > 0 ? m.head_dim : static_cast<double>(m.d) / m.heads;
  // Per layer: q and o (d x d), k and v (d x Hkv dh), gate, up, down (3 d x ffn), two norms.
  const double per_layer = m.parameters > 0 ? (m.parameters - m.outside_layers) / m.all_layers
                                            : 2.0 * m.d * m.d + 2.0 * m.d * m.kv_heads * dh + 3.0 * m.d * m.ffn + 2.0 * m.d;
  // + embedding, lm_head, final norm
  const double params = m.layers * per_layer + (m.parameters > 0 ? m.outside_layers : 2.0 * m.vocab * m.d + m.d);
  ModelMemory r;
  // The experts' share of the layers kept, spread over ep groups as well.
  const double experts = m.all_layers > 0 ? m.expert_parameters * m.layers / m.all_layers : 0;
  r.weight_bytes = ((params - experts) + experts / ep) * dtype_bytes / (static_cast<double>(tp) * pp);
  r.kv_bytes_per_token = 2.0 * std::ceil(static_cast<double>(m.layers) / pp) * (m.kv_heads / tp) * dh * dtype_bytes / ep;
  if (m.latent_kv > 0)  // one latent per token and layer, whole on every tp rank (vLLM's MLA)
    r.kv_bytes_per_token = std::ceil(static_cast<double>(m.layers) / pp) * m.latent_kv * dtype_bytes / ep;
  // The widest transient of a layer's prefill per token: the residual, the normed input, q/k/v,
  // and gate and up of the MLP shard, live at once.
  r.activation_bytes_per_token = (3.0 * m.d + 2.0 * m.ffn / tp) * dtype_bytes / ep;
  return r;
}

BatchPlan plan_batch(const ModelMemory& m, int batch, int64_t input, int64_t output, double capacity_bytes, int block_tokens) {
  BatchPlan p;
  p.batch = batch;
  p.capacity_bytes = capacity_bytes;
  p.weight_bytes = m.weight_bytes;
  const int64_t tokens = input + output;
  const int64_t blocks = (tokens + block_tokens - 1) / block_tokens;
  p.kv_bytes_per_request = static_cast<double>(blocks * block_tokens) * m.kv_bytes_per_token;
  // Each request also needs its prompt's activations during its prefill.
  const double per_request = p.kv_bytes_per_request + static_cast<double>(input) * m.activation_bytes_per_token;
  const double room = capacity_bytes - m.weight_bytes;
  p.max_batch = room > 0 ? static_cast<int>(std::min<double>(std::floor(room / per_request), batch)) : 0;
  if (p.max_batch < 1) {
    p.max_batch = 0;
    return p;
  }
  p.waves = (batch + p.max_batch - 1) / p.max_batch;
  p.per_wave = (batch + p.waves - 1) / p.waves;
  p.activation_bytes = static_cast<double>(p.per_wave) * input * m.activation_bytes_per_token;
  return p;
}

std::vector<int64_t> bucket_points(int64_t first, int64_t last, int max_points) {
  std::vector<int64_t> r;
  if (last < first) return r;
  const int64_t span = last - first;
  const int n = static_cast<int>(std::min<int64_t>(std::max(max_points, 2), span + 1));
  for (int i = 0; i < n; ++i) {
    const int64_t x = n == 1 ? first : first + (span * i) / (n - 1);
    if (r.empty() || x != r.back()) r.push_back(x);
  }
  return r;
}

double interpolate(const std::vector<int64_t>& kv, const std::vector<double>& ns, double x) {
  if (kv.empty()) throw InternalError("interpolate: no points");
  if (kv.size() == 1 || x <= static_cast<double>(kv.front())) return ns.front();
  for (size_t i = 1; i < kv.size(); ++i)
    if (x <= static_cast<double>(kv[i])) {
      const double a = static_cast<double>(kv[i - 1]), b = static_cast<double>(kv[i]);
      return ns[i - 1] + (ns[i] - ns[i - 1]) * (x - a) / (b - a);
    }
  return ns.back();
}

double sum_interpolated(const std::vector<int64_t>& kv, const std::vector<double>& ns, int64_t first, int64_t last) {
  if (last < first) return 0;
  // On each segment [a, b] the interpolant is linear: its integer points a..b-1 sum to
  // (b - a) * (f(a) + f(b - 1)) / 2; the last point is added once.
  double s = 0;
  int64_t x = first;
  for (size_t i = 1; i < kv.size() && x <= last; ++i) {
    const int64_t end = std::min(kv[i] - 1, last);  // this segment's points: x..end
    if (end < x) continue;
    s += static_cast<double>(end - x + 1) * (interpolate(kv, ns, static_cast<double>(x)) + interpolate(kv, ns, static_cast<double>(end))) / 2;
    x = end + 1;
  }
  for (; x <= last; ++x) s += interpolate(kv, ns, static_cast<double>(x));  // at or past the last point
  return s;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

Metrics static_metrics(const BatchPlan& plan, int64_t output, double prefill_ns, double decode_total_ns) {
  Metrics m;
  const double wave_ns = prefill_ns + decode_total_ns;
  std::vector<double> ttft, e2e;
  int left = plan.batch;
  for (int w = 0; w < plan.waves && left > 0; ++w) {
    const int n = std::min(left, plan.per_wave);
    for (int i = 0; i < n; ++i) {
      ttft.push_back(w * wave_ns + prefill_ns);
      e2e.push_back((w + 1) * wave_ns);
    }
    left -= n;
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  };
  m.ttft_mean_ns = mean(ttft), m.e2e_mean_ns = mean(e2e);
  m.ttft_p50_ns = percentile(ttft, 50), m.ttft_p90_ns = percentile(ttft, 90), m.ttft_p99_ns = percentile(ttft, 99);
  m.e2e_p50_ns = percentile(e2e, 50), m.e2e_p90_ns = percentile(e2e, 90), m.e2e_p99_ns = percentile(e2e, 99);
  m.tpot_ns = output > 1 ? decode_total_ns / static_cast<double>(output - 1) : 0;
  m.tpot_p50_ns = m.tpot_p90_ns = m.tpot_p99_ns = m.tpot_ns;  // every request decodes in the same steps
  m.total_ns = plan.waves * wave_ns;
  m.output_tokens_per_s = m.total_ns > 0 ? static_cast<double>(plan.batch) * output / (m.total_ns * 1e-9) : 0;
  return m;
}

std::vector<Request> poisson_requests(int n, double rate_per_s, int64_t input, int64_t output, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Request> r;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
      t += -std::log1p(-u) / rate_per_s * 1e9;
    }
    r.push_back({t, input, output});
  }
  return r;
}

Metrics continuous_metrics(const ContinuousResult& r) {
  Metrics m;
  std::vector<double> ttft, e2e, tpot;
  double first = 0, last = 0, tokens = 0;
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const RequestResult& q = r.requests[i];
    ttft.push_back(q.first_token_ns - q.arrival_ns);
    e2e.push_back(q.finish_ns - q.arrival_ns);
    if (q.output > 1) tpot.push_back((q.finish_ns - q.first_token_ns) / static_cast<double>(q.output - 1));
    first = i == 0 ? q.arrival_ns : std::min(first, q.arrival_ns);
    last = std::max(last, q.finish_ns);
    tokens += static_cast<double>(q.output);
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
  };
  m.ttft_mean_ns = mean(ttft), m.e2e_mean_ns = mean(e2e), m.tpot_ns = mean(tpot);
  if (!tpot.empty()) m.tpot_p50_ns = percentile(tpot, 50), m.tpot_p90_ns = percentile(tpot, 90), m.tpot_p99_ns = percentile(tpot, 99);
  m.ttft_p50_ns = percentile(ttft, 50), m.ttft_p90_ns = percentile(ttft, 90), m.ttft_p99_ns = percentile(ttft, 99);
  m.e2e_p50_ns = percentile(e2e, 50), m.e2e_p90_ns = percentile(e2e, 90), m.e2e_p99_ns = percentile(e2e, 99);
  m.total_ns = last - first;
  m.output_tokens_per_s = m.total_ns > 0 ? tokens / (m.total_ns * 1e-9) : 0;
  return m;
}

}  // namespace npusim::llm

namespace npusim::llm {

const std::vector<ServingOption>& serving_options() {
  using T = OptionType;
  using O = ServingOptions;
  constexpr double kInt = 2147483647;
  static const std::vector<ServingOption> o = {
      {"batch", T::Int, &O::batch, 1, 65536, "static batch: requests, all starting together"},
      {"input", T::Int, &O::input, 1, 1 << 20, "prompt tokens per request"},
      {"output", T::Int, &O::output, 1, 1 << 20, "output tokens per request (the first comes from the prefill)"},
      {"dtype", T::Text, &O::dtype, 0, 0, "fp16, bf16, fp32, fp8"},
      {"layers", T::Int, &O::layers, 0, 65536, "keep the first K layers (0: all)"},
      {"buckets", T::Int, &O::buckets, 2, 64, "decode steps simulated at this many KV lengths; the others interpolated"},
      {"tp", T::Int, &O::tp, 1, 4096, "system: tensor-parallel ranks (every decoder layout: Llama, Mistral, Qwen2, Gemma 2, Mixtral, Qwen2-MoE, DeepSeek, OPT, GPT-2, GPT-NeoX)"},
      {"pp", T::Int, &O::pp, 1, 4096, "system: pipeline stages (every decoder layout: Llama, Mistral, Qwen2, Gemma 2, Mixtral, Qwen2-MoE, DeepSeek, OPT, GPT-2, GPT-NeoX)"},
      {"ep", T::Int, &O::ep, 1, 4096,
       "system, mixture of experts: expert-parallel groups of tp devices per stage, each attending its share of the batch, "
       "the experts spread over them and reached by all_to_all"},
      {"expert_skew", T::Number, &O::expert_skew, 1, 1e6,
       "mixture of experts: the busiest expert's tokens over the mean (1: a balanced router)"},
      {"microbatches", T::Int, &O::microbatches, 1, 65536,
       "system with pp: each pass's batch split into up to this many microbatches that flow through the stages one after "
       "another (GPipe)"},
      {"arrival_rate", T::Number, &O::arrival_rate, 0, 1e9,
       "continuous batching: Poisson arrivals per second, with requests and seed (0: a static batch)"},
      {"requests", T::Int, &O::requests, 1, 1000000, "continuous batching: requests to serve"},
      {"seed", T::Int, &O::seed, 0, kInt, "continuous batching: the arrivals' random seed"},
      {"trace", T::Text, &O::trace, 0, 0,
       "continuous batching: requests from a CSV: arrival_s,input_tokens,output_tokens, an Azure LLM inference trace "
       "(2023/2024) or BurstGPT's, the format found from its header"},
      {"trace_scale", T::Number, &O::trace_scale, 1e-6, 1e6, "with trace: arrivals divided by this (2: twice as fast)"},
      {"max_batch_tokens", T::Int, &O::max_batch_tokens, 1, kInt, "continuous batching: prompt tokens per prefill step"},
      {"max_seqs", T::Int, &O::max_seqs, 1, kInt, "continuous batching: requests running at once at most"},
      {"chunked_prefill", T::Bool, &O::chunked_prefill, 0, 0,
       "continuous batching: each step takes max_batch_tokens tokens, decodes first, then prompt chunks (vLLM v1)"},
      {"preempt", T::Bool, &O::preempt, 0, 0,
       "continuous batching: KV blocks taken as tokens come, the newest request preempted and recomputed when they run "
       "out (vLLM); default: each request reserves its whole life's blocks when admitted"},
      {"virtual_engines", T::Int, &O::virtual_engines, 0, 4096,
       "continuous batching on a system with pp: schedulers, each with its share of the KV cache, whose steps flow "
       "through the stages at once (vLLM's virtual engines; 0: pp, 1 with microbatches)"},
      {"rope_scaling", T::Number, &O::rope_scaling, 1, 64,
       "a rotary (llama) model's context stretched this many times by RoPE scaling; without it a request longer "
       "than the model's context (max_position_embeddings) is refused"},
      {"prefill_devices", T::Text, &O::prefill_devices, 0, 0,
       "disaggregated serving on a system: the devices that run prefills (\"0-3\", \"0,2\"), each a replica (or "
       "prefill_tp of them); with decode_devices"},
      {"decode_devices", T::Text, &O::decode_devices, 0, 0,
       "disaggregated serving: the devices that run decodes, each a replica (or decode_tp of them); every request's KV cache moves over the "
       "system's links after its prefill"},
      {"prefill_tp", T::Int, &O::prefill_tp, 0, 4096,
       "disaggregated serving: a prefill replica is this many devices of the pool running the model tensor-parallel (0: tp)"},
      {"decode_tp", T::Int, &O::decode_tp, 0, 4096,
       "disaggregated serving: a decode replica is this many devices of the pool running the model tensor-parallel (0: tp)"},
  };
  return o;
}

std::string ServingOption::value_of(const ServingOptions& o) const {
  return std::visit(
      [&](auto m) -> std::string {
        using V = std::decay_t<decltype(o.*m)>;
        if constexpr (std::is_same_v<V, std::string>) return o.*m;
        else if constexpr (std::is_same_v<V, bool>) return o.*m ? "true" : "false";
        else if constexpr (std::is_same_v<V, double>) {
          char b[32];
          std::snprintf(b, sizeof b, "%g", o.*m);
          return b;
        } else return std::to_string(o.*m);
      },
      member);
}

std::string ServingOption::default_value() const { return value_of(ServingOptions{}); }

std::string ServingOption::flag() const {
  std::string f = std::string("--") + name;
  for (char& c : f) c = c == '_' ? '-' : c;
  return f;
}

const ServingOption* find_serving_option(const std::string& name) {
  for (const ServingOption& o : serving_options())
    if (name == o.name) return &o;
  return nullptr;
}

namespace {
std::string range_text(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.15g", x);
  return b;
}
}  // namespace

std::string serving_value_error(const ServingOption& o, const std::string& v) {
  char* end = nullptr;
  const std::string range = "in " + range_text(o.lo) + ".." + range_text(o.hi);
  switch (o.type) {
    case OptionType::Int: {
      errno = 0;
      const long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || errno != 0) return "expected an integer " + range + ", got '" + v + "'";
      if (static_cast<double>(x) < o.lo || static_cast<double>(x) > o.hi) return "must be " + range + ", got " + v;
      return "";
    }
    case OptionType::Number: {
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !std::isfinite(x)) return "expected a number " + range + ", got '" + v + "'";
      if (x < o.lo || x > o.hi) return "must be " + range + ", got " + v;
      return "";
    }
    case OptionType::Bool:
      return v == "true" || v == "false" ? "" : "expected true or false, got '" + v + "'";
    case OptionType::Text:
      return v.empty() && std::string(o.name) != "trace" ? "expected a value" : "";
  }
  return "";
}

void set_serving_option(ServingOptions& o, const std::string& name, const std::string& value, const std::string& source,
                        const std::string& where) {
  const ServingOption* opt = find_serving_option(name);
  if (!opt) {
    std::string names;
    for (const auto& so : serving_options()) names += (names.empty() ? "" : ", ") + std::string(so.name);
    throw InputError(source, where, "unknown serving option '" + name + "' (expected one of: " + names + ")");
  }
  if (const std::string e = serving_value_error(*opt, value); !e.empty()) throw InputError(source, where, e);
  std::visit(
      [&](auto m) {
        using V = std::decay_t<decltype(o.*m)>;
        if constexpr (std::is_same_v<V, std::string>) o.*m = value;
        else if constexpr (std::is_same_v<V, bool>) o.*m = value == "true";
        else if constexpr (std::is_same_v<V, double>) o.*m = std::strtod(value.c_str(), nullptr);
        else o.*m = static_cast<V>(std::strtoll(value.c_str(), nullptr, 10));
      },
      opt->member);
}

void check_serving_options(const ServingOptions& o, const std::string& source) {
  for (const ServingOption& opt : serving_options()) {
    if (opt.type != OptionType::Int && opt.type != OptionType::Number) continue;
    const double x = std::visit(
        [&](auto m) -> double {
          using V = std::decay_t<decltype(o.*m)>;
          if constexpr (std::is_same_v<V, std::string>) return 0;
          else return static_cast<double>(o.*m);
        },
        opt.member);
    if (!(x >= opt.lo && x <= opt.hi)) {
      throw InputError(source, opt.flag(), "must be in " + range_text(opt.lo) + ".." + range_text(opt.hi) + ", got " + opt.value_of(o));
    }
  }
}

std::string serving_options_markdown() {
  std::string s =
      "| option | `sim llm` flag | sweep key | type | default | range | meaning |\n|---|---|---|---|---|---|---|\n";
  for (const ServingOption& o : serving_options()) {
    const std::string flag = o.flag();
    const char* type = o.type == OptionType::Int ? "int" : o.type == OptionType::Number ? "number" : o.type == OptionType::Bool ? "bool" : "text";
    const std::string range =
        o.type == OptionType::Int || o.type == OptionType::Number ? range_text(o.lo) + " .. " + range_text(o.hi) : "";
    const std::string def = o.default_value();
    s += "| `" + std::string(o.name) + "` | `" + flag + "` | `serving." + o.name + "` | " + type + " | " + (def.empty() ? "" : "`" + def + "`") +
         " | " + range + " | " + o.meaning + " |\n";
  }
  return s;
}

const std::vector<ServingField>& serving_sweep_fields() {
  static const std::vector<ServingField> f = {
      {"time_us", "us", "/totals/time_us"},
      {"ttft_ms", "ms", "/totals/ttft_ms"},
      {"ttft_p90_ms", "ms", "/latency_ms/ttft/p90"},
      {"ttft_p99_ms", "ms", "/latency_ms/ttft/p99"},
      {"tpot_ms", "ms", "/totals/tpot_ms"},
      {"tpot_p90_ms", "ms", "/latency_ms/tpot/p90"},
      {"e2e_ms", "ms", "/totals/e2e_ms"},
      {"e2e_p99_ms", "ms", "/latency_ms/e2e/p99"},
      {"output_tokens_per_s", "tokens/s", "/totals/output_tokens_per_s"},
      {"output_tokens_per_s_per_device", "tokens/s", "/totals/output_tokens_per_s_per_device"},
  };
  return f;
}

}  // namespace npusim::llm
