// The SMs of one GPU (a SystemC unit): they play their programs (models/gpu/sm_program.h, built
// by sim/mapping/gpu_schedule.h) with ARK's semantics. Each warp of each processor walks the processor's steps:
// at a barrier it waits for every warp of the range; at a task group it joins its slot
// (warps [k*NumWarps, (k+1)*NumWarps)), whose first warp runs the slot's tasks once all of
// the slot's warps are there, the others waiting for it. A warp that leads a slot somewhere is
// an SC_THREAD; one that only ever waits is an SC_METHOD stepping the same walk (no stack of its
// own: most warps of a kernel only wait, and a thread each made their creation and switching
// most of a simulation's time). Warps that get no slot go straight
// on, so resource groups of one processor run in program order without a barrier, as in the
// generated kernel. A task runs its TaskInfo's ops in order; each op's time comes from
// models/gpu/gpu_timing.h and the shared servers (models/kernel/rate_server.h: the SM's math
// pipes, the GPU's L2 and HBM; the links of the system network, models/interconnect/network.h). Params:
// GpuParams (models/gpu/gpu_timing.h); stats: GpuRankResult (models/gpu/sm_stats.h).
#pragma once
#include <systemc>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "models/gpu/gpu_sync.h"
#include "models/gpu/gpu_timing.h"
#include "models/gpu/sm_program.h"
#include "models/gpu/sm_stats.h"
#include "models/kernel/clock.h"
#include "models/kernel/rate_server.h"

namespace npusim::models {

// What the L2 pass (sim/mapping/gpu_traffic.h) says of one op's HBM traffic, spread evenly over
// its tasks: the bytes moved to and from HBM, and the load bytes its tasks wait on HBM for (a
// miss counts for every tile of a wave that reads the panel: they wait on the same fill).
struct OpHbm {
  double bytes = 0;
  double wait_bytes = 0;
};

class SmArray : public sc_core::sc_module {
 public:
  // hbm: per TaskInfo, per op.
  SmArray(sc_core::sc_module_name name, const gpu::Program& plan, const GpuSchedule& sched, const PacketDeps& comm,
          std::vector<std::vector<OpHbm>> hbm, const GpuParams& params, GpuSystem& sys, double start_cycle);
  // After the simulation: what this GPU did.
  GpuRankResult result() const;
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
  // A warp that never leads a slot, as an SC_METHOD: each call takes it as far as it can go and
  // names what it waits for next.
  struct Follower {
    int proc = 0, warp = 0;
    size_t me = 0;   // its index in m_waiting / m_finished
    size_t si = 0;   // the step it is at
    int last_pg = -1;
    enum class At { Start, Step, Slot, Barrier, Release } at = At::Start;
  };
  void follow(size_t f);
  // Whether the SC_METHOD must wait until `cycle` (and has been told to), as Clock::wait_until waits.
  bool trigger_at(double cycle);
  // thread: the slot leader's warp thread (its waits are recorded for deadlock reports).
  void run_slot(int proc, size_t thread, size_t step, int slot);
  void run_op(int proc, size_t thread, const GpuSeq& q, int ti, int oi, const int64_t* ids, size_t n);
  TaskDemand demand(const GpuSeq& q, int seq_index, int ti, int oi, int64_t task);
  void busy(int proc, bool start);
  int task_index(const gpu::TaskInfo* t) const { return static_cast<int>(t - m_plan.task_infos.data()); }

  const gpu::Program& m_plan;
  const GpuSchedule& m_sched;
  const PacketDeps& m_comm;
  const GpuParams& m_p;
  GpuSystem& m_sys;
  const int m_rank;
  const double m_start;
  std::vector<std::vector<OpHbm>> m_hbm;  // [task info][op]
  RateServer m_hbm_server, m_l2;
  // Per processor (SM), shared by its slots: the math pipes (in full-SM math cycles), the
  // shared-memory port (cycles) and the SM's L2 port (bytes).
  std::deque<RateServer> m_math, m_smem, m_port;
  std::deque<BarrierState> m_barriers;    // per schedule barrier
  std::deque<SlotSync> m_slot_sync;
  std::vector<std::vector<size_t>> m_slot_base;   // [proc][step] -> first SlotSync
  std::vector<size_t> m_span_base;                // [proc] -> first span
  std::vector<int> m_warps;                       // warps spawned per processor
  std::vector<int> m_active;                      // slots running a task, per processor
  std::vector<double> m_busy_since;
  std::vector<std::vector<std::optional<TaskDemand>>> m_demand_cache;  // [seq][op]
  std::vector<std::string> m_waiting;             // per warp thread: what it blocks on
  std::vector<bool> m_finished;
  std::vector<size_t> m_warp_base;                // [proc] -> first warp index
  std::deque<Follower> m_followers;
  GpuRankResult m_res;
};

}  // namespace npusim::models
