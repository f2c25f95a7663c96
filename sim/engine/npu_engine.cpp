#include "sim/engine/npu_engine.h"

#include <systemc>

#include <array>

#include "models/memory/dram.h"
#include "models/npu/buffer.h"
#include "models/npu/units.h"
#include "sim/ir/error.h"

namespace npusim::engine {

namespace {

// The NPU top module: DRAM, DMA channels, PE array, vector processor and host, bound to one
// scoreboard of command completions (the TLM examples' lt_top, at tile granularity).
struct NpuTop : sc_core::sc_module {
  models::Scoreboard sb;
  models::Dram dram;
  models::L2Buffer l2;
  models::Dma dma;
  models::PeArray pe;
  models::VectorProcessor vp;
  models::HostCpu host;

  NpuTop(sc_core::sc_module_name n, const mapping::Program& prog, const mapping::NpuParams& p, sc_core::sc_time period)
      : sc_module(n),
        sb(prog.commands.size(), period),
        dram("dram", p.dram, sb),
        l2("l2", p.buffers.l2_bytes_per_cycle, sb),
        dma("dma", p.dma, sb, dram, l2, dma_queues(prog, p.dma.channels)),
        pe("pe_array", p.pe, sb, l2, jobs<models::PeTile>(prog, mapping::Unit::PeArray, [](const mapping::Command& c) { return c.pe; })),
        vp("vector", p.vp, sb, l2, jobs<models::VpTile>(prog, mapping::Unit::Vector, [](const mapping::Command& c) { return c.vp; })),
        host("host", sb, jobs<int64_t>(prog, mapping::Unit::Host, [](const mapping::Command& c) { return c.host_cycles; })) {}

  template <typename P, typename F>
  static std::vector<models::Job<P>> jobs(const mapping::Program& prog, mapping::Unit u, F payload) {
    std::vector<models::Job<P>> r;
    for (const auto& c : prog.commands)
      if (c.unit == u) r.push_back({c.id, c.deps, payload(c)});
    return r;
  }

  // Weight loads, activation loads and stores have their own queues (like the LW / LD / ST
  // instruction queues of a real NPU), folded onto the configured number of channels. Beyond
  // three channels, the extra ones serve activation loads, stores, weights, loads... in turn,
  // and the transfers of a kind rotate over its channels (docs/timing.md#dma).
  static std::vector<std::vector<models::Job<models::DmaTransfer>>> dma_queues(const mapping::Program& prog,
                                                                              int64_t channels) {
    std::vector<std::vector<models::Job<models::DmaTransfer>>> q(channels);
    std::vector<std::vector<int64_t>> of_kind(3);
    for (int64_t ch = 0; ch < channels; ++ch) of_kind[ch < 3 ? ch : std::array<int, 3>{1, 2, 0}[(ch - 3) % 3]].push_back(ch);
    std::array<size_t, 3> next{0, 0, 0};
    for (const auto& c : prog.commands) {
      if (c.unit != mapping::Unit::Dma) continue;
      // 0 weights (and operands moved from L2 into the weight buffer), 1 loads, 2 stores
      const int kind = c.dma.kind == models::DmaKind::L2ToWeightBuffer ? 0 : static_cast<int>(c.dma.kind);
      const auto& mine = of_kind[static_cast<size_t>(kind)];
      const int64_t ch = mine.empty() ? kind % channels : mine[next[static_cast<size_t>(kind)]++ % mine.size()];
      q[static_cast<size_t>(ch)].push_back({c.id, c.deps, c.dma});
    }
    return q;
  }
};

}  // namespace

SimResult simulate_npu(const mapping::Program& prog, const mapping::NpuParams& p) {
  // Resolution first: it cannot change once any sc_time exists.
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  const sc_core::sc_time period(1e6 / p.clock_mhz, sc_core::SC_PS);
  NpuTop top("npu", prog, p, period);
  sc_core::sc_start();
  if (!top.sb.all_done()) throw InternalError("simulation ended with commands not run (dependency cycle)");
  SimResult r;
  r.timings.resize(prog.commands.size());
  for (size_t i = 0; i < prog.commands.size(); ++i) {
    const auto& rec = top.sb.records()[i];
    r.timings[i] = {rec.start_cycle, rec.end_cycle, rec.channel, rec.dram_bytes, rec.l2_bytes, rec.port_wait_cycles,
                    rec.dram_wait_cycles};
    r.end_cycle = std::max(r.end_cycle, rec.end_cycle);
  }
  r.dram_bytes_read = top.dram.stats().bytes_read;
  r.dram_bytes_written = top.dram.stats().bytes_written;
  r.dram_busy_cycles = top.dram.stats().busy_cycles;
  r.l2_bytes = top.l2.stats().bytes;
  r.l2_busy_cycles = top.l2.stats().busy_cycles;
  r.pe_busy_cycles = top.pe.stats().busy_cycles;
  r.vp_busy_cycles = top.vp.stats().busy_cycles;
  r.dma_busy_cycles = top.dma.stats().busy_cycles;
  r.host_busy_cycles = top.host.stats().busy_cycles;
  r.dma_channels = static_cast<int>(p.dma.channels);
  return r;
}

}  // namespace npusim::engine
