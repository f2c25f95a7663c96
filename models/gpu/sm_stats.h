// What the SM model of one GPU measured (models/gpu/sm.h fills it, sim/report/gpu_report.cpp
// reads it). All times in cycles of clock_mhz from the kernel launch; no SystemC.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/gpu/gpu_timing.h"

namespace npusim::models {

using LimiterCycles = std::array<double, kNumLimiters>;

// The term that decided the most slot time (the first of equals), or -1 when nothing ran.
inline int dominant_limiter(const LimiterCycles& c) {
  int best = -1;
  for (int i = 0; i < kNumLimiters; ++i)
    if (c[i] > 0 && (best < 0 || c[i] > c[best])) best = i;
  return best;
}

// The bound of some work: the term that decided the most slot time ("-" when nothing ran) and
// its share of that time. The one place a GPU report, a kernel and a calibration row get it.
struct Bound {
  std::string name = "-";
  double share = 0;
};
inline Bound bound_of(const LimiterCycles& c) {
  Bound b;
  double total = 0;
  for (double x : c) total += x;
  const int best = dominant_limiter(c);
  if (best >= 0) b.name = limiter_name(static_cast<Limiter>(best)), b.share = c[best] / total;
  return b;
}

// Work counted per processor group and per op.
struct GpuWork {
  int64_t tasks = 0;
  double slot_cycles = 0;  // task time summed over slots (a task on 2 slots at once counts twice)
  double flops = 0, l2_bytes = 0, hbm_bytes = 0, link_bytes = 0;
  LimiterCycles limiter_cycles{};  // slot_cycles split by the term that decided each task's end
};

struct GpuPgStats {
  double start = -1, end = -1;  // first task start, last task end (-1: ran no task)
  GpuWork work;
};

// One step of one processor: its tasks of one task group, or a barrier (from the processor's
// arrival, when its last warp got there, to the release).
struct GpuSpan {
  int sm = 0;
  int pg = 0;
  int seq = -1;      // GpuSchedule::seqs index; -1 for a barrier
  int barrier = -1;  // GpuSchedule::barriers index
  double start = 0, end = 0;
  int64_t tasks = 0;
};

struct GpuRankResult {
  int rank = 0;
  double end_cycles = 0;  // last task or barrier of this rank
  std::vector<double> sm_busy_cycles;  // time with at least one slot running a task, per processor
  std::vector<int64_t> sm_tasks;
  double hbm_bytes = 0, hbm_busy_cycles = 0, l2_bytes = 0, l2_busy_cycles = 0;
  double link_out_bytes = 0;
  std::vector<GpuPgStats> pgs;              // per processor group of the plan
  std::vector<std::vector<GpuWork>> ops;    // per TaskInfo index, per op
  std::vector<GpuSpan> spans;               // in (processor, program) order
  std::vector<double> barrier_release;      // per GpuSchedule::barriers
  std::vector<int> barrier_last_pg;         // processor group the last arrival came from (-1: none)
  LimiterCycles limiter_cycles{};           // over every op of the rank (its bound: bound_of)
  // The schedule the spans index (filled by the engine, so writers need not rebuild it):
  int processors = 0;                               // processors of the schedule (SMs in use)
  std::vector<std::string> seq_labels;              // per GpuSchedule::seqs: "T<id> <op types>"
  std::vector<std::pair<int, int>> barrier_ranges;  // per GpuSchedule::barriers: processors [begin, end)
};

struct GpuSimResult {
  double clock_mhz = 0;
  double launch_cycles = 0;  // gpu.launch_overhead_us: nothing runs before it
  double end_cycles = 0;     // max over ranks
  std::vector<GpuRankResult> ranks;  // by rank
};

}  // namespace npusim::models
