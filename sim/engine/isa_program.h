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

struct IsaProgramRun {
  // The program with each instruction's simulated start and end (measure_layers attributes it
  // to layers as it does a trace).
  frontends::zebu::Trace simulated;
  int64_t end_cycle = 0;
  std::map<std::string, int64_t> queue_busy_cycles;  // CT, LD, LW, PE, VP, DT, ST: sum of durations
  std::map<std::string, int64_t> instructions_by_queue;
  int64_t dram_bytes = 0;  // moved by the DMA queues (LD, LW from DRAM, ST)
};

// Each instruction's cycles from its fields and the configuration instructions before it in its
// queue. InputError(program.source, "line N", ...) for an instruction the model cannot time
// (unknown kind, missing or inconsistent fields, a *_mov or pe_conv before its *_cfg).
std::vector<int64_t> isa_instruction_cycles(const frontends::zebu::Trace& program, const IsaUnits& u,
                                            int64_t* dram_bytes = nullptr);

// Runs the program: start = max(end of the previous instruction of its queue, the tokens it
// pops), end = start + its cycles. A token that no instruction sends, or a program that
// deadlocks, is an InputError naming the line.
IsaProgramRun run_isa_program(const frontends::zebu::Trace& program, const IsaUnits& u);
// The queues and tokens alone, with cycles[k] for instruction k (run_isa_program's second half;
// given a trace's measured durations it reproduces the trace's starts: a test of the execution
// model on its own). dram_bytes stays 0.
IsaProgramRun schedule_isa_program(const frontends::zebu::Trace& program, const std::vector<int64_t>& cycles);

}  // namespace npusim::engine
