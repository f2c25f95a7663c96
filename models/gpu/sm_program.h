// What the SMs of one GPU play (models/gpu/sm.h): per processor (thread block, one per SM) a
// program of barriers and task-group steps, each step giving every warp slot its tasks. Built
// from an ARK plan by sim/mapping/gpu_schedule.h (ARK's executor semantics, docs/gpu.md). No SystemC.
#pragma once
#include <cstdint>
#include <tuple>
#include <vector>

#include "sim/ir/gpu_program.h"

namespace npusim::models {

// [begin, end) of a range with its step ignored, as ARK's codegen reads it.
struct ProcSpan {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end > begin ? end - begin : 0; }
  bool contains(int64_t x) const { return x >= begin && x < end; }
  bool operator==(const ProcSpan& o) const { return begin == o.begin && end == o.end; }
};

// One task_seq call: a resource group's processors run one task group.
struct TaskSeq {
  int64_t proc_begin = 0, proc_end = 0;  // the resource group's processors
  int64_t proc_current = 0;              // processor that gets the first tasks
  int64_t task_begin = 0, task_end = 0;
  int64_t granularity = 1;
  int64_t num_slots = 1;
  int64_t n_procs() const { return proc_end - proc_begin; }
};

// One task group of the plan as the processors run it.
struct GpuSeq {
  int pg = 0, rg = 0, tg = 0;
  const gpu::TaskInfo* task = nullptr;
  TaskSeq seq;
  int slot_warps = 1;       // warps of one slot: [k*slot_warps, (k+1)*slot_warps)
  int64_t slot_sram = 0;    // |SramRange| / num_slots: the slot's shared memory
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

// One task of one op of one rank: (rank, TaskInfo index, op index, task id).
using TaskKey = std::tuple<int, int, int, int64_t>;

// Cross-rank packet dependencies the SMs wait on (sim/mapping/gpu_traffic.h: CommPlan).
class PacketDeps {
 public:
  virtual ~PacketDeps() = default;
  // Writer tasks (on other ranks) whose remote writes fill what task `task` of op (rank, ti, op) reads.
  virtual std::vector<TaskKey> packet_sources(int rank, int ti, int op, int64_t task) const = 0;
  // Whether op (rank, ti, op) writes bytes some packet reader waits for.
  virtual bool is_packet_source(int rank, int ti, int op) const = 0;
  // Every task of every such op, in a fixed order (the jobs of the packet scoreboard).
  virtual std::vector<TaskKey> packet_source_tasks() const = 0;
};

// Ops whose tasks spin on packet flags: RecvPacket, RecvReduceSendPacket.
inline bool spins_on_packets(gpu::OpType t) {
  return t == gpu::OpType::RecvPacket || t == gpu::OpType::RecvReduceSendPacket;
}

}  // namespace npusim::models
