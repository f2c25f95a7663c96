// `sim llm MODEL --hw H --batch B --input L --output G` (docs/llm.md): a static batch served as
// a prefill and G - 1 decode steps with the KV cache growing by one token per step, on one GPU
// or NPU config, or on a system as a tp x pp pipeline (each pass a zoo pipeline, sim/run/system_run.h). The prefill and decode steps at a few KV lengths are simulated on the device's
// model (each in a forked child: SystemC elaborates once per process); the other steps are
// interpolated between them, and one more point checks the interpolation. The batch must fit
// the device's memory with its KV cache, or it runs in waves.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "frontends/zoo/zoo.h"
#include "sim/cli/commands.h"
#include "sim/config/system_config.h"
#include "sim/ir/dtype.h"
#include "sim/ir/error.h"
#include "sim/llm/serving.h"
#include "frontends/pipeline/pipeline_reader.h"
#include "sim/run/device_run.h"
#include "sim/run/system_run.h"
#include "sim/sweep/runner.h"

namespace npusim::cli {

namespace {

struct LlmCliOptions {
  std::string model, hw, dtype, report;
  std::vector<std::string> sets;
  int batch = 1, layers = 0, buckets = 4, tp = 1, pp = 1;
  int64_t input = 128, output = 128;
  bool quiet = false;
};

// One simulated pass: a prefill (kv_len 0, seq = input) or a decode step (seq 1).
struct Pass {
  std::string phase;
  int64_t kv_len = 0, seq = 1;
  run::DeviceRun run;
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

int run_llm_cmd(const LlmCliOptions& o) {
  const auto shape = frontends::zoo::transformer_shape(o.model);
  if (!shape || shape->family == "bert")
    throw InputError("sim llm", "model", "'" + o.model + "' is not a decoder LLM of the zoo (gpt2*, gpt3*, llama2*)");
  if (o.input < 1 || o.output < 1 || o.input + o.output > (1 << 20))
    throw InputError("sim llm", "--input/--output", "input and output tokens must be at least 1, together at most 2^20");
  if (o.buckets < 2 || o.buckets > 64) throw InputError("sim llm", "--buckets", "must be in 2..64");
  // A system: the model as a tp x pp pipeline (docs/system.md#zoo-pipelines) on its devices.
  const bool on_system = config::is_system_config(o.hw);
  std::optional<config::SystemConfig> sys_cfg;
  config::HwConfig hw;
  if (on_system) {
    if (!o.sets.empty()) throw InputError("sim llm", "--set", "--set applies to a device config; edit the system's device configs");
    sys_cfg = config::SystemConfig::load(o.hw);
    if (int64_t{o.tp} * o.pp > static_cast<int64_t>(sys_cfg->devices.size()))
      throw InputError(o.hw, "system.devices", "--tp " + std::to_string(o.tp) + " x --pp " + std::to_string(o.pp) + " devices, but the system has " +
                                                   std::to_string(sys_cfg->devices.size()));
    hw = sys_cfg->devices.front().hw;
  } else {
    if (o.tp != 1 || o.pp != 1) throw InputError("sim llm", "--tp", "--tp and --pp need a system config (docs/system.md)");
    hw = config::HwConfig::load(o.hw, o.sets);
  }
  const int devices = o.tp * o.pp;
  const bool gpu = hw.get_string("device") == "gpu";
  const ir::DType dt = frontends::zoo::zoo_dtype(o.dtype, ir::DType::Float16, "sim llm", true);
  const int layers = o.layers == 0 ? shape->layers : o.layers;
  if (o.layers < 0 || o.layers > shape->layers)
    throw InputError("sim llm", "--layers", o.model + " has " + std::to_string(shape->layers) + " layers; got " + std::to_string(o.layers));

  // ---- memory: how many requests fit at once ----
  llm::ModelShape ms{layers, shape->d, shape->heads, shape->kv_heads, shape->ffn, shape->vocab};
  const llm::ModelMemory mem = llm::model_memory(ms, static_cast<double>(ir::dtype_bytes(dt)), o.tp, o.pp);
  const double capacity = gpu ? hw.get_double("gpu.hbm.capacity_gib") * (1 << 30) : hw.get_double("memory.dram.capacity_gib") * (1 << 30);
  const llm::BatchPlan plan = llm::plan_batch(mem, o.batch, o.input, o.output, capacity);
  const std::string cap_key = gpu ? "gpu.hbm.capacity_gib" : "memory.dram.capacity_gib";
  if (!plan.fits())
    throw InputError(hw.source(), cap_key,
                     "one request of " + std::to_string(o.input) + " + " + std::to_string(o.output) + " tokens does not fit: " +
                         fmt("%.2f", mem.weight_bytes / (1 << 30)) + " GiB of weights + " + fmt("%.3f", plan.kv_bytes_per_request / (1 << 30)) +
                         " GiB of KV cache and its activations exceed " + fmt("%.2f", capacity / (1 << 30)) + " GiB");

  // ---- the passes to simulate ----
  std::vector<Pass> passes;
  passes.push_back({"prefill", 0, o.input, {}});
  std::vector<int64_t> kv;
  if (o.output >= 2) kv = llm::bucket_points(o.input, o.input + o.output - 2, o.buckets);
  for (int64_t k : kv) passes.push_back({"decode", k, 1, {}});
  // The interpolation's check: the middle of the widest gap between simulated points.
  int64_t check = -1, widest = 1;
  for (size_t i = 1; i < kv.size(); ++i)
    if (kv[i] - kv[i - 1] > widest) widest = kv[i] - kv[i - 1], check = (kv[i] + kv[i - 1]) / 2;
  if (check >= 0) passes.push_back({"check", check, 1, {}});

  run::DeviceRunOptions ro;  // the serving stack: fused kernels, CUDA graphs
  sweep::PoolOptions pool;
  pool.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string failure;
  sweep::run_forked(
      passes.size(), pool,
      [&](size_t i) {
        frontends::zoo::ZooOptions z;
        z.model = o.model;
        z.batch = plan.per_wave;
        z.dtype = o.dtype;
        z.seq = static_cast<int>(passes[i].seq);
        z.kv_len = static_cast<int>(passes[i].kv_len);
        z.layers = layers;
        if (!on_system) return run::simulate_on_device(frontends::zoo::make_transformer(z), hw, ro).to_text();
        const std::string text = frontends::zoo::make_parallel_pipeline(z, o.tp, o.pp).dump();
        const ir::System sys = frontends::pipeline::read_pipeline_text(text, o.model + " tp" + std::to_string(o.tp) + " pp" + std::to_string(o.pp), ".");
        const run::SystemRun sr = run::simulate_pipeline(sys, *sys_cfg, ro);
        run::DeviceRun r;  // the pass's makespan; device 0's compute and collectives
        r.ns = sr.sim.makespan_ns;
        r.by_class_ns["compute"] = sr.sim.devices.front().busy_ns;
        r.by_class_ns["communication"] = sr.sim.devices.front().comm_ns;
        return r.to_text();
      },
      [&](const sweep::TaskOutcome& out) {
        if (!out.ok) {
          if (failure.empty()) failure = passes[out.index].phase + " at KV length " + std::to_string(passes[out.index].kv_len) + ": " + out.payload;
          return;
        }
        passes[out.index].run = run::DeviceRun::from_text(out.payload);
      });
  if (!failure.empty()) throw InputError("sim llm", o.model, "simulating the " + failure);

  // ---- the metrics ----
  std::vector<double> step_ns;
  for (const Pass& p : passes)
    if (p.phase == "decode") step_ns.push_back(p.run.ns);
  const double decode_total = kv.empty() ? 0 : llm::sum_interpolated(kv, step_ns, o.input, o.input + o.output - 2);
  const llm::Metrics m = llm::static_metrics(plan, o.output, passes[0].run.ns, decode_total);

  nlohmann::ordered_json j;
  j["workload"] = {{"model", o.model}, {"batch", o.batch}, {"input_tokens", o.input}, {"output_tokens", o.output},
                   {"dtype", ir::dtype_name(dt)}, {"layers", layers}, {"batching", "static"}};
  j["hardware"] = {{"name", on_system ? sys_cfg->name : hw.get_string("name")}, {"source", on_system ? sys_cfg->source : hw.source()},
                   {"device", gpu ? "gpu" : "npu"}, {"devices", devices}, {"tp", o.tp}, {"pp", o.pp}};
  j["totals"] = {{"device", on_system ? "system" : gpu ? "gpu" : "npu"},
                 {"time_us", m.total_ns / 1000},
                 {"ttft_ms", m.ttft_mean_ns / 1e6},
                 {"tpot_ms", m.tpot_ns / 1e6},
                 {"e2e_ms", m.e2e_mean_ns / 1e6},
                 {"output_tokens_per_s", m.output_tokens_per_s},
                 {"output_tokens_per_s_per_device", m.output_tokens_per_s / devices}};
  j["latency_ms"] = {{"ttft", {{"mean", m.ttft_mean_ns / 1e6}, {"p50", m.ttft_p50_ns / 1e6}, {"p90", m.ttft_p90_ns / 1e6}, {"p99", m.ttft_p99_ns / 1e6}}},
                     {"e2e", {{"mean", m.e2e_mean_ns / 1e6}, {"p50", m.e2e_p50_ns / 1e6}, {"p90", m.e2e_p90_ns / 1e6}, {"p99", m.e2e_p99_ns / 1e6}}}};
  const double gib = 1 << 30;
  j["memory"] = {{"capacity_gib", capacity / gib}, {"weights_gib", mem.weight_bytes / gib},
                 {"kv_cache_gib_per_request", plan.kv_bytes_per_request / gib}, {"prefill_activations_gib", plan.activation_bytes / gib},
                 {"max_batch", plan.max_batch}, {"waves", plan.waves}, {"requests_per_wave", plan.per_wave},
                 {"split", plan.waves > 1}};
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const Pass& p : passes) {
    nlohmann::ordered_json s = {{"phase", p.phase}, {"kv_len", p.kv_len}, {"tokens", p.seq * plan.per_wave}, {"time_us", p.run.ns / 1000}};
    if (!p.run.by_class_ns.empty()) {
      nlohmann::ordered_json c = nlohmann::ordered_json::object();
      for (const auto& [k, v] : p.run.by_class_ns) c[k + "_us"] = v / 1000;
      s[on_system ? "device0_us" : "kernel_us_by_class"] = c;
    }
    steps.push_back(s);
  }
  j["steps"] = steps;
  if (check >= 0) {
    const double sim = passes.back().run.ns, interp = llm::interpolate(kv, step_ns, static_cast<double>(check));
    j["interpolation"] = {{"simulated_kv_lens", kv.size()}, {"check_kv_len", check}, {"simulated_us", sim / 1000},
                          {"interpolated_us", interp / 1000}, {"error_pct", 100 * (interp - sim) / sim}};
  }
  // KV cache in use over one wave: after the prefill, then at each simulated decode point.
  nlohmann::ordered_json occ = nlohmann::ordered_json::array();
  const double per_token = mem.kv_bytes_per_token * plan.per_wave;
  occ.push_back({{"t_ms", passes[0].run.ns / 1e6}, {"gib", per_token * static_cast<double>(o.input) / gib}});
  for (int64_t k : kv)
    occ.push_back({{"t_ms", (passes[0].run.ns + llm::sum_interpolated(kv, step_ns, o.input, k)) / 1e6},
                   {"gib", per_token * static_cast<double>(k + 1) / gib}});
  j["kv_cache_over_time"] = occ;

  if (!o.quiet) {
    std::printf("%s on %s%s: batch %d, %lld input + %lld output tokens, %s%s\n", o.model.c_str(),
                (on_system ? sys_cfg->name : hw.get_string("name")).c_str(),
                on_system ? (" (tp " + std::to_string(o.tp) + " x pp " + std::to_string(o.pp) + ")").c_str() : "", o.batch,
                static_cast<long long>(o.input), static_cast<long long>(o.output), ir::dtype_name(dt),
                layers != shape->layers ? (", first " + std::to_string(layers) + " layers").c_str() : "");
    std::printf("memory per device: %.2f GiB weights + %.3f GiB KV cache per request of %.2f GiB: at most %d at once",
                mem.weight_bytes / gib, plan.kv_bytes_per_request / gib, capacity / gib, plan.max_batch);
    if (plan.waves > 1) std::printf(" -> %d waves of up to %d requests", plan.waves, plan.per_wave);
    std::printf("\n\n  %-8s %10s %12s\n", "phase", "kv_len", "time_us");
    for (const Pass& p : passes) std::printf("  %-8s %10lld %12.1f\n", p.phase.c_str(), static_cast<long long>(p.kv_len), p.run.ns / 1000);
    if (check >= 0)
      std::printf("  (decode steps between the simulated KV lengths are interpolated; at %lld: %+.2f%%)\n", static_cast<long long>(check),
                  j["interpolation"]["error_pct"].get<double>());
    std::printf("\nTTFT %.3f ms (p99 %.3f)  TPOT %.3f ms  end-to-end %.3f ms (p99 %.3f)  %.1f output tokens/s\n", m.ttft_mean_ns / 1e6,
                m.ttft_p99_ns / 1e6, m.tpot_ns / 1e6, m.e2e_mean_ns / 1e6, m.e2e_p99_ns / 1e6, m.output_tokens_per_s);
  }
  if (!o.report.empty()) write_output(o.report, j.dump(2) + "\n");
  return kOk;
}

}  // namespace

std::function<int()> add_llm_command(CLI::App& app) {
  auto o = std::make_shared<LlmCliOptions>();
  auto* cmd = app.add_subcommand("llm", "serve a static batch of LLM requests: prefill, then decode steps with a growing KV cache; "
                                        "TTFT, TPOT, tokens/s (docs/llm.md)");
  cmd->add_option("model", o->model, "gpt2*, gpt3*, llama2-7b, llama2-13b, llama2-70b")->required();
  cmd->add_option("--hw", o->hw, "GPU or NPU config, or a system (with --tp / --pp)")->required();
  cmd->add_option("--tp", o->tp, "system: tensor-parallel ranks (llama2*)")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--pp", o->pp, "system: pipeline stages (llama2*)")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--set", o->sets, "override a hardware parameter (repeatable)");
  cmd->add_option("--batch", o->batch, "requests, all starting together")->check(CLI::Range(1, 65536))->capture_default_str();
  cmd->add_option("--input", o->input, "prompt tokens per request")->capture_default_str();
  cmd->add_option("--output", o->output, "output tokens per request (the first comes from the prefill)")->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "fp16 (default), bf16, fp32, fp8");
  cmd->add_option("--layers", o->layers, "keep the first K layers (0: all)");
  cmd->add_option("--buckets", o->buckets, "decode steps simulated at this many KV lengths; the others interpolated")->capture_default_str();
  cmd->add_option("--report", o->report, "write the report as JSON");
  cmd->add_flag("-q,--quiet", o->quiet, "no table on stdout");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_llm_cmd(*o);
  };
}

}  // namespace npusim::cli
