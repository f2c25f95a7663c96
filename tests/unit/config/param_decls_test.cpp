// The schema is assembled from the units' declarations (each next to its params struct): every
// key is declared once, the schema is their union in order, each struct's read() takes only its
// own keys, and a struct's defaults are the declared ones (docs/config.md shows those).
#include <gtest/gtest.h>

#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/gpu/gpu_power.h"
#include "models/gpu/gpu_timing.h"
#include "models/interconnect/noc.h"
#include "models/memory/dram_timing.h"
#include "models/npu/buffer_params.h"
#include "models/npu/dma_timing.h"
#include "models/npu/energy_params.h"
#include "models/npu/isa_timing.h"
#include "models/npu/pe_array_timing.h"
#include "models/npu/vector_processor_timing.h"
#include "sim/config/hw_config.h"
#include "sim/mapping/mapper_params.h"
#include "sim/mapping/npu_params.h"

using namespace npusim;
using namespace npusim::config;
using namespace npusim::models;
using npusim::mapping::HostParams;
using npusim::mapping::MapperParams;

namespace {

const ParamDecl& decl(const std::string& key) {
  const ParamDecl* d = find_param(key);
  if (!d) throw std::runtime_error("not declared: " + key);
  return *d;
}
double declared(const std::string& key) { return std::stod(decl(key).default_value); }
bool declared_bool(const std::string& key) { return decl(key).default_value == "true"; }
double declared_clock_ghz() { return declared("clock_mhz") / 1000.0; }

// A valid value other than the declared default, for checking who reads a key.
std::string other_value(const ParamDecl& d) {
  switch (d.type) {
    case ParamType::Int: return std::to_string(std::stoll(d.default_value) + 1);
    case ParamType::Double: {
      const double v = std::stod(d.default_value);
      return std::to_string(v == 0 ? 0.5 : v * 0.5);
    }
    case ParamType::Bool: return d.default_value == "true" ? "false" : "true";
    case ParamType::String:
      for (const auto& c : d.choices)
        if (c != d.default_value) return c;
      return d.default_value + "x";
  }
  return d.default_value;
}

// Every value a struct holds, so two reads can be compared.
using Fields = std::vector<double>;

// Fails if setting any key outside `own` (and the top-level keys) changes what `read` builds.
void expect_reads_only(const std::vector<ParamDecl>& own, const std::function<Fields(const HwConfig&)>& read) {
  std::set<std::string> mine;
  for (const auto& d : own) mine.insert(d.path);
  for (const auto& d : top_level_params()) mine.insert(d.path);
  const Fields base = read(HwConfig::defaults());
  for (const auto& d : schema()) {
    if (mine.count(d.path) || !param_applies(d.path, "npu")) continue;
    const Fields changed = read(HwConfig::defaults({d.path + "=" + other_value(d)}));
    EXPECT_EQ(changed, base) << "read() depends on " << d.path << ", which its unit does not declare";
  }
}

Fields pe_fields(const PeArrayParams& p) {
  return {double(p.rows), double(p.cols), double(p.dataflow == Dataflow::OutputStationary), p.macs_per_pe_cycle_int8,
          p.macs_per_pe_cycle_fp16, p.macs_per_pe_cycle_fp32, double(p.fold_overhead_cycles), double(p.channel_align),
          double(p.tile_setup_cycles), p.act_read_bytes_per_cycle, p.weight_read_bytes_per_cycle,
          p.out_write_bytes_per_cycle, double(p.pe_groups), double(p.c_split_min_cycles), double(p.window_packing)};
}
Fields vp_fields(const VpParams& p) {
  Fields f = {double(p.lanes), double(p.parallel_images), double(p.instr_overhead_cycles)};
  for (const auto& [k, s] : p.stages) f.push_back(s.vectors_per_cycle), f.push_back(double(s.latency_cycles));
  return f;
}
Fields buffer_fields(const BufferParams& p) {
  return {double(p.l2_bytes), p.l2_bytes_per_cycle, p.l2_weight_share, double(p.weight_buffer_bytes)};
}
Fields dma_fields(const DmaParams& p) {
  return {double(p.channels), double(p.burst_bytes), double(p.setup_cycles), p.segment_overhead_cycles, p.bytes_per_cycle};
}
Fields dram_fields(const DramParams& p) {
  return {p.bytes_per_cycle, double(p.latency_cycles), double(p.burst_bytes), p.segment_overhead_cycles, double(p.channels)};
}
Fields host_fields(const HostParams& p) { return {p.cycles_per_byte, double(p.op_cycles)}; }
Fields mapper_fields(const MapperParams& p) {
  return {double(p.l2_bytes), double(p.l2_weight_bytes), double(p.l2_act_bytes), double(p.weight_buffer_bytes),
          double(p.weight_prefetch_layers), double(p.staged_prefetch_layers), double(p.serialize_layers),
          double(p.keep_activations_on_chip), double(p.batch_groups_per_stage), p.batch_group_fill,
          double(p.activation_prefetch_layers), p.host_cycles_per_byte, double(p.host_op_cycles), double(p.cores),
          double(static_cast<int>(p.multicore))};
}
Fields noc_fields(const NocParams& p) {
  return {double(p.topology == NocTopology::Mesh), p.link_bytes_per_cycle, double(p.hop_latency_cycles),
          double(p.mesh_cols), double(p.injection_ports)};
}
Fields isa_fields(const IsaParams& p) {
  return {double(p.issue_cycles), double(p.control_cycles), double(p.pe_fixed_cycles), p.pe_stall_share, p.weight_stream_overlap,
          double(p.vp_pipeline_cycles)};
}
Fields energy_fields(const EnergyParams& p) { return {p.pj_per_mac, p.pj_per_dram_byte, p.pj_per_sram_byte}; }

}  // namespace

TEST(ParamDecls, EveryKeyIsDeclaredByExactlyOneUnit) {
  std::map<std::string, int> times;
  for (const auto* list : unit_param_lists()) {
    EXPECT_FALSE(list->empty());
    for (const auto& d : *list) ++times[d.path];
  }
  for (const auto& [key, n] : times) EXPECT_EQ(n, 1) << key << " is declared " << n << " times";
}

TEST(ParamDecls, SchemaIsTheUnionOfTheDeclarationsInOrder) {
  std::vector<std::string> joined, assembled;
  for (const auto* list : unit_param_lists())
    for (const auto& d : *list) joined.push_back(d.path);
  for (const auto& d : schema()) assembled.push_back(d.path);
  EXPECT_EQ(assembled, joined);
  // Each unit's keys, in the order schema.cpp lists the units.
  const std::vector<const std::vector<ParamDecl>*> units = {
      &top_level_params(),         &PeArrayParams::params(), &VpParams::params(),
      &BufferParams::params(),     &DmaParams::params(),     &IsaParams::params(),     &NocParams::params(),
      &MapperParams::params(),
      &DramParams::params(),       &HostParams::params(),    &EnergyParams::params(),
      &GpuParams::params(),        &GpuPowerParams::params()};
  EXPECT_EQ(unit_param_lists(), units);
}

TEST(ParamDecls, EveryNumberDeclaresARangeThatHoldsItsDefault) {
  for (const auto& d : schema()) {
    if (d.type != ParamType::Int && d.type != ParamType::Double) {
      EXPECT_EQ(d.range.text(), range::none.text()) << d.path;
      continue;
    }
    EXPECT_LT(d.range.lo, d.range.hi) << d.path;
    // Writing the default explicitly passes the range check (--set checks like a file does).
    const std::string device = param_applies(d.path, "npu") ? "npu" : "gpu";
    EXPECT_NO_THROW(HwConfig::defaults({"device=" + device, d.path + "=" + d.default_value})) << d.path;
  }
}

TEST(ParamDecls, EachStructReadsOnlyItsOwnKeys) {
  expect_reads_only(PeArrayParams::params(), [](const HwConfig& c) { return pe_fields(PeArrayParams::read(c)); });
  expect_reads_only(VpParams::params(), [](const HwConfig& c) { return vp_fields(VpParams::read(c)); });
  expect_reads_only(BufferParams::params(), [](const HwConfig& c) { return buffer_fields(BufferParams::read(c)); });
  expect_reads_only(DmaParams::params(), [](const HwConfig& c) { return dma_fields(DmaParams::read(c)); });
  expect_reads_only(NocParams::params(), [](const HwConfig& c) { return noc_fields(NocParams::read(c)); });
  expect_reads_only(DramParams::params(), [](const HwConfig& c) { return dram_fields(DramParams::read(c, 64, 0)); });
  expect_reads_only(HostParams::params(), [](const HwConfig& c) { return host_fields(HostParams::read(c)); });
  expect_reads_only(MapperParams::params(),
                    [](const HwConfig& c) { return mapper_fields(MapperParams::read(c, BufferParams{}, HostParams{})); });
  expect_reads_only(EnergyParams::params(), [](const HwConfig& c) { return energy_fields(EnergyParams::read(c)); });
  expect_reads_only(IsaParams::params(), [](const HwConfig& c) { return isa_fields(IsaParams::read(c)); });
  // The GPU's keys are a root of their own: an NPU key cannot even be set in a GPU config.
  for (const auto& d : GpuParams::params()) EXPECT_EQ(d.path.rfind("gpu.", 0), 0u) << d.path;
}

// The defaults a struct gets by hand (its member initializers) and from a config with nothing
// set are both the declared ones.
TEST(ParamDecls, PeArrayDefaultsAreTheDeclaredOnes) {
  const Fields want = {declared("npu.pe_array.rows"),
                       declared("npu.pe_array.cols"),
                       double(decl("npu.pe_array.dataflow").default_value == "output_stationary"),
                       declared("npu.pe_array.macs_per_pe_cycle.int8"),
                       declared("npu.pe_array.macs_per_pe_cycle.fp16"),
                       declared("npu.pe_array.macs_per_pe_cycle.fp32"),
                       declared("npu.pe_array.fold_overhead_cycles"),
                       declared("npu.pe_array.channel_align"),
                       declared("npu.pe_array.tile_setup_cycles"),
                       declared("npu.pe_array.act_read_bytes_per_cycle"),
                       declared("npu.pe_array.weight_read_bytes_per_cycle"),
                       declared("npu.pe_array.out_write_bytes_per_cycle"),
                       declared("npu.pe_array.pe_groups"),
                       declared("npu.pe_array.c_split_min_cycles"),
                       double(decl("npu.pe_array.window_packing").default_value == "true")};
  EXPECT_EQ(pe_fields(PeArrayParams::read(HwConfig::defaults())), want);
  EXPECT_EQ(pe_fields(PeArrayParams{}), want);
  EXPECT_EQ(PeArrayParams::read(HwConfig::defaults()).tile_setup_cycles, 84);
}

TEST(ParamDecls, IsaDefaultsAreTheDeclaredOnes) {
  const Fields want = {declared("npu.isa.issue_cycles"),          declared("npu.isa.control_cycles"),
                       declared("npu.isa.pe_fixed_cycles"),       declared("npu.isa.pe_stall_share"),
                       declared("npu.isa.weight_stream_overlap"), declared("npu.isa.vp_pipeline_cycles")};
  EXPECT_EQ(isa_fields(IsaParams::read(HwConfig::defaults())), want);
  EXPECT_EQ(isa_fields(IsaParams{}), want);
}

TEST(ParamDecls, VectorProcessorDefaultsAreTheDeclaredOnes) {
  const VpParams p = VpParams::read(HwConfig::defaults());
  const VpParams by_hand;
  for (const VpParams& v : {p, by_hand}) {
    EXPECT_EQ(v.lanes, declared("npu.vector.lanes"));
    EXPECT_EQ(v.parallel_images, declared("npu.vector.parallel_images"));
    EXPECT_EQ(v.instr_overhead_cycles, declared("npu.vector.instr_overhead_cycles"));
  }
  EXPECT_EQ(p.stages.size(), std::size(VpParams::kStageKinds));
  for (const std::string k : VpParams::kStageKinds) {
    const std::string key = "npu.vector.stages." + k;
    EXPECT_EQ(p.stage(k).vectors_per_cycle, declared(key + ".vectors_per_cycle")) << k;
    EXPECT_EQ(p.stage(k).latency_cycles, declared(key + ".latency_cycles")) << k;
  }
  // A stage built by hand has the defaults of the plain stages (lut_group's differ).
  EXPECT_EQ(VpStageParams{}.vectors_per_cycle, declared("npu.vector.stages.pre_cal.vectors_per_cycle"));
  EXPECT_EQ(VpStageParams{}.latency_cycles, declared("npu.vector.stages.pre_cal.latency_cycles"));
}

TEST(ParamDecls, BufferDmaDramHostAndEnergyDefaultsAreTheDeclaredOnes) {
  const HwConfig c = HwConfig::defaults();
  const Fields buffers = {declared("npu.l2.size_kib") * 1024, declared("npu.l2.bytes_per_cycle"),
                          declared("npu.l2.weight_share"), declared("npu.weight_buffer.size_kib") * 1024};
  EXPECT_EQ(buffer_fields(BufferParams::read(c)), buffers);
  EXPECT_EQ(buffer_fields(BufferParams{}), buffers);

  const Fields dma = {declared("npu.dma.channels"), declared("npu.dma.burst_bytes"), declared("npu.dma.setup_cycles"),
                      declared("npu.dma.segment_overhead_cycles"), declared("npu.dma.bytes_per_cycle")};
  EXPECT_EQ(dma_fields(DmaParams::read(c)), dma);
  EXPECT_EQ(dma_fields(DmaParams{}), dma);

  // DRAM numbers in cycles of the declared default clock; bursts and segments are the DMA's.
  const Fields dram = {declared("memory.dram.bandwidth_gbps") / declared_clock_ghz(),
                       declared("memory.dram.latency_ns") * declared_clock_ghz(), declared("npu.dma.burst_bytes"),
                       declared("npu.dma.segment_overhead_cycles"), declared("memory.dram.channels")};
  EXPECT_EQ(dram_fields(mapping::NpuParams::read(c).dram), dram);
  EXPECT_EQ(dram_fields(DramParams{}), dram);

  const Fields host = {1.0 / (declared("host.bandwidth_gbps") / declared_clock_ghz()),
                       declared("host.op_overhead_us") * 1000 * declared_clock_ghz()};
  EXPECT_EQ(host_fields(HostParams::read(c)), host);
  EXPECT_EQ(host_fields(HostParams{}), host);

  const Fields energy = {declared("energy.pj_per_mac"), declared("energy.pj_per_dram_byte"),
                         declared("energy.pj_per_sram_byte")};
  EXPECT_EQ(energy_fields(EnergyParams::read(c)), energy);
  EXPECT_EQ(energy_fields(EnergyParams{}), energy);
}

TEST(ParamDecls, MapperDefaultsAreTheDeclaredOnes) {
  const mapping::NpuParams n = mapping::NpuParams::read(HwConfig::defaults());
  for (const MapperParams& p : {n.mapper, MapperParams{}}) {
    EXPECT_EQ(p.weight_prefetch_layers, declared("mapping.weight_prefetch_layers"));
    EXPECT_EQ(p.staged_prefetch_layers, declared("mapping.staged_prefetch_layers"));
    EXPECT_EQ(p.serialize_layers, declared_bool("mapping.serialize_layers"));
    EXPECT_EQ(p.keep_activations_on_chip, declared_bool("mapping.keep_activations_on_chip"));
    EXPECT_EQ(p.activation_prefetch_layers, declared("mapping.activation_prefetch_layers"));
    EXPECT_EQ(p.batch_groups_per_stage, declared_bool("mapping.batch_groups_per_stage"));
    EXPECT_EQ(p.batch_group_fill, declared("mapping.batch_group_fill"));
  }
  // The sizes and host costs are the buffers' and the host's, built once with them.
  EXPECT_EQ(n.mapper.l2_bytes, n.buffers.l2_bytes);
  EXPECT_EQ(n.mapper.weight_buffer_bytes, n.buffers.weight_buffer_bytes);
  EXPECT_EQ(n.mapper.l2_weight_bytes + n.mapper.l2_act_bytes, n.buffers.l2_bytes);
  EXPECT_EQ(n.mapper.host_op_cycles, n.host.op_cycles);
}

TEST(ParamDecls, GpuDefaultsAreTheDeclaredOnes) {
  // The numbers as written (the derived per-cycle ones depend on the clock: see timing_test).
  const GpuParams p = GpuParams::read(HwConfig::defaults({"device=gpu"}));
  const GpuParams by_hand;
  for (const GpuParams& g : {p, by_hand}) {
    EXPECT_EQ(g.arch, decl("gpu.arch").default_value);
    EXPECT_EQ(g.num_sms, declared("gpu.num_sms"));
    EXPECT_EQ(g.warp_size, declared("gpu.warp_size"));
    EXPECT_EQ(g.max_warps_per_block, declared("gpu.max_warps_per_block"));
    EXPECT_EQ(g.sub_partitions, declared("gpu.sub_partitions"));
    EXPECT_EQ(g.smem_per_block_bytes, declared("gpu.smem_per_block_kib") * 1024);
    EXPECT_EQ(g.registers_per_sm_bytes, declared("gpu.registers_per_sm_kib") * 1024);
    EXPECT_EQ(g.smem_bytes_per_cycle, declared("gpu.smem_bytes_per_cycle"));
    EXPECT_EQ(g.transcendental_flops, declared("gpu.transcendental_flops"));
    EXPECT_EQ(g.mma_efficiency, declared("gpu.matmul.mma_efficiency"));
    EXPECT_EQ(g.k_step_cycles, declared("gpu.matmul.k_step_cycles"));
    EXPECT_EQ(g.loaded_latency_factor, declared("gpu.matmul.loaded_latency_factor"));
    EXPECT_EQ(g.warp_load_bytes_in_flight, declared("gpu.matmul.warp_load_bytes_in_flight"));
    EXPECT_EQ(g.l2_bytes, declared("gpu.l2.size_mib") * 1024 * 1024);
    EXPECT_EQ(g.sm_l2_bytes_per_cycle, declared("gpu.l2.sm_bytes_per_cycle"));
    EXPECT_EQ(g.task_overhead_cycles, declared("gpu.task_overhead_cycles"));
    EXPECT_EQ(g.barrier_ns, declared("gpu.barrier_ns"));
  }
  EXPECT_EQ(p.clock_mhz, declared("clock_mhz"));
}

namespace {

// A unit's bound keys: the struct's own defaults (its member initializers) are what the
// declarations say; all_bound: every key of the unit is bound. Returns how many are bound.
template <class P>
int expect_bound_with_declared_defaults(const char* unit, const P& read, bool all_bound) {
  const P built{};
  int bound = 0;
  for (const ParamDecl& d : P::params()) {
    if (!d.bind) {
      EXPECT_FALSE(all_bound) << unit << ": " << d.path << " is not bound";
      continue;
    }
    ++bound;
    EXPECT_TRUE(d.bind.same(&built, &read)) << unit << ": " << d.path << " defaults to " << d.default_value
                                            << " in its declaration but not in the struct";
  }
  return bound;
}

}  // namespace

TEST(ParamBinding, BoundUnitsReadEveryKeyAndKeepTheDeclaredDefaults) {
  const HwConfig c = HwConfig::defaults();
  expect_bound_with_declared_defaults("DmaParams", DmaParams::read(c), true);
  expect_bound_with_declared_defaults("PeArrayParams", PeArrayParams::read(c), true);
  expect_bound_with_declared_defaults("BufferParams", BufferParams::read(c), true);
  expect_bound_with_declared_defaults("EnergyParams", EnergyParams::read(c), true);
  // Partly bound: the rest need the clock (NoC rates), are generated (vector stages) or are the
  // mapper's to parse (mapping.multicore_layers).
  EXPECT_EQ(expect_bound_with_declared_defaults("NocParams", NocParams::read(c), false), 3);
  EXPECT_EQ(expect_bound_with_declared_defaults("VpParams", VpParams::read(c), false), 3);
  EXPECT_EQ(expect_bound_with_declared_defaults(
                "MapperParams", MapperParams::read(c, BufferParams::read(c), HostParams::read(c)), false),
            9);
  // A scale converts the key's unit: 16 KiB of L2 are 16,384 bytes.
  EXPECT_EQ(BufferParams::read(HwConfig::defaults({"npu.l2.size_kib=16"})).l2_bytes, 16 * 1024);
  // A bound key reaches its field: every key at another valid value changes what read() gives.
  for (const ParamDecl& d : PeArrayParams::params()) {
    const PeArrayParams a = PeArrayParams::read(HwConfig::defaults());
    const PeArrayParams b = PeArrayParams::read(HwConfig::defaults({d.path + "=" + other_value(d)}));
    EXPECT_FALSE(d.bind.same(&a, &b)) << d.path << " = " << other_value(d) << " did not reach its field";
  }
}
