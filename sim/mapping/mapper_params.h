// The mapper's policy keys (mapping.*) and the host CPU's costs (host.*), declared next to
// their structs; sim/config assembles the schema from these declarations.
#pragma once
#include <cstdint>
#include <vector>

#include "models/npu/buffer_params.h"
#include "sim/config/hw_config.h"

namespace npusim::mapping {

// Layers with device: cpu run on the host; the mapper gives each its time.
struct HostParams {
  double cycles_per_byte = 0.1;  // 1 / (host.bandwidth_gbps / clock_ghz), at the default clock
  int64_t op_cycles = 5000;      // host.op_overhead_us in cycles, at the default clock

  // The host.* keys: the one place their defaults and ranges are written.
  static const std::vector<config::ParamDecl>& params();
  static HostParams read(const config::HwConfig& c);  // the keys of params() and clock_mhz
};

struct MapperParams {
  // From BufferParams (read() fills them; 0 for tests that build the struct by hand).
  int64_t l2_bytes = 0;
  int64_t l2_weight_bytes = 0;  // share of L2 for prefetched weights
  int64_t l2_act_bytes = 0;     // the rest: activations
  int64_t weight_buffer_bytes = 0;
  int weight_prefetch_layers = 2;
  int staged_prefetch_layers = 3;
  bool serialize_layers = false;
  bool keep_activations_on_chip = true;
  // Batch groups (docs/mapping.md (batch groups)): false: one run per stretch of layers whose
  // weights fit together, on groups set by its tightest layer and the L2 activation share;
  // true: the Gemini compiler's rule, groups of a power of two images sized per spatial stage
  // to fill `batch_group_fill` of the whole L2, a run's activations using the L2 its own
  // staged weights leave free.
  bool batch_groups_per_stage = false;
  double batch_group_fill = 1.0;
  // With serialize_layers: activation loads from DRAM of a layer wait for the NPU layer this
  // many earlier (1: the previous one, like its compute).
  int activation_prefetch_layers = 1;
  // Multi-core chips (docs/multicore.md#mapping): npu.cores, and how a layer is split over
  // them. Each core has the buffers above; the mapper plans activations against all cores'
  // L2 together (a layer's tiles are spread over them) and weights against one core's.
  int cores = 1;
  enum class Multicore { Auto, Rows, Channels, Layer, Pipeline } multicore = Multicore::Auto;
  int64_t pipeline_images = 1;  // mapping.pipeline_images: images per step through the stages
  // From HostParams.
  double host_cycles_per_byte = 0;
  int64_t host_op_cycles = 0;

  // The mapping.* keys: the one place their defaults and ranges are written.
  static const std::vector<config::ParamDecl>& params();
  // Reads only the keys of params(); the buffer sizes and host costs come from their structs,
  // the core count from npu.cores (models/interconnect/noc.h declares it).
  static MapperParams read(const config::HwConfig& c, const models::BufferParams& buffers, const HostParams& host,
                           int cores = 1);
};

// In the header: sim/config assembles the schema from these without linking the mapper.
inline const std::vector<config::ParamDecl>& MapperParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"mapping.weight_prefetch_layers", T::Int, "2", "layers",
       "weights that fit half of WL0 load straight into it once the layer N earlier (any kind) has finished", {}, r::count, config::bind(&MapperParams::weight_prefetch_layers)},
      {"mapping.staged_prefetch_layers", T::Int, "3", "weight layers",
       "larger weights are staged in the L2 weight share once the weight layer N earlier has finished and there is room", {},
       r::count, config::bind(&MapperParams::staged_prefetch_layers)},
      {"mapping.serialize_layers", T::Bool, "false", "",
       "start a layer only after the previous layer finished (false: independent layers may overlap on PE and VP)", {},
       r::none, config::bind(&MapperParams::serialize_layers)},
      {"mapping.keep_activations_on_chip", T::Bool, "true", "",
       "keep a layer's output in L2 for its consumers when it fits; else spill to DRAM", {}, r::none, config::bind(&MapperParams::keep_activations_on_chip)},
      {"mapping.activation_prefetch_layers", T::Int, "1", "layers",
       "with serialize_layers: a layer's activation loads from DRAM start once the NPU layer N earlier has finished (1: the previous one)",
       {}, r::count, config::bind(&MapperParams::activation_prefetch_layers)},
      {"mapping.batch_groups_per_stage", T::Bool, "false", "",
       "batch groups of a power of two images sized per spatial stage against the whole L2 (the Gemini compiler's rule; "
       "false: one group size per run, set by its tightest layer against the L2 activation share)", {}, r::none, config::bind(&MapperParams::batch_groups_per_stage)},
      {"mapping.batch_group_fill", T::Double, "1", "fraction",
       "with batch_groups_per_stage: the share of the L2 a batch group's live activations may fill", {}, r::fraction, config::bind(&MapperParams::batch_group_fill)},
      {"mapping.multicore", T::String, "auto", "",
       "npu.cores > 1: split each layer's output rows (images x rows, weights copied to every core), its output "
       "channels (weights divided, inputs read by every core), per layer whichever moves fewer bytes (auto), or run "
       "each layer whole on one core, the cores in turn (layer), or fuse the cores into one (fused: one array of "
       "every core's PEs, their buffers, lanes and DMA channels together), or pipeline the layers over the cores, "
       "a stage of consecutive layers each, images streaming through (pipeline)",
       {"auto", "rows", "channels", "layer", "fused", "pipeline"}, r::none, config::bind_choice(&MapperParams::multicore, {{"auto", MapperParams::Multicore::Auto}, {"rows", MapperParams::Multicore::Rows}, {"channels", MapperParams::Multicore::Channels}, {"layer", MapperParams::Multicore::Layer}, {"pipeline", MapperParams::Multicore::Pipeline}})},
      {"mapping.multicore_layers", T::String, "", "",
       "npu.cores > 1: per-layer exceptions to mapping.multicore, comma-separated NAME=SPLIT entries (SPLIT: rows, "
       "channels or layer; NAME a layer's name, or a prefix ending in *), as a compiler that maps some layers its own "
       "way; every NAME must match a layer",
       {}, r::none},
      {"mapping.pipeline_images", T::Int, "1", "images",
       "mapping.multicore: pipeline: images that go through the stages together (a micro-batch)", {}, r::count, config::bind(&MapperParams::pipeline_images)},
  };
  return decls;
}

inline const std::vector<config::ParamDecl>& HostParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"host.op_overhead_us", T::Double, "5", "us", "fixed cost of one host (cpu) layer", {}, r::delay},
      {"host.bandwidth_gbps", T::Double, "10", "GB/s", "host copy bandwidth for cpu layers", {}, r::rate},
  };
  return decls;
}

}  // namespace npusim::mapping
