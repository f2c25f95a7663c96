#include "sim/engine/gpu_engine.h"

#include <systemc>

#include <memory>
#include <utility>

#include "models/gpu/sm.h"
#include "sim/mapping/gpu_schedule.h"
#include "sim/mapping/gpu_traffic.h"
#include "sim/ir/error.h"

namespace npusim::engine {

mapping::GpuSimResult simulate_gpu(const std::vector<gpu::Program>& plans, const models::GpuParams& params) {
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
  // One SM array per GPU, all sharing the system's clock, semaphores and link fabric.
  std::vector<std::unique_ptr<models::SmArray>> ranks;
  for (size_t r = 0; r < plans.size(); ++r) {
    std::vector<std::vector<models::OpHbm>> hbm;
    const mapping::L2Pass l2{params.l2_bytes, params.l2_partitions, params.l2_drift_waves, params.l2_jitter_per_wave};
    for (const auto& ops : mapping::plan_hbm_traffic(plans[r], l2)) {
      hbm.emplace_back();
      for (const mapping::OpTraffic& t : ops) hbm.back().push_back({t.hbm_read_bytes + t.hbm_write_bytes, t.wait_bytes()});
    }
    ranks.push_back(std::make_unique<models::SmArray>(("gpu" + std::to_string(r)).c_str(), plans[r], schedules[r], comm,
                                                      std::move(hbm), params, sys, params.launch_overhead_cycles));
  }
  sc_core::sc_start();
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
  for (const auto& g : ranks) {
    res.ranks.push_back(g->result());
    res.end_cycles = std::max(res.end_cycles, res.ranks.back().end_cycles);
  }
  return res;
}

}  // namespace npusim::engine
