#include "sim/engine/npu_engine.h"
#include "sim/engine/simulation.h"

#include <systemc>

#include <array>
#include <memory>

#include "models/interconnect/noc.h"
#include "models/memory/dram.h"
#include "models/npu/buffer.h"
#include "models/npu/units.h"
#include "sim/ir/error.h"

namespace npusim::engine {

namespace {

using models::CoreJob;

// One core's units: its L2 port, DMA channels, PE array and vector processor. On a one-core
// NPU they are the chip's and keep their plain names (dma, pe_array, vector).
struct Core {
  models::L2Buffer l2;
  models::Dma dma;
  models::PeArray pe;
  models::VectorProcessor vp;

  Core(int core, bool named_plain, const mapping::Program& prog, const mapping::NpuParams& p, models::Scoreboard& sb,
       models::Dram& dram, models::Noc* noc)
      : l2(name("l2", core, named_plain).c_str(), p.buffers.l2_bytes_per_cycle, sb),
        dma(name("dma", core, named_plain).c_str(), p.dma, sb, dram, l2, dma_queues(prog, p.dma.channels, core),
            {noc, core}),
        pe(name("pe_array", core, named_plain).c_str(), p.pe, sb, l2,
           jobs<models::PeTile>(prog, mapping::Unit::PeArray, core, [](const mapping::Command& c) { return c.pe; }),
           {noc, core}),
        vp(name("vector", core, named_plain).c_str(), p.vp, sb, l2,
           jobs<models::VpTile>(prog, mapping::Unit::Vector, core, [](const mapping::Command& c) { return c.vp; }),
           {noc, core}) {}

  static std::string name(const char* unit, int core, bool plain) {
    return plain ? std::string(unit) : std::string(unit) + "_core" + std::to_string(core);
  }

  template <typename P, typename F>
  static std::vector<models::Job<CoreJob<P>>> jobs(const mapping::Program& prog, mapping::Unit u, int core, F payload) {
    std::vector<models::Job<CoreJob<P>>> r;
    for (const auto& c : prog.commands)
      if (c.unit == u && c.core == core) r.push_back({c.id, c.deps, {payload(c), c.remote_bytes, c.remote_from}});
    return r;
  }

  // Weight loads, activation loads and stores have their own queues (like the LW / LD / ST
  // instruction queues of a real NPU), folded onto the configured number of channels. Beyond
  // three channels, the extra ones serve activation loads, stores, weights, loads... in turn,
  // and the transfers of a kind rotate over its channels (docs/timing.md#dma).
  static std::vector<std::vector<models::Job<CoreJob<models::DmaTransfer>>>> dma_queues(const mapping::Program& prog,
                                                                                     int64_t channels, int core) {
    std::vector<std::vector<models::Job<CoreJob<models::DmaTransfer>>>> q(channels);
    std::vector<std::vector<int64_t>> of_kind(3);
    for (int64_t ch = 0; ch < channels; ++ch) of_kind[ch < 3 ? ch : std::array<int, 3>{1, 2, 0}[(ch - 3) % 3]].push_back(ch);
    std::array<size_t, 3> next{0, 0, 0};
    for (const auto& c : prog.commands) {
      if (c.unit != mapping::Unit::Dma || c.core != core) continue;
      // 0 weights (and operands moved from L2 into the weight buffer), 1 loads, 2 stores
      const int kind = c.dma.kind == models::DmaKind::L2ToWeightBuffer ? 0 : static_cast<int>(c.dma.kind);
      const auto& mine = of_kind[static_cast<size_t>(kind)];
      const int64_t ch = mine.empty() ? kind % channels : mine[next[static_cast<size_t>(kind)]++ % mine.size()];
      q[static_cast<size_t>(ch)].push_back({c.id, c.deps, {c.dma, c.remote_bytes, c.remote_from}});
    }
    return q;
  }
};

// The NPU top module: DRAM, the cores (one, or several on a NoC), the host and the joins of
// layers split over cores, bound to one scoreboard of command completions (the TLM examples'
// lt_top, at tile granularity).
struct NpuTop : sc_core::sc_module {
  models::Scoreboard sb;
  models::Dram dram;
  std::unique_ptr<models::Noc> noc;  // cores > 1
  std::vector<std::unique_ptr<Core>> cores;
  models::HostCpu host;
  models::SyncUnit sync;

  NpuTop(sc_core::sc_module_name n, const mapping::Program& prog, const mapping::NpuParams& p, sc_core::sc_time period)
      : sc_module(n),
        sb(prog.commands.size(), period),
        dram("dram", p.dram, sb),
        noc(p.cores > 1 ? std::make_unique<models::Noc>(p.cores, static_cast<int>(p.dram.channels), p.noc) : nullptr),
        cores(make_cores(prog, p, sb, dram, noc.get())),
        host("host", sb, unit_jobs<int64_t>(prog, mapping::Unit::Host, [](const mapping::Command& c) { return c.host_cycles; })),
        sync("sync", sb, unit_jobs<int>(prog, mapping::Unit::Sync, [](const mapping::Command&) { return 0; })) {}

  static std::vector<std::unique_ptr<Core>> make_cores(const mapping::Program& prog, const mapping::NpuParams& p,
                                                       models::Scoreboard& sb, models::Dram& dram, models::Noc* noc) {
    std::vector<std::unique_ptr<Core>> r;
    for (int c = 0; c < std::max(1, p.cores); ++c) r.push_back(std::make_unique<Core>(c, p.cores <= 1, prog, p, sb, dram, noc));
    return r;
  }

  template <typename P, typename F>
  static std::vector<models::Job<P>> unit_jobs(const mapping::Program& prog, mapping::Unit u, F payload) {
    std::vector<models::Job<P>> r;
    for (const auto& c : prog.commands)
      if (c.unit == u) r.push_back({c.id, c.deps, payload(c)});
    return r;
  }
};

}  // namespace

SimResult simulate_npu(const mapping::Program& prog, const mapping::NpuParams& p) {
  for (const auto& c : prog.commands)
    if (c.core < 0 || c.core >= std::max(1, p.cores))
      throw InternalError("command " + std::to_string(c.id) + " is on core " + std::to_string(c.core) + " of " +
                          std::to_string(p.cores));
  // Resolution first: it cannot change once any sc_time exists.
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  const sc_core::sc_time period(1e6 / p.clock_mhz, sc_core::SC_PS);
  NpuTop top("npu", prog, p, period);
  run_simulation();
  if (!top.sb.all_done()) throw InternalError("simulation ended with commands not run (dependency cycle)");
  SimResult r;
  r.timings.resize(prog.commands.size());
  for (size_t i = 0; i < prog.commands.size(); ++i) {
    const auto& rec = top.sb.records()[i];
    r.timings[i] = {rec.start_cycle, rec.end_cycle, rec.channel, rec.dram_bytes, rec.l2_bytes, rec.port_wait_cycles,
                    rec.dram_wait_cycles, rec.noc_bytes, rec.noc_wait_cycles};
    r.end_cycle = std::max(r.end_cycle, rec.end_cycle);
  }
  r.dram_bytes_read = top.dram.stats().bytes_read;
  r.dram_bytes_written = top.dram.stats().bytes_written;
  r.dram_busy_cycles = top.dram.stats().busy_cycles;
  r.dram_channel_busy_cycles = top.dram.channel_busy_cycles();
  for (const auto& c : top.cores) {
    CoreResult cr;
    cr.pe_busy_cycles = c->pe.stats().busy_cycles;
    cr.vp_busy_cycles = c->vp.stats().busy_cycles;
    cr.dma_busy_cycles = c->dma.stats().busy_cycles;
    cr.l2_bytes = c->l2.stats().bytes;
    cr.l2_busy_cycles = c->l2.stats().busy_cycles;
    r.l2_bytes += cr.l2_bytes;
    r.l2_busy_cycles += cr.l2_busy_cycles;
    r.pe_busy_cycles += cr.pe_busy_cycles;
    r.vp_busy_cycles += cr.vp_busy_cycles;
    r.dma_busy_cycles += cr.dma_busy_cycles;
    r.cores.push_back(cr);
  }
  if (top.noc) {
    r.noc_links = top.noc->link_stats();
    r.noc_transfers = top.noc->transfers();
    r.noc_wait_cycles = top.noc->wait_cycles();
  }
  r.host_busy_cycles = top.host.stats().busy_cycles;
  r.dma_channels = static_cast<int>(p.dma.channels);
  return r;
}

}  // namespace npusim::engine
