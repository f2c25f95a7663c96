// Serving as a library call (sim/llm/serve.h, docs/llm.md): a static batch served as a prefill
// and G - 1 decode steps with the KV cache growing by one token per step, on one GPU or NPU
// config, or on a system as a tp x pp pipeline (each pass a zoo pipeline, sim/run/system_run.h);
// or continuous batching of arrivals over a simulated step-time surface. The prefill and decode
// steps at a few KV lengths are simulated on the device's model (each in a forked child: SystemC
// elaborates once per process); the other steps are interpolated between them, and one more
// point checks the interpolation. The batch must fit the device's memory with its KV cache, or it
// runs in waves.
#include "sim/llm/serve.h"

#include "sim/llm/request_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>

#include "frontends/pipeline/pipeline_reader.h"
#include "models/interconnect/network.h"
#include "frontends/zoo/zoo.h"
#include "sim/config/system_config.h"
#include "sim/ir/dtype.h"
#include "sim/ir/error.h"
#include "sim/ir/input_file.h"
#include "sim/run/device_run.h"
#include "sim/run/fork_pool.h"
#include "sim/run/run.h"
#include "sim/run/system_run.h"

namespace npusim::llm {

namespace {

// What the serving functions read: the options and what is served where.
struct ServeRequest : ServingOptions {
  std::string model, hw;
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// printf into a string (the summary `sim llm` prints).
[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* f, ...) {
  va_list a, b;
  va_start(a, f);
  va_copy(b, a);
  const int n = std::vsnprintf(nullptr, 0, f, a);
  va_end(a);
  if (n > 0) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, f, b);
    out.resize(at + static_cast<size_t>(n));
  }
  va_end(b);
}

// One simulated pass: a prefill (kv_len 0, seq = input) or a decode step (seq 1).
struct Pass {
  std::string phase;
  int64_t kv_len = 0, seq = 1;
  run::RunSummary run;
  int batch = 0;  // 0: the static plan's wave
};

// What every run of `sim llm` shares: the model, the hardware and the memory per device.
struct Setup {
  frontends::zoo::TransformerShape shape;
  bool on_system = false, gpu = false;
  std::optional<config::SystemConfig> sys_cfg;
  config::HwConfig hw;
  int devices = 1, layers = 0;
  ir::DType dt = ir::DType::Float16;
  ModelMemory mem;
  double capacity = 0;
  std::string cap_key;
};

// One pass as a pipeline on a system: its makespan, and device 0's compute and collectives.
// With stages > 1 (a zoo pipeline: device slot s * tp + t is rank t of stage s; tp here counts
// every device of a stage, tp x ep), its stage_ns gets
// the time each stage holds the pass: from its first compute supertask's start to the next
// stage's (the hand-off to the next stage counts to the sender), the last to the makespan.
run::RunSummary pass_on_system(const ir::System& sys, const config::SystemConfig& cfg, const run::DeviceRunOptions& dro, int tp = 1,
                              int stages = 1) {
  run::Workload w;
  w.system = &sys;
  run::RunOptions ro;
  ro.library = dro.library;
  ro.ark_plan = dro.ark_plan;
  const run::RunRecord rec = run::run(w, run::Hardware::of(cfg), ro);
  const run::SystemRun& sr = *rec.system();
  run::RunSummary r;
  r.ns = sr.sim.makespan_ns;
  r.by_class_ns["compute"] = sr.sim.devices.front().busy_ns;
  r.by_class_ns["communication"] = sr.sim.devices.front().comm_ns;
  r.energy_uj = sr.energy_uj;  // the pipeline's devices together
  if (stages > 1) {
    std::vector<double> first(static_cast<size_t>(stages), r.ns);
    for (size_t i = 0; i < sys.supertasks.size(); ++i) {
      const ir::SuperTask& st = sys.supertasks[i];
      if (st.kind != ir::SuperTaskKind::Compute || st.device_index < 0) continue;
      const size_t s = static_cast<size_t>(std::min(st.device_index / tp, stages - 1));
      first[s] = std::min(first[s], sr.sim.tasks[i].start_ns);
    }
    first[0] = 0;

    for (int s = 0; s < stages; ++s) {
      const double end = s + 1 < stages ? first[static_cast<size_t>(s) + 1] : r.ns;
      r.stage_ns.push_back(std::max(0.0, end - first[static_cast<size_t>(s)]));
    }
  }
  return r;
}

// Simulates every pass (a forked child each: SystemC elaborates once per process).
void simulate_passes(const ServeRequest& o, const Setup& su, std::vector<Pass>& passes) {
  run::DeviceRunOptions ro;  // the serving stack: fused kernels, CUDA graphs
  run::PoolOptions pool;
  pool.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string failure;
  run::run_forked(
      passes.size(), pool,
      [&](size_t i) {
        frontends::zoo::ZooOptions z;
        z.model = o.model;
        z.batch = passes[i].batch;
        z.dtype = o.dtype;
        z.seq = static_cast<int>(passes[i].seq);
        z.kv_len = static_cast<int>(passes[i].kv_len);
        z.layers = su.layers;
        z.logits = "last";  // a serving runtime's prefill: the last token's logits only
        z.expert_skew = o.expert_skew;
        if (!su.on_system) return run::simulate_on_device(frontends::zoo::make_transformer(z), su.hw, ro).to_json();
        // The most microbatches up to --microbatches that divide this pass's batch.
        int mb = std::max(1, std::min(o.microbatches, passes[i].batch));
        while (passes[i].batch % mb != 0) --mb;
        const std::string text = frontends::zoo::make_parallel_pipeline(z, {o.tp, o.pp, o.ep, mb}).dump();
        const ir::System sys = frontends::pipeline::read_pipeline_text(text, o.model + " tp" + std::to_string(o.tp) + " pp" + std::to_string(o.pp) +
                                                                                 (o.ep > 1 ? " ep" + std::to_string(o.ep) : ""), ".");
        return pass_on_system(sys, *su.sys_cfg, ro, o.tp * o.ep, mb == 1 ? o.pp : 1).to_json();
      },
      [&](const run::TaskOutcome& out) {
        if (!out.ok) {
          if (failure.empty())
            failure = passes[out.index].phase + " of batch " + std::to_string(passes[out.index].batch) + " at KV length " +
                      std::to_string(passes[out.index].kv_len) + ": " + out.payload;
          return;
        }
        passes[out.index].run = run::RunSummary::from_json(out.payload);
      });
  if (!failure.empty()) throw InputError("sim llm", o.model, "simulating the " + failure);
}

nlohmann::ordered_json step_json(const Pass& p, bool on_system) {
  nlohmann::ordered_json s = {{"phase", p.phase}, {"batch", p.batch}, {"kv_len", p.kv_len}, {"tokens", p.seq * p.batch},
                              {"time_us", p.run.ns / 1000}};
  if (!p.run.by_class_ns.empty()) {
    nlohmann::ordered_json c = nlohmann::ordered_json::object();
    for (const auto& [k, v] : p.run.by_class_ns) c[k + "_us"] = v / 1000;
    s[on_system ? "device0_us" : "kernel_us_by_class"] = c;
  }
  return s;
}

// Energy (docs/energy.md#serving): a pass's average power, and the device's power with nothing
// to run (a GPU's idle power, an NPU's static power). Modelled when every pass has energy.
bool energy_modelled(const std::vector<Pass>& passes) {
  for (const Pass& p : passes)
    if (p.run.energy_uj < 0) return false;
  return !passes.empty();
}
double pass_power_w(const Pass& p) { return p.run.ns > 0 ? p.run.energy_uj * 1e3 / p.run.ns : 0; }  // uJ / us
double idle_power_w(const Setup& su) { return su.on_system ? 0 : run::idle_power_w(su.hw); }

// The report's "energy" object: joules, average power, output tokens per joule (per device: a
// system's devices each hold one shard).
nlohmann::ordered_json energy_json(bool modelled, double joules, double seconds, double output_tokens, int devices) {
  if (!modelled) return {{"modelled", false}};
  return {{"modelled", true},
          {"energy_j", joules},
          {"average_power_w", seconds > 0 ? joules / seconds : 0.0},
          {"output_tokens_per_j", joules > 0 ? output_tokens / joules : 0.0},
          {"output_tokens_per_j_per_device", joules > 0 ? output_tokens / joules / devices : 0.0}};
}

nlohmann::ordered_json latency_json(const Metrics& m) {
  return {{"ttft", {{"mean", m.ttft_mean_ns / 1e6}, {"p50", m.ttft_p50_ns / 1e6}, {"p90", m.ttft_p90_ns / 1e6}, {"p99", m.ttft_p99_ns / 1e6}}},
          {"tpot", {{"mean", m.tpot_ns / 1e6}, {"p50", m.tpot_p50_ns / 1e6}, {"p90", m.tpot_p90_ns / 1e6}, {"p99", m.tpot_p99_ns / 1e6}}},
          {"e2e", {{"mean", m.e2e_mean_ns / 1e6}, {"p50", m.e2e_p50_ns / 1e6}, {"p90", m.e2e_p90_ns / 1e6}, {"p99", m.e2e_p99_ns / 1e6}}}};
}

nlohmann::ordered_json totals_json(const Metrics& m, const Setup& su) {
  return {{"device", su.on_system ? "system" : su.gpu ? "gpu" : "npu"},
          {"time_us", m.total_ns / 1000},
          {"ttft_ms", m.ttft_mean_ns / 1e6},
          {"tpot_ms", m.tpot_ns / 1e6},
          {"e2e_ms", m.e2e_mean_ns / 1e6},
          {"output_tokens_per_s", m.output_tokens_per_s},
          {"output_tokens_per_s_per_device", m.output_tokens_per_s / su.devices}};
}

// The tokens a request may hold: the model's context (max_position_embeddings), stretched by
// --rope-scaling for rotary models; a learned position table cannot be stretched.
int64_t context_tokens(const ServeRequest& o, const frontends::zoo::TransformerShape& shape) {
  if (o.rope_scaling != 1 && !shape.rotary)
    throw InputError("sim llm", "--rope-scaling", o.model + " has learned positions (" + std::to_string(shape.context) +
                                                     "): RoPE scaling applies to rotary models (llama*)");
  return static_cast<int64_t>(std::floor(shape.context * o.rope_scaling));
}

void check_context(const ServeRequest& o, const frontends::zoo::TransformerShape& shape, int64_t tokens, const std::string& what) {
  const int64_t context = context_tokens(o, shape);
  if (tokens > context)
    throw InputError("sim llm", what, std::to_string(tokens) + " tokens (prompt + output) exceed " + o.model +
                                          "'s context of " + std::to_string(context) +
                                          (o.rope_scaling != 1 ? " (with --rope-scaling)"
                                                               : shape.rotary ? " (max_position_embeddings; --rope-scaling F stretches it)"
                                                                              : " (max_position_embeddings)"));
}

// A run's time in up to 100 even bins, from the first arrival to the last token.
struct Bins {
  double t0 = 0, width = 0;
  int n = 0;
  int at(double t) const { return std::clamp(static_cast<int>((t - t0) / width), 0, n - 1); }
  // weight x the share of each bin that [a, b) covers, added to acc.
  void cover(double a, double b, std::vector<double>& acc, double weight = 1) const {
    for (int i = at(a); i < n && t0 + i * width < b; ++i)
      acc[static_cast<size_t>(i)] += weight * std::max(0.0, std::min(b, t0 + (i + 1) * width) - std::max(a, t0 + i * width)) / width;
  }
};

Bins time_bins(const ContinuousResult& res, const Metrics& m) {
  Bins b;
  b.t0 = res.requests.front().arrival_ns;
  b.n = static_cast<int>(std::max<size_t>(1, std::min<size_t>(100, res.tokens_out.size())));
  b.width = (b.t0 + m.total_ns - b.t0) / b.n;  // as t1 - t0
  return b;
}

// Per bin: output tokens per second, and the mean TTFT / end-to-end latency of the requests whose
// first token / last token falls in it.
nlohmann::ordered_json timeline_json(const ContinuousResult& res, const Metrics& m) {
  nlohmann::ordered_json tl = nlohmann::ordered_json::array();
  const Bins b = time_bins(res, m);
  if (b.width <= 0) return tl;
  const int bins = b.n;
  std::vector<double> tok(bins, 0), ttft(bins, 0), e2e(bins, 0);
  std::vector<int> nt(bins, 0), ne(bins, 0);
  for (const auto& [t, n] : res.tokens_out) tok[b.at(t)] += n;
  for (const RequestResult& q : res.requests) {
    const int a = b.at(q.first_token_ns), e = b.at(q.finish_ns);
    ttft[a] += q.first_token_ns - q.arrival_ns, ++nt[a];
    e2e[e] += q.finish_ns - q.arrival_ns, ++ne[e];
  }
  for (int i = 0; i < bins; ++i)
    tl.push_back({{"t_ms", (b.t0 + (i + 0.5) * b.width) / 1e6}, {"output_tokens_per_s", tok[i] / (b.width * 1e-9)},
                  {"ttft_ms", nt[i] ? ttft[i] / nt[i] / 1e6 : 0.0}, {"e2e_ms", ne[i] ? e2e[i] / ne[i] / 1e6 : 0.0}});
  return tl;
}

// A mixture of experts in the report: the experts, top-k, how they are spread and loaded.
nlohmann::ordered_json experts_json(const ServeRequest& o, const frontends::zoo::TransformerShape& sh) {
  return {{"experts", sh.experts}, {"per_token", sh.experts_per_token}, {"ep", o.ep},
          {"load", o.expert_skew == 1 ? "balanced" : "skewed"}, {"skew", o.expert_skew}};
}

// Continuous batching's requests (Poisson arrivals or a trace), checked against the model's
// context and a prefill step's token budget.
std::vector<Request> served_requests(const ServeRequest& o, const frontends::zoo::TransformerShape& shape, RequestTrace& trace) {
  if (!o.trace.empty()) trace = read_request_trace(o.trace, o.trace_scale);
  std::vector<Request> reqs = o.trace.empty() ? poisson_requests(o.requests, o.arrival_rate, o.input, o.output, o.seed) : trace.requests;
  int64_t longest = 0, in_hi = 0;
  for (const Request& q : reqs) longest = std::max(longest, q.input + q.output), in_hi = std::max(in_hi, q.input);
  check_context(o, shape, longest, o.trace.empty() ? "--input/--output" : "the longest request of " + o.trace);
  if (in_hi > o.max_batch_tokens && !o.chunked_prefill)
    throw InputError("sim llm", "--max-batch-tokens", "a prompt of " + std::to_string(in_hi) + " tokens exceeds the " +
                                                          std::to_string(o.max_batch_tokens) + " tokens a prefill step may take (or give --chunked-prefill)");
  return reqs;
}

// A device's memory for the model: its shard of the weights and KV cache (tp x pp), and its
// capacity key and bytes.
void size_memory(Setup& su, int tp, int pp, int ep = 1) {
  const auto& sh = su.shape;
  const ModelShape ms{su.layers, sh.d, sh.heads, sh.kv_heads, sh.ffn, sh.vocab, sh.head_dim,
                      static_cast<double>(sh.parameters), static_cast<double>(sh.outside_layers), sh.layers,
                      static_cast<double>(sh.expert_parameters), sh.latent_kv};
  su.mem = model_memory(ms, static_cast<double>(ir::dtype_bytes(su.dt)), tp, pp, ep);
  su.cap_key = su.gpu ? "gpu.hbm.capacity_gib" : "memory.dram.capacity_gib";
  su.capacity = su.hw.get_double(su.cap_key) * (1 << 30);
}

ServingRecord run_continuous(const ServeRequest& o, const Setup& su);
ServingRecord run_disaggregated(const ServeRequest& o, const Setup& base);
ServingRecord run_pipelines(const ServeRequest& o);

ServingRecord run_static(const ServeRequest& o) {
  ServingRecord rec;
  if (!o.prefill_pipeline.empty() || !o.decode_pipeline.empty()) return run_pipelines(o);
  if (o.model.empty()) throw InputError("sim llm", "model", "give a zoo model, or --prefill and --decode pipeline files");
  const auto shape = frontends::zoo::transformer_shape(o.model);
  if (!shape || shape->family == "bert")
    throw InputError("sim llm", "model", "'" + o.model + "' is not a decoder LLM of the zoo (gpt2*, gpt3*, llama*) or a Hugging Face config.json");
  if (o.input < 1 || o.output < 1 || o.input + o.output > (1 << 20))
    throw InputError("sim llm", "--input/--output", "input and output tokens must be at least 1, together at most 2^20");
  Setup su;
  su.shape = *shape;
  context_tokens(o, *shape);  // --rope-scaling on a model with learned positions: refused
  if (shape->experts == 0 && (o.ep != 1 || o.expert_skew != 1))
    throw InputError("sim llm", o.ep != 1 ? "--ep" : "--expert-skew", "applies to mixture-of-experts models; " + o.model + " has no experts");
  if (o.arrival_rate <= 0 && o.trace.empty()) check_context(o, *shape, o.input + o.output, "--input/--output");
  // A system: the model as a tp x pp pipeline (docs/system.md#zoo-pipelines) on its devices.
  su.on_system = config::is_system_config(o.hw);
  if (su.on_system) {
    su.sys_cfg = config::SystemConfig::load(o.hw, o.sets);
    if (int64_t{o.tp} * o.pp * o.ep > static_cast<int64_t>(su.sys_cfg->devices.size()))
      throw InputError(o.hw, "system.devices", "--tp " + std::to_string(o.tp) + " x --pp " + std::to_string(o.pp) +
                                                   (o.ep > 1 ? " x --ep " + std::to_string(o.ep) : "") + " devices, but the system has " +
                                                   std::to_string(su.sys_cfg->devices.size()));
    su.hw = su.sys_cfg->devices.front().hw;
  } else {
    if (o.tp != 1 || o.pp != 1 || o.ep != 1) throw InputError("sim llm", o.ep != 1 ? "--ep" : "--tp", "--tp, --pp and --ep need a system config (docs/system.md)");
    if (o.microbatches != 1) throw InputError("sim llm", "--microbatches", "applies to pipelines on a system (--pp)");
    su.hw = config::HwConfig::load(o.hw, o.sets);
  }
  su.devices = o.tp * o.pp * o.ep;
  su.gpu = su.hw.get_string("device") == "gpu";
  su.dt = frontends::zoo::zoo_dtype(o.dtype, ir::DType::Float16, "sim llm", true);
  su.layers = o.layers == 0 ? shape->layers : o.layers;
  if (o.layers < 0 || o.layers > shape->layers)
    throw InputError("sim llm", "--layers", o.model + " has " + std::to_string(shape->layers) + " layers; got " + std::to_string(o.layers));
  size_memory(su, o.tp, o.pp, o.ep);
  if (!o.prefill_devices.empty() || !o.decode_devices.empty()) return run_disaggregated(o, su);
  if (o.arrival_rate > 0 || !o.trace.empty()) return run_continuous(o, su);
  for (const auto& [given, flag] : {std::make_pair(o.chunked_prefill, "--chunked-prefill"), std::make_pair(o.preempt, "--preempt"),
                                    std::make_pair(o.virtual_engines > 0, "--virtual-engines")})
    if (given) throw InputError("sim llm", flag, "applies to continuous batching (--arrival-rate or --trace)");
  const auto& hw = su.hw;
  const auto& sys_cfg = su.sys_cfg;
  const bool on_system = su.on_system, gpu = su.gpu;
  const int devices = su.devices, layers = su.layers;
  const ir::DType dt = su.dt;
  const ModelMemory& mem = su.mem;
  const double capacity = su.capacity;
  const std::string& cap_key = su.cap_key;

  // ---- memory: how many requests fit at once ----
  const BatchPlan plan = plan_batch(mem, o.batch, o.input, o.output, capacity);
  if (!plan.fits())
    throw InputError(hw.source(), cap_key,
                     "one request of " + std::to_string(o.input) + " + " + std::to_string(o.output) + " tokens does not fit: " +
                         fmt("%.2f", mem.weight_bytes / (1 << 30)) + " GiB of weights + " + fmt("%.3f", plan.kv_bytes_per_request / (1 << 30)) +
                         " GiB of KV cache and its activations exceed " + fmt("%.2f", capacity / (1 << 30)) + " GiB");

  // ---- the passes to simulate ----
  std::vector<Pass> passes;
  passes.push_back({"prefill", 0, o.input, {}, plan.per_wave});
  std::vector<int64_t> kv;
  if (o.output >= 2) kv = bucket_points(o.input, o.input + o.output - 2, o.buckets);
  for (int64_t k : kv) passes.push_back({"decode", k, 1, {}, plan.per_wave});
  // The interpolation's check: the middle of the widest gap between simulated points.
  int64_t check = -1, widest = 1;
  for (size_t i = 1; i < kv.size(); ++i)
    if (kv[i] - kv[i - 1] > widest) widest = kv[i] - kv[i - 1], check = (kv[i] + kv[i - 1]) / 2;
  if (check >= 0) passes.push_back({"check", check, 1, {}, plan.per_wave});

  simulate_passes(o, su, passes);

  // ---- the metrics ----
  std::vector<double> step_ns;
  for (const Pass& p : passes)
    if (p.phase == "decode") step_ns.push_back(p.run.ns);
  const double decode_total = kv.empty() ? 0 : sum_interpolated(kv, step_ns, o.input, o.input + o.output - 2);
  const Metrics m = static_metrics(plan, o.output, passes[0].run.ns, decode_total);
  // Energy: each wave's prefill pass, and its decode steps at the decode passes' average power.
  const bool powered = energy_modelled(passes);
  double decode_uj = 0, decode_ns = 0;
  for (const Pass& p : passes)
    if (p.phase == "decode") decode_uj += p.run.energy_uj, decode_ns += p.run.ns;
  const double wave_j = (passes[0].run.energy_uj + (decode_ns > 0 ? decode_total * decode_uj / decode_ns : 0)) * 1e-6;

  nlohmann::ordered_json j;
  j["workload"] = {{"model", o.model}, {"batch", o.batch}, {"input_tokens", o.input}, {"output_tokens", o.output},
                   {"dtype", ir::dtype_name(dt)}, {"layers", layers}, {"batching", "static"}};
  j["hardware"] = {{"name", on_system ? sys_cfg->name : hw.get_string("name")}, {"source", on_system ? sys_cfg->source : hw.source()},
                   {"device", gpu ? "gpu" : "npu"}, {"devices", devices}, {"tp", o.tp}, {"pp", o.pp}, {"ep", o.ep}};
  if (shape->experts > 0) j["workload"]["experts"] = experts_json(o, *shape);
  j["totals"] = totals_json(m, su);
  j["latency_ms"] = latency_json(m);
  j["energy"] = energy_json(powered, plan.waves * wave_j, m.total_ns * 1e-9, static_cast<double>(o.batch) * static_cast<double>(o.output), devices);
  const double gib = 1 << 30;
  j["memory"] = {{"capacity_gib", capacity / gib}, {"weights_gib", mem.weight_bytes / gib},
                 {"kv_cache_gib_per_request", plan.kv_bytes_per_request / gib}, {"prefill_activations_gib", plan.activation_bytes / gib},
                 {"max_batch", plan.max_batch}, {"waves", plan.waves}, {"requests_per_wave", plan.per_wave},
                 {"split", plan.waves > 1}};
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const Pass& p : passes) steps.push_back(step_json(p, on_system));
  j["steps"] = steps;
  if (check >= 0) {
    const double sim = passes.back().run.ns, interp = interpolate(kv, step_ns, static_cast<double>(check));
    j["interpolation"] = {{"simulated_kv_lens", kv.size()}, {"check_kv_len", check}, {"simulated_us", sim / 1000},
                          {"interpolated_us", interp / 1000}, {"error_pct", 100 * (interp - sim) / sim}};
  }
  // KV cache in use over one wave: after the prefill, then at each simulated decode point.
  nlohmann::ordered_json occ = nlohmann::ordered_json::array();
  const double per_token = mem.kv_bytes_per_token * plan.per_wave;
  occ.push_back({{"t_ms", passes[0].run.ns / 1e6}, {"gib", per_token * static_cast<double>(o.input) / gib}});
  for (int64_t k : kv)
    occ.push_back({{"t_ms", (passes[0].run.ns + sum_interpolated(kv, step_ns, o.input, k)) / 1e6},
                   {"gib", per_token * static_cast<double>(k + 1) / gib}});
  j["kv_cache_over_time"] = occ;

  {
    appendf(rec.summary, "%s on %s%s: batch %d, %lld input + %lld output tokens, %s%s\n", o.model.c_str(),
                (on_system ? sys_cfg->name : hw.get_string("name")).c_str(),
                on_system ? (" (tp " + std::to_string(o.tp) + " x pp " + std::to_string(o.pp) + (o.ep > 1 ? " x ep " + std::to_string(o.ep) : "") + ")").c_str() : "", o.batch,
                static_cast<long long>(o.input), static_cast<long long>(o.output), ir::dtype_name(dt),
                layers != shape->layers ? (", first " + std::to_string(layers) + " layers").c_str() : "");
    appendf(rec.summary, "memory per device: %.2f GiB weights + %.3f GiB KV cache per request of %.2f GiB: at most %d at once",
                mem.weight_bytes / gib, plan.kv_bytes_per_request / gib, capacity / gib, plan.max_batch);
    if (plan.waves > 1) appendf(rec.summary, " -> %d waves of up to %d requests", plan.waves, plan.per_wave);
    appendf(rec.summary, "\n\n  %-8s %10s %12s\n", "phase", "kv_len", "time_us");
    for (const Pass& p : passes) appendf(rec.summary, "  %-8s %10lld %12.1f\n", p.phase.c_str(), static_cast<long long>(p.kv_len), p.run.ns / 1000);
    if (check >= 0)
      appendf(rec.summary, "  (decode steps between the simulated KV lengths are interpolated; at %lld: %+.2f%%)\n", static_cast<long long>(check),
                  j["interpolation"]["error_pct"].get<double>());
    appendf(rec.summary, "\nTTFT %.3f ms (p99 %.3f)  TPOT %.3f ms  end-to-end %.3f ms (p99 %.3f)  %.1f output tokens/s\n", m.ttft_mean_ns / 1e6,
                m.ttft_p99_ns / 1e6, m.tpot_ns / 1e6, m.e2e_mean_ns / 1e6, m.e2e_p99_ns / 1e6, m.output_tokens_per_s);
  }
  rec.report = std::move(j);
  return rec;
}


// Powers of two up to hi, and hi.
std::vector<int> doubling(int hi) {
  std::vector<int> r;
  for (int b = 1; b < hi; b *= 2) r.push_back(b);
  r.push_back(hi);
  return r;
}

// The step-time surface (docs/llm.md#continuous-batching): decode steps at batch sizes 1, 2,
// 4 ... up to what can run at once (and no further than the requests served), each at the
// shortest and longest KV length (linear between); prefills of k prompts of the median input, up to a step's token budget (linear in
// tokens between); the device's power over the same points. Its cost functions refer to the
// struct's own vectors: it stays where it was built.
struct StepSurface {
  std::vector<Pass> passes;
  std::vector<double> ptok, pns, bx, lo_ns, hi_ns, pw, dbx, dw;
  int64_t kv_lo = 0, kv_top = 1;
  int64_t l_ref = 0;    // the prefills' prompt length (the median input)
  int kmax = 1, bmax = 1;  // the most prompts of a simulated prefill, the largest decode batch
  StepCost cost;
  bool powered = false;
  StepSurface() = default;
  StepSurface(const StepSurface&) = delete;
  StepSurface& operator=(const StepSurface&) = delete;
};

// Piecewise linear through (x, y), extrapolating past the ends; one point: proportional.
double lin(const std::vector<double>& x, const std::vector<double>& y, double v) {
  if (x.size() == 1) return y[0] * (v / x[0]);
  size_t i = 1;
  while (i + 1 < x.size() && v > x[i]) ++i;
  return y[i - 1] + (y[i] - y[i - 1]) * (v - x[i - 1]) / (x[i] - x[i - 1]);
}

void build_surface(StepSurface& sf, const ServeRequest& o, const Setup& su, const std::vector<Request>& reqs, const SchedulerOptions& so,
                   double per_engine, double per_longest) {
  int64_t in_lo = reqs[0].input, kv_hi = 0, longest = 0;
  for (const Request& q : reqs) {
    in_lo = std::min(in_lo, q.input);
    kv_hi = std::max(kv_hi, q.input + q.output - 2);
    longest = std::max(longest, q.input + q.output);
  }
  // With --preempt a request holds only the blocks it has filled, so up to the shortest prompt's
  // blocks' worth may run at once.
  int64_t shortest = longest;
  for (const Request& q : reqs) shortest = std::min(shortest, q.input + 1);
  const double per_running = so.on_demand_blocks ? static_cast<double>((shortest + so.block_tokens - 1) / so.block_tokens * so.block_tokens) * so.kv_bytes_per_token
                                                 : per_longest;
  // No step runs more requests than there are: the grid stops at the first power of two that
  // holds them all (the same points as a longer grid, without the ones never reached).
  int64_t all = 1;
  while (all < static_cast<int64_t>(reqs.size())) all *= 2;
  const int bmax = static_cast<int>(std::min<double>({static_cast<double>(so.max_seqs), std::floor(per_engine / per_running), static_cast<double>(all)}));
  std::vector<int64_t> ins;
  for (const auto& q : reqs) ins.push_back(q.input);
  std::nth_element(ins.begin(), ins.begin() + static_cast<long>(ins.size() / 2), ins.end());
  const int64_t l_ref = ins[ins.size() / 2];
  const int kmax = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(so.max_batch_tokens / l_ref, bmax)));
  const std::vector<int> bgrid = doubling(std::max(1, bmax)), kgrid = doubling(kmax);
  sf.l_ref = l_ref, sf.kmax = kmax, sf.bmax = bgrid.back();
  sf.kv_lo = in_lo, sf.kv_top = std::max(kv_hi, sf.kv_lo + 1);
  for (int k : kgrid) sf.passes.push_back({"prefill", 0, l_ref, {}, k});
  for (int b : bgrid)
    for (int64_t kv : {sf.kv_lo, sf.kv_top}) sf.passes.push_back({"decode", kv, 1, {}, b});
  simulate_passes(o, su, sf.passes);

  std::map<int, std::pair<double, double>> dec;  // decode: batch -> (ns at kv_lo, ns at kv_top)
  for (const Pass& p : sf.passes) {
    if (p.phase == "prefill") sf.ptok.push_back(static_cast<double>(p.batch * p.seq)), sf.pns.push_back(p.run.ns);
    else (p.kv_len == sf.kv_lo ? dec[p.batch].first : dec[p.batch].second) = p.run.ns;
  }
  StepSurface* s = &sf;
  sf.cost.prefill_ns = [s](int64_t tokens, int) { return std::max(lin(s->ptok, s->pns, static_cast<double>(tokens)), 0.0); };
  for (const auto& [b, v] : dec) sf.bx.push_back(b), sf.lo_ns.push_back(v.first), sf.hi_ns.push_back(v.second);
  sf.cost.decode_ns = [s](int batch, double kv_mean) {
    const double f = (kv_mean - static_cast<double>(s->kv_lo)) / static_cast<double>(s->kv_top - s->kv_lo);
    const double a = s->bx.size() == 1 ? s->lo_ns[0] : lin(s->bx, s->lo_ns, batch), c = s->bx.size() == 1 ? s->hi_ns[0] : lin(s->bx, s->hi_ns, batch);
    return std::max(a + (c - a) * f, 0.0);
  };
  // A chunked step (docs/llm.md#chunked-prefill): every token of the step goes through the
  // GEMMs, norms and activations once, as a prefill of that many tokens does (the weights read
  // once), and each decode adds its attention over its KV cache: a decode step's time above the
  // same batch's at the shortest KV length.
  sf.cost.mixed_ns = [prefill = sf.cost.prefill_ns, decode = sf.cost.decode_ns, kv_lo = sf.kv_lo](int64_t prompt, int decodes, double kv_mean) {
    if (prompt == 0) return decode(decodes, kv_mean);
    if (decodes == 0) return prefill(prompt, 1);
    return prefill(prompt + decodes, 1) + std::max(0.0, decode(decodes, kv_mean) - decode(decodes, static_cast<double>(kv_lo)));
  };
  // Each stage's share of a step's time, averaged over the simulated passes of its kind.
  auto shares = [&](bool prompt) {
    std::vector<double> sum(static_cast<size_t>(o.pp), 0.0);
    int n = 0;
    for (const Pass& p : sf.passes)
      if ((p.phase == "prefill") == prompt && p.run.stage_ns.size() == sum.size() && p.run.ns > 0) {
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += p.run.stage_ns[i] / p.run.ns;
        ++n;
      }
    for (double& x : sum) x = n > 0 ? x / n : 1.0 / static_cast<double>(sum.size());
    return sum;
  };
  if (so.virtual_engines > 1) sf.cost.prompt_stage_shares = shares(true), sf.cost.decode_stage_shares = shares(false);
  // Power over the same surface as time: prefill passes by tokens, decode passes by batch
  // (averaged over their two KV lengths).
  sf.powered = energy_modelled(sf.passes);
  std::map<int, std::pair<double, int>> dpow;
  for (const Pass& p : sf.passes) {
    if (p.phase == "prefill") sf.pw.push_back(pass_power_w(p));
    else dpow[p.batch].first += pass_power_w(p), dpow[p.batch].second += 1;
  }
  for (const auto& [b, v] : dpow) sf.dbx.push_back(b), sf.dw.push_back(v.first / v.second);
  if (sf.powered) {
    sf.cost.prompt_power_w = [s](int64_t tokens) { return std::max(lin(s->ptok, s->pw, static_cast<double>(tokens)), 0.0); };
    sf.cost.decode_power_w = [s](int batch) { return std::max(s->dbx.size() == 1 ? s->dw[0] : lin(s->dbx, s->dw, batch), 0.0); };
  }
}

// ---- disaggregated serving (docs/llm.md#disaggregated-serving) ----

// "0-3,6" -> {0, 1, 2, 3, 6}: each device once, within the system's n.
std::vector<int> parse_devices(const std::string& text, int n, const std::string& flag) {
  std::vector<int> r;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const size_t dash = item.find('-');
    int lo = -1, hi = -1;
    try {
      size_t used = 0;
      lo = std::stoi(item.substr(0, dash), &used);
      if (used != item.substr(0, dash).size()) throw std::invalid_argument(item);
      hi = lo;
      if (dash != std::string::npos) {
        hi = std::stoi(item.substr(dash + 1), &used);
        if (used != item.substr(dash + 1).size()) throw std::invalid_argument(item);
      }
    } catch (const std::exception&) {
      throw InputError("sim llm", flag, "expected device indices such as 0-3 or 0,2, got '" + text + "'");
    }
    if (lo < 0 || hi < lo || hi >= n)
      throw InputError("sim llm", flag, "'" + item + "' is not a range of the system's devices 0-" + std::to_string(n - 1));
    for (int d = lo; d <= hi; ++d) {
      if (std::find(r.begin(), r.end(), d) != r.end()) throw InputError("sim llm", flag, "device " + std::to_string(d) + " given twice");
      r.push_back(d);
    }
  }
  if (r.empty()) throw InputError("sim llm", flag, "names no device");
  return r;
}

// One pool: its devices (replicas of tp devices each, the model tensor-parallel over them),
// their config, the step surface simulated on one replica, and what its replicas served.
struct Pool {
  std::string role;
  std::vector<int> devices;
  int tp = 1;
  Setup su;
  SchedulerOptions so;
  StepSurface surface;
  std::vector<ContinuousResult> served;  // per replica
};

void setup_pool(Pool& p, const ServeRequest& o, const Setup& base, const std::vector<Request>& reqs) {
  const config::SystemConfig& sys = *base.sys_cfg;
  const std::string flag = "--" + p.role + "-devices";
  if (p.devices.size() % static_cast<size_t>(p.tp) != 0)
    throw InputError("sim llm", flag, std::to_string(p.devices.size()) + " devices do not split into replicas of --" + p.role + "-tp " +
                                          std::to_string(p.tp));
  for (int d : p.devices)
    if (sys.devices[static_cast<size_t>(d)].source != sys.devices[static_cast<size_t>(p.devices[0])].source)
      throw InputError("sim llm", flag, "a pool's devices share one config: device " + std::to_string(d) + " is " +
                                            sys.devices[static_cast<size_t>(d)].source + ", device " + std::to_string(p.devices[0]) + " " +
                                            sys.devices[static_cast<size_t>(p.devices[0])].source);
  p.su = base;
  p.su.on_system = false;
  p.su.sys_cfg.reset();
  p.su.hw = sys.devices[static_cast<size_t>(p.devices[0])].hw;
  p.su.gpu = p.su.hw.get_string("device") == "gpu";
  p.su.devices = p.tp;
  ServeRequest po = o;  // one replica's passes: tp devices, no pipeline stages or expert groups
  po.tp = p.tp, po.pp = 1, po.ep = 1, po.microbatches = 1;
  if (p.tp > 1) {
    // A replica's passes run on a system of its tp devices (the first replica's: they share one
    // config), within one node.
    models::Network net(static_cast<int>(sys.devices.size()), sys.network);
    config::SystemConfig sub = sys;
    sub.devices.clear();
    for (int j = 0; j < p.tp; ++j) sub.devices.push_back(sys.devices[static_cast<size_t>(p.devices[static_cast<size_t>(j)])]);
    for (size_t k = 0; k < p.devices.size(); ++k)
      if (net.node_of(p.devices[k]) != net.node_of(p.devices[k - k % static_cast<size_t>(p.tp)]))
        throw InputError("sim llm", flag, "a replica's " + std::to_string(p.tp) + " devices must be in one node: device " +
                                              std::to_string(p.devices[k]) + " is not");
    sub.network.devices_per_node = 0;
    p.su.on_system = true;
    p.su.sys_cfg = sub;
  }
  size_memory(p.su, p.tp, 1);
  p.so.max_batch_tokens = o.max_batch_tokens;
  p.so.max_seqs = o.max_seqs;
  p.so.chunked_prefill = o.chunked_prefill && p.role == "prefill";  // a decode pool admits KV, not prompts
  p.so.on_demand_blocks = o.preempt;
  p.so.kv_bytes_per_token = p.su.mem.kv_bytes_per_token;
  p.so.kv_capacity_bytes = p.su.capacity - p.su.mem.weight_bytes - static_cast<double>(o.max_batch_tokens) * p.su.mem.activation_bytes_per_token;
  int64_t longest = 0;
  for (const Request& q : reqs) longest = std::max(longest, q.input + q.output);
  const double per_longest = static_cast<double>((longest + p.so.block_tokens - 1) / p.so.block_tokens * p.so.block_tokens) * p.so.kv_bytes_per_token;
  if (p.so.kv_capacity_bytes < per_longest)
    throw InputError(p.su.hw.source(), p.su.cap_key, "the " + p.role + " pool's devices hold the whole model: the longest request's KV cache " +
                                                        "does not fit beside its weights (" + fmt("%.2f", p.su.mem.weight_bytes / (1 << 30)) +
                                                        " GiB) and a prefill step's activations");
  build_surface(p.surface, po, p.su, reqs, p.so, p.so.kv_capacity_bytes, per_longest);
}

ServingRecord run_disaggregated(const ServeRequest& o, const Setup& base) {
  ServingRecord rec;
  if (!base.on_system) throw InputError("sim llm", "--prefill-devices", "disaggregated serving needs a system config holding both pools (docs/system.md)");
  if (o.prefill_devices.empty() || o.decode_devices.empty())
    throw InputError("sim llm", o.prefill_devices.empty() ? "--prefill-devices" : "--decode-devices", "give both --prefill-devices and --decode-devices");
  if (o.pp != 1 || o.ep != 1)
    throw InputError("sim llm", o.ep != 1 ? "--ep" : "--pp", "disaggregated pools run replicas of --prefill-tp / --decode-tp devices: give --pp 1 --ep 1");
  if (o.arrival_rate <= 0 && o.trace.empty())
    throw InputError("sim llm", "--prefill-devices", "disaggregated serving runs continuous batching: give --arrival-rate or --trace");
  if (o.virtual_engines > 1) throw InputError("sim llm", "--virtual-engines", "applies to pipelines (--pp), not to disaggregated pools");
  const config::SystemConfig& sys = *base.sys_cfg;
  const int n = static_cast<int>(sys.devices.size());
  Pool prefill, decode;
  prefill.role = "prefill", decode.role = "decode";
  prefill.devices = parse_devices(o.prefill_devices, n, "--prefill-devices");
  decode.devices = parse_devices(o.decode_devices, n, "--decode-devices");
  prefill.tp = o.prefill_tp > 0 ? o.prefill_tp : o.tp;
  decode.tp = o.decode_tp > 0 ? o.decode_tp : o.tp;
  for (int d : decode.devices)
    if (std::find(prefill.devices.begin(), prefill.devices.end(), d) != prefill.devices.end())
      throw InputError("sim llm", "--decode-devices", "device " + std::to_string(d) + " is in both pools");
  RequestTrace trace;
  const std::vector<Request> reqs = served_requests(o, base.shape, trace);
  // The prefill pool serves each request's prompt and first token (output 1); the decode pool
  // the rest, from the moment its KV cache has arrived.
  std::vector<Request> prompts = reqs;
  for (Request& q : prompts) q.output = 1;
  setup_pool(prefill, o, base, prompts);
  setup_pool(decode, o, base, reqs);

  // Replicas: request i to prefill replica i mod np, then to decode replica i mod nd.
  const size_t np = prefill.devices.size() / static_cast<size_t>(prefill.tp), nd = decode.devices.size() / static_cast<size_t>(decode.tp);
  std::vector<double> first(reqs.size(), 0);
  prefill.served.resize(np);
  for (size_t r = 0; r < np; ++r) {  // request i to prefill replica i mod np
    std::vector<Request> mine;
    std::vector<size_t> ids;
    for (size_t i = r; i < prompts.size(); i += np) mine.push_back(prompts[i]), ids.push_back(i);
    if (mine.empty()) continue;
    prefill.served[r] = serve_continuous(mine, prefill.so, prefill.surface.cost);
    for (size_t k = 0; k < ids.size(); ++k) first[ids[k]] = prefill.served[r].requests[k].first_token_ns;
  }
  // KV transfers over the system's links, in the order the prefills end: request i from its
  // prefill replica to decode replica i mod nd, each decode device receiving its share (its
  // heads' K and V, or the whole latent) from prefill device j mod tp_p, all at once.
  std::vector<size_t> order(reqs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
  models::Network net(n, sys.network);
  std::vector<double> landed(reqs.size(), 0), transfer_ms, moved(reqs.size(), 0);
  double kv_bytes_total = 0;
  const size_t tpp = static_cast<size_t>(prefill.tp), tpd = static_cast<size_t>(decode.tp);
  for (size_t i : order) {
    landed[i] = first[i];
    if (reqs[i].output <= 1) continue;
    const double bytes = decode.su.mem.kv_bytes_per_token * static_cast<double>(reqs[i].input);  // per decode device
    for (size_t j = 0; j < tpd; ++j)
      landed[i] = std::max(landed[i], net.transfer(prefill.devices[(i % np) * tpp + j % tpp], decode.devices[(i % nd) * tpd + j], first[i], bytes));
    moved[i] = bytes * static_cast<double>(tpd);
    transfer_ms.push_back((landed[i] - first[i]) / 1e6), kv_bytes_total += moved[i];
  }
  ContinuousResult all;
  all.requests.resize(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) all.requests[i] = {reqs[i].arrival_ns, first[i], first[i], reqs[i].output};
  for (const ContinuousResult& r : prefill.served) all.tokens_out.insert(all.tokens_out.end(), r.tokens_out.begin(), r.tokens_out.end());
  decode.served.resize(nd);
  for (size_t r = 0; r < nd; ++r) {
    std::vector<size_t> ids;
    for (size_t i = r; i < reqs.size(); i += nd)
      if (reqs[i].output > 1) ids.push_back(i);
    if (ids.empty()) continue;
    std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) { return landed[a] < landed[b]; });
    std::vector<Request> mine;
    for (size_t i : ids) mine.push_back({landed[i], reqs[i].input, reqs[i].output, true});
    decode.served[r] = serve_continuous(mine, decode.so, decode.surface.cost);
    for (size_t k = 0; k < ids.size(); ++k) all.requests[ids[k]].finish_ns = decode.served[r].requests[k].finish_ns;
    all.tokens_out.insert(all.tokens_out.end(), decode.served[r].tokens_out.begin(), decode.served[r].tokens_out.end());
  }
  std::sort(all.tokens_out.begin(), all.tokens_out.end());
  const Metrics m = continuous_metrics(all);

  // Energy: every replica's steps, and its idle power for the rest of the run.
  const bool powered = prefill.surface.powered && decode.surface.powered;
  double energy_j = 0;
  for (Pool* p : {&prefill, &decode})  // a replica's steps cost its devices together; idle, each its idle power
    for (const ContinuousResult& r : p->served)
      energy_j += r.busy_energy_j + run::idle_power_w(p->su.hw) * p->tp * std::max(0.0, m.total_ns - r.busy_ns) * 1e-9;
  int64_t output_tokens = 0;
  for (const Request& q : reqs) output_tokens += q.output;

  const double gib = 1 << 30;
  nlohmann::ordered_json j;
  j["workload"] = {{"model", o.model}, {"requests", reqs.size()}, {"arrivals", o.trace.empty() ? "poisson" : "trace"},
                   {"arrival_rate_per_s", o.trace.empty() ? o.arrival_rate : 0.0}, {"seed", o.seed}, {"trace", o.trace},
                   {"dtype", ir::dtype_name(base.dt)}, {"layers", base.layers}, {"batching", "continuous, disaggregated"}};
  const size_t all_devices = prefill.devices.size() + decode.devices.size();
  j["hardware"] = {{"name", sys.name}, {"source", sys.source}, {"device", "system"}, {"devices", all_devices}, {"tp", o.tp}, {"pp", 1}, {"ep", 1}};
  if (base.shape.experts > 0) j["workload"]["experts"] = experts_json(o, base.shape);
  Setup whole = base;
  whole.devices = static_cast<int>(all_devices);
  j["totals"] = totals_json(m, whole);
  j["latency_ms"] = latency_json(m);
  j["energy"] = energy_json(powered, energy_j, m.total_ns * 1e-9, static_cast<double>(output_tokens), static_cast<int>(all_devices));
  auto pool_json = [&](const Pool& p) {
    int steps = 0, peak_running = 0;
    double peak_kv = 0, busy = 0;
    for (const ContinuousResult& r : p.served) {
      steps += r.prefill_steps + r.decode_steps + r.mixed_steps, peak_running = std::max(peak_running, r.peak_running);
      peak_kv = std::max(peak_kv, r.peak_kv_bytes), busy += r.busy_ns;
    }
    return nlohmann::ordered_json{{"devices", p.devices}, {"tp", p.tp}, {"replicas", p.served.size()},
                                  {"config", p.su.hw.get_string("name")}, {"source", p.su.hw.source()},
                                  {"weights_gib", p.su.mem.weight_bytes / gib}, {"kv_cache_capacity_gib", p.so.kv_capacity_bytes / gib},
                                  {"peak_kv_cache_gib", peak_kv / gib}, {"peak_running", peak_running}, {"steps", steps},
                                  {"busy_share", m.total_ns > 0 ? busy / (m.total_ns * static_cast<double>(p.served.size())) : 0.0}};
  };
  const double mean_transfer = transfer_ms.empty() ? 0 : std::accumulate(transfer_ms.begin(), transfer_ms.end(), 0.0) / static_cast<double>(transfer_ms.size());
  j["disaggregated"] = {{"prefill", pool_json(prefill)}, {"decode", pool_json(decode)},
                        {"kv_transfer", {{"requests", transfer_ms.size()},
                                         {"bytes_per_request", transfer_ms.empty() ? 0.0 : kv_bytes_total / static_cast<double>(transfer_ms.size())},
                                         {"mean_ms", mean_transfer}, {"p99_ms", transfer_ms.empty() ? 0.0 : percentile(transfer_ms, 99)}}}};
  // Over time (the timeline's bins): each device's busy share, and the KV cache bytes moving
  // between the pools (each transfer spread over its time on the links), for the picture.
  j["timeline"] = timeline_json(all, m);
  const Bins bins = time_bins(all, m);
  if (bins.width > 0) {
    nlohmann::ordered_json devs = nlohmann::ordered_json::array();
    for (const Pool* p : {&prefill, &decode})
      for (size_t k = 0; k < p->devices.size(); ++k) {  // device k is in replica k / tp
        std::vector<double> busy(static_cast<size_t>(bins.n), 0);
        const size_t r = k / static_cast<size_t>(p->tp);
        if (r < p->served.size())
          for (const auto& [a, b] : p->served[r].step_spans) bins.cover(a, b, busy);
        devs.push_back({{"device", p->devices[k]}, {"pool", p->role}, {"busy", busy}});
      }
    std::vector<double> bytes(static_cast<size_t>(bins.n), 0);
    for (size_t i = 0; i < reqs.size(); ++i)  // each transfer's bytes spread evenly over its time
      if (reqs[i].output > 1 && landed[i] > first[i])
        bins.cover(first[i], landed[i], bytes,
                   moved[i] * bins.width / (landed[i] - first[i]));
    for (double& x : bytes) x = x / (bins.width * 1e-9) / 1e9;
    j["disaggregated"]["devices_over_time"] = devs;
    j["disaggregated"]["kv_transfer"]["gb_per_s_over_time"] = bytes;
  }
  rec.report = std::move(j);
  auto replicas = [](size_t n, const Pool& p) {  // "2 x gpu-h100", or "2 x tp2 gpu-h100"
    return std::to_string(n) + " x " + (p.tp > 1 ? "tp" + std::to_string(p.tp) + " " : "") + p.su.hw.get_string("name");
  };
  appendf(rec.summary, "%s on %s: %zu requests, disaggregated: prefill on %s (devices %s), decode on %s (devices %s), %s\n",
          o.model.c_str(), sys.name.c_str(), reqs.size(), replicas(np, prefill).c_str(), o.prefill_devices.c_str(),
          replicas(nd, decode).c_str(), o.decode_devices.c_str(), ir::dtype_name(base.dt));
  appendf(rec.summary, "KV cache moved per request: %.1f MiB in %.3f ms on average (p99 %.3f ms)\n",
          transfer_ms.empty() ? 0.0 : kv_bytes_total / static_cast<double>(transfer_ms.size()) / (1 << 20), mean_transfer,
          transfer_ms.empty() ? 0.0 : percentile(transfer_ms, 99));
  appendf(rec.summary, "TTFT %.3f ms (p50 %.3f, p99 %.3f)  TPOT %.3f ms  end-to-end %.3f ms (p99 %.3f)  %.1f output tokens/s\n", m.ttft_mean_ns / 1e6,
          m.ttft_p50_ns / 1e6, m.ttft_p99_ns / 1e6, m.tpot_ns / 1e6, m.e2e_mean_ns / 1e6, m.e2e_p99_ns / 1e6, m.output_tokens_per_s);
  return rec;
}

ServingRecord run_continuous(const ServeRequest& o, const Setup& su) {
  ServingRecord rec;
  if (o.max_batch_tokens < 1 || o.max_seqs < 1) throw InputError("sim llm", "--max-batch-tokens", "--max-batch-tokens and --max-seqs must be at least 1");
  RequestTrace trace;
  const std::vector<Request> reqs = served_requests(o, su.shape, trace);
  int64_t longest = 0;
  for (const Request& q : reqs) longest = std::max(longest, q.input + q.output);
  // What the KV cache may take: the capacity less the weights and one prefill step's activations.
  SchedulerOptions so;
  so.max_batch_tokens = o.max_batch_tokens;
  so.max_seqs = o.max_seqs;
  so.chunked_prefill = o.chunked_prefill;
  so.on_demand_blocks = o.preempt;
  // vLLM's pipeline parallelism: as many schedulers as stages, their steps in the stages at once.
  so.virtual_engines = o.virtual_engines > 0 ? o.virtual_engines : o.pp > 1 && o.microbatches == 1 ? o.pp : 1;
  if (so.virtual_engines > 1 && o.pp == 1)
    throw InputError("sim llm", "--virtual-engines", "applies to pipelines on a system (--pp > 1)");
  if (so.virtual_engines > 1 && o.microbatches > 1)
    throw InputError("sim llm", "--virtual-engines", "virtual engines pipeline whole steps: give --microbatches 1 (or --virtual-engines 1)");
  so.kv_bytes_per_token = su.mem.kv_bytes_per_token;
  so.kv_capacity_bytes = su.capacity - su.mem.weight_bytes - static_cast<double>(o.max_batch_tokens) * su.mem.activation_bytes_per_token;
  const double per_longest = static_cast<double>((longest + so.block_tokens - 1) / so.block_tokens * so.block_tokens) * so.kv_bytes_per_token;
  const double per_engine = so.kv_capacity_bytes / so.virtual_engines;  // each virtual engine's share of the cache
  if (per_engine < per_longest)
    throw InputError(su.hw.source(), su.cap_key, "the longest request's KV cache does not fit beside the weights (" +
                                                     fmt("%.2f", su.mem.weight_bytes / (1 << 30)) + " GiB) and a prefill step's activations" +
                                                     (so.virtual_engines > 1 ? " in 1/" + std::to_string(so.virtual_engines) + " of the cache (one virtual engine's)" : ""));
  StepSurface surface;
  build_surface(surface, o, su, reqs, so, per_engine, per_longest);
  std::vector<Pass>& passes = surface.passes;
  const StepCost& cost = surface.cost;
  const bool powered = surface.powered;
  const ContinuousResult res = serve_continuous(reqs, so, cost);
  const Metrics m = continuous_metrics(res);
  int64_t output_tokens = 0;
  for (const Request& q : reqs) output_tokens += q.output;
  const double energy_j = res.busy_energy_j + idle_power_w(su) * std::max(0.0, m.total_ns - res.busy_ns) * 1e-9;

  const double gib = 1 << 30;
  nlohmann::ordered_json j;
  j["workload"] = {{"model", o.model}, {"requests", reqs.size()}, {"arrivals", o.trace.empty() ? "poisson" : "trace"},
                   {"arrival_rate_per_s", o.trace.empty() ? o.arrival_rate : 0.0}, {"seed", o.seed}, {"trace", o.trace},
                   {"dtype", ir::dtype_name(su.dt)}, {"layers", su.layers}, {"batching", "continuous"}};
  if (!o.trace.empty()) {
    j["workload"]["trace_format"] = trace.format;
    j["workload"]["trace_scale"] = o.trace_scale;
    j["workload"]["skipped_requests"] = trace.skipped;  // rows without output tokens
  }
  j["hardware"] = {{"name", su.on_system ? su.sys_cfg->name : su.hw.get_string("name")}, {"source", su.on_system ? su.sys_cfg->source : su.hw.source()},
                   {"device", su.gpu ? "gpu" : "npu"}, {"devices", su.devices}, {"tp", o.tp}, {"pp", o.pp}, {"ep", o.ep}};
  if (su.shape.experts > 0) j["workload"]["experts"] = experts_json(o, su.shape);
  j["totals"] = totals_json(m, su);
  j["latency_ms"] = latency_json(m);
  j["energy"] = energy_json(powered, energy_j, m.total_ns * 1e-9, static_cast<double>(output_tokens), su.devices);
  j["memory"] = {{"capacity_gib", su.capacity / gib}, {"weights_gib", su.mem.weight_bytes / gib}, {"kv_cache_capacity_gib", so.kv_capacity_bytes / gib},
                 {"peak_kv_cache_gib", res.peak_kv_bytes / gib}};
  const char* policy =
      o.chunked_prefill ? (o.preempt ? "chunked prefill (vLLM v1, Sarathi-Serve: decodes first, then prompt chunks; KV blocks on demand, recompute preemption)"
                                     : "chunked prefill (vLLM v1, Sarathi-Serve: decodes first, then prompt chunks; no preemption)")
                        : (o.preempt ? "prefill first, KV blocks on demand, recompute preemption (vLLM)" : "prefill first (vLLM, no preemption)");
  j["scheduler"] = {{"policy", policy},
                    {"max_batch_tokens", o.max_batch_tokens}, {"max_seqs", o.max_seqs},
                    {"prefill_steps", res.prefill_steps}, {"decode_steps", res.decode_steps}, {"mixed_steps", res.mixed_steps},
                    {"peak_running", res.peak_running}, {"preemptions", res.preemptions}, {"virtual_engines", so.virtual_engines}};
  if (so.virtual_engines > 1)
    j["scheduler"]["stage_shares"] = {{"prefill", cost.prompt_stage_shares}, {"decode", cost.decode_stage_shares}};
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const Pass& p : passes) steps.push_back(step_json(p, su.on_system));
  j["steps"] = steps;
  nlohmann::ordered_json occ = nlohmann::ordered_json::array();
  const size_t every = std::max<size_t>(1, res.kv_bytes_over_time.size() / 200);
  for (size_t i = 0; i < res.kv_bytes_over_time.size(); i += every)
    occ.push_back({{"t_ms", res.kv_bytes_over_time[i].first / 1e6}, {"gib", res.kv_bytes_over_time[i].second / gib}});
  j["kv_cache_over_time"] = occ;
  j["timeline"] = timeline_json(res, m);
  {
    appendf(rec.summary, "%s on %s: %zu requests (%s), continuous batching, %s\n", o.model.c_str(),
                (su.on_system ? su.sys_cfg->name : su.hw.get_string("name")).c_str(), reqs.size(),
                o.trace.empty() ? ("Poisson " + fmt("%g", o.arrival_rate) + "/s, seed " + std::to_string(o.seed)).c_str()
                                : (o.trace + ", " + trace.format + " format" +
                                   (o.trace_scale != 1 ? ", arrivals / " + fmt("%g", o.trace_scale) : std::string()) +
                                   (trace.skipped ? ", " + std::to_string(trace.skipped) + " without output left out" : std::string()))
                                      .c_str(),
                ir::dtype_name(su.dt));
    appendf(rec.summary, "KV cache: %.2f GiB beside %.2f GiB of weights; peak %.2f GiB, %d requests running at most\n", so.kv_capacity_bytes / gib,
                su.mem.weight_bytes / gib, res.peak_kv_bytes / gib, res.peak_running);
    if (so.virtual_engines > 1) {
      appendf(rec.summary, "%d virtual engines (vLLM's pipeline parallelism), their steps through %d stages at once; stage shares of a decode step:",
                  so.virtual_engines, o.pp);
      for (double x : cost.decode_stage_shares) appendf(rec.summary, " %.3f", x);
      appendf(rec.summary, "\n");
    }
    appendf(rec.summary, "steps simulated: %zu (prefills of 1..%d prompts of %lld tokens; decodes at batch 1..%d, KV %lld and %lld); "
                "%d prefill and %d decode steps served%s\n",
                passes.size(), surface.kmax, static_cast<long long>(surface.l_ref), surface.bmax, static_cast<long long>(surface.kv_lo),
                static_cast<long long>(surface.kv_top),
                res.prefill_steps, res.decode_steps,
                o.preempt ? (", " + std::to_string(res.preemptions) + " preemptions").c_str() : "");
    appendf(rec.summary, "TTFT %.3f ms (p50 %.3f, p99 %.3f)  TPOT %.3f ms  end-to-end %.3f ms (p99 %.3f)  %.1f output tokens/s\n", m.ttft_mean_ns / 1e6,
                m.ttft_p50_ns / 1e6, m.ttft_p99_ns / 1e6, m.tpot_ns / 1e6, m.e2e_mean_ns / 1e6, m.e2e_p99_ns / 1e6, m.output_tokens_per_s);
  }
  rec.report = std::move(j);
  return rec;
}


// A runtime's own passes (docs/llm.md#pipeline-files): a prefill pipeline and a decode-step
// pipeline on a system, each simulated once; every decode step is taken to cost the decode
// pipeline's time (its file fixes one KV length), the batch is the pipelines' own.
ServingRecord run_pipelines(const ServeRequest& o) {
  ServingRecord rec;
  for (const auto& [given, flag] : {std::make_pair(o.chunked_prefill, "--chunked-prefill"), std::make_pair(o.preempt, "--preempt"),
                                    std::make_pair(o.virtual_engines > 0, "--virtual-engines")})
    if (given) throw InputError("sim llm", flag, "applies to continuous batching of a zoo model (--arrival-rate or --trace)");
  if (o.prefill_pipeline.empty() || o.decode_pipeline.empty())
    throw InputError("sim llm", o.prefill_pipeline.empty() ? "--prefill" : "--decode", "give both --prefill and --decode pipeline files");
  if (!o.model.empty()) throw InputError("sim llm", "model", "give a zoo model or pipeline files, not both");
  if (o.arrival_rate > 0 || !o.trace.empty()) throw InputError("sim llm", "--prefill", "pipeline files serve one static batch (no arrivals)");
  if (o.output < 1 || o.output > (1 << 20)) throw InputError("sim llm", "--output", "must be in 1..2^20");
  if (!config::is_system_config(o.hw)) throw InputError(o.hw, "system", "pipeline files run on a system config (docs/system.md)");
  const config::SystemConfig cfg = config::SystemConfig::load(o.hw, o.sets);
  std::vector<std::pair<std::string, ir::System>> files;
  for (const std::string& f : {o.prefill_pipeline, o.decode_pipeline}) files.push_back({f, frontends::pipeline::read_pipeline(f)});
  std::vector<run::RunSummary> runs(2);
  run::DeviceRunOptions ro;
  run::PoolOptions pool;
  pool.jobs = 2;
  std::string failure;
  run::run_forked(
      2, pool,
      [&](size_t i) {
        return pass_on_system(files[i].second, cfg, ro).to_json();
      },
      [&](const run::TaskOutcome& out) {
        if (!out.ok) {
          if (failure.empty()) failure = files[out.index].first + ": " + out.payload;
          return;
        }
        runs[out.index] = run::RunSummary::from_json(out.payload);
      });
  if (!failure.empty()) throw InputError("sim llm", "--prefill/--decode", "simulating " + failure);
  BatchPlan plan;
  plan.batch = plan.max_batch = plan.per_wave = o.batch;
  plan.waves = 1;
  const Metrics m = static_metrics(plan, o.output, runs[0].ns, runs[1].ns * static_cast<double>(o.output - 1));
  Setup su;
  su.on_system = true;
  su.devices = 0;  // the accelerators the prefill pipeline uses
  for (const ir::SystemDevice& d : files[0].second.devices) su.devices += d.is_cpu() ? 0 : 1;
  su.devices = std::max(su.devices, 1);
  nlohmann::ordered_json j;
  j["workload"] = {{"prefill_pipeline", o.prefill_pipeline}, {"decode_pipeline", o.decode_pipeline}, {"batch", o.batch},
                   {"output_tokens", o.output}, {"batching", "static"}};
  j["hardware"] = {{"name", cfg.name}, {"source", cfg.source}, {"devices", su.devices}};
  j["totals"] = totals_json(m, su);
  j["latency_ms"] = latency_json(m);
  j["memory"] = {{"checked", false}};  // the files name no model to size
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (size_t i = 0; i < 2; ++i) {
    Pass p{i == 0 ? "prefill" : "decode", 0, 1, runs[i], o.batch};
    steps.push_back(step_json(p, true));
    steps.back().erase("tokens");
    steps.back().erase("kv_len");
    steps.back()["pipeline"] = files[i].first;
  }
  j["steps"] = steps;
  j["kv_cache_over_time"] = nlohmann::ordered_json::array();
  appendf(rec.summary, "%s + %s on %s: batch %d, %lld output tokens\nprefill %.1f us, decode step %.1f us\n"
                "TTFT %.3f ms  TPOT %.3f ms  end-to-end %.3f ms  %.1f output tokens/s\n",
                o.prefill_pipeline.c_str(), o.decode_pipeline.c_str(), cfg.name.c_str(), o.batch, static_cast<long long>(o.output),
                runs[0].ns / 1000, runs[1].ns / 1000, m.ttft_mean_ns / 1e6, m.tpot_ns / 1e6, m.e2e_mean_ns / 1e6, m.output_tokens_per_s);
  rec.report = std::move(j);
  return rec;
}


}  // namespace

ServingRecord serve(const std::string& model, const std::string& hw, const ServingOptions& o) {
  check_serving_options(o, "sim llm");
  ServeRequest r;
  static_cast<ServingOptions&>(r) = o;
  r.model = model;
  r.hw = hw;
  return run_static(r);
}

ServingRecord serve_point(const std::string& model, const std::vector<std::pair<std::string, std::string>>& options,
                          const std::string& hw, const std::vector<std::string>& overrides) {
  ServingOptions o;
  for (const auto& [k, v] : options) set_serving_option(o, k, v, "sweep", k);
  for (const std::string& kv : overrides) {  // serving.<option>=value, or a hardware key for --set
    const size_t eq = kv.find('=');
    if (kv.rfind("serving.", 0) == 0 && eq != std::string::npos)
      set_serving_option(o, kv.substr(8, eq - 8), kv.substr(eq + 1), "sweep", kv.substr(0, eq));
    else o.sets.push_back(kv);
  }
  return serve(model, hw, o);
}

nlohmann::ordered_json ServingRecord::sweep_metrics() const {
  nlohmann::ordered_json m;
  for (const ServingField& f : serving_sweep_fields()) m[f.name] = report.at(nlohmann::ordered_json::json_pointer(f.pointer));
  m["layers"] = nlohmann::ordered_json::array();
  return m;
}

}  // namespace npusim::llm
