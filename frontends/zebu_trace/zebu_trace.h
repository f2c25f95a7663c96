// Reader of ZeBu emulator traces of the Gemini NPU (ZeBu_Trace_Format.md): one instruction
// per line, `[name, {mapping}, {'inst_idx': i, 'time': [start, end]}, {params}]` in Python
// literal syntax, plus per-layer attribution of the measured cycles (docs/calibration_data.md).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontends/json_util.h"

namespace npusim::frontends::zebu {

struct Instruction {
  std::string name;          // "pe_conv", "lw_mov", "vp_cfg_tp", ...
  int slyr = -1;             // layer the instruction is scheduled in (Frontend IR layer_index)
  std::vector<int> clyr;     // layers whose data it moves (prefetch / delayed store)
  int s_flyr = -1;           // fusion layer (-1 when the line has none)
  std::vector<int> c_flyr;
  int wkl = -1;              // Scheduler IR workload_id
  int tile = -1;             // tile within the workload (-1: not tiled)
  int inst_idx = 0;          // 1-based program position
  int64_t start = 0, end = 0;  // measured cycles
  // Parameter dict as JSON; an enum repr <DataFmt.FP16: 3> is {"enum":"DataFmt.FP16","value":3}
  // (zebu::enum_or_int unwraps both forms).
  json::Json params = json::Json::object();
  int line = 0;  // 1-based line in the file
  bool timed = false;  // the line carried {'inst_idx', 'time'} (a trace line, not an assembler line)

  int64_t duration() const { return end - start; }
};

struct Trace {
  std::string source;
  std::vector<Instruction> instructions;  // file order = program order
  int64_t end_cycle() const;              // latest end over all instructions (0 when empty)
};

// Largest trace file read: 256 MiB (docs/hardening.md), checked before reading.
inline constexpr uint64_t kMaxTraceBytes = uint64_t{256} << 20;

// Reads a trace file (a regular file of at most kMaxTraceBytes). Blank lines are skipped. A
// malformed line (bad syntax, unknown name or enum form, missing 'time', end before start,
// ...) is InputError(path, "line N", what).
Trace read_zebu_trace(const std::string& path);
// Same on text already in memory; `source` names it in messages.
Trace parse_zebu_trace(const std::string& text, const std::string& source);

// A compiled program: the Gemini assembler's output (`*_asm.txt`, ISA_Format.md: lines
// `[name, {mapping}, {params}]`, inst_idx = position) or a ZeBu trace of one, whose measured
// times are kept but mean nothing to a simulation of the program. Same limits and messages as
// read_zebu_trace.
Trace read_gemini_program(const std::string& path);
Trace parse_gemini_program(const std::string& text, const std::string& source);

// Instruction kinds used for attribution.
bool is_compute(const Instruction& i);  // pe_*/vp_*/dt_* that execute (not *_cfg*)
bool is_dma(const Instruction& i);      // *_mov of the LD/LW/ST/SI/SO queues

std::map<std::string, int> count_by_name(const Trace& t);

struct LayerMeasurement {
  int layer_index = -1;
  int64_t cycles = 0;                    // attributed share of the run; sums to end_cycle()
  int64_t first_start = 0, last_end = 0; // span of the layer's compute instructions
  int64_t pe_busy = 0, vp_busy = 0, dma_busy = 0;  // unit busy time inside the layer's share
};

// Attribution rule (docs/calibration_data.md): compute instructions sorted by end time push
// a "compute frontier"; each one is charged the time from the previous frontier to its end
// (its own run time plus any stall before it: waiting for weights, cfg, ...). The first one
// is charged from cycle 0, and the tail after the last compute end (final stores, ct_ed)
// goes to the layer of the last compute instruction. Shares therefore sum to end_cycle().
// Rows are in execution order (order of each layer's last compute end). Empty when the trace
// has no compute instruction.
std::vector<LayerMeasurement> measure_layers(const Trace& t);

}  // namespace npusim::frontends::zebu
