// One GPU of a simulation: its SMs play their programs (sim/mapping/gpu_schedule.h) with ARK's
// semantics. Each warp of each processor is an SC_THREAD that walks the processor's steps:
// at a barrier it waits for every warp of the range; at a task group it joins its slot
// (warps [k*NumWarps, (k+1)*NumWarps)), whose first warp runs the slot's tasks once all of
// the slot's warps are there, the others waiting for it. Warps that get no slot go straight
// on, so resource groups of one processor run in program order without a barrier, as in the
// generated kernel. A task runs its TaskInfo's ops in order; each op's time comes from
// models/gpu/gpu_timing.h and the shared servers (the SM's math pipes, L2, HBM, links).
#pragma once
#include <systemc>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu/gpu_sync.h"
#include "models/gpu/gpu_timing.h"
#include "sim/mapping/gpu_schedule.h"
#include "sim/mapping/gpu_stats.h"
#include "sim/mapping/gpu_traffic.h"

namespace npusim::engine {

class GpuRank : public sc_core::sc_module {
 public:
  GpuRank(sc_core::sc_module_name name, const gpu::Program& plan, const mapping::GpuSchedule& sched,
          const mapping::CommPlan& comm, const models::GpuParams& params, models::GpuSystem& sys, double start_cycle);
  // After the simulation: what this GPU did.
  mapping::GpuRankResult result() const;
  // Warps that never finished, each with what it waits for ("" when all finished).
  std::string stuck_report() const;
  const gpu::Program& plan() const { return m_plan; }

 private:
  struct SlotSync {
    int arrived = 0;
    bool done = false;
    sc_core::sc_event joined, finished;
  };
  void warp_thread(int proc, int warp);
  // thread: the slot leader's warp thread (its waits are recorded for deadlock reports).
  void run_slot(int proc, size_t thread, size_t step, int slot);
  void run_op(int proc, size_t thread, const mapping::GpuSeq& q, int ti, int oi, const int64_t* ids, size_t n);
  models::TaskDemand demand(const mapping::GpuSeq& q, int seq_index, int ti, int oi, int64_t task);
  void busy(int proc, bool start);
  int task_index(const gpu::TaskInfo* t) const { return static_cast<int>(t - m_plan.task_infos.data()); }

  const gpu::Program& m_plan;
  const mapping::GpuSchedule& m_sched;
  const mapping::CommPlan& m_comm;
  const models::GpuParams& m_p;
  models::GpuSystem& m_sys;
  const int m_rank;
  const double m_start;
  std::vector<std::vector<mapping::OpTraffic>> m_traffic;
  models::RateServer m_hbm, m_l2;
  std::deque<models::RateServer> m_math;          // per processor
  std::deque<models::BarrierState> m_barriers;    // per schedule barrier
  std::deque<SlotSync> m_slot_sync;
  std::vector<std::vector<size_t>> m_slot_base;   // [proc][step] -> first SlotSync
  std::vector<size_t> m_span_base;                // [proc] -> first span
  std::vector<int> m_warps;                       // warps spawned per processor
  std::vector<int> m_active;                      // slots running a task, per processor
  std::vector<double> m_busy_since;
  std::vector<std::vector<std::optional<models::TaskDemand>>> m_demand_cache;  // [seq][op]
  std::vector<std::string> m_waiting;             // per warp thread: what it blocks on
  std::vector<bool> m_finished;
  std::vector<size_t> m_warp_base;                // [proc] -> first warp thread index
  mapping::GpuRankResult m_res;
};

}  // namespace npusim::engine
