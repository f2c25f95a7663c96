// Continuous batching (docs/llm.md#continuous-batching): vLLM-like schedulers, each a state
// machine that plans one step at a time and applies it when the step ends, and the driver that
// runs one of them on a device, or several (vLLM's virtual engines) whose steps flow through the
// stages of a pipeline-parallel model at once.
#include <algorithm>
#include <cmath>
#include <memory>

#include "sim/ir/error.h"
#include "sim/llm/serving.h"

namespace npusim::llm {

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

// A step planned at some time: its duration, and whether it holds prompt tokens (prefill or
// mixed) or decodes only.
struct Planned {
  double ns = -1;  // < 0: nothing can run until more requests arrive
  bool prompt = false;
};

// One scheduler (one vLLM engine): the requests given to it as they arrive, in arrival order.
// plan(t) decides the next step at t from what has arrived; finish(t) applies it when it ends
// at t (first tokens, finished requests, freed blocks). Counters and request times go to res.
class Engine {
 public:
  Engine(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost, ContinuousResult& res)
      : reqs_(reqs), opt_(opt), cost_(cost), res_(res) {}
  virtual ~Engine() = default;
  void arrive(size_t id) { queue_.push_back(id); }
  size_t unfinished() const { return queue_.size() - done_; }
  size_t done() const { return done_; }
  virtual Planned plan(double t) = 0;
  virtual void finish(double t) = 0;
  virtual double used_bytes() const = 0;       // KV cache held now
  virtual double step_peak_bytes() const = 0;  // the most the last step held
  virtual int running() const = 0;             // requests admitted and not finished

 protected:
  // Arrived and not yet admitted: queue_[next_ ...].
  bool has_waiting(size_t k = 0) const { return next_ + k < queue_.size(); }
  size_t waiting(size_t k = 0) const { return queue_[next_ + k]; }
  void finished(size_t id, double t) { res_.requests[id].finish_ns = t, ++done_; }
  // A decode step of every running request, at their mean KV length.
  template <class Running>
  Planned decode_step(const std::vector<Running>& running) const {
    double kv = 0;
    for (const Running& r : running) kv += static_cast<double>(r.kv);
    return {cost_.decode_ns(static_cast<int>(running.size()), kv / static_cast<double>(running.size())), false};
  }

  const std::vector<Request>& reqs_;
  const SchedulerOptions& opt_;
  const StepCost& cost_;
  ContinuousResult& res_;
  std::vector<size_t> queue_;
  size_t next_ = 0, done_ = 0;
};

// The blocks of a request's whole life, reserved when it is admitted.
double whole_life_bytes(const Request& q, const SchedulerOptions& opt) {
  const int64_t blocks = (q.input + q.output + opt.block_tokens - 1) / opt.block_tokens;
  return static_cast<double>(blocks * opt.block_tokens) * opt.kv_bytes_per_token;
}

// vLLM's scheduler without preemption, prefill first: whenever requests wait and their blocks
// fit, a prefill step takes them in arrival order (up to max_batch_tokens prompt tokens and
// max_seqs running); otherwise every running request decodes one token.
class PrefillFirst : public Engine {
 public:
  using Engine::Engine;
  Planned plan(double) override {
    admit_.clear();
    int64_t tokens = 0;
    add_ = 0;
    while (has_waiting(admit_.size())) {
      const Request& q = reqs_[waiting(admit_.size())];
      if (static_cast<int>(running_.size() + admit_.size()) >= opt_.max_seqs) break;
      if (!admit_.empty() && tokens + q.input > opt_.max_batch_tokens) break;
      if (used_ + add_ + reserve(q) > opt_.kv_capacity_bytes) break;
      tokens += q.input, add_ += reserve(q);
      admit_.push_back(waiting(admit_.size()));
    }
    if (!admit_.empty()) return {cost_.prefill_ns(tokens, static_cast<int>(admit_.size())), true};
    if (running_.empty()) return {};
    return decode_step(running_);
  }
  void finish(double t) override {
    if (!admit_.empty()) {
      ++res_.prefill_steps;
      res_.tokens_out.push_back({t, static_cast<int>(admit_.size())});
      used_ += add_;
      next_ += admit_.size();
      for (size_t id : admit_) {
        res_.requests[id].first_token_ns = t;
        if (reqs_[id].output <= 1) {
          finished(id, t), used_ -= reserve(reqs_[id]);
        } else {
          running_.push_back({id, reqs_[id].input, 1});
        }
      }
      admit_.clear();
      return;
    }
    ++res_.decode_steps;
    res_.tokens_out.push_back({t, static_cast<int>(running_.size())});
    std::vector<Running> still;
    for (Running r : running_) {
      ++r.kv, ++r.generated;
      if (r.generated >= reqs_[r.id].output) {
        finished(r.id, t), used_ -= reserve(reqs_[r.id]);
      } else {
        still.push_back(r);
      }
    }
    running_.swap(still);
  }
  double used_bytes() const override { return used_; }
  double step_peak_bytes() const override { return used_; }
  int running() const override { return static_cast<int>(running_.size()); }

 private:
  struct Running {
    size_t id;
    int64_t kv, generated;
  };
  double reserve(const Request& q) const { return whole_life_bytes(q, opt_); }
  std::vector<Running> running_;
  std::vector<size_t> admit_;  // the planned prefill's requests (empty: a decode step)
  double used_ = 0, add_ = 0;
};

// Chunked prefill without preemption (vLLM v1, Sarathi-Serve): each step first decodes every
// running request, then spends what is left of max_batch_tokens on prompt chunks: the prompt
// already begun, then new requests in arrival order; a request's first token comes with the
// step that ends its prompt. Whole-life blocks reserved at admission.
class Chunked : public Engine {
 public:
  using Engine::Engine;
  Planned plan(double) override {
    int64_t budget = opt_.max_batch_tokens;
    // The running decodes first (one token each), as many as the budget holds.
    decodes_ = std::min<size_t>(running_.size(), static_cast<size_t>(budget));
    budget -= static_cast<int64_t>(decodes_);
    // Then the prompts already begun, then new requests in arrival order.
    chunks_.clear();
    for (size_t i = 0; i < prompts_.size() && budget > 0; ++i) {
      const int64_t c = std::min(prompts_[i].left, budget);
      chunks_.push_back({i, c});
      budget -= c;
    }
    while (budget > 0 && has_waiting()) {
      const Request& q = reqs_[waiting()];
      if (static_cast<int>(running_.size() + prompts_.size()) >= opt_.max_seqs) break;
      if (used_ + whole_life_bytes(q, opt_) > opt_.kv_capacity_bytes) break;
      used_ += whole_life_bytes(q, opt_);
      prompts_.push_back({waiting(), q.input});
      ++next_;
      const int64_t c = std::min(prompts_.back().left, budget);
      chunks_.push_back({prompts_.size() - 1, c});
      budget -= c;
    }
    if (decodes_ == 0 && chunks_.empty()) return {};
    int64_t prompt_tokens = 0;
    for (const auto& [i, c] : chunks_) prompt_tokens += c;
    double kv = 0;
    for (size_t i = 0; i < decodes_; ++i) kv += static_cast<double>(running_[i].kv);
    prompt_tokens_ = prompt_tokens;
    return {cost_.mixed_ns(prompt_tokens, static_cast<int>(decodes_), decodes_ ? kv / static_cast<double>(decodes_) : 0.0),
            prompt_tokens > 0};
  }
  void finish(double t) override {
    if (prompt_tokens_ > 0) ++res_.mixed_steps;
    else ++res_.decode_steps;
    int out = 0;
    // Decodes: one token each.
    std::vector<Running> still;
    for (size_t i = 0; i < running_.size(); ++i) {
      Running r = running_[i];
      if (i < decodes_) {
        ++r.kv, ++r.generated, ++out;
        if (r.generated >= reqs_[r.id].output) {
          finished(r.id, t), used_ -= whole_life_bytes(reqs_[r.id], opt_);
          continue;
        }
      }
      still.push_back(r);
    }
    running_.swap(still);
    // Prompts: a finished one gives its first token and starts decoding next step.
    for (const auto& [i, c] : chunks_) prompts_[i].left -= c;
    std::vector<Prompt> unfinished;
    for (const Prompt& p : prompts_) {
      if (p.left > 0) {
        unfinished.push_back(p);
        continue;
      }
      ++out;
      res_.requests[p.id].first_token_ns = t;
      if (reqs_[p.id].output <= 1) finished(p.id, t), used_ -= whole_life_bytes(reqs_[p.id], opt_);
      else running_.push_back({p.id, reqs_[p.id].input, 1});
    }
    prompts_.swap(unfinished);
    res_.tokens_out.push_back({t, out});
  }
  double used_bytes() const override { return used_; }
  double step_peak_bytes() const override { return used_; }
  int running() const override { return static_cast<int>(running_.size() + prompts_.size()); }

 private:
  struct Running {
    size_t id;
    int64_t kv, generated;
  };
  struct Prompt {
    size_t id;
    int64_t left;  // prompt tokens not yet through a step
  };
  std::vector<Running> running_;
  std::vector<Prompt> prompts_;  // admitted, prompt not finished, in admission order
  std::vector<std::pair<size_t, int64_t>> chunks_;  // the planned step's (index in prompts_, tokens)
  size_t decodes_ = 0;
  int64_t prompt_tokens_ = 0;
  double used_ = 0;
};

// vLLM's paged KV cache with blocks allocated as tokens come and recompute preemption
// (docs/llm.md#preemption), prefill first.
class OnDemand : public Engine {
 public:
  OnDemand(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost, ContinuousResult& res)
      : Engine(reqs, opt, cost, res), blocks_(opt) {}
  Planned plan(double) override {
    // Admit: preempted requests first (their prompt and the tokens they had generated are
    // prefilled again), then arrivals in order, while their blocks fit.
    admit_.clear();
    int64_t tokens = 0;
    add_ = 0, resumed_ = 0, arrived_ = 0;
    for (;;) {
      size_t id;
      int64_t gen;
      if (resumed_ < preempted_.size()) {
        id = preempted_[resumed_].first, gen = preempted_[resumed_].second;
      } else if (has_waiting(arrived_)) {
        id = waiting(arrived_), gen = 0;
      } else {
        break;
      }
      const int64_t n = reqs_[id].input + gen;
      // A resumed request emits its next token with the prefill: one slot more.
      const int64_t b = blocks_.for_tokens(n + (gen > 0 ? 1 : 0));
      if (static_cast<int>(running_.size() + admit_.size()) >= opt_.max_seqs) break;
      if (!admit_.empty() && tokens + n > opt_.max_batch_tokens) break;
      if (used_ + add_ + b > blocks_.capacity) break;
      tokens += n, add_ += b;
      admit_.push_back({id, gen, n, b});
      (resumed_ < preempted_.size() ? resumed_ : arrived_) += 1;
    }
    if (!admit_.empty()) return {cost_.prefill_ns(tokens, static_cast<int>(admit_.size())), true};
    if (running_.empty()) {
      if (!preempted_.empty()) throw InternalError("serve_continuous: preempted requests that cannot be resumed on an empty cache");
      return {};
    }
    // Each running request needs a slot for its next token: a new block when its last is full.
    // When the cache runs out, the newest request is preempted (its blocks freed) until the
    // others fit.
    auto need = [&]() {
      int64_t n = 0;
      for (const Running& r : running_) n += blocks_.for_tokens(r.kv + 1) - r.blocks;
      return n;
    };
    while (running_.size() > 1 && used_ + need() > blocks_.capacity) {
      const Running& victim = running_.back();
      used_ -= victim.blocks;
      preempted_.push_back({victim.id, victim.generated});
      running_.pop_back();
      ++res_.preemptions;
    }
    std::sort(preempted_.begin(), preempted_.end());  // resumed in arrival order
    return decode_step(running_);
  }
  void finish(double t) override {
    if (!admit_.empty()) {
      ++res_.prefill_steps;
      res_.tokens_out.push_back({t, static_cast<int>(admit_.size())});
      used_ += add_;
      step_peak_ = used_;
      preempted_.erase(preempted_.begin(), preempted_.begin() + static_cast<long>(resumed_));
      next_ += arrived_;
      for (const Admit& a : admit_) {
        if (a.generated == 0) res_.requests[a.id].first_token_ns = t;
        const Running r{a.id, a.tokens, a.generated + 1, a.blocks};
        if (r.generated >= reqs_[a.id].output) finished(r.id, t), used_ -= r.blocks;
        else running_.push_back(r);
      }
      admit_.clear();
      return;
    }
    ++res_.decode_steps;
    res_.tokens_out.push_back({t, static_cast<int>(running_.size())});
    for (Running& r : running_) {
      const int64_t b = blocks_.for_tokens(r.kv + 1);
      used_ += b - r.blocks, r.blocks = b;
    }
    step_peak_ = used_;  // before any frees
    std::vector<Running> still;
    for (Running r : running_) {
      ++r.kv, ++r.generated;
      if (r.generated >= reqs_[r.id].output) finished(r.id, t), used_ -= r.blocks;
      else still.push_back(r);
    }
    running_.swap(still);
  }
  double used_bytes() const override { return static_cast<double>(used_) * blocks_.bytes; }
  double step_peak_bytes() const override { return static_cast<double>(step_peak_) * blocks_.bytes; }
  int running() const override { return static_cast<int>(running_.size()); }

 private:
  struct Running {
    size_t id;
    int64_t kv, generated, blocks;
  };
  struct Admit {
    size_t id;
    int64_t generated, tokens, blocks;
  };
  const Blocks blocks_;
  std::vector<Running> running_;  // admission order: the last is the first preempted
  std::vector<std::pair<size_t, int64_t>> preempted_;  // (id, tokens generated): resumed first, oldest first
  std::vector<Admit> admit_;  // the planned prefill (empty: a decode step)
  size_t resumed_ = 0, arrived_ = 0;
  int64_t used_ = 0, add_ = 0, step_peak_ = 0;  // blocks
};

// Chunked prefill (vLLM v1) with on-demand blocks and recompute preemption: every step takes at
// most max_batch_tokens tokens, the running requests in admission order (a decode one token, a
// prompt in progress its next chunk), then preempted requests' recomputes and new arrivals while
// their whole first chunk fits.
class OnDemandChunked : public Engine {
 public:
  OnDemandChunked(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost, ContinuousResult& res)
      : Engine(reqs, opt, cost, res), blocks_(opt) {
    if (!cost.mixed_ns) throw InternalError("serve_continuous: chunked prefill without a mixed step cost");
  }
  Planned plan(double) override {
    int64_t budget = opt_.max_batch_tokens;
    // The running requests in admission order, as vLLM v1 schedules them: a decode takes one
    // token, a prompt in progress its next chunk. When its blocks do not fit, the newest request
    // is preempted (one not yet scheduled this step), or, when it is the newest, itself.
    decodes_.clear(), chunks_.clear();
    for (size_t i = 0; i < admitted_.size() && budget > 0; ++i) {
      const bool decode = admitted_[i].prompt_left == 0;
      const int64_t n = decode ? 1 : std::min(admitted_[i].prompt_left, budget);
      const int64_t need = blocks_.for_tokens(admitted_[i].kv + n) - admitted_[i].blocks;
      while (used_ + need > blocks_.capacity && admitted_.size() - 1 > i) preempt_newest();
      if (used_ + need > blocks_.capacity) {
        preempt_newest();
        break;
      }
      used_ += need, admitted_[i].blocks += need, budget -= n;
      if (decode) decodes_.push_back(i);
      else chunks_.push_back({i, n});
    }
    // Then preempted requests' recomputes and new arrivals, while their whole first chunk fits.
    while (budget > 0 && static_cast<int>(admitted_.size()) < opt_.max_seqs) {
      Seq q;
      const bool resumed = !preempted_.empty();
      if (resumed) {
        q.id = preempted_.front().first, q.generated = preempted_.front().second;
      } else if (has_waiting()) {
        q.id = waiting();
      } else {
        break;
      }
      q.prompt_left = reqs_[q.id].input + q.generated;
      const int64_t n = std::min(q.prompt_left, budget);
      q.blocks = blocks_.for_tokens(n);
      if (used_ + q.blocks > blocks_.capacity) break;
      used_ += q.blocks, budget -= n;
      admitted_.push_back(q);
      chunks_.push_back({admitted_.size() - 1, n});
      if (resumed) preempted_.erase(preempted_.begin());
      else ++next_;
    }
    if (decodes_.empty() && chunks_.empty()) {
      if (!admitted_.empty() || !preempted_.empty()) throw InternalError("serve_continuous: no step can run");
      return {};
    }
    prompt_tokens_ = 0;
    for (const auto& [i, c] : chunks_) prompt_tokens_ += c;
    double kv = 0;
    for (size_t i : decodes_) kv += static_cast<double>(admitted_[i].kv);
    return {cost_.mixed_ns(prompt_tokens_, static_cast<int>(decodes_.size()), decodes_.empty() ? 0.0 : kv / static_cast<double>(decodes_.size())),
            prompt_tokens_ > 0};
  }
  void finish(double t) override {
    if (prompt_tokens_ > 0) ++res_.mixed_steps;
    else ++res_.decode_steps;
    step_peak_ = used_;
    int out = 0;
    for (size_t i : decodes_) ++admitted_[i].kv, ++admitted_[i].generated, ++out;
    for (const auto& [i, c] : chunks_) {
      Seq& q = admitted_[i];
      q.kv += c, q.prompt_left -= c;
      if (q.prompt_left > 0) continue;
      if (q.generated == 0) res_.requests[q.id].first_token_ns = t;
      ++q.generated, ++out;
    }
    std::vector<Seq> still;
    for (const Seq& q : admitted_) {
      if (q.prompt_left == 0 && q.generated >= reqs_[q.id].output) {
        finished(q.id, t), used_ -= q.blocks;
        continue;
      }
      still.push_back(q);
    }
    admitted_.swap(still);
    res_.tokens_out.push_back({t, out});
  }
  double used_bytes() const override { return static_cast<double>(used_) * blocks_.bytes; }
  double step_peak_bytes() const override { return static_cast<double>(step_peak_) * blocks_.bytes; }
  int running() const override { return static_cast<int>(admitted_.size()); }

 private:
  struct Seq {
    size_t id;
    int64_t kv = 0, prompt_left = 0, generated = 0, blocks = 0;
  };
  void preempt_newest() {
    const Seq& v = admitted_.back();
    used_ -= v.blocks;
    preempted_.push_back({v.id, v.generated});
    std::sort(preempted_.begin(), preempted_.end());
    admitted_.pop_back();
    ++res_.preemptions;
  }
  const Blocks blocks_;
  std::vector<Seq> admitted_;  // admission order: the last is the first preempted
  std::vector<std::pair<size_t, int64_t>> preempted_;  // (id, tokens generated), resumed in arrival order
  std::vector<size_t> decodes_;                     // the planned step's decodes (indices into admitted_)
  std::vector<std::pair<size_t, int64_t>> chunks_;  // and prompt chunks (index into admitted_, tokens)
  int64_t prompt_tokens_ = 0;
  int64_t used_ = 0, step_peak_ = 0;  // blocks
};

std::unique_ptr<Engine> make_engine(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost,
                                    ContinuousResult& res) {
  if (opt.on_demand_blocks && opt.chunked_prefill) return std::make_unique<OnDemandChunked>(reqs, opt, cost, res);
  if (opt.on_demand_blocks) return std::make_unique<OnDemand>(reqs, opt, cost, res);
  if (opt.chunked_prefill) {
    if (!cost.mixed_ns) throw InternalError("serve_continuous: chunked prefill without a mixed step cost");
    return std::make_unique<Chunked>(reqs, opt, cost, res);
  }
  return std::make_unique<PrefillFirst>(reqs, opt, cost, res);
}

}  // namespace

ContinuousResult serve_continuous(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost) {
  const int engines_n = std::max(1, opt.virtual_engines);
  // vLLM gives each virtual engine its own scheduler and 1/V of the KV cache's blocks.
  SchedulerOptions eo = opt;
  if (engines_n > 1) eo.kv_capacity_bytes = opt.kv_capacity_bytes / engines_n;
  ContinuousResult res;
  res.requests.resize(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (whole_life_bytes(reqs[i], eo) > eo.kv_capacity_bytes)
      throw InputError("sim llm", "request " + std::to_string(i),
                       "its " + std::to_string(reqs[i].input + reqs[i].output) + " tokens of KV cache exceed what " +
                           (engines_n > 1 ? "a virtual engine's share of the cache" : std::string("the device has beside the weights")));
    res.requests[i].arrival_ns = reqs[i].arrival_ns;
    res.requests[i].output = reqs[i].output;
  }
  std::vector<std::unique_ptr<Engine>> engines;
  for (int v = 0; v < engines_n; ++v) engines.push_back(make_engine(reqs, eo, cost, res));
  // The stages a step passes through, each taking its share of the step's time (one stage: the
  // whole step on the device). A stage runs one step at a time, in the order steps reach it.
  auto shares_of = [&](const std::vector<double>& s) { return engines_n > 1 && !s.empty() ? s : std::vector<double>{1.0}; };
  const std::vector<double> prompt_shares = shares_of(cost.prompt_stage_shares), decode_shares = shares_of(cost.decode_stage_shares);
  std::vector<double> stage_free(std::max(prompt_shares.size(), decode_shares.size()), 0.0);
  std::vector<double> free_at(engines.size(), 0.0);  // when each engine may plan again
  std::vector<char> waiting(engines.size(), 0), pending(engines.size(), 0);
  size_t arrival = 0, done = 0;
  auto sum = [&](auto f) {
    double s = 0;
    for (const auto& e : engines) s += f(*e);
    return s;
  };
  while (done < reqs.size()) {
    // The next event: an engine whose step ends (or that may plan), or an arrival (first when
    // at the same time: it is seen by the step planned then).
    int v = -1;
    for (int u = 0; u < engines_n; ++u)
      if (!waiting[u] && (v < 0 || free_at[u] < free_at[v])) v = u;
    if (arrival < reqs.size() && (v < 0 || reqs[arrival].arrival_ns <= free_at[v])) {
      // To the engine with the fewest unfinished requests (vLLM's add_request), the first on ties.
      int best = 0;
      for (int u = 1; u < engines_n; ++u)
        if (engines[u]->unfinished() < engines[best]->unfinished()) best = u;
      engines[best]->arrive(arrival);
      if (waiting[best]) waiting[best] = 0, free_at[best] = std::max(free_at[best], reqs[arrival].arrival_ns);
      ++arrival;
      continue;
    }
    if (v < 0) throw InternalError("serve_continuous: no step can run");
    const double t = free_at[v];
    Engine& e = *engines[v];
    if (pending[v]) {
      const size_t before = e.done();
      e.finish(t);
      pending[v] = 0;
      done += e.done() - before;
      const double others = sum([](const Engine& x) { return x.used_bytes(); }) - e.used_bytes();
      res.peak_kv_bytes = std::max(res.peak_kv_bytes, engines_n > 1 ? others + e.step_peak_bytes() : e.step_peak_bytes());
      res.peak_running = std::max(res.peak_running, static_cast<int>(sum([](const Engine& x) { return x.running(); })));
      res.kv_bytes_over_time.push_back({t, engines_n > 1 ? sum([](const Engine& x) { return x.used_bytes(); }) : e.used_bytes()});
      if (done >= reqs.size()) break;
    }
    const Planned p = e.plan(t);
    if (p.ns < 0) {
      waiting[v] = 1;
      continue;
    }
    // Through the stages: each as soon as the step has left the one before and the stage is free.
    const std::vector<double>& shares = p.prompt ? prompt_shares : decode_shares;
    double end = t;
    for (size_t s = 0; s < shares.size(); ++s) {
      end = std::max(end, stage_free[s]) + (shares.size() == 1 ? p.ns : p.ns * shares[s]);
      stage_free[s] = end;
    }
    free_at[v] = end;
    pending[v] = 1;
  }
  return res;
}

}  // namespace npusim::llm
