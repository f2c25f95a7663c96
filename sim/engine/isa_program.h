// A compiled Gemini program run instruction by instruction (docs/timing.md#compiled-programs):
// the ISA's in-order queues (CT, LD, LW, PE, VP, DT, ST) pass tokens as each instruction's
// Prev_Insts / Next_Insts say, and each instruction takes what models/npu/isa_timing.h gives
// it from its own fields. No SystemC: the tokens order everything (the compiler serialises the
// DMA queues through them), so an event loop computes every start and end exactly.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontends/zebu_trace/zebu_trace.h"
#include "models/npu/energy_params.h"
#include "models/npu/isa_timing.h"
#include "sim/config/hw_config.h"

namespace npusim::engine {

// The ISA's queues, by the names Prev_Insts / Next_Insts use, and the one an instruction runs in
// (ct_* CT, ld* LD, lw* LW, pe_* PE, vp_* VP, dt_* DT, st* ST, si* SI, so* SO).
inline constexpr std::array<const char*, 9> kIsaQueues = {"CT", "LD", "LW", "PE", "VP", "DT", "ST", "SI", "SO"};
std::string isa_queue(const std::string& instruction_name);

// What the instruction model reads from a hardware description.
struct IsaUnits {
  models::PeArrayParams pe;
  int64_t vp_lanes = 32;
  int64_t dma_setup_cycles = 21;
  double dram_bytes_per_cycle = 17.1767;
  models::IsaParams isa;
  static IsaUnits read(const config::HwConfig& c);
};

// What one instruction does besides taking time: the events its energy is counted from.
struct IsaInstructionWork {
  int64_t macs = 0;  // pe_conv: N x K x C x H x W x R x S
  ir::DType mac_dtype = ir::DType::Int8;
  int64_t dram_bytes = 0;  // DMA transfers from or to DRAM
  int64_t sram_bytes = 0;  // read and written in the on-chip buffers (L2, the weight buffer)
};

struct IsaProgramRun {
  // The program with each instruction's simulated start and end (measure_layers attributes it
  // to layers as it does a trace).
  frontends::zebu::Trace simulated;
  int64_t end_cycle = 0;
  std::map<std::string, int64_t> queue_busy_cycles;  // CT, LD, LW, PE, VP, DT, ST: sum of durations
  std::map<std::string, int64_t> instructions_by_queue;
  int64_t dram_bytes = 0;  // moved by the DMA queues (LD, LW from DRAM, ST)
  std::vector<IsaInstructionWork> work;  // per instruction
};

// The run's energy from its events and the energy.* figures (docs/energy.md#npus, as for an IR
// run): MACs by dtype, vector lane-cycles, on-chip buffer bytes, DRAM bytes and the DMA's own
// work on them, and static power over the run; per layer by each instruction's layer (slyr), the
// static part by the layer's share of the run (`layer_cycles`, e.g. measure_layers').
struct IsaEnergy {
  bool modelled = false;  // some energy.* figure is set
  double pe_array_uj = 0, vector_uj = 0, sram_uj = 0, dram_uj = 0, dma_uj = 0, static_uj = 0, total_uj = 0;
  double average_power_w = 0;
  std::map<int, double> layer_uj;
};
IsaEnergy isa_program_energy(const IsaProgramRun& run, const models::EnergyParams& e, int64_t vp_lanes, double clock_mhz,
                             const std::map<int, int64_t>& layer_cycles);

// Each instruction's cycles from its fields and the configuration instructions before it in its
// queue (and, with `work`, what else it does). InputError(program.source, "line N", ...) for an
// instruction the model cannot time (unknown kind, missing or inconsistent fields, a *_mov or
// pe_conv before its *_cfg).
std::vector<int64_t> isa_instruction_cycles(const frontends::zebu::Trace& program, const IsaUnits& u,
                                            std::vector<IsaInstructionWork>* work = nullptr);

// Runs the program: start = max(end of the previous instruction of its queue, the tokens it
// pops), end = start + its cycles. A token that no instruction sends, or a program that
// deadlocks, is an InputError naming the line.
IsaProgramRun run_isa_program(const frontends::zebu::Trace& program, const IsaUnits& u);
// The queues and tokens alone, with cycles[k] for instruction k (run_isa_program's second half;
// given a trace's measured durations it reproduces the trace's starts: a test of the execution
// model on its own). dram_bytes stays 0.
IsaProgramRun schedule_isa_program(const frontends::zebu::Trace& program, const std::vector<int64_t>& cycles);

}  // namespace npusim::engine
