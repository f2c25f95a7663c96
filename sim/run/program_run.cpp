#include "sim/run/program_run.h"

#include <array>
#include <cmath>

#include "sim/ir/error.h"

namespace npusim::run {

ProgramRecord run_program(const std::string& path, const Hardware& hw) {
  if (hw.device != "npu" || !hw.hw)
    throw InputError(hw.hw ? hw.hw->source() : "--hw", "device",
                     "is " + hw.device + ": a Gemini program runs on an NPU core; give an NPU config (e.g. configs/gemini_zebu.yaml)");
  ProgramRecord r;
  r.program = frontends::zebu::read_gemini_program(path);
  const engine::IsaUnits units = engine::IsaUnits::read(*hw.hw);
  r.run = engine::run_isa_program(r.program, units);
  r.layers = frontends::zebu::measure_layers(r.run.simulated);
  r.clock_mhz = hw.hw->get_double("clock_mhz");
  std::map<int, int64_t> layer_cycles;
  for (const auto& l : r.layers) layer_cycles[l.layer_index] = l.cycles;
  r.energy = engine::isa_program_energy(r.run, models::EnergyParams::read(*hw.hw), units.vp_lanes, r.clock_mhz, layer_cycles);
  r.hardware = hw.hw->source();
  return r;
}

nlohmann::json program_trace(const ProgramRecord& r, const std::map<int, std::string>& names) {
  // A track per queue, in the ISA's order: control, loads, compute, stores.
  const auto& kTracks = engine::kIsaQueues;
  auto track = [&](const std::string& name) {
    const std::string q = engine::isa_queue(name);
    for (size_t t = 0; t < kTracks.size(); ++t)
      if (q == kTracks[t]) return static_cast<int>(t);
    return static_cast<int>(kTracks.size()) - 1;
  };
  const double us_per_cycle = 1.0 / r.clock_mhz;
  auto us = [&](int64_t cycles) { return std::round(static_cast<double>(cycles) * us_per_cycle * 1e3) / 1e3; };
  nlohmann::json ev = nlohmann::json::array();
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "npu core: " + r.program.source}}}});
  for (size_t t = 0; t < kTracks.size(); ++t)
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", t}, {"args", {{"name", kTracks[t]}}}});
  for (const auto& i : r.run.simulated.instructions) {
    if (i.end <= i.start) continue;  // lw_mov SS=0, dt_cal: no time of their own
    const auto n = names.find(i.slyr);
    ev.push_back({{"name", i.name + " " + (n == names.end() ? "layer " + std::to_string(i.slyr) : n->second)},
                  {"ph", "X"}, {"pid", 0}, {"tid", track(i.name)}, {"ts", us(i.start)}, {"dur", us(i.end - i.start)},
                  {"args", {{"line", i.line}, {"layer_index", i.slyr}, {"workload", i.wkl}, {"tile", i.tile},
                            {"cycles", i.end - i.start}}}});
  }
  return {{"traceEvents", ev}, {"displayTimeUnit", "ns"}};
}

}  // namespace npusim::run
