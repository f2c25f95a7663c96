// `sim program`: a compiled Gemini program (the assembler's *_asm.txt) run instruction by
// instruction on the NPU core's instruction model (docs/timing.md#compiled-programs): per layer
// its cycles and units' busy time, each queue's busy time, the DRAM bytes moved.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontends/zebu_trace/zebu_trace.h"
#include "sim/cli/commands.h"
#include "sim/config/system_config.h"
#include "sim/ir/error.h"
#include "sim/mapping/program.h"
#include "sim/run/program_run.h"
#include "sim/run/run.h"
#include "sim/run/workload_loader.h"

namespace npusim::cli {

namespace {

// As an IR run's (docs/timing.md#per-layer-cycles-and-bound).
const char* bound_of(const frontends::zebu::LayerMeasurement& m) {
  return mapping::bound_name(mapping::layer_bound(m.pe_busy, m.vp_busy, std::max<int64_t>(0, m.cycles - m.pe_busy - m.vp_busy)));
}

std::string share(int64_t part, int64_t whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return b;
}

}  // namespace

int run_program(const ProgramOptions& o) {
  namespace zebu = frontends::zebu;
  if (config::is_system_config(o.hw))
    throw InputError(o.hw, "system", "sim program runs a compiled program on one NPU core; give an NPU config "
                                     "(e.g. configs/gemini_zebu.yaml)");
  const run::ProgramRecord rec = run::run_program(o.program, run::Hardware::load(o.hw, o.sets));
  const zebu::Trace& program = rec.program;
  const engine::IsaProgramRun& run = rec.run;
  const auto& layers = rec.layers;
  std::map<int, std::string> names, ops;
  if (!o.ir.empty()) {
    run::WorkloadSpec spec;
    spec.path = o.ir;
    const ir::Graph graph = std::move(*run::load_workload(spec, run::WorkloadKind::Device).graph);
    for (const auto& l : graph.layers) names[l.index] = l.name, ops[l.index] = ir::op_name(l.op);
    for (const auto& i : program.instructions)
      if (!names.count(i.slyr))
        throw InputError(o.program, "line " + std::to_string(i.line),
                         "slyr " + std::to_string(i.slyr) + " is not a layer_index of " + o.ir);
  }
  const double mhz = rec.clock_mhz;

  std::ostringstream out;
  out << "program: " << o.program << " (" << program.instructions.size() << " instructions)\nhardware: " << rec.hardware
      << "\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%5s  %-28s %12s %12s %12s %12s  %s\n", "layer", "name", "cycles", "pe_busy", "vp_busy",
                "dma_busy", "bound");
  out << line;
  for (const auto& m : layers) {
    const auto it = names.find(m.layer_index);
    std::snprintf(line, sizeof line, "%5d  %-28s %12lld %12lld %12lld %12lld  %s\n", m.layer_index,
                  it == names.end() ? "" : it->second.c_str(), static_cast<long long>(m.cycles),
                  static_cast<long long>(m.pe_busy), static_cast<long long>(m.vp_busy), static_cast<long long>(m.dma_busy),
                  bound_of(m));
    out << line;
  }
  std::snprintf(line, sizeof line, "TOTAL %lld cycles = %.3f ms at %g MHz\n", static_cast<long long>(run.end_cycle),
                static_cast<double>(run.end_cycle) / (mhz * 1e3), mhz);
  out << line << "queues (instructions, busy cycles, share of the run):";
  for (const auto& [q, busy] : run.queue_busy_cycles)
    out << ' ' << q << ' ' << run.instructions_by_queue.at(q) << ' ' << busy << " (" << share(busy, run.end_cycle) << ')';
  std::snprintf(line, sizeof line, "\nDRAM: %.3f MB moved\n", static_cast<double>(run.dram_bytes) / 1e6);
  out << line;
  const auto& en = rec.energy;
  if (en.modelled) {
    std::snprintf(line, sizeof line,
                  "energy: %.3f uJ (PE %.3f, vector %.3f, SRAM %.3f, DRAM %.3f, DMA %.3f, static %.3f), %.3f W\n", en.total_uj,
                  en.pe_array_uj, en.vector_uj, en.sram_uj, en.dram_uj, en.dma_uj, en.static_uj, en.average_power_w);
    out << line;
  } else {
    out << "energy: not modelled (every energy.* figure of the config is 0)\n";
  }
  if (!o.quiet) std::cout << out.str();

  if (!o.csv.empty()) {
    std::ofstream f(o.csv, std::ios::binary);
    if (!f) throw InputError(o.csv, "", "cannot open for writing");
    f << "layer_index,name,op,cycles,pe_busy,vp_busy,dma_busy,bound\n";
    for (const auto& m : layers)
      f << m.layer_index << ',' << (names.count(m.layer_index) ? names[m.layer_index] : "") << ','
        << (ops.count(m.layer_index) ? ops[m.layer_index] : "") << ',' << m.cycles << ',' << m.pe_busy << ',' << m.vp_busy
        << ',' << m.dma_busy << ',' << bound_of(m) << '\n';
  }
  if (!o.trace.empty()) {
    std::ofstream f(o.trace, std::ios::binary);
    if (!f) throw InputError(o.trace, "", "cannot open for writing");
    f << run::program_trace(rec, names).dump() << '\n';
  }
  if (!o.instructions.empty()) {
    std::ofstream f(o.instructions, std::ios::binary);
    if (!f) throw InputError(o.instructions, "", "cannot open for writing");
    f << "line,name,layer_index,workload,start_cycle,end_cycle,cycles\n";
    for (const auto& i : run.simulated.instructions)
      f << i.line << ',' << i.name << ',' << i.slyr << ',' << i.wkl << ',' << i.start << ',' << i.end << ',' << i.end - i.start
        << '\n';
  }
  if (!o.report.empty()) {
    nlohmann::ordered_json j;
    j["program"] = o.program;
    j["hardware"] = rec.hardware;
    j["clock_mhz"] = mhz;
    j["instructions"] = program.instructions.size();
    j["total_cycles"] = run.end_cycle;
    j["dram_bytes"] = run.dram_bytes;
    for (const auto& [q, busy] : run.queue_busy_cycles)
      j["queues"][q] = {{"instructions", run.instructions_by_queue.at(q)}, {"busy_cycles", busy}};
    j["energy"] = {{"modelled", en.modelled}};
    if (en.modelled)
      j["energy"].update({{"energy_uj", en.total_uj}, {"average_power_w", en.average_power_w}, {"energy_pe_array_uj", en.pe_array_uj},
                          {"energy_vector_uj", en.vector_uj}, {"energy_sram_uj", en.sram_uj}, {"energy_dram_uj", en.dram_uj},
                          {"energy_dma_uj", en.dma_uj}, {"energy_static_uj", en.static_uj}});
    j["layers"] = nlohmann::ordered_json::array();
    for (const auto& m : layers)
      j["layers"].push_back({{"layer_index", m.layer_index},
                             {"name", names.count(m.layer_index) ? names[m.layer_index] : ""},
                             {"op", ops.count(m.layer_index) ? ops[m.layer_index] : ""},
                             {"cycles", m.cycles},
                             {"pe_busy", m.pe_busy},
                             {"vp_busy", m.vp_busy},
                             {"dma_busy", m.dma_busy},
                             {"bound", bound_of(m)}});
    if (en.modelled)
      for (auto& l : j["layers"]) l["energy_uj"] = en.layer_uj.count(l["layer_index"].get<int>()) ? en.layer_uj.at(l["layer_index"].get<int>()) : 0.0;
    std::ofstream f(o.report, std::ios::binary);
    if (!f) throw InputError(o.report, "", "cannot open for writing");
    f << j.dump(2) << '\n';
  }
  return kOk;
}

}  // namespace npusim::cli
