#include "sim/engine/gpu_engine.h"
#include "sim/engine/simulation.h"

#include <systemc>

#include <map>
#include <memory>
#include <utility>

#include "models/gpu/sm.h"
#include "sim/mapping/gpu_library.h"
#include "sim/mapping/gpu_schedule.h"
#include "sim/mapping/gpu_traffic.h"
#include "sim/ir/error.h"

namespace npusim::engine {

namespace {

// hbm_override: per rank, per TaskInfo, per op (empty: the L2 pass over each plan).
mapping::GpuSimResult simulate(const std::vector<gpu::Program>& plans, const models::GpuParams& params,
                               const std::vector<std::vector<std::vector<models::OpHbm>>>& hbm_override) {
  if (plans.empty()) throw InternalError("simulate_gpu: no plan");
  for (size_t r = 0; r < plans.size(); ++r)
    if (plans[r].rank != static_cast<int>(r)) throw InternalError("simulate_gpu: plans must be in rank order");
  // Resolution first: it cannot change once any sc_time exists.
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  const double period_ps = 1e6 / params.clock_mhz;
  std::vector<mapping::GpuSchedule> schedules;
  std::vector<const gpu::Program*> by_rank;
  for (const gpu::Program& p : plans) {
    schedules.push_back(mapping::build_schedule(p));
    by_rank.push_back(&p);
  }
  const mapping::CommPlan comm(by_rank);
  models::GpuSystem sys(static_cast<int>(plans.size()), params, period_ps, comm.packet_source_tasks());
  // One SM array per GPU, all sharing the system's clock, semaphores and links (the system network's switch).
  std::vector<std::unique_ptr<models::SmArray>> ranks;
  for (size_t r = 0; r < plans.size(); ++r) {
    std::vector<std::vector<models::OpHbm>> hbm;
    const mapping::L2Pass l2{params.l2_bytes, params.l2_partitions, params.l2_drift_waves, params.l2_jitter_per_wave};
    if (r < hbm_override.size()) {
      hbm = hbm_override[r];
    } else {
      for (const auto& ops : mapping::plan_hbm_traffic(plans[r], l2)) {
        hbm.emplace_back();
        for (const mapping::OpTraffic& t : ops) hbm.back().push_back({t.hbm_read_bytes + t.hbm_write_bytes, t.wait_bytes()});
      }
    }
    ranks.push_back(std::make_unique<models::SmArray>(("gpu" + std::to_string(r)).c_str(), plans[r], schedules[r], comm,
                                                      std::move(hbm), params, sys, params.launch_overhead_cycles));
  }
  run_simulation();
  std::string stuck;
  const gpu::Program* first_stuck = nullptr;
  for (const auto& g : ranks) {
    const std::string s = g->stuck_report();
    if (!s.empty() && !first_stuck) first_stuck = &g->plan();
    stuck += s;
  }
  if (first_stuck)
    throw InputError(first_stuck->source, "",
                     "the plan deadlocks: the simulation ran out of events with warps still waiting (a wait that no "
                     "signal, packet or barrier arrival ever satisfies):\n" + stuck);
  mapping::GpuSimResult res;
  res.clock_mhz = params.clock_mhz;
  res.launch_cycles = params.launch_overhead_cycles;
  res.end_cycles = res.launch_cycles;
  for (size_t r = 0; r < ranks.size(); ++r) {
    res.ranks.push_back(ranks[r]->result());
    models::GpuRankResult& rr = res.ranks.back();
    const mapping::GpuSchedule& sched = schedules[r];
    rr.processors = static_cast<int>(sched.programs.size());
    for (const auto& seq : sched.seqs) {
      std::string label = "T" + std::to_string(seq.task->id);
      for (const gpu::Op& op : seq.task->ops)
        if (!op.is_virtual) label += " " + std::string(gpu::op_type_name(op.type));
      rr.seq_labels.push_back(std::move(label));
    }
    for (const auto& b : sched.barriers) rr.barrier_ranges.push_back({b.range.begin, b.range.end});
    for (const auto& task : rr.ops)
      for (const models::GpuWork& w : task)
        for (int j = 0; j < models::kNumLimiters; ++j) rr.limiter_cycles[j] += w.limiter_cycles[j];
    res.end_cycles = std::max(res.end_cycles, rr.end_cycles);
  }
  return res;
}

}  // namespace

mapping::GpuSimResult simulate_gpu(const std::vector<gpu::Program>& plans, const models::GpuParams& params) {
  return simulate(plans, params, {});
}

std::vector<mapping::KernelSim> simulate_kernels(const std::vector<const gpu::Program*>& kernels, const models::GpuParams& params) {
  std::vector<mapping::KernelSim> out(kernels.size());
  if (kernels.empty()) return out;
  std::vector<std::pair<size_t, size_t>> pgs, tis;
  std::vector<gpu::Program> plan{mapping::chain_programs(kernels, &pgs, &tis)};
  // Each kernel's own L2 pass: it starts cold and its dirty bytes are its own write-backs.
  std::vector<std::vector<models::OpHbm>> hbm;
  const mapping::L2Pass l2{params.l2_bytes, params.l2_partitions, params.l2_drift_waves, params.l2_jitter_per_wave};
  for (const gpu::Program* k : kernels)
    for (const auto& ops : mapping::plan_hbm_traffic(*k, l2)) {
      hbm.emplace_back();
      for (const mapping::OpTraffic& t : ops) hbm.back().push_back({t.hbm_read_bytes + t.hbm_write_bytes, t.wait_bytes()});
    }
  const mapping::GpuSimResult sim = simulate(plan, params, {hbm});
  const models::GpuRankResult& r = sim.ranks.at(0);
  for (size_t i = 0; i < kernels.size(); ++i) {
    mapping::KernelSim& k = out[i];
    double start = -1, end = -1;
    for (size_t g = pgs[i].first; g < pgs[i].second; ++g) {
      const models::GpuPgStats& s = r.pgs[g];
      if (s.start < 0) continue;
      start = start < 0 ? s.start : std::min(start, s.start);
      end = std::max(end, s.end);
    }
    k.span_us = start < 0 ? 0 : (end - start) / sim.clock_mhz;
    models::LimiterCycles c{};
    for (size_t t = tis[i].first; t < tis[i].second; ++t)
      for (const models::GpuWork& w : r.ops[t]) {
        k.hbm_bytes += w.hbm_bytes, k.l2_bytes += w.l2_bytes, k.flops += w.flops;
        for (int j = 0; j < models::kNumLimiters; ++j) c[j] += w.limiter_cycles[j];
      }
    const models::Bound b = models::bound_of(c);
    if (b.name != "-") k.bound = b.name, k.bound_share = b.share;
  }
  return out;
}

LibraryRun simulate_library(mapping::LibraryPlan plan, const models::GpuParams& params) {
  LibraryRun run;
  std::map<std::string, size_t> first_of;  // signature -> first kernel with it
  std::vector<const gpu::Program*> programs;
  std::vector<size_t> first_program;       // per distinct kernel: index of its first candidate
  std::vector<size_t> distinct_of(plan.kernels.size());
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const mapping::LibraryKernel& k = plan.kernels[i];
    auto [it, fresh] = first_of.emplace(k.signature, first_program.size());
    distinct_of[i] = it->second;
    if (!fresh) continue;
    first_program.push_back(programs.size());
    for (const mapping::KernelCandidate& c : k.candidates) programs.push_back(&c.program);
  }
  const std::vector<mapping::KernelSim> sims = simulate_kernels(programs, params);
  // The fastest candidate of each distinct kernel (the first of equals).
  std::vector<size_t> best(first_program.size());
  for (size_t d = 0; d < first_program.size(); ++d) {
    const size_t end = d + 1 < first_program.size() ? first_program[d + 1] : programs.size();
    best[d] = 0;
    for (size_t c = first_program[d]; c < end; ++c)
      if (sims[c].span_us < sims[first_program[d] + best[d]].span_us) best[d] = c - first_program[d];
  }
  std::vector<double> spans;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const size_t d = distinct_of[i];
    run.chosen.push_back(best[d]);
    run.sims.push_back(sims[first_program[d] + best[d]]);
    spans.push_back(run.sims.back().span_us);
  }
  const double us_per_cycle = 1.0 / params.clock_mhz;
  run.timeline = mapping::launch_timeline(spans, plan.options.launch, params.launch_overhead_cycles * us_per_cycle,
                                          params.graph_gap_cycles * us_per_cycle, params.eager_host_cycles * us_per_cycle);
  run.distinct = static_cast<int>(first_program.size());
  run.plan = std::move(plan);
  return run;
}

}  // namespace npusim::engine
