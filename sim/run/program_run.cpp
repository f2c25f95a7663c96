#include "sim/run/program_run.h"

#include "sim/ir/error.h"

namespace npusim::run {

ProgramRecord run_program(const std::string& path, const Hardware& hw) {
  if (hw.device != "npu" || !hw.hw)
    throw InputError(hw.hw ? hw.hw->source() : "--hw", "device",
                     "is " + hw.device + ": a Gemini program runs on an NPU core; give an NPU config (e.g. configs/gemini_zebu.yaml)");
  ProgramRecord r;
  r.program = frontends::zebu::read_gemini_program(path);
  r.run = engine::run_isa_program(r.program, engine::IsaUnits::read(*hw.hw));
  r.layers = frontends::zebu::measure_layers(r.run.simulated);
  r.clock_mhz = hw.hw->get_double("clock_mhz");
  r.hardware = hw.hw->source();
  return r;
}

}  // namespace npusim::run
