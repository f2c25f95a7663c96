// Serving arithmetic (docs/llm.md).
#include "sim/llm/serving.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "sim/ir/error.h"

namespace npusim::llm {

ModelMemory model_memory(const ModelShape& m, double dtype_bytes, int tp, int pp) {
  const double dh = static_cast<double>(m.d) / m.heads;
  // Per layer: q and o (d x d), k and v (d x Hkv dh), gate, up, down (3 d x ffn), two norms.
  const double per_layer = 2.0 * m.d * m.d + 2.0 * m.d * m.kv_heads * dh + 3.0 * m.d * m.ffn + 2.0 * m.d;
  const double params = m.layers * per_layer + 2.0 * m.vocab * m.d + m.d;  // + embedding, lm_head, final norm
  ModelMemory r;
  r.weight_bytes = params * dtype_bytes / (static_cast<double>(tp) * pp);
  r.kv_bytes_per_token = 2.0 * std::ceil(static_cast<double>(m.layers) / pp) * (m.kv_heads / tp) * dh * dtype_bytes;
  // The widest transient of a layer's prefill per token: the residual, the normed input, q/k/v,
  // and gate and up of the MLP shard, live at once.
  r.activation_bytes_per_token = (3.0 * m.d + 2.0 * m.ffn / tp) * dtype_bytes;
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

namespace {

// The KV cache in paged blocks: tokens per block, bytes per block, blocks that fit.
struct Blocks {
  int64_t tokens;
  double bytes;
  int64_t capacity;
  explicit Blocks(const SchedulerOptions& o)
      : tokens(o.block_tokens), bytes(static_cast<double>(o.block_tokens) * o.kv_bytes_per_token),
        capacity(static_cast<int64_t>(std::floor(o.kv_capacity_bytes / bytes))) {}
  int64_t for_tokens(int64_t n) const { return (n + tokens - 1) / tokens; }
};

// vLLM's paged KV cache with blocks allocated as tokens come and recompute preemption
// (docs/llm.md#preemption): prefill first, as serve_continuous without chunked prefill.
ContinuousResult serve_on_demand(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost,
                                 ContinuousResult res) {
  const Blocks blocks(opt);
  const int64_t capacity = blocks.capacity;
  const double block_bytes = blocks.bytes;
  auto blocks_for = [&](int64_t tokens) { return blocks.for_tokens(tokens); };
  struct Running {
    size_t id;
    int64_t kv, generated, blocks;
  };
  std::vector<Running> running;  // admission order: the last is the first preempted
  std::vector<std::pair<size_t, int64_t>> preempted;  // (id, tokens generated): resumed first, oldest first
  size_t next = 0, done = 0;
  double t = 0;
  int64_t used = 0;  // blocks
  auto finish = [&](const Running& r) {
    res.requests[r.id].finish_ns = t, used -= r.blocks, ++done;
  };
  while (done < reqs.size()) {
    // Admit: preempted requests first (their prompt and the tokens they had generated are
    // prefilled again), then arrivals in order, while their blocks fit.
    struct Admit {
      size_t id;
      int64_t generated, tokens, blocks;
    };
    std::vector<Admit> admit;
    int64_t tokens = 0, add = 0;
    size_t resumed = 0, arrived = 0;
    for (;;) {
      size_t id;
      int64_t gen;
      if (resumed < preempted.size()) {
        id = preempted[resumed].first, gen = preempted[resumed].second;
      } else if (next + arrived < reqs.size() && reqs[next + arrived].arrival_ns <= t) {
        id = next + arrived, gen = 0;
      } else {
        break;
      }
      const int64_t n = reqs[id].input + gen;
      // A resumed request emits its next token with the prefill: one slot more.
      const int64_t b = blocks_for(n + (gen > 0 ? 1 : 0));
      if (static_cast<int>(running.size() + admit.size()) >= opt.max_seqs) break;
      if (!admit.empty() && tokens + n > opt.max_batch_tokens) break;
      if (used + add + b > capacity) break;
      tokens += n, add += b;
      admit.push_back({id, gen, n, b});
      (resumed < preempted.size() ? resumed : arrived) += 1;
    }
    if (!admit.empty()) {
      t += cost.prefill_ns(tokens, static_cast<int>(admit.size()));
      ++res.prefill_steps;
      res.tokens_out.push_back({t, static_cast<int>(admit.size())});
      used += add;
      res.peak_kv_bytes = std::max(res.peak_kv_bytes, static_cast<double>(used) * block_bytes);
      preempted.erase(preempted.begin(), preempted.begin() + static_cast<long>(resumed));
      next += arrived;
      for (const Admit& a : admit) {
        if (a.generated == 0) res.requests[a.id].first_token_ns = t;
        const Running r{a.id, a.tokens, a.generated + 1, a.blocks};
        if (r.generated >= reqs[a.id].output) finish(r);
        else running.push_back(r);
      }
    } else if (!running.empty()) {
      // Each running request needs a slot for its next token: a new block when its last is full.
      // When the cache runs out, the newest request is preempted (its blocks freed) until the
      // others fit.
      auto need = [&]() {
        int64_t n = 0;
        for (const Running& r : running) n += blocks_for(r.kv + 1) - r.blocks;
        return n;
      };
      while (running.size() > 1 && used + need() > capacity) {
        const Running& victim = running.back();
        used -= victim.blocks;
        preempted.push_back({victim.id, victim.generated});
        running.pop_back();
        ++res.preemptions;
      }
      std::sort(preempted.begin(), preempted.end());  // resumed in arrival order
      double kv = 0;
      for (const Running& r : running) kv += static_cast<double>(r.kv);
      t += cost.decode_ns(static_cast<int>(running.size()), kv / static_cast<double>(running.size()));
      ++res.decode_steps;
      res.tokens_out.push_back({t, static_cast<int>(running.size())});
      for (Running& r : running) {
        const int64_t b = blocks_for(r.kv + 1);
        used += b - r.blocks, r.blocks = b;
      }
      res.peak_kv_bytes = std::max(res.peak_kv_bytes, static_cast<double>(used) * block_bytes);  // before any frees
      std::vector<Running> still;
      for (Running r : running) {
        ++r.kv, ++r.generated;
        if (r.generated >= reqs[r.id].output) finish(r);
        else still.push_back(r);
      }
      running.swap(still);
    } else {
      if (next >= reqs.size())
        throw InternalError("serve_continuous: preempted requests that cannot be resumed on an empty cache");
      t = std::max(t, reqs[next].arrival_ns);  // idle until the next arrival
      continue;
    }
    res.peak_running = std::max(res.peak_running, static_cast<int>(running.size()));
    res.kv_bytes_over_time.push_back({t, static_cast<double>(used) * block_bytes});
  }
  return res;
}

// Chunked prefill (vLLM v1) with on-demand blocks and recompute preemption: every step takes at
// most max_batch_tokens tokens, the running requests in admission order (a decode one token, a
// prompt in progress its next chunk), then preempted requests' recomputes and new arrivals while
// their whole first chunk fits.
ContinuousResult serve_on_demand_chunked(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost,
                                         ContinuousResult res) {
  if (!cost.mixed_ns) throw InternalError("serve_continuous: chunked prefill without a mixed step cost");
  const Blocks blocks(opt);
  const int64_t capacity = blocks.capacity;
  const double block_bytes = blocks.bytes;
  auto blocks_for = [&](int64_t tokens) { return blocks.for_tokens(tokens); };
  struct Seq {
    size_t id;
    int64_t kv = 0, prompt_left = 0, generated = 0, blocks = 0;
  };
  std::vector<Seq> admitted;  // admission order: the last is the first preempted
  std::vector<std::pair<size_t, int64_t>> preempted;  // (id, tokens generated), resumed in arrival order
  size_t next = 0, done = 0;
  double t = 0;
  int64_t used = 0;
  auto preempt_newest = [&]() {
    const Seq& v = admitted.back();
    used -= v.blocks;
    preempted.push_back({v.id, v.generated});
    std::sort(preempted.begin(), preempted.end());
    admitted.pop_back();
    ++res.preemptions;
  };
  while (done < reqs.size()) {
    int64_t budget = opt.max_batch_tokens;
    // The running requests in admission order, as vLLM v1 schedules them: a decode takes one
    // token, a prompt in progress its next chunk. When its blocks do not fit, the newest request
    // is preempted (one not yet scheduled this step), or, when it is the newest, itself.
    std::vector<size_t> decodes;                     // indices into admitted
    std::vector<std::pair<size_t, int64_t>> chunks;  // (index into admitted, tokens)
    for (size_t i = 0; i < admitted.size() && budget > 0; ++i) {
      const bool decode = admitted[i].prompt_left == 0;
      const int64_t n = decode ? 1 : std::min(admitted[i].prompt_left, budget);
      const int64_t need = blocks_for(admitted[i].kv + n) - admitted[i].blocks;
      while (used + need > capacity && admitted.size() - 1 > i) preempt_newest();
      if (used + need > capacity) {
        preempt_newest();
        break;
      }
      used += need, admitted[i].blocks += need, budget -= n;
      if (decode) decodes.push_back(i);
      else chunks.push_back({i, n});
    }
    // Then preempted requests' recomputes and new arrivals, while their whole first chunk fits.
    while (budget > 0 && static_cast<int>(admitted.size()) < opt.max_seqs) {
      Seq q;
      const bool resumed = !preempted.empty();
      if (resumed) {
        q.id = preempted.front().first, q.generated = preempted.front().second;
      } else if (next < reqs.size() && reqs[next].arrival_ns <= t) {
        q.id = next;
      } else {
        break;
      }
      q.prompt_left = reqs[q.id].input + q.generated;
      const int64_t n = std::min(q.prompt_left, budget);
      q.blocks = blocks_for(n);
      if (used + q.blocks > capacity) break;
      used += q.blocks, budget -= n;
      admitted.push_back(q);
      chunks.push_back({admitted.size() - 1, n});
      if (resumed) preempted.erase(preempted.begin());
      else ++next;
    }
    if (decodes.empty() && chunks.empty()) {
      if (!admitted.empty() || !preempted.empty() || next >= reqs.size())
        throw InternalError("serve_continuous: no step can run");
      t = std::max(t, reqs[next].arrival_ns);  // idle until the next arrival
      continue;
    }
    int64_t prompt_tokens = 0;
    for (const auto& [i, c] : chunks) prompt_tokens += c;
    double kv = 0;
    for (size_t i : decodes) kv += static_cast<double>(admitted[i].kv);
    t += cost.mixed_ns(prompt_tokens, static_cast<int>(decodes.size()), decodes.empty() ? 0.0 : kv / static_cast<double>(decodes.size()));
    if (prompt_tokens > 0) ++res.mixed_steps;
    else ++res.decode_steps;
    res.peak_kv_bytes = std::max(res.peak_kv_bytes, static_cast<double>(used) * block_bytes);
    int out = 0;
    for (size_t i : decodes) ++admitted[i].kv, ++admitted[i].generated, ++out;
    for (const auto& [i, c] : chunks) {
      Seq& q = admitted[i];
      q.kv += c, q.prompt_left -= c;
      if (q.prompt_left > 0) continue;
      if (q.generated == 0) res.requests[q.id].first_token_ns = t;
      ++q.generated, ++out;
    }
    std::vector<Seq> still;
    for (const Seq& q : admitted) {
      if (q.prompt_left == 0 && q.generated >= reqs[q.id].output) {
        res.requests[q.id].finish_ns = t, used -= q.blocks, ++done;
        continue;
      }
      still.push_back(q);
    }
    admitted.swap(still);
    res.tokens_out.push_back({t, out});
    res.peak_running = std::max(res.peak_running, static_cast<int>(admitted.size()));
    res.kv_bytes_over_time.push_back({t, static_cast<double>(used) * block_bytes});
  }
  return res;
}

}  // namespace

ContinuousResult serve_continuous(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost) {
  ContinuousResult res;
  res.requests.resize(reqs.size());
  auto reserve = [&](const Request& q) {
    const int64_t blocks = (q.input + q.output + opt.block_tokens - 1) / opt.block_tokens;
    return static_cast<double>(blocks * opt.block_tokens) * opt.kv_bytes_per_token;
  };
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reserve(reqs[i]) > opt.kv_capacity_bytes)
      throw InputError("sim llm", "request " + std::to_string(i), "its " + std::to_string(reqs[i].input + reqs[i].output) +
                                                                     " tokens of KV cache exceed what the device has beside the weights");
    res.requests[i].arrival_ns = reqs[i].arrival_ns;
    res.requests[i].output = reqs[i].output;
  }
  if (opt.on_demand_blocks)
    return opt.chunked_prefill ? serve_on_demand_chunked(reqs, opt, cost, std::move(res)) : serve_on_demand(reqs, opt, cost, std::move(res));
  struct Running {
    size_t id;
    int64_t kv, generated;
  };
  std::vector<Running> running;
  size_t next = 0;  // the first request not yet admitted (arrival order)
  double t = 0, used = 0;
  size_t done = 0;
  if (opt.chunked_prefill) {
    if (!cost.mixed_ns) throw InternalError("serve_continuous: chunked prefill without a mixed step cost");
    struct Prompt {
      size_t id;
      int64_t left;  // prompt tokens not yet through a step
    };
    std::vector<Prompt> prompts;  // admitted, prompt not finished, in admission order
    while (done < reqs.size()) {
      int64_t budget = opt.max_batch_tokens;
      // The running decodes first (one token each), as many as the budget holds.
      const size_t decodes = std::min<size_t>(running.size(), static_cast<size_t>(budget));
      budget -= static_cast<int64_t>(decodes);
      // Then the prompts already begun, then new requests in arrival order.
      std::vector<std::pair<size_t, int64_t>> chunks;  // (index in prompts, tokens)
      for (size_t i = 0; i < prompts.size() && budget > 0; ++i) {
        const int64_t c = std::min(prompts[i].left, budget);
        chunks.push_back({i, c});
        budget -= c;
      }
      while (budget > 0 && next < reqs.size()) {
        const Request& q = reqs[next];
        if (q.arrival_ns > t) break;
        if (static_cast<int>(running.size() + prompts.size()) >= opt.max_seqs) break;
        if (used + reserve(q) > opt.kv_capacity_bytes) break;
        used += reserve(q);
        prompts.push_back({next++, q.input});
        const int64_t c = std::min(prompts.back().left, budget);
        chunks.push_back({prompts.size() - 1, c});
        budget -= c;
      }
      if (decodes == 0 && chunks.empty()) {
        t = std::max(t, reqs[next].arrival_ns);  // idle until the next arrival
        continue;
      }
      int64_t prompt_tokens = 0;
      for (const auto& [i, c] : chunks) prompt_tokens += c;
      double kv = 0;
      for (size_t i = 0; i < decodes; ++i) kv += static_cast<double>(running[i].kv);
      t += cost.mixed_ns(prompt_tokens, static_cast<int>(decodes), decodes ? kv / static_cast<double>(decodes) : 0.0);
      if (prompt_tokens > 0) ++res.mixed_steps;
      else ++res.decode_steps;
      int out = 0;
      // Decodes: one token each.
      std::vector<Running> still;
      for (size_t i = 0; i < running.size(); ++i) {
        Running r = running[i];
        if (i < decodes) {
          ++r.kv, ++r.generated, ++out;
          if (r.generated >= reqs[r.id].output) {
            res.requests[r.id].finish_ns = t, used -= reserve(reqs[r.id]), ++done;
            continue;
          }
        }
        still.push_back(r);
      }
      running.swap(still);
      // Prompts: a finished one gives its first token and starts decoding next step.
      for (const auto& [i, c] : chunks) prompts[i].left -= c;
      std::vector<Prompt> unfinished;
      for (const Prompt& p : prompts) {
        if (p.left > 0) {
          unfinished.push_back(p);
          continue;
        }
        ++out;
        res.requests[p.id].first_token_ns = t;
        if (reqs[p.id].output <= 1) res.requests[p.id].finish_ns = t, used -= reserve(reqs[p.id]), ++done;
        else running.push_back({p.id, reqs[p.id].input, 1});
      }
      prompts.swap(unfinished);
      res.tokens_out.push_back({t, out});
      res.peak_running = std::max(res.peak_running, static_cast<int>(running.size() + prompts.size()));
      res.peak_kv_bytes = std::max(res.peak_kv_bytes, used);
      res.kv_bytes_over_time.push_back({t, used});
    }
    return res;
  }
  while (done < reqs.size()) {
    // Admit in arrival order what has arrived and fits: one prefill step.
    std::vector<size_t> admit;
    int64_t tokens = 0;
    double add = 0;
    while (next + admit.size() < reqs.size()) {
      const Request& q = reqs[next + admit.size()];
      if (q.arrival_ns > t) break;
      if (static_cast<int>(running.size() + admit.size()) >= opt.max_seqs) break;
      if (!admit.empty() && tokens + q.input > opt.max_batch_tokens) break;
      if (used + add + reserve(q) > opt.kv_capacity_bytes) break;
      tokens += q.input, add += reserve(q);
      admit.push_back(next + admit.size());
    }
    if (!admit.empty()) {
      t += cost.prefill_ns(tokens, static_cast<int>(admit.size()));
      ++res.prefill_steps;
      res.tokens_out.push_back({t, static_cast<int>(admit.size())});
      used += add;
      next += admit.size();
      for (size_t id : admit) {
        res.requests[id].first_token_ns = t;
        if (reqs[id].output <= 1) {
          res.requests[id].finish_ns = t, used -= reserve(reqs[id]), ++done;
        } else {
          running.push_back({id, reqs[id].input, 1});
        }
      }
    } else if (!running.empty()) {
      double kv = 0;
      for (const Running& r : running) kv += static_cast<double>(r.kv);
      t += cost.decode_ns(static_cast<int>(running.size()), kv / static_cast<double>(running.size()));
      ++res.decode_steps;
      res.tokens_out.push_back({t, static_cast<int>(running.size())});
      std::vector<Running> still;
      for (Running r : running) {
        ++r.kv, ++r.generated;
        if (r.generated >= reqs[r.id].output) {
          res.requests[r.id].finish_ns = t, used -= reserve(reqs[r.id]), ++done;
        } else {
          still.push_back(r);
        }
      }
      running.swap(still);
    } else {
      t = std::max(t, reqs[next].arrival_ns);  // idle until the next arrival
      continue;
    }
    res.peak_running = std::max(res.peak_running, static_cast<int>(running.size()));
    res.peak_kv_bytes = std::max(res.peak_kv_bytes, used);
    res.kv_bytes_over_time.push_back({t, used});
  }
  return res;
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
  static const std::vector<ServingOption> o = {
      {"batch", T::Int, "1", "static batch: requests, all starting together"},
      {"input", T::Int, "128", "prompt tokens per request"},
      {"output", T::Int, "128", "output tokens per request"},
      {"dtype", T::Text, "fp16", "fp16, bf16, fp32, fp8"},
      {"layers", T::Int, "0", "keep the first K layers (0: all)"},
      {"tp", T::Int, "1", "system: tensor-parallel ranks"},
      {"pp", T::Int, "1", "system: pipeline stages"},
      {"microbatches", T::Int, "1", "system: a pass's batch split to flow through the pp stages"},
      {"arrival_rate", T::Number, "0", "continuous batching: Poisson arrivals per second (0: a static batch)"},
      {"requests", T::Int, "100", "continuous batching: requests to serve"},
      {"seed", T::Int, "1", "continuous batching: the arrivals' seed"},
      {"max_batch_tokens", T::Int, "8192", "continuous batching: tokens per step"},
      {"max_seqs", T::Int, "256", "continuous batching: requests running at once"},
      {"chunked_prefill", T::Bool, "false", "continuous batching: chunked prefill (vLLM v1)"},
      {"preempt", T::Bool, "false", "continuous batching: KV blocks on demand, recompute preemption"},
  };
  return o;
}

const ServingOption* find_serving_option(const std::string& name) {
  for (const ServingOption& o : serving_options())
    if (name == o.name) return &o;
  return nullptr;
}

std::string serving_value_error(const ServingOption& o, const std::string& v) {
  char* end = nullptr;
  switch (o.type) {
    case OptionType::Int: {
      const long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') return "expected an integer, got '" + v + "'";
      if (x < 0 || x > (1LL << 31)) return "expected an integer in 0..2^31, got '" + v + "'";
      return "";
    }
    case OptionType::Number: {
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !std::isfinite(x) || x < 0) return "expected a number >= 0, got '" + v + "'";
      return "";
    }
    case OptionType::Bool:
      return v == "true" || v == "false" ? "" : "expected true or false, got '" + v + "'";
    case OptionType::Text:
      return v.empty() ? "expected a value" : "";
  }
  return "";
}

const std::vector<ServingField>& serving_sweep_fields() {
  static const std::vector<ServingField> f = {
      {"time_us", "us", "/totals/time_us"},
      {"ttft_ms", "ms", "/totals/ttft_ms"},
      {"ttft_p99_ms", "ms", "/latency_ms/ttft/p99"},
      {"tpot_ms", "ms", "/totals/tpot_ms"},
      {"e2e_ms", "ms", "/totals/e2e_ms"},
      {"e2e_p99_ms", "ms", "/latency_ms/e2e/p99"},
      {"output_tokens_per_s", "tokens/s", "/totals/output_tokens_per_s"},
      {"output_tokens_per_s_per_device", "tokens/s", "/totals/output_tokens_per_s_per_device"},
  };
  return f;
}

}  // namespace npusim::llm
