// A compiled Gemini program on one NPU core's instruction model (docs/timing.md#compiled-programs):
// the library call behind `sim program` and `sim compare-trace --program`.
#pragma once
#include <string>
#include <vector>

#include "frontends/zebu_trace/zebu_trace.h"
#include "sim/engine/isa_program.h"
#include "sim/run/run.h"

namespace npusim::run {

struct ProgramRecord {
  frontends::zebu::Trace program;  // as read
  engine::IsaProgramRun run;       // every instruction's simulated times, the queues, the DRAM bytes
  std::vector<frontends::zebu::LayerMeasurement> layers;  // the run per layer, attributed as a trace is
  double clock_mhz = 0;
  std::string hardware;  // the description's source
};

// path: the assembler's *_asm.txt or a ZeBu trace (its instructions); hw: an NPU description
// (a GPU or system one is an InputError naming it). Bad programs: InputError naming the line.
ProgramRecord run_program(const std::string& path, const Hardware& hw);

}  // namespace npusim::run
