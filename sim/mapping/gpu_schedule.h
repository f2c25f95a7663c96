// How ARK's executor runs a plan (notes/format_notes.md §1.4, docs/gpu.md#semantics): which
// barriers the code generator puts before each processor group, and which tasks each processor
// (thread block, one per SM) runs in each slot. No SystemC: unit-tested in-process; the GPU
// model (models/gpu/sm.h) plays the resulting per-processor programs.
//
// Ranges: ARK's codegen reads only [begin, end) of ProcessorRange, WarpRange, SramRange and
// TaskRange, so a step in the file is ignored here too. Task distribution follows the
// documented formula (relative processor p = (proc - current) mod n_procs), not the generated
// code's `% gridDim.x`, which differs when a resource group neither starts at the current
// processor nor reaches the last block.
#pragma once
#include <cstdint>
#include <vector>

#include "models/gpu/sm_program.h"
#include "sim/ir/gpu_program.h"

namespace npusim::mapping {

// The schedule types live with the SM model that plays them (models/gpu/sm_program.h).
using models::GpuBarrier;
using models::GpuSchedule;
using models::GpuSeq;
using models::GpuStep;
using models::ProcSpan;
using models::TaskSeq;

// [begin, end) of a range, its step ignored.
ProcSpan span_of(const gpu::Range& r);

// The barriers emitted before each processor group (index = PG index in the file), in order.
// For a new group P and each earlier unsynchronised range U that intersects P: if U is not
// inside P, sync U (and P too when P is not inside U either); if U is inside P, sync P; U is
// then synchronised. Groups with an empty range emit nothing and are skipped.
std::vector<std::vector<ProcSpan>> plan_barriers(const gpu::Program& p);

// Task ids processor `proc` runs in slot `slot`, in order: with p = (proc - current) mod
// n_procs, the t-th (t = slot, slot + num_slots, ...) is
//   task_begin + p*g + t%g + (t/g)*g*n_procs, while < task_end.
std::vector<int64_t> slot_tasks(const TaskSeq& s, int64_t proc, int64_t slot);

// The task_seq calls of a resource group, one per task group, the start processor rotating
// after each: current = begin + ((current - begin) + ceil(n_tasks / g)) mod n_procs.
std::vector<TaskSeq> resource_group_seqs(const gpu::ResourceGroup& rg, const gpu::Program& p);

GpuSchedule build_schedule(const gpu::Program& p);

}  // namespace npusim::mapping
