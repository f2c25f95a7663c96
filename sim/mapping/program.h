// The lowered workload: tile commands for the units, with dependencies. Produced by the mapper
// (sim/mapping/mapper.h), played out by the SystemC engine (sim/engine). No SystemC here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/interconnect/noc.h"
#include "models/npu/dma_timing.h"
#include "models/npu/pe_array_timing.h"
#include "models/npu/vector_processor_timing.h"

namespace npusim::mapping {

// Sync: a zero-time join of several cores' last commands (a layer split over cores).
enum class Unit { Dma, PeArray, Vector, Host, Sync };
const char* unit_name(Unit u);

struct Command {
  int id = 0;
  Unit unit = Unit::PeArray;
  int layer = 0;      // index into Program::layers
  std::string label;  // short description for traces
  models::DmaTransfer dma;                // unit == Dma
  models::PeTile pe;                      // unit == PeArray
  models::VpTile vp;                      // unit == Vector
  int64_t host_cycles = 0;                // unit == Host
  std::vector<int> deps;  // ids of commands that must finish before this one starts
  // Multi-core chips (docs/multicore.md): the core whose unit runs it, and the bytes of its
  // on-chip input that live in other cores' L2 and cross the NoC (from where remote_from says).
  int core = 0;
  int64_t remote_bytes = 0;
  models::RemoteSource remote_from;
};

enum class Bound { Compute, Memory, Vector, Host };
const char* bound_name(Bound b);
// A layer's bound from what its charged time held (docs/timing.md#per-layer-cycles-and-bound): the
// largest of the PE's busy cycles (compute), the VP's (vector) and the time neither worked
// (memory: `stall`, its weights or activations not yet in).
Bound layer_bound(int64_t pe_busy, int64_t vp_busy, int64_t stall);

struct LayerPlan {
  int layer_index = 0;
  std::string name, op;
  bool on_host = false;
  int64_t macs = 0;
  int64_t weight_bytes = 0;
  int64_t in_bytes = 0, out_bytes = 0;
  bool input_from_dram = false;  // input activations loaded by DMA
  bool output_to_dram = false;   // output stored by DMA (spilled or graph output)
  int row_tiles = 1, k_chunks = 1;
  int batch_groups = 1;          // >1: run depth-first on groups of images (docs/mapping.md)
  int64_t l2_act_bytes = 0;      // activation bytes this layer holds in L2 while it runs
  int64_t peak_macs_per_cycle = 0;
  ir::DType dtype = ir::DType::Int8;
  // Multi-core chips: the cores the layer ran on and how it was split over them ("rows",
  // "channels"; "" on one core).
  int cores = 1;
  std::string split;
};

struct Program {
  std::vector<Command> commands;  // in issue order; deps always point backwards
  std::vector<LayerPlan> layers;  // in execution order
};

}  // namespace npusim::mapping

namespace npusim::mapping {
// When a command ran (filled by the engine, read by reports).
struct CommandTiming {
  int64_t start_cycle = 0;
  int64_t end_cycle = 0;
  int channel = 0;  // queue within the unit (DMA channel)
  // What the models served (models/kernel/scoreboard.h: JobRecord).
  int64_t dram_bytes = 0, l2_bytes = 0, port_wait_cycles = 0, dram_wait_cycles = 0;
  int64_t noc_bytes = 0, noc_wait_cycles = 0;  // multi-core chips
};
}  // namespace npusim::mapping
