// Serving arithmetic (docs/llm.md): memory plan, KV buckets and their interpolation, metrics,
// each against a case computed by hand.
#include <gtest/gtest.h>

#include <set>

#include "sim/ir/error.h"
#include "sim/llm/serving.h"

using namespace npusim::llm;

namespace {

// Llama-2-7B: 32 layers, d 4096, 32 heads (no GQA), FFN 11008, vocab 32000.
const ModelShape kLlama7b{32, 4096, 32, 32, 11008, 32000};

TEST(LlmServing, Llama7bMemoryByHand) {
  const ModelMemory m = model_memory(kLlama7b, 2, 1, 1);
  // Per layer 2 d^2 + 2 d (32 x 128) + 3 d x 11008 + 2 d = 202,383,360; x 32 + 2 x 32000 x 4096 + 4096
  // = 6,738,415,616 parameters x 2 bytes.
  EXPECT_DOUBLE_EQ(m.weight_bytes, 6738415616.0 * 2);
  // K and V of one token: 2 x 32 layers x 32 heads x 128 x 2 bytes = 524,288 (0.5 MiB).
  EXPECT_DOUBLE_EQ(m.kv_bytes_per_token, 524288);
  // TP 4 x PP 2: a quarter of the heads and half the layers per device.
  const ModelMemory s = model_memory(kLlama7b, 2, 4, 2);
  EXPECT_DOUBLE_EQ(s.kv_bytes_per_token, 524288.0 / 8);
  EXPECT_DOUBLE_EQ(s.weight_bytes, 6738415616.0 * 2 / 8);
}

TEST(LlmServing, ABatchThatDoesNotFitRunsInEvenWaves) {
  ModelMemory m;
  m.weight_bytes = 10e9, m.kv_bytes_per_token = 1e6, m.activation_bytes_per_token = 0;
  // 30 GB of room; 1000 + 24 = 1024 tokens (64 blocks of 16) = 1.024 GB per request: 29 fit.
  const BatchPlan p = plan_batch(m, 64, 1000, 24, 40e9);
  EXPECT_DOUBLE_EQ(p.kv_bytes_per_request, 1024e6);
  EXPECT_EQ(p.max_batch, 29);
  EXPECT_EQ(p.waves, 3);
  EXPECT_EQ(p.per_wave, 22);  // 64 in 3 waves: 22, 22, 20
  // A request's 1001 + 24 tokens take 65 blocks: paged blocks round up.
  EXPECT_DOUBLE_EQ(plan_batch(m, 1, 1001, 24, 40e9).kv_bytes_per_request, 65 * 16 * 1e6);
  // Weights alone beyond the capacity: nothing fits.
  EXPECT_FALSE(plan_batch(m, 1, 10, 10, 9e9).fits());
  // All fit: one wave.
  const BatchPlan one = plan_batch(m, 8, 1000, 24, 40e9);
  EXPECT_EQ(one.waves, 1);
  EXPECT_EQ(one.per_wave, 8);
}

TEST(LlmServing, BucketsCoverBothEndsAndInterpolateExactlyOnLines) {
  EXPECT_EQ(bucket_points(100, 100, 4), (std::vector<int64_t>{100}));
  EXPECT_EQ(bucket_points(100, 102, 8), (std::vector<int64_t>{100, 101, 102}));
  EXPECT_EQ(bucket_points(0, 9, 4), (std::vector<int64_t>{0, 3, 6, 9}));
  // A step time linear in the KV length is summed exactly: f(x) = 1000 + 2x over 0..9 is
  // 10 x 1000 + 2 x 45 = 10,090.
  const std::vector<int64_t> kv{0, 3, 6, 9};
  const std::vector<double> ns{1000, 1006, 1012, 1018};
  EXPECT_DOUBLE_EQ(sum_interpolated(kv, ns, 0, 9), 10090);
  EXPECT_DOUBLE_EQ(interpolate(kv, ns, 4.5), 1009);
  // Piecewise: 0..2 at 0, 2..4 rising to 4: points 0,0,0,2,4 sum to 6.
  EXPECT_DOUBLE_EQ(sum_interpolated({0, 2, 4}, {0, 0, 4}, 0, 4), 6);
}

TEST(LlmServing, StaticWavesByHand) {
  BatchPlan p;
  p.batch = 5, p.max_batch = 2, p.waves = 3, p.per_wave = 2;
  // Each wave: prefill 10 ms, then 3 decode steps of 1 ms each (output 4 tokens).
  const Metrics m = static_metrics(p, 4, 10e6, 3e6);
  // Waves start at 0, 13, 26 ms: TTFT 10, 10, 23, 23, 36 ms; end 13, 13, 26, 26, 39 ms.
  EXPECT_DOUBLE_EQ(m.ttft_mean_ns, (10 + 10 + 23 + 23 + 36) * 1e6 / 5);
  EXPECT_DOUBLE_EQ(m.ttft_p50_ns, 23e6);
  EXPECT_DOUBLE_EQ(m.ttft_p99_ns, 36e6);
  EXPECT_DOUBLE_EQ(m.tpot_ns, 1e6);
  EXPECT_DOUBLE_EQ(m.e2e_mean_ns, (13 + 13 + 26 + 26 + 39) * 1e6 / 5);
  EXPECT_DOUBLE_EQ(m.total_ns, 39e6);
  EXPECT_DOUBLE_EQ(m.output_tokens_per_s, 5 * 4 / 39e-3);
}

}  // namespace

namespace {

// Prefill: 1 ms per prompt; decode: 0.5 ms per step, whatever the batch.
StepCost fixed_costs() {
  StepCost c;
  c.prefill_ns = [](int64_t, int requests) { return 1e6 * requests; };
  c.decode_ns = [](int, double) { return 0.5e6; };
  return c;
}

TEST(LlmContinuous, PrefillFirstSchedulerByHand) {
  SchedulerOptions o;
  o.kv_capacity_bytes = 1e12, o.kv_bytes_per_token = 1;
  // Two requests at 0, one at 5 ms; 10 prompt tokens, 3 output tokens each.
  const std::vector<Request> reqs{{0, 10, 3}, {0, 10, 3}, {5e6, 10, 3}};
  const ContinuousResult r = serve_continuous(reqs, o, fixed_costs());
  // 0-2 ms: both prefill (first tokens at 2); decodes end at 2.5 and 3 (both done at 3).
  // Idle to 5; the third prefills to 6 and decodes to 7.
  EXPECT_DOUBLE_EQ(r.requests[0].first_token_ns, 2e6);
  EXPECT_DOUBLE_EQ(r.requests[1].finish_ns, 3e6);
  EXPECT_DOUBLE_EQ(r.requests[2].first_token_ns, 6e6);
  EXPECT_DOUBLE_EQ(r.requests[2].finish_ns, 7e6);
  EXPECT_EQ(r.prefill_steps, 2);
  EXPECT_EQ(r.decode_steps, 4);
  const Metrics m = continuous_metrics(r);
  EXPECT_DOUBLE_EQ(m.ttft_mean_ns, (2e6 + 2e6 + 1e6) / 3);
  EXPECT_DOUBLE_EQ(m.tpot_ns, 0.5e6);
  EXPECT_DOUBLE_EQ(m.total_ns, 7e6);
  EXPECT_DOUBLE_EQ(m.output_tokens_per_s, 9 / 7e-3);
}

// Disaggregated decode pool: requests that bring their KV cache join the decodes at once, no
// prefill step. A (10 in, 3 out) at 0 and B (10 in, 2 out) at 0.7 ms; decode steps of 0.5 ms:
//   0-0.5: A decodes (its 2nd token); 0.5-1.0: A (3rd, done) - B waits for the step's end;
//   1.0-1.5: B decodes (its 2nd, done).
TEST(LlmContinuous, PrefilledRequestsJoinTheDecodesWithoutAPrefill) {
  SchedulerOptions o;
  o.kv_capacity_bytes = 1e12, o.kv_bytes_per_token = 1;
  const std::vector<Request> reqs{{0, 10, 3, true}, {0.7e6, 10, 2, true}};
  const ContinuousResult r = serve_continuous(reqs, o, fixed_costs());
  EXPECT_EQ(r.prefill_steps, 0);
  EXPECT_EQ(r.decode_steps, 3);
  EXPECT_DOUBLE_EQ(r.requests[0].finish_ns, 1e6);
  EXPECT_DOUBLE_EQ(r.requests[1].finish_ns, 1.5e6);
}

// Chunked prefill by hand: a step of p prompt tokens and d decodes takes p + 10 d ns; a step
// holds 5 tokens. A (6 in, 3 out) and B (4 in, 2 out) arrive at 0:
//   step 1: A's first 5 prompt tokens                      -> t = 5
//   step 2: A's last token (first token of A), B's 4 (B's) -> t = 10
//   step 3: A and B decode                                 -> t = 30, B done (2 tokens)
//   step 4: A decodes                                      -> t = 40, A done
TEST(LlmContinuous, ChunkedPrefillDecodesFirstThenChunksPromptsByHand) {
  SchedulerOptions o;
  o.kv_capacity_bytes = 1e12, o.kv_bytes_per_token = 1;
  o.max_batch_tokens = 5;
  o.chunked_prefill = true;
  StepCost c = fixed_costs();
  std::vector<std::pair<int64_t, int>> steps;
  c.mixed_ns = [&](int64_t prompt, int decodes, double) {
    steps.push_back({prompt, decodes});
    return static_cast<double>(prompt + 10 * decodes);
  };
  const std::vector<Request> reqs{{0, 6, 3}, {0, 4, 2}};
  const ContinuousResult r = serve_continuous(reqs, o, c);
  EXPECT_EQ(steps, (std::vector<std::pair<int64_t, int>>{{5, 0}, {5, 0}, {0, 2}, {0, 1}}));
  EXPECT_DOUBLE_EQ(r.requests[0].first_token_ns, 10);
  EXPECT_DOUBLE_EQ(r.requests[1].first_token_ns, 10);
  EXPECT_DOUBLE_EQ(r.requests[1].finish_ns, 30);
  EXPECT_DOUBLE_EQ(r.requests[0].finish_ns, 40);
  EXPECT_EQ(r.mixed_steps, 2);
  EXPECT_EQ(r.decode_steps, 2);
  // A prompt longer than a step's budget is fine: it spans steps (12 tokens, budget 5: 3 steps).
  const ContinuousResult l = serve_continuous({{0, 12, 1}}, o, c);
  EXPECT_DOUBLE_EQ(l.requests[0].first_token_ns, 12);
  EXPECT_EQ(l.mixed_steps, 3);
}

TEST(LlmContinuous, AFullKvCacheHoldsRequestsBack) {
  SchedulerOptions o;
  o.kv_bytes_per_token = 1;
  o.kv_capacity_bytes = 16;  // one block of 16 tokens: one request of 10 + 3 at a time
  const std::vector<Request> reqs{{0, 10, 3}, {0, 10, 3}};
  const ContinuousResult r = serve_continuous(reqs, o, fixed_costs());
  // The first runs 0-1 (prefill), 1-2 (two decodes); the second is admitted at 2: 2-3, 3-4.
  EXPECT_DOUBLE_EQ(r.requests[0].finish_ns, 2e6);
  EXPECT_DOUBLE_EQ(r.requests[1].first_token_ns, 3e6);
  EXPECT_DOUBLE_EQ(r.requests[1].finish_ns, 4e6);
  EXPECT_EQ(r.peak_running, 1);
  EXPECT_DOUBLE_EQ(r.peak_kv_bytes, 16);
}

// vLLM's virtual engines, by hand (docs/llm.md#virtual-engines): two schedulers over two stages
// that each take half of a step (prefill 1 ms a request, decode 0.5 ms). A and B (10 in, 3 out)
// arrive at 0: A to engine 0, B to engine 1 (fewer unfinished).
//   e0 prefills A: stage 0 0-0.5, stage 1 0.5-1        -> A's first token at 1
//   e1 prefills B: stage 0 0.5-1 (after A), stage 1 1-1.5 -> B's first token at 1.5
//   e0 decodes A: stage 0 1-1.25, stage 1 1.5-1.75 (after B); again 1.75-2, 2-2.25: done at 2.25
//   e1 decodes B: 1.5-1.75, 1.75-2; again 2-2.25, 2.25-2.5: done at 2.5
// One engine, a step at a time: both prefill 0-2 and decode to 3.
TEST(LlmContinuous, VirtualEnginesPipelineStepsThroughTheStagesByHand) {
  SchedulerOptions o;
  o.kv_capacity_bytes = 1e12, o.kv_bytes_per_token = 1;
  o.virtual_engines = 2;
  StepCost c = fixed_costs();
  c.prompt_stage_shares = c.decode_stage_shares = {0.5, 0.5};
  const std::vector<Request> reqs{{0, 10, 3}, {0, 10, 3}};
  const ContinuousResult r = serve_continuous(reqs, o, c);
  EXPECT_DOUBLE_EQ(r.requests[0].first_token_ns, 1e6);
  EXPECT_DOUBLE_EQ(r.requests[1].first_token_ns, 1.5e6);
  EXPECT_DOUBLE_EQ(r.requests[0].finish_ns, 2.25e6);
  EXPECT_DOUBLE_EQ(r.requests[1].finish_ns, 2.5e6);
  EXPECT_EQ(r.prefill_steps, 2);
  EXPECT_EQ(r.decode_steps, 4);
  EXPECT_EQ(r.peak_running, 2);
  o.virtual_engines = 1;  // the shares do not matter to one engine
  const ContinuousResult one = serve_continuous(reqs, o, c);
  EXPECT_DOUBLE_EQ(one.requests[0].first_token_ns, 2e6);
  EXPECT_DOUBLE_EQ(one.requests[1].finish_ns, 3e6);
  // Each engine has half the cache: a request that fits the whole cache but not half is refused.
  o.kv_capacity_bytes = 26, o.virtual_engines = 1;  // 10 + 3 tokens take one block of 16
  EXPECT_NO_THROW(serve_continuous(reqs, o, c));
  o.virtual_engines = 2;
  EXPECT_THROW(serve_continuous(reqs, o, c), npusim::InputError);
}

// vLLM's on-demand blocks with recompute preemption, by hand: blocks of 4 tokens, room for 3.
// A and B (4 prompt tokens, 6 output tokens each) arrive at 0; whole-life reservation would run
// them one after the other (10 tokens = 3 blocks each).
//   prefill A and B (1 block each)                          -> t = 2 ms, both first tokens
//   decode: A and B each need a 2nd block (4 > 3): B, the newest, is preempted; A decodes -> 2.5
//   B's recompute needs blocks for 4 + 1 tokens and its next: 2; only 1 free until A ends
//   A decodes at 3, 3.5, 4, 4.5 (its 3rd block at kv 9 fits): A done at 4.5
//   B: prefill of 5 tokens -> 5.5 (its 2nd token), decodes at 6, 6.5, 7, 7.5: done at 7.5
TEST(LlmContinuous, OnDemandBlocksPreemptTheNewestAndRecomputeItByHand) {
  SchedulerOptions o;
  o.kv_bytes_per_token = 1, o.block_tokens = 4, o.kv_capacity_bytes = 12;
  o.on_demand_blocks = true;
  StepCost c = fixed_costs();
  std::vector<int64_t> prefill_tokens;
  c.prefill_ns = [&](int64_t tokens, int requests) {
    prefill_tokens.push_back(tokens);
    return 1e6 * requests;
  };
  const std::vector<Request> reqs{{0, 4, 6}, {0, 4, 6}};
  const ContinuousResult r = serve_continuous(reqs, o, c);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(prefill_tokens, (std::vector<int64_t>{8, 5}));  // B's recompute: its prompt and its 1st token
  EXPECT_DOUBLE_EQ(r.requests[0].first_token_ns, 2e6);
  EXPECT_DOUBLE_EQ(r.requests[1].first_token_ns, 2e6);  // the first token stays the one it had
  EXPECT_DOUBLE_EQ(r.requests[0].finish_ns, 4.5e6);
  EXPECT_DOUBLE_EQ(r.requests[1].finish_ns, 7.5e6);
  EXPECT_EQ(r.prefill_steps, 2);
  EXPECT_EQ(r.decode_steps, 9);
  EXPECT_EQ(r.peak_running, 2);
  EXPECT_DOUBLE_EQ(r.peak_kv_bytes, 12);  // A's 3 blocks at its last decode
  // Reserving whole lives, they run one after the other: B's first token only at 4.5 ms.
  o.on_demand_blocks = false;
  EXPECT_DOUBLE_EQ(serve_continuous(reqs, o, fixed_costs()).requests[1].first_token_ns, 4.5e6);
}

// The same with chunked prefill (vLLM v1), by hand: a step of p prompt tokens and d decodes takes
// p + 10 d ns and holds 8 tokens; blocks of 4, room for 3. A and B (4 in, 6 out) arrive at 0:
//   1: A's and B's prompts (1 block each)                                -> t = 8, first tokens
//   2: A's decode needs a 2nd block, and B's too: B, the newest, is preempted; its recompute
//      (4 + 1 tokens: 2 blocks) waits, one block being free                  -> t = 18
//   3-6: A decodes (its 3rd block at the last one) and ends                  -> t = 58
//   7: B's recompute of 5 tokens (its 2nd token); 8-11: its decodes          -> t = 63, 103
TEST(LlmContinuous, OnDemandBlocksWithChunkedPrefillByHand) {
  SchedulerOptions o;
  o.kv_bytes_per_token = 1, o.block_tokens = 4, o.kv_capacity_bytes = 12;
  o.max_batch_tokens = 8;
  o.on_demand_blocks = o.chunked_prefill = true;
  StepCost c = fixed_costs();
  std::vector<std::pair<int64_t, int>> steps;
  c.mixed_ns = [&](int64_t prompt, int decodes, double) {
    steps.push_back({prompt, decodes});
    return static_cast<double>(prompt + 10 * decodes);
  };
  const ContinuousResult r = serve_continuous({{0, 4, 6}, {0, 4, 6}}, o, c);
  EXPECT_EQ(steps, (std::vector<std::pair<int64_t, int>>{{8, 0}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1},
                                                         {5, 0}, {0, 1}, {0, 1}, {0, 1}, {0, 1}}));
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_DOUBLE_EQ(r.requests[0].first_token_ns, 8);
  EXPECT_DOUBLE_EQ(r.requests[1].first_token_ns, 8);
  EXPECT_DOUBLE_EQ(r.requests[0].finish_ns, 58);
  EXPECT_DOUBLE_EQ(r.requests[1].finish_ns, 103);
  EXPECT_EQ(r.mixed_steps, 2);
  EXPECT_EQ(r.decode_steps, 9);
  EXPECT_DOUBLE_EQ(r.peak_kv_bytes, 12);
}

TEST(LlmContinuous, PoissonArrivalsAreDeterministicForASeed) {
  const auto a = poisson_requests(1000, 10, 100, 10, 7), b = poisson_requests(1000, 10, 100, 10, 7);
  const auto c = poisson_requests(1000, 10, 100, 10, 8);
  ASSERT_EQ(a.size(), 1000u);
  EXPECT_EQ(a[0].arrival_ns, 0);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].arrival_ns, b[i].arrival_ns);
  EXPECT_NE(a.back().arrival_ns, c.back().arrival_ns);
  // 999 gaps of mean 100 ms: the last arrival within 10% of 99.9 s.
  EXPECT_NEAR(a.back().arrival_ns / 1e9, 99.9, 10);
}

}  // namespace

TEST(ServingOptions, TheTableBindsEveryOptionWithItsDefaultAndRange) {
  ServingOptions o;
  std::set<std::string> names;
  for (const ServingOption& opt : serving_options()) {
    EXPECT_TRUE(names.insert(opt.name).second) << opt.name << " twice";
    // Setting the default's text leaves the options as they were; each range holds its default.
    const std::string d = opt.default_value();
    if (opt.type == OptionType::Int || opt.type == OptionType::Number) {
      EXPECT_EQ(serving_value_error(opt, d), "") << opt.name << " = " << d;
      set_serving_option(o, opt.name, d, "test", opt.name);
      EXPECT_EQ(opt.value_of(o), d) << opt.name;
    }
  }
  EXPECT_EQ(names.count("tp"), 1u);
  EXPECT_EQ(find_serving_option("tp")->default_value(), "1");
  set_serving_option(o, "tp", "8", "test", "tp");
  set_serving_option(o, "arrival_rate", "2.5", "test", "arrival_rate");
  set_serving_option(o, "preempt", "true", "test", "preempt");
  EXPECT_EQ(o.tp, 8);
  EXPECT_DOUBLE_EQ(o.arrival_rate, 2.5);
  EXPECT_TRUE(o.preempt);
}

TEST(ServingOptions, ValuesOutsideTheirRangeAreRefusedNamingTheOption) {
  ServingOptions o;
  EXPECT_NE(serving_value_error(*find_serving_option("tp"), "0").find("must be in 1..4096"), std::string::npos);
  EXPECT_NE(serving_value_error(*find_serving_option("buckets"), "65").find("must be in 2..64"), std::string::npos);
  EXPECT_NE(serving_value_error(*find_serving_option("batch"), "99999999999999999999").find("expected an integer"), std::string::npos);
  EXPECT_NE(serving_value_error(*find_serving_option("arrival_rate"), "-1").find("must be in 0.."), std::string::npos);
  try {
    set_serving_option(o, "tp", "0", "s.yaml", "axes/serving.tp");
    ADD_FAILURE() << "tp 0 accepted";
  } catch (const npusim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("axes/serving.tp"), std::string::npos) << e.what();
  }
  EXPECT_THROW(set_serving_option(o, "tensor_parallel", "2", "s.yaml", "x"), npusim::InputError);
  // A library caller that sets a field directly is checked as well (serve() does this first).
  o.pp = 0;
  try {
    check_serving_options(o, "sim llm");
    ADD_FAILURE() << "pp 0 accepted";
  } catch (const npusim::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--pp"), std::string::npos) << e.what();
  }
}
