// The NPU's SystemC units. Each is an SC_MODULE with one SC_THREAD per queue that takes its
// jobs in program order, waits for their dependencies, computes the job's latency from the
// unit's timing formula (the *_timing.h next to it) and waits that long: time advances per
// tile, not per clock edge.
#pragma once
#include <systemc>

#include <functional>
#include <vector>

#include "models/interconnect/noc.h"
#include "models/memory/dram.h"
#include "models/npu/buffer.h"
#include "models/npu/dma_timing.h"
#include "models/npu/pe_array_timing.h"
#include "models/kernel/rate_server.h"
#include "models/kernel/scoreboard.h"
#include "models/npu/vector_processor_timing.h"

namespace npusim::models {

struct UnitStats {
  int64_t busy_cycles = 0;
  int64_t jobs = 0;
};

// A queue-driven unit: `latency(job)` gives cycles; `body(job)` may instead block on shared
// resources (DMA on DRAM). One thread per queue.
template <typename Payload>
class QueueUnit : public sc_core::sc_module {
 public:
  using Body = std::function<void(const Job<Payload>&)>;
  QueueUnit(sc_core::sc_module_name name, Scoreboard& sb, std::vector<std::vector<Job<Payload>>> queues, Body body)
      : sc_module(name), m_sb(sb), m_queues(std::move(queues)), m_body(std::move(body)) {
    for (size_t q = 0; q < m_queues.size(); ++q)
      sc_core::sc_spawn([this, q] { run(q); }, sc_core::sc_gen_unique_name("queue"));
  }
  const UnitStats& stats() const { return m_stats; }

 private:
  void run(size_t q) {
    for (const auto& job : m_queues[q]) {
      m_sb.wait_all(job.deps);
      const int64_t t0 = m_sb.now_cycles();
      m_sb.start(job.id, static_cast<int>(q));
      m_body(job);
      m_stats.busy_cycles += m_sb.now_cycles() - t0;
      m_stats.jobs++;
      m_sb.finish(job.id);
    }
  }
  Scoreboard& m_sb;
  std::vector<std::vector<Job<Payload>>> m_queues;
  Body m_body;
  UnitStats m_stats;
};

// Where a unit sits on a multi-core chip (docs/multicore.md): its core and the chip's NoC
// (nullptr on a one-core NPU, whose units reach DRAM directly).
struct CoreSeat {
  Noc* noc = nullptr;
  int core = 0;
};

// A command's work and the part of its on-chip input held by other cores' L2 (where
// `remote_from` says), which crosses the NoC.
template <typename Work>
struct CoreJob {
  Work work;
  int64_t remote_bytes = 0;
  RemoteSource remote_from;
};

// Waits until the unit's own latency, its L2 port traffic and its remote input (over the NoC)
// are all done; records each wait.
inline void wait_unit_and_port(Scoreboard& sb, L2Buffer& l2, int id, int64_t own_cycles, int64_t l2_bytes,
                               const CoreSeat& seat = {}, int64_t remote_bytes = 0, const RemoteSource& remote_from = {}) {
  const int64_t now = sb.now_cycles();
  const int64_t port_done = l2.reserve(l2_bytes);
  JobRecord& rec = sb.record(id);
  rec.l2_bytes += l2_bytes;
  rec.port_wait_cycles += std::max<int64_t>(0, port_done - now - own_cycles);
  int64_t end = std::max(own_cycles, port_done - now);
  if (seat.noc && remote_bytes > 0) {
    const int64_t noc_done = seat.noc->core_transfer(remote_from, seat.core, now, remote_bytes) - now;
    rec.noc_bytes += remote_bytes;
    rec.noc_wait_cycles += std::max<int64_t>(0, noc_done - end);
    end = std::max(end, noc_done);
  }
  sc_core::wait(sb.cycles(end));
}

// PE array: one queue; latency from pe_tile_timing (docs/timing.md#pe-array); its activation
// reads and result writes share the L2 port.
class PeArray : public QueueUnit<CoreJob<PeTile>> {
 public:
  PeArray(sc_core::sc_module_name name, const PeArrayParams& p, Scoreboard& sb, L2Buffer& l2,
          std::vector<Job<CoreJob<PeTile>>> jobs, CoreSeat seat = {})
      : QueueUnit(name, sb, {std::move(jobs)}, [p, &sb, &l2, seat](const Job<CoreJob<PeTile>>& j) {
          const PeTile& t = j.payload.work;
          wait_unit_and_port(sb, l2, j.id, pe_tile_timing(p, t).total_cycles, t.in_bytes + t.out_bytes, seat,
                             j.payload.remote_bytes, j.payload.remote_from);
        }) {}
};

// Vector processor: one queue; one pipeline of module_list stages (docs/timing.md#vector-processor).
class VectorProcessor : public QueueUnit<CoreJob<VpTile>> {
 public:
  VectorProcessor(sc_core::sc_module_name name, const VpParams& p, Scoreboard& sb, L2Buffer& l2,
                  std::vector<Job<CoreJob<VpTile>>> jobs, CoreSeat seat = {})
      : QueueUnit(name, sb, {std::move(jobs)}, [p, &sb, &l2, seat](const Job<CoreJob<VpTile>>& j) {
          const VpTile& t = j.payload.work;
          wait_unit_and_port(sb, l2, j.id, vp_command_cycles(p, t), t.l2_bytes, seat, j.payload.remote_bytes,
                             j.payload.remote_from);
        }) {}
};

// DMA: one queue per channel; setup, then the data moves at the slower of the channel's own
// rate and the shared DRAM (docs/timing.md#dma). On a multi-core chip the data also crosses
// the NoC between the core and the DRAM controllers (an on-chip operand: from the cores that
// hold it), and the transfer ends when the slowest of the three is done.
class Dma : public QueueUnit<CoreJob<DmaTransfer>> {
 public:
  Dma(sc_core::sc_module_name name, const DmaParams& p, Scoreboard& sb, Dram& dram, L2Buffer& l2,
      std::vector<std::vector<Job<CoreJob<DmaTransfer>>>> queues, CoreSeat seat = {})
      : QueueUnit(name, sb, std::move(queues), [p, &sb, &dram, &l2, seat](const Job<CoreJob<DmaTransfer>>& j) {
          const DmaTransfer& x = j.payload.work;
          sc_core::wait(sb.cycles(p.setup_cycles));
          const int64_t t0 = sb.now_cycles();
          const int64_t port_done = l2.reserve(x.bytes);
          JobRecord& rec = sb.record(j.id);
          rec.l2_bytes += x.bytes;
          int64_t noc_done = t0;
          if (seat.noc && x.kind != DmaKind::L2ToWeightBuffer) {
            noc_done = seat.noc->dram_transfer(seat.core, t0, x.bytes, p.burst_bytes, x.kind == DmaKind::StoreActivations);
            rec.noc_bytes += x.bytes;
          } else if (seat.noc && j.payload.remote_bytes > 0) {
            noc_done = seat.noc->core_transfer(j.payload.remote_from, seat.core, t0, j.payload.remote_bytes);
            rec.noc_bytes += j.payload.remote_bytes;
          }
          if (x.kind != DmaKind::L2ToWeightBuffer)  // on-chip moves never reach DRAM
            rec.dram_bytes += dram.transfer(x.bytes, x.segments, x.kind == DmaKind::StoreActivations);
          const int64_t channel = dma_channel_cycles(p, x);
          int64_t own = std::max(channel, port_done - t0);
          const int64_t spent = sb.now_cycles() - t0;
          rec.dram_wait_cycles += std::max<int64_t>(0, spent - channel);
          rec.port_wait_cycles += std::max<int64_t>(0, port_done - t0 - std::max(channel, spent));
          if (noc_done - t0 > std::max(own, spent)) {
            rec.noc_wait_cycles += noc_done - t0 - std::max(own, spent);
            own = noc_done - t0;
          }
          if (own > spent) sc_core::wait(sb.cycles(own - spent));
        }) {}
};

// Host CPU for device: cpu layers; cycles are precomputed by the mapper's host cost model.
class HostCpu : public QueueUnit<int64_t> {
 public:
  HostCpu(sc_core::sc_module_name name, Scoreboard& sb, std::vector<Job<int64_t>> jobs)
      : QueueUnit(name, sb, {std::move(jobs)}, [&sb](const Job<int64_t>& j) { sc_core::wait(sb.cycles(j.payload)); }) {}
};

// Joins of a layer split over cores: each ends as soon as every core's part has (no time of
// its own).
class SyncUnit : public QueueUnit<int> {
 public:
  SyncUnit(sc_core::sc_module_name name, Scoreboard& sb, std::vector<Job<int>> jobs)
      : QueueUnit(name, sb, {std::move(jobs)}, [](const Job<int>&) {}) {}
};

}  // namespace npusim::models
