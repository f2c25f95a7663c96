// Continuous batching (docs/llm.md#continuous-batching): vLLM-like schedulers, each a state
// machine that plans one step at a time and applies it when the step ends - two step policies
// (prefill first, chunked prefill) over one block manager (whole-life or on-demand blocks) - and
// the driver that runs one of them on a device, or several (vLLM's virtual engines) whose steps
// flow through the stages of a pipeline-parallel model at once.
#include <algorithm>
#include <cmath>
#include <memory>

#include "sim/ir/error.h"
#include "sim/llm/serving.h"

namespace npusim::llm {

namespace {

// vLLM's block manager: the KV cache in paged blocks (tokens per block, bytes per block, how many
// fit, how many are held), and when a sequence takes its blocks. Whole-life: every block of its
// prompt and output when it is admitted, so it never runs out. On demand (docs/llm.md#preemption):
// the blocks of the tokens it holds, one more whenever its last is full; when they run out, a
// policy preempts the newest sequence (its blocks freed, recomputed later).
class BlockManager {
 public:
  explicit BlockManager(const SchedulerOptions& o)
      : tokens_(o.block_tokens), bytes_(static_cast<double>(o.block_tokens) * o.kv_bytes_per_token),
        capacity_(static_cast<int64_t>(std::floor(o.kv_capacity_bytes / bytes_))), on_demand_(o.on_demand_blocks) {}
  // The blocks a sequence of request q must hold while it keeps kv tokens.
  int64_t needed(const Request& q, int64_t kv) const { return for_tokens(on_demand_ ? kv : q.input + q.output); }
  bool fits(int64_t more) const { return used_ + more <= capacity_; }
  void take(int64_t n) { used_ += n; }
  void release(int64_t n) { used_ -= n; }
  void mark_peak() { peak_ = used_; }  // what a step holds, before it frees anything
  double used_bytes() const { return static_cast<double>(used_) * bytes_; }
  double step_peak_bytes() const { return static_cast<double>(peak_) * bytes_; }

 private:
  int64_t for_tokens(int64_t n) const { return (n + tokens_ - 1) / tokens_; }
  int64_t tokens_;
  double bytes_;
  int64_t capacity_;
  bool on_demand_;
  int64_t used_ = 0, peak_ = 0;  // blocks
};

// An admitted request: KV tokens held, prompt tokens (or recomputed tokens) not yet through a
// step, tokens generated, blocks held.
struct Seq {
  size_t id;
  int64_t kv = 0, prompt_left = 0, generated = 0, blocks = 0;
};

// A step planned at some time: its duration, and whether it holds prompt tokens (prefill or
// mixed) or decodes only.
struct Planned {
  double ns = -1;  // < 0: nothing can run until more requests arrive
  bool prompt = false;
  double power_w = 0;  // the device's power during it (0: not modelled)
};

// One scheduler (one vLLM engine): the requests given to it as they arrive, in arrival order.
// plan(t) decides the next step at t from what has arrived; finish(t) applies it when it ends
// at t (first tokens, finished requests, freed blocks). Counters and request times go to res.
class Engine {
 public:
  Engine(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost, ContinuousResult& res)
      : reqs_(reqs), opt_(opt), cost_(cost), res_(res), blocks_(opt) {}
  virtual ~Engine() = default;
  void arrive(size_t id) { queue_.push_back(id); }
  size_t unfinished() const { return queue_.size() - done_; }
  size_t done() const { return done_; }
  virtual Planned plan(double t) = 0;
  virtual void finish(double t) = 0;
  double used_bytes() const { return blocks_.used_bytes(); }            // KV cache held now
  double step_peak_bytes() const { return blocks_.step_peak_bytes(); }  // the most the last step held
  int running() const { return static_cast<int>(admitted_.size()); }    // requests admitted and not finished

 protected:
  // Arrived and not yet admitted: queue_[next_ ...].
  bool has_waiting(size_t k = 0) const { return next_ + k < queue_.size(); }
  size_t waiting(size_t k = 0) const { return queue_[next_ + k]; }
  void finished(size_t id, double t) { res_.requests[id].finish_ns = t, ++done_; }
  double prompt_power(int64_t tokens) const { return cost_.prompt_power_w ? cost_.prompt_power_w(tokens) : 0; }
  double decode_power(int batch) const { return cost_.decode_power_w ? cost_.decode_power_w(batch) : 0; }
  // Sequence s has given its last token at t: its blocks are freed.
  void finish_seq(const Seq& s, double t) { finished(s.id, t), blocks_.release(s.blocks); }
  // Preempts the newest admitted sequence: its blocks freed, resumed later in arrival order by
  // prefilling its prompt and the tokens it had generated again.
  void preempt_newest() {
    const Seq& v = admitted_.back();
    blocks_.release(v.blocks);
    preempted_.push_back({v.id, v.generated});
    std::sort(preempted_.begin(), preempted_.end());
    admitted_.pop_back();
    ++res_.preemptions;
  }

  const std::vector<Request>& reqs_;
  const SchedulerOptions& opt_;
  const StepCost& cost_;
  ContinuousResult& res_;
  std::vector<size_t> queue_;
  size_t next_ = 0, done_ = 0;
  BlockManager blocks_;
  std::vector<Seq> admitted_;  // admission order: the last is the first preempted
  std::vector<std::pair<size_t, int64_t>> preempted_;  // (id, tokens generated): resumed first, oldest first
};

// The whole life's blocks of request q (checked against the cache before serving).
double whole_life_bytes(const Request& q, const SchedulerOptions& opt) {
  const int64_t blocks = (q.input + q.output + opt.block_tokens - 1) / opt.block_tokens;
  return static_cast<double>(blocks * opt.block_tokens) * opt.kv_bytes_per_token;
}

// vLLM's scheduler, prefill first: whenever requests wait (preempted ones first, then arrivals
// in order) and their blocks fit, a prefill step takes them (up to max_batch_tokens prompt tokens
// and max_seqs running); otherwise every running request decodes one token, the newest preempted
// first while the blocks of the others' next tokens do not fit.
class PrefillFirst : public Engine {
 public:
  using Engine::Engine;
  Planned plan(double t) override {
    // Requests whose KV cache came with them (disaggregated decode) join the decodes at once.
    while (has_waiting() && reqs_[waiting()].prefilled && static_cast<int>(admitted_.size()) < opt_.max_seqs) {
      Seq s;
      s.id = waiting(), s.kv = reqs_[s.id].input, s.generated = 1;
      s.blocks = blocks_.needed(reqs_[s.id], s.kv);
      if (!blocks_.fits(s.blocks)) break;
      blocks_.take(s.blocks);
      ++next_;
      if (s.generated >= reqs_[s.id].output) finish_seq(s, t);
      else admitted_.push_back(s);
    }
    admit_.clear();
    int64_t tokens = 0, add = 0;
    resumed_ = 0, arrived_ = 0;
    for (;;) {
      Seq s;
      if (resumed_ < preempted_.size()) {
        s.id = preempted_[resumed_].first, s.generated = preempted_[resumed_].second;
      } else if (has_waiting(arrived_) && !reqs_[waiting(arrived_)].prefilled) {
        s.id = waiting(arrived_);
      } else {
        break;
      }
      s.kv = reqs_[s.id].input + s.generated;
      // A resumed request emits its next token with the prefill: one slot more.
      s.blocks = blocks_.needed(reqs_[s.id], s.kv + (s.generated > 0 ? 1 : 0));
      if (static_cast<int>(admitted_.size() + admit_.size()) >= opt_.max_seqs) break;
      if (!admit_.empty() && tokens + s.kv > opt_.max_batch_tokens) break;
      if (!blocks_.fits(add + s.blocks)) break;
      tokens += s.kv, add += s.blocks;
      admit_.push_back(s);
      (resumed_ < preempted_.size() ? resumed_ : arrived_) += 1;
    }
    if (!admit_.empty()) return {cost_.prefill_ns(tokens, static_cast<int>(admit_.size())), true, prompt_power(tokens)};
    if (admitted_.empty()) {
      if (!preempted_.empty()) throw InternalError("serve_continuous: preempted requests that cannot be resumed on an empty cache");
      return {};
    }
    // Each running request needs a slot for its next token.
    auto need = [&]() {
      int64_t n = 0;
      for (const Seq& s : admitted_) n += blocks_.needed(reqs_[s.id], s.kv + 1) - s.blocks;
      return n;
    };
    while (admitted_.size() > 1 && !blocks_.fits(need())) preempt_newest();
    double kv = 0;
    for (const Seq& s : admitted_) kv += static_cast<double>(s.kv);
    return {cost_.decode_ns(static_cast<int>(admitted_.size()), kv / static_cast<double>(admitted_.size())), false,
            decode_power(static_cast<int>(admitted_.size()))};
  }
  void finish(double t) override {
    if (!admit_.empty()) {
      ++res_.prefill_steps;
      res_.tokens_out.push_back({t, static_cast<int>(admit_.size())});
      for (const Seq& s : admit_) blocks_.take(s.blocks);
      blocks_.mark_peak();
      preempted_.erase(preempted_.begin(), preempted_.begin() + static_cast<long>(resumed_));
      next_ += arrived_;
      for (Seq s : admit_) {
        if (s.generated == 0) res_.requests[s.id].first_token_ns = t;
        ++s.generated;
        if (s.generated >= reqs_[s.id].output) finish_seq(s, t);
        else admitted_.push_back(s);
      }
      admit_.clear();
      return;
    }
    ++res_.decode_steps;
    res_.tokens_out.push_back({t, static_cast<int>(admitted_.size())});
    for (Seq& s : admitted_) {
      const int64_t b = blocks_.needed(reqs_[s.id], s.kv + 1);
      blocks_.take(b - s.blocks), s.blocks = b;
    }
    blocks_.mark_peak();
    std::vector<Seq> still;
    for (Seq s : admitted_) {
      ++s.kv, ++s.generated;
      if (s.generated >= reqs_[s.id].output) finish_seq(s, t);
      else still.push_back(s);
    }
    admitted_.swap(still);
  }

 private:
  std::vector<Seq> admit_;  // the planned prefill (empty: a decode step)
  size_t resumed_ = 0, arrived_ = 0;
};

// Chunked prefill (vLLM v1, Sarathi-Serve): every step takes at most max_batch_tokens tokens:
// the admitted requests in admission order (a decode one token, a prompt in progress its next
// chunk; when the blocks of one do not fit, the newest is preempted, itself when it is the
// newest), then preempted requests' recomputes and new arrivals while their first chunk's
// blocks fit. A request's first token comes with the step that ends its prompt.
class Chunked : public Engine {
 public:
  Chunked(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost, ContinuousResult& res)
      : Engine(reqs, opt, cost, res) {
    if (!cost.mixed_ns) throw InternalError("serve_continuous: chunked prefill without a mixed step cost");
  }
  Planned plan(double) override {
    int64_t budget = opt_.max_batch_tokens;
    decodes_.clear(), chunks_.clear();
    for (size_t i = 0; i < admitted_.size() && budget > 0; ++i) {
      const bool decode = admitted_[i].prompt_left == 0;
      const int64_t n = decode ? 1 : std::min(admitted_[i].prompt_left, budget);
      const int64_t need = blocks_.needed(reqs_[admitted_[i].id], admitted_[i].kv + n) - admitted_[i].blocks;
      while (!blocks_.fits(need) && admitted_.size() - 1 > i) preempt_newest();
      if (!blocks_.fits(need)) {
        preempt_newest();
        break;
      }
      blocks_.take(need), admitted_[i].blocks += need, budget -= n;
      if (decode) decodes_.push_back(i);
      else chunks_.push_back({i, n});
    }
    while (budget > 0 && static_cast<int>(admitted_.size()) < opt_.max_seqs) {
      Seq s;
      const bool resumed = !preempted_.empty();
      if (resumed) {
        s.id = preempted_.front().first, s.generated = preempted_.front().second;
      } else if (has_waiting()) {
        s.id = waiting();
      } else {
        break;
      }
      s.prompt_left = reqs_[s.id].input + s.generated;
      const int64_t n = std::min(s.prompt_left, budget);
      s.blocks = blocks_.needed(reqs_[s.id], n);
      if (!blocks_.fits(s.blocks)) break;
      blocks_.take(s.blocks), budget -= n;
      admitted_.push_back(s);
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
            prompt_tokens_ > 0, prompt_tokens_ > 0 ? prompt_power(prompt_tokens_) : decode_power(static_cast<int>(decodes_.size()))};
  }
  void finish(double t) override {
    if (prompt_tokens_ > 0) ++res_.mixed_steps;
    else ++res_.decode_steps;
    blocks_.mark_peak();
    int out = 0;
    for (size_t i : decodes_) ++admitted_[i].kv, ++admitted_[i].generated, ++out;
    for (const auto& [i, c] : chunks_) {
      Seq& s = admitted_[i];
      s.kv += c, s.prompt_left -= c;
      if (s.prompt_left > 0) continue;
      if (s.generated == 0) res_.requests[s.id].first_token_ns = t;
      ++s.generated, ++out;
    }
    std::vector<Seq> still;
    for (const Seq& s : admitted_) {
      if (s.prompt_left == 0 && s.generated >= reqs_[s.id].output) finish_seq(s, t);
      else still.push_back(s);
    }
    admitted_.swap(still);
    res_.tokens_out.push_back({t, out});
  }

 private:
  std::vector<size_t> decodes_;                     // the planned step's decodes (indices into admitted_)
  std::vector<std::pair<size_t, int64_t>> chunks_;  // and prompt chunks (index into admitted_, tokens)
  int64_t prompt_tokens_ = 0;
};

std::unique_ptr<Engine> make_engine(const std::vector<Request>& reqs, const SchedulerOptions& opt, const StepCost& cost,
                                    ContinuousResult& res) {
  if (opt.chunked_prefill) return std::make_unique<Chunked>(reqs, opt, cost, res);
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
    res.busy_ns += p.ns, res.busy_energy_j += p.power_w * p.ns * 1e-9;
    res.step_spans.push_back({end - (shares.size() == 1 ? p.ns : p.ns * shares.back()), end});
  }
  return res;
}

}  // namespace npusim::llm
