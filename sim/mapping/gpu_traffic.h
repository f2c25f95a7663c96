// Memory traffic of a plan that does not depend on timing: which bytes of each op reach HBM
// (an LRU L2 played over the ops in program order, models/gpu/l2_timing.h), and, for
// multi-rank runs, which remote writes fill the bytes a packet reader spins on. No SystemC.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "models/gpu/l2_timing.h"
#include "models/gpu/sm_program.h"
#include "sim/ir/gpu_program.h"

namespace npusim::mapping {

struct OpTraffic {
  double hbm_read_bytes = 0;   // L2 misses of its reads
  double hbm_write_bytes = 0;  // dirty bytes its accesses evict (write-backs)
  // A Matmul's reads its tiles wait on HBM for: a wave's missed panel counts once per tile of
  // the wave that reads it (they wait on the same fill); other ops: hbm_read_bytes.
  double wait_read_bytes = -1;
  double wait_bytes() const { return (wait_read_bytes < 0 ? hbm_read_bytes : wait_read_bytes) + hbm_write_bytes; }
  double per_task(int64_t num_tasks) const {
    return num_tasks > 0 ? (hbm_read_bytes + hbm_write_bytes) / static_cast<double>(num_tasks) : 0;
  }
};

// The L2 as the reuse pass sees it: `bytes` in all; a panel shared by SMs on both sides finds
// bytes / partitions; the slots of an SM drift from starting together to evenly staggered
// starts over drift_waves waves (0: lockstep), and the SMs' phases wander apart by
// jitter_per_wave a wave (models::tile_start). gpu.l2.size_mib, .partitions, .drift_waves,
// .jitter_per_wave.
struct L2Pass {
  int64_t bytes = 0;
  int partitions = 1;
  double drift_waves = 0;
  double jitter_per_wave = 0;
};

// How a Matmul's tiles run, for its reuse pass: processors x slots tiles at once, on `l2`.
struct TilePass {
  int64_t processors = 1, slots = 1;
  L2Pass l2;
};

// A Matmul's A and B reads in time (docs/gpu.md#l2-reuse-in-time): tiles start in task order
// (models::tile_start), each reads its row and column panels chunk by chunk along K; a chunk
// read again hits with models::l2_reuse_hit_share of the distinct bytes read since. First reads
// go through `l2` (an earlier op may have left the bytes); other reads whole. False (nothing
// played) for other ops, or above 65536 tiles.
bool play_matmul_tiles(models::L2Residency& l2, const gpu::Op& op, const TilePass& pass, int rank, OpTraffic& t);

// Byte range of a tensor within its buffer: from its first to one past its last element.
models::ByteRegion tensor_region(const gpu::Tensor& t);

// Per TaskInfo (index in p.task_infos), per op. A TaskInfo is played once, at its first task
// group in program order (processor groups in file order); TaskInfos no task group runs
// move nothing. Remote tensors are not in this GPU's L2 and are left out.
std::vector<std::vector<OpTraffic>> plan_hbm_traffic(const gpu::Program& p, const L2Pass& l2);

// A buffer as the GPU that allocates it knows it.
struct PhysicalBuffer {
  int rank = 0;
  int64_t id = 0;
  bool operator<(const PhysicalBuffer& o) const { return std::tie(rank, id) < std::tie(o.rank, o.id); }
};

using models::TaskKey;

// Cross-rank structure of a multi-rank run; plans are indexed by rank.
class CommPlan : public models::PacketDeps {
 public:
  explicit CommPlan(const std::vector<const gpu::Program*>& plans_by_rank);
  // The owner's buffer behind buffer `id` of `rank`'s plan: itself when local; for a remote
  // descriptor, the owner's local buffer with the matching tag ([-1,t] RecvTags here match
  // [rank,t] RecvTags there; likewise SendTags). nullopt when no tag matches.
  std::optional<PhysicalBuffer> resolve(int rank, int64_t id) const;
  // Writer tasks (on other ranks) whose remote writes fill the bytes that task `task` of op
  // (rank, ti, op) reads, for ops that spin on packet flags (RecvPacket,
  // RecvReduceSendPacket). Tasks map onto their tensor's byte range proportionally.
  std::vector<TaskKey> packet_sources(int rank, int ti, int op, int64_t task) const override;
  // Whether op (rank, ti, op) writes bytes some packet reader waits for.
  bool is_packet_source(int rank, int ti, int op) const override;
  std::vector<TaskKey> packet_source_tasks() const override;

 private:
  struct RemoteWrite {
    int rank = 0, ti = 0, op = 0;
    int64_t num_tasks = 1;
    int64_t begin = 0, end = 0;  // in the physical buffer
  };
  struct Read {
    int64_t num_tasks = 1;
    int64_t begin = 0, end = 0;
    std::vector<RemoteWrite> writers;
  };
  std::vector<const gpu::Program*> m_plans;
  std::map<std::pair<int, int64_t>, PhysicalBuffer> m_resolved;
  std::map<std::tuple<int, int, int>, std::vector<Read>> m_reads;
  std::map<std::tuple<int, int, int>, bool> m_sources;
};

using models::spins_on_packets;  // RecvPacket, RecvReduceSendPacket

}  // namespace npusim::mapping
