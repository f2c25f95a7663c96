// `sim compare-trace`: per Frontend IR layer, cycles measured on real hardware (a ZeBu
// per-instruction trace) against cycles simulated for the same IR, and the total; with
// --program, against the compiled program run instruction by instruction (sim program).
#include <fstream>
#include <iostream>

#include "frontends/zebu_trace/layer_compare.h"
#include "frontends/zebu_trace/zebu_trace.h"
#include "sim/cli/commands.h"
#include "sim/config/hw_config.h"
#include "sim/config/system_config.h"
#include "sim/ir/error.h"
#include "sim/report/report.h"
#include "sim/run/npu_run.h"
#include "sim/run/program_run.h"
#include "sim/run/run.h"
#include "sim/run/workload_loader.h"

namespace npusim::cli {

int run_compare_trace(const CompareTraceOptions& o) {
  namespace zebu = frontends::zebu;
  const zebu::Trace trace = zebu::read_zebu_trace(o.trace);
  run::WorkloadSpec spec;
  spec.path = o.ir;
  const ir::Graph graph = std::move(*run::load_workload(spec, run::WorkloadKind::Device).graph);
  if (config::is_system_config(o.hw))
    throw InputError(o.hw, "system", "compare-trace compares a ZeBu trace of one NPU; give an NPU config "
                                     "(e.g. configs/gemini_zebu.yaml)");
  const run::Hardware hw = run::Hardware::load(o.hw, o.sets);
  if (hw.device != "npu")
    throw InputError(o.hw, "device", "is " + hw.device + ": compare-trace compares a ZeBu trace of an NPU with the NPU model; "
                                     "give an NPU config (e.g. configs/gemini_zebu.yaml)");
  const config::HwConfig& cfg = *hw.hw;

  // Both sides charge a layer from the end of the previous layer's work to the end of its own,
  // so per-layer cycles add up to each total (docs/validation_npu.md).
  std::map<int, int64_t> simulated;
  std::map<int, std::string> names, ops;
  if (!o.program.empty()) {
    // The compiled program on the instruction model, attributed to layers as the trace is.
    for (const auto& m : run::run_program(o.program, hw).layers) simulated[m.layer_index] = m.cycles;
    for (const auto& l : graph.layers) names[l.index] = l.name, ops[l.index] = ir::op_name(l.op);
  } else {
    run::Workload w;
    w.graph = &graph;
    const run::RunRecord rec = run::run(w, hw);
    for (const auto& l : rec.npu()->report.layers) {
      names[l.layer_index] = l.name;
      ops[l.layer_index] = l.op;
      if (l.device == "npu") simulated[l.layer_index] = l.cycles;
    }
  }
  const auto measured = zebu::measure_layers(trace);
  if (measured.empty())  // no measurement: "0 layers, +0.0%" would look like a perfect match
    throw InputError(o.trace, "", "no compute instruction (pe_*, vp_*, dt_* other than *_cfg*): nothing to compare");
  for (const auto& m : measured)
    if (!names.count(m.layer_index))
      throw InputError(o.trace, "layer " + std::to_string(m.layer_index),
                       "trace layer (slyr) is not a layer_index of " + o.ir);
  const auto rows = zebu::compare_layers(measured, simulated, names, ops);
  std::cout << "trace: " << o.trace << "\nIR: " << o.ir << "\n"
            << (o.program.empty() ? std::string() : "program: " + o.program + " (instruction by instruction)\n")
            << "hardware: " << cfg.source() << "\n\n"
            << zebu::format_comparison_table(rows, "measured", "simulated");
  if (!o.csv.empty()) {
    std::ofstream f(o.csv, std::ios::binary);
    if (!f) throw InputError(o.csv, "", "cannot open for writing");
    f << "layer_index,name,op,measured_cycles,simulated_cycles,error\n";
    for (const auto& r : rows)
      f << r.layer_index << ',' << r.name << ',' << r.op << ',' << r.measured << ',' << r.simulated << ',' << r.error << '\n';
  }
  return kOk;
}

}  // namespace npusim::cli
