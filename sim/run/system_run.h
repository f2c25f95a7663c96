// A multi-device pipeline on a system (docs/system.md#how-a-run-works): pipeline slots placed
// on the system's devices, each distinct compute supertask simulated once on its device's own
// model (forked children, sim/run/device_run.h), then one SystemC run of the whole system
// (sim/engine/system_engine.h). SystemC elaborates once per process: one call per process.
#pragma once
#include <vector>

#include "sim/config/system_config.h"
#include "sim/engine/system_engine.h"
#include "sim/ir/system.h"
#include "sim/run/device_run.h"

namespace npusim::run {

struct SystemRun {
  engine::SystemSimResult sim;
  std::vector<int> slot_device;  // pipeline device slot -> system device (or host lane)
  std::vector<int> estimated;    // supertasks whose payload was costed from its bytes
  // Energy (docs/energy.md#systems) of the devices the pipeline uses: their compute supertasks'
  // energy, each one's idle power for the rest of the makespan, and the links' bits at their
  // pJ per bit. < 0: some device's power is not modelled.
  double energy_uj = -1;
  double link_energy_uj = -1;  // of energy_uj: the links' and NICs' (< 0: not costed)
};

// InputError naming the system file when the pipeline needs more accelerators than it has or
// puts a collective on the host; naming the pipeline when a supertask cannot be simulated.
SystemRun simulate_pipeline(const ir::System& sys, const config::SystemConfig& cfg, const DeviceRunOptions& ro);

}  // namespace npusim::run
