// LLM serving (docs/llm.md): a batch of requests served as a prefill and decode steps with a
// growing KV cache, under the device's memory. SystemC-free arithmetic over step times that
// the caller simulates (sim/cli/run_llm.cpp): the memory plan, the KV lengths to simulate, the
// interpolation between them, and the serving metrics.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace npusim::llm {

// Bytes a model takes on one device of a tp x pp placement (weights split evenly; each device
// holds the K/V of its layers/pp layers and Hkv/tp heads).
struct ModelMemory {
  double weight_bytes = 0;           // parameters on one device
  double kv_bytes_per_token = 0;     // K and V of one token on one device
  double activation_bytes_per_token = 0;  // the largest transient of a layer per token (prefill)
};
struct ModelShape {
  int layers = 0, d = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
  int head_dim = 0;  // 0: d / heads
  // The exact count of the whole model (frontends/zoo parameter_count) and its part outside the
  // layers (embeddings, head, final norm); 0: Llama's layout counted from the shape.
  double parameters = 0, outside_layers = 0;
  int all_layers = 0;  // the layers `parameters` counts (layers may keep fewer)
  double expert_parameters = 0;  // of parameters: the routed experts' (mixture of experts)
  int latent_kv = 0;  // multi-head latent attention: elements cached per token and layer, on every tp rank
};
// One device's share with tp x pp (x ep: the experts over ep groups, each group attending 1/ep of
// the requests, so a request's KV cache and activations take 1/ep of a device on average).
ModelMemory model_memory(const ModelShape& m, double dtype_bytes, int tp, int pp, int ep = 1);

// How a static batch fits: requests of input + output tokens, each taking its KV cache in
// blocks of block_tokens (vLLM's paged blocks) for its whole life. A batch larger than what
// fits runs as waves of at most max_batch requests, one after the other.
struct BatchPlan {
  int batch = 0;          // requests asked for
  int max_batch = 0;      // the most that fit at once (0: not even one)
  int waves = 0;          // ceil(batch / max_batch)
  int per_wave = 0;       // requests per wave (the waves as even as they can be)
  double capacity_bytes = 0, weight_bytes = 0, kv_bytes_per_request = 0, activation_bytes = 0;
  bool fits() const { return max_batch >= 1; }
};
BatchPlan plan_batch(const ModelMemory& m, int batch, int64_t input, int64_t output, double capacity_bytes,
                     int block_tokens = 16);

// KV lengths at which to simulate decode steps whose KV lengths run first..last: both ends and
// evenly spaced points between, at most max_points.
std::vector<int64_t> bucket_points(int64_t first, int64_t last, int max_points);
// A step's time at KV length x by linear interpolation between simulated (kv, ns) points.
double interpolate(const std::vector<int64_t>& kv, const std::vector<double>& ns, double x);
// The sum of the interpolated step times over every integer KV length first..last.
double sum_interpolated(const std::vector<int64_t>& kv, const std::vector<double>& ns, int64_t first, int64_t last);

// Serving metrics of a static batch in waves: every wave takes prefill_ns, then output - 1
// decode steps (decode_total_ns together); wave k starts when wave k - 1 has finished.
struct Metrics {
  double ttft_mean_ns = 0, ttft_p50_ns = 0, ttft_p90_ns = 0, ttft_p99_ns = 0;
  double tpot_ns = 0;  // mean time per output token after the first
  double tpot_p50_ns = 0, tpot_p90_ns = 0, tpot_p99_ns = 0;  // over the requests (a request's: (finish - first) / (output - 1))
  double e2e_mean_ns = 0, e2e_p50_ns = 0, e2e_p90_ns = 0, e2e_p99_ns = 0;
  double total_ns = 0;            // the last request's end
  double output_tokens_per_s = 0; // every request's output tokens over total_ns
};
Metrics static_metrics(const BatchPlan& plan, int64_t output, double prefill_ns, double decode_total_ns);

// The p-th percentile (0..100) of values, nearest rank.
double percentile(std::vector<double> values, double p);

// ---- continuous batching (docs/llm.md#continuous-batching) ----

struct Request {
  double arrival_ns = 0;
  int64_t input = 0, output = 0;
  // Disaggregated serving's decode pool: the prompt's KV cache arrives with the request (its
  // first token already out); admitted straight into decoding, no prefill step.
  bool prefilled = false;
};
// n requests arriving as a Poisson process of `rate_per_s` (exponential gaps drawn from a 64-bit
// Mersenne twister seeded with `seed`, inverted by hand so any platform draws the same), each of
// input + output tokens; the first arrives at 0.
std::vector<Request> poisson_requests(int n, double rate_per_s, int64_t input, int64_t output, uint64_t seed);

// A scheduler step's time: a prefill of `requests` prompts of `tokens` tokens together, or a
// decode step of `batch` requests whose KV lengths average kv_mean.
struct StepCost {
  std::function<double(int64_t tokens, int requests)> prefill_ns;
  std::function<double(int batch, double kv_mean)> decode_ns;
  // Chunked prefill: one step of `prompt_tokens` prompt tokens (chunks of one or more prompts)
  // beside `decodes` requests decoding one token each, their KV lengths averaging kv_mean.
  std::function<double(int64_t prompt_tokens, int decodes, double kv_mean)> mixed_ns;
  // The device's power during a step holding `prompt_tokens` prompt tokens (prefill or mixed)
  // and during a decode-only step of `batch` requests (docs/energy.md#serving); unset: energy not
  // modelled.
  std::function<double(int64_t prompt_tokens)> prompt_power_w;
  std::function<double(int batch)> decode_power_w;
  // With virtual engines (SchedulerOptions::virtual_engines > 1): the pipeline stages a step
  // passes through, as shares of its time (summing to 1), for steps holding prompt tokens and
  // for decode-only steps. Empty: one stage.
  std::vector<double> prompt_stage_shares, decode_stage_shares;
};
struct SchedulerOptions {
  int64_t max_batch_tokens = 8192;  // prompt tokens one prefill step may take (vLLM's max_num_batched_tokens)
  int max_seqs = 256;               // requests running at once (vLLM's max_num_seqs)
  double kv_capacity_bytes = 0;     // what the KV cache may take on the device
  double kv_bytes_per_token = 0;
  int block_tokens = 16;            // paged blocks: a request reserves ceil((input + output) / 16) of them
  // vLLM v1 / Sarathi-Serve: every step takes max_batch_tokens tokens at most, the running
  // decodes first, then chunks of prompts (cost.mixed_ns); a prompt may span several steps.
  bool chunked_prefill = false;
  // vLLM's allocation (docs/llm.md#preemption): a request takes the blocks of its prompt when
  // admitted and one more whenever its last block is full; when a decode step's blocks do not
  // fit, the newest running request is preempted - its blocks freed, and later its prompt and the
  // tokens it had generated prefilled again (recompute), before any new arrival. With
  // chunked_prefill, a chunk is as long as the free blocks allow; when prompts in progress hold
  // every block and nothing can run, the newest is preempted.
  bool on_demand_blocks = false;
  // vLLM's pipeline parallelism (docs/llm.md#virtual-engines): this many schedulers, each with
  // 1/V of the KV cache and the requests given to it on arrival (to the one with the fewest
  // unfinished), whose steps flow through the stages of StepCost::*_stage_shares at once; an
  // engine plans its next step when its last one has left the last stage. 1: one scheduler,
  // a step at a time.
  int virtual_engines = 1;
};
struct RequestResult {
  double arrival_ns = 0, first_token_ns = 0, finish_ns = 0;
  int64_t output = 0;
};
struct ContinuousResult {
  std::vector<RequestResult> requests;  // in arrival order
  std::vector<std::pair<double, double>> kv_bytes_over_time;  // (t, bytes reserved) after each step
  std::vector<std::pair<double, int>> tokens_out;  // (t, output tokens the step produced), per step
  std::vector<std::pair<double, double>> step_spans;  // (start, end) of each step on the device (its last stage's, with stages)
  int prefill_steps = 0, decode_steps = 0;
  int mixed_steps = 0;  // chunked prefill: steps holding prompt tokens (with or without decodes)
  int preemptions = 0;  // on_demand_blocks: requests preempted (each recomputed later)
  double peak_kv_bytes = 0;
  int peak_running = 0;
  double busy_ns = 0, busy_energy_j = 0;  // every step's time, and its time x power (StepCost::*_power_w)
};
// vLLM's scheduler (sim/llm/scheduler.cpp). Without preemption: whenever requests wait and
// their blocks fit, a prefill step takes them in arrival order (up to max_batch_tokens prompt
// tokens and max_seqs running); otherwise every running request decodes one token. With
// chunked_prefill, each step first decodes every running request, then spends what is left of
// max_batch_tokens on prompt chunks: the prompt already begun, then new requests in arrival
// order; a request's first token comes with the step that ends its prompt. A request reserves
// its whole life's blocks when admitted and frees them when its last token is out; with
// on_demand_blocks as vLLM's block manager does. InputError when a request can never fit.
ContinuousResult serve_continuous(const std::vector<Request>& requests, const SchedulerOptions& opt, const StepCost& cost);
Metrics continuous_metrics(const ContinuousResult& r);

}  // namespace npusim::llm

// ---- serving options (docs/llm.md), declared once ----
namespace npusim::llm {

// What `sim llm`, llm::serve(), a sweep's `llm:` workload and Python set: a field each, its
// default here; serving_options() declares each one's name, type, range and meaning, and from
// that table come the CLI flags (--name with dashes), the sweep keys (serving.<name>) and the
// checks every caller gets.
struct ServingOptions {
  int batch = 1;
  int64_t input = 128, output = 128;
  std::string dtype = "fp16";
  int layers = 0;
  int buckets = 4;
  int tp = 1, pp = 1;
  int ep = 1;               // mixture of experts: expert-parallel groups (docs/system.md#expert-parallelism)
  double expert_skew = 1;   // mixture of experts: the busiest expert's tokens over the mean
  int microbatches = 1;
  double arrival_rate = 0;
  int requests = 100;
  int64_t seed = 1;
  std::string trace;
  double trace_scale = 1;
  int64_t max_batch_tokens = 8192;
  int max_seqs = 256;
  bool chunked_prefill = false;
  bool preempt = false;
  int virtual_engines = 0;
  double rope_scaling = 1;  // a rotary model's context stretched this many times (RoPE scaling)
  // Disaggregated serving (docs/llm.md#disaggregated-serving): a system's devices for prefills
  // and for decodes ("0-3", "4,6"); empty: co-located.
  std::string prefill_devices, decode_devices;
  int prefill_tp = 0, decode_tp = 0;  // tensor-parallel devices per replica of each pool (0: tp)
  // Not options of the table: a runtime's own passes instead of a zoo model, and hardware
  // overrides (key=value, as --set).
  std::string prefill_pipeline, decode_pipeline;
  std::vector<std::string> sets;
};

enum class OptionType { Int, Number, Bool, Text };
struct ServingOption {
  const char* name;
  OptionType type;
  std::variant<int ServingOptions::*, int64_t ServingOptions::*, double ServingOptions::*, bool ServingOptions::*,
               std::string ServingOptions::*>
      member;
  double lo = 0, hi = 0;  // Int and Number: the allowed range
  const char* meaning = "";
  std::string default_value() const;  // the text of ServingOptions{}'s value
  std::string value_of(const ServingOptions& o) const;
  std::string flag() const;  // its `sim llm` flag: "--" and the name with dashes
};
const std::vector<ServingOption>& serving_options();
const ServingOption* find_serving_option(const std::string& name);
// Checks a value's text against the option's type and range: an empty string when it fits,
// else why not.
std::string serving_value_error(const ServingOption& o, const std::string& value);
// Sets option `name` from its text; InputError(source, where, ...) when it is unknown, of the
// wrong type or out of range.
void set_serving_option(ServingOptions& o, const std::string& name, const std::string& value, const std::string& source,
                        const std::string& where);
// Every option of o within its range; InputError naming the option's flag (--name) otherwise.
void check_serving_options(const ServingOptions& o, const std::string& source);

// The option table as Markdown (docs/llm.md#options; `sim config --serving-options`).
std::string serving_options_markdown();

// The columns of a serving sweep's rows, each read from `sim llm`'s JSON report at its pointer.
struct ServingField {
  const char* name;
  const char* unit;
  const char* pointer;  // JSON pointer into the report
};
const std::vector<ServingField>& serving_sweep_fields();

}  // namespace npusim::llm
