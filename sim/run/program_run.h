// A compiled Gemini program on one NPU core's instruction model (docs/timing.md#compiled-programs):
// the library call behind `sim program` and `sim compare-trace --program`.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontends/zebu_trace/zebu_trace.h"
#include "sim/engine/isa_program.h"
#include "sim/run/run.h"

namespace npusim::run {

struct ProgramRecord {
  frontends::zebu::Trace program;  // as read
  engine::IsaProgramRun run;       // every instruction's simulated times, the queues, the DRAM bytes
  std::vector<frontends::zebu::LayerMeasurement> layers;  // the run per layer, attributed as a trace is
  engine::IsaEnergy energy;  // from the energy.* figures (not modelled when all are 0, as in gemini_zebu)
  double clock_mhz = 0;
  std::string hardware;  // the description's source
};

// path: the assembler's *_asm.txt or a ZeBu trace (its instructions); hw: an NPU description
// (a GPU or system one is an InputError naming it). Bad programs: InputError naming the line.
ProgramRecord run_program(const std::string& path, const Hardware& hw);

// The run as a Perfetto / chrome://tracing file: one track per queue (CT, LD, LW, PE, VP, DT, ST),
// one slice per instruction that takes time, named by its instruction and layer (`names`: the
// IR's layer names by layer_index, may be empty), in microseconds of the core's clock.
nlohmann::json program_trace(const ProgramRecord& r, const std::map<int, std::string>& names = {});

}  // namespace npusim::run
