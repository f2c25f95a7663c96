// How ARK's executor runs a plan (notes/format_notes.md §1.4, docs/gpu.md#semantics): which
// barriers the code generator puts before each processor group, and which tasks each processor
// (thread block, one per SM) runs in each slot. No SystemC: unit-tested in-process; the GPU
// model (sim/engine/gpu_engine.cpp) plays the resulting per-processor programs.
//
// Ranges: ARK's codegen reads only [begin, end) of ProcessorRange, WarpRange, SramRange and
// TaskRange, so a step in the file is ignored here too. Task distribution follows the
// documented formula (relative processor p = (proc - current) mod n_procs), not the generated
// code's `% gridDim.x`, which differs when a resource group neither starts at the current
// processor nor reaches the last block.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/ir/gpu_program.h"

namespace npusim::mapping {

// [begin, end) of a range with its step ignored, as codegen reads it.
struct ProcSpan {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end > begin ? end - begin : 0; }
  bool contains(int64_t x) const { return x >= begin && x < end; }
  bool operator==(const ProcSpan& o) const { return begin == o.begin && end == o.end; }
};
ProcSpan span_of(const gpu::Range& r);

// The barriers emitted before each processor group (index = PG index in the file), in order.
// For a new group P and each earlier unsynchronised range U that intersects P: if U is not
// inside P, sync U (and P too when P is not inside U either); if U is inside P, sync P; U is
// then synchronised. Groups with an empty range emit nothing and are skipped.
std::vector<std::vector<ProcSpan>> plan_barriers(const gpu::Program& p);

// One task_seq call: a resource group's processors run one task group.
struct TaskSeq {
  int64_t proc_begin = 0, proc_end = 0;  // the resource group's processors
  int64_t proc_current = 0;              // processor that gets the first tasks
  int64_t task_begin = 0, task_end = 0;
  int64_t granularity = 1;
  int64_t num_slots = 1;
  int64_t n_procs() const { return proc_end - proc_begin; }
};

// Task ids processor `proc` runs in slot `slot`, in order: with p = (proc - current) mod
// n_procs, the t-th (t = slot, slot + num_slots, ...) is
//   task_begin + p*g + t%g + (t/g)*g*n_procs, while < task_end.
std::vector<int64_t> slot_tasks(const TaskSeq& s, int64_t proc, int64_t slot);

// The task_seq calls of a resource group, one per task group, the start processor rotating
// after each: current = begin + ((current - begin) + ceil(n_tasks / g)) mod n_procs.
std::vector<TaskSeq> resource_group_seqs(const gpu::ResourceGroup& rg, const gpu::Program& p);

// One task group of the plan as the processors run it.
struct GpuSeq {
  int pg = 0, rg = 0, tg = 0;
  const gpu::TaskInfo* task = nullptr;
  TaskSeq seq;
  int slot_warps = 1;       // warps of one slot: [k*slot_warps, (k+1)*slot_warps)
  int64_t slot_sram = 0;    // |SramRange| / num_slots
};

struct GpuBarrier {
  ProcSpan range;
  int pg = 0;        // emitted before this processor group
  int state_id = 0;  // one sync state per distinct range (ARK_LOOP_SYNC_STATE_<id>)
};

// A step of one processor's program: a barrier, or its slots' tasks of one task group.
struct GpuStep {
  bool barrier = false;
  int index = 0;  // into GpuSchedule::barriers or GpuSchedule::seqs
  std::vector<std::vector<int64_t>> slot_tasks;  // tasks: per slot, in order
};

struct GpuSchedule {
  int num_processors = 0;
  int warps_per_processor = 0;
  std::vector<GpuBarrier> barriers;            // in emission order
  std::vector<GpuSeq> seqs;                    // in program order
  std::vector<std::vector<GpuStep>> programs;  // per processor; task steps with no task are left out
};

GpuSchedule build_schedule(const gpu::Program& p);

}  // namespace npusim::mapping
