// The one declaration of every hardware parameter (docs/config.md is generated from this table
// by `sim config --markdown`). Units are in the key name or the unit column.
#include "sim/config/hw_config.h"

namespace npusim::config {

namespace {
using T = ParamType;

// Allowed ranges follow from what a key measures (its unit), with the exceptions named below;
// docs/config.md lists the result per key. Rates and sizes must be > 0; counts >= 1; latencies
// and overheads >= 0; every bound is far enough inside int64 that cycle arithmetic cannot overflow.
void set_ranges(std::vector<ParamDecl>& s) {
  const ParamRange rate{1e-6, 1e9, true, false};       // B/cycle, GB/s, TFLOPS, MAC/PE/cycle...
  const ParamRange count{1, 1 << 20, false, false};    // PEs, lanes, channels, SMs, warps...
  const ParamRange size{1, 1 << 30, false, false};     // KiB, MiB
  const ParamRange delay{0, 1e9, false, false};        // cycles, ns, us
  const ParamRange fraction{1e-6, 1, true, false};     // efficiencies: (0, 1]
  for (ParamDecl& p : s) {
    if (p.type != T::Int && p.type != T::Double) continue;
    const std::string& u = p.unit;
    if (u == "MHz") p.range = {1e-3, 1e6, true, false};
    else if (u == "KiB" || u == "MiB") p.range = size;
    else if (u == "cycles" || u == "ns" || u == "us") p.range = delay;
    else if (u == "pJ") p.range = {0, 1e6, false, false};
    else if (u == "fraction") p.range = fraction;
    else if (u == "B/cycle" || u == "GB/s" || u == "TFLOPS" || u == "MAC/PE/cycle" || u == "vectors/cycle" ||
             u == "flop" || (u == "B" && p.type == T::Double))
      p.range = rate;
    else p.range = count;  // PEs, elements, channels, B (burst), layers, SMs, threads, warps, ""
  }
  for (ParamDecl& p : s) {
    if (p.path == "npu.l2.weight_share") p.range = {0, 1, false, true};  // [0, 1): the rest holds activations
    // Each DMA channel is a SystemC thread with its own stack: 2^20 of them exhaust the memory
    // maps of a process (a crash, found by tests/malformed extreme_npu_dma_channels_max).
    if (p.path == "npu.dma.channels") p.range = {1, 1024, false, false};
  }
}
std::vector<ParamDecl> build_schema() {
  std::vector<ParamDecl> s = {
      {"name", T::String, "npu", "", "name of this hardware description (shown in reports)", {}},
      {"clock_mhz", T::Double, "1000", "MHz", "core clock; all unit cycles are in this clock", {}},
      {"device", T::String, "npu", "", "the device model that runs a workload: npu (npu.* keys) or gpu (gpu.* keys)", {"npu", "gpu"}},

      // PE array (models/npu/pe_array_timing.h, docs/timing.md#pe-array)
      {"npu.pe_array.rows", T::Int, "64", "PEs", "rows: output channels (K) mapped in parallel", {}},
      {"npu.pe_array.cols", T::Int, "64", "PEs", "columns: reduction lanes (C*R*S) in parallel", {}},
      {"npu.pe_array.dataflow", T::String, "weight_stationary", "",
       "weight_stationary: weights held, output pixels streamed; output_stationary: outputs held, reduction streamed",
       {"weight_stationary", "output_stationary"}},
      {"npu.pe_array.macs_per_pe_cycle.int8", T::Double, "1", "MAC/PE/cycle", "int8 throughput per PE", {}},
      {"npu.pe_array.macs_per_pe_cycle.fp16", T::Double, "0.5", "MAC/PE/cycle", "fp16/bf16 throughput per PE", {}},
      {"npu.pe_array.macs_per_pe_cycle.fp32", T::Double, "0.125", "MAC/PE/cycle", "fp32 throughput per PE", {}},
      {"npu.pe_array.fold_overhead_cycles", T::Int, "0", "cycles",
       "extra cycles per fold (one K block x one reduction block of cols)", {}},
      {"npu.pe_array.channel_align", T::Int, "1", "channels",
       "input channels are padded to a multiple of this when packed onto the columns", {}},
      {"npu.pe_array.tile_setup_cycles", T::Int, "84", "cycles", "per PE tile: the pe_cfg_* instructions before a pe_conv", {}},
      {"npu.pe_array.act_read_bytes_per_cycle", T::Double, "64", "B/cycle",
       "input activations from L2 into the array (re-read once per K fold)", {}},
      {"npu.pe_array.weight_read_bytes_per_cycle", T::Double, "32", "B/cycle",
       "weights from the weight buffer into the array; a fold cannot be shorter than its weight load", {}},
      {"npu.pe_array.out_write_bytes_per_cycle", T::Double, "32", "B/cycle", "results from the array back to L2", {}},

      // Vector processor (models/npu/vector_processor_timing.h)
      {"npu.vector.lanes", T::Int, "32", "elements", "channels processed in parallel (one vector = lanes elements)", {}},
      {"npu.vector.instr_overhead_cycles", T::Int, "0", "cycles", "per VP instruction issue overhead", {}},
      {"npu.vector.parallel_images", T::Int, "1", "images",
       "images of a batch the VP processes side by side (the work of a batch of N takes ceil(N / this) passes' time)", {}},
  };
  // One throughput/latency pair per module_list stage kind.
  for (const char* k : {"pre_cal", "compare_group", "post_cal", "fp32_sum_sub_group", "relu_group",
                         "fp32_mul_group", "acc_tree_group"}) {
    s.push_back({std::string("npu.vector.stages.") + k + ".vectors_per_cycle", T::Double, "1",
                 "vectors/cycle", std::string("throughput of the ") + k + " stage", {}});
    s.push_back({std::string("npu.vector.stages.") + k + ".latency_cycles", T::Int, "6", "cycles",
                 std::string("pipeline latency of the ") + k + " stage", {}});
  }
  // Transcendental functions (exp, gelu, sigmoid, tanh, rsqrt, reciprocal) by table lookup and
  // interpolation: the passes of softmax, norms and activations beyond relu (docs/timing.md#vector-ops).
  s.push_back({"npu.vector.stages.lut_group.vectors_per_cycle", T::Double, "0.5", "vectors/cycle",
               "throughput of the lut_group stage (table lookup + linear interpolation: two reads per element)", {}});
  s.push_back({"npu.vector.stages.lut_group.latency_cycles", T::Int, "8", "cycles",
               "pipeline latency of the lut_group stage", {}});
  std::vector<ParamDecl> rest = {
      // On-chip buffers (models/npu/buffer.h)
      {"npu.l2.size_kib", T::Int, "8192", "KiB", "global (L2) buffer holding activations and prefetched weights", {}},
      {"npu.l2.bytes_per_cycle", T::Double, "256", "B/cycle", "L2 port bandwidth shared by DMA, PE array and VP", {}},
      {"npu.l2.weight_share", T::Double, "0.5", "fraction", "share of L2 reserved for weight prefetch", {}},
      {"npu.weight_buffer.size_kib", T::Int, "1152", "KiB", "WL0 weight buffer next to the PE array", {}},

      // DMA (models/npu/dma_timing.h)
      {"npu.dma.channels", T::Int, "2", "channels", "independent DMA engines (queues)", {}},
      {"npu.dma.burst_bytes", T::Int, "64", "B", "DRAM burst; transfers are rounded up to whole bursts", {}},
      {"npu.dma.setup_cycles", T::Int, "21", "cycles", "per transfer: descriptor (ld*_cfg) before data moves", {}},
      {"npu.dma.segment_overhead_cycles", T::Double, "0", "cycles",
       "per contiguous segment (e.g. one weight row per output channel)", {}},
      {"npu.dma.bytes_per_cycle", T::Double, "64", "B/cycle", "peak rate of one DMA channel", {}},

      // Mapping policy (sim/mapping)
      {"mapping.weight_prefetch_layers", T::Int, "2", "layers",
       "weights that fit half of WL0 load straight into it once the layer N earlier (any kind) has finished", {}},
      {"mapping.staged_prefetch_layers", T::Int, "3", "weight layers",
       "larger weights are staged in the L2 weight share once the weight layer N earlier has finished and there is room", {}},
      {"mapping.serialize_layers", T::Bool, "false", "",
       "start a layer only after the previous layer finished (false: independent layers may overlap on PE and VP)", {}},
      {"mapping.keep_activations_on_chip", T::Bool, "true", "",
       "keep a layer's output in L2 for its consumers when it fits; else spill to DRAM", {}},
      {"mapping.activation_prefetch_layers", T::Int, "1", "layers",
       "with serialize_layers: a layer's activation loads from DRAM start once the NPU layer N earlier has finished (1: the previous one)", {}},
      {"mapping.batch_groups_per_stage", T::Bool, "false", "",
       "batch groups of a power of two images sized per spatial stage against the whole L2 (the Gemini compiler's rule; "
       "false: one group size per run, set by its tightest layer against the L2 activation share)", {}},
      {"mapping.batch_group_fill", T::Double, "1", "fraction",
       "with batch_groups_per_stage: the share of the L2 a batch group's live activations may fill", {}},

      // DRAM (models/memory/dram_timing.h)
      {"memory.dram.bandwidth_gbps", T::Double, "32", "GB/s", "sustained bandwidth (1 GB = 1e9 B)", {}},
      {"memory.dram.latency_ns", T::Double, "100", "ns", "first-byte latency of a transfer", {}},
      {"memory.dram.channels", T::Int, "2", "channels", "channels; a transfer is interleaved over all of them", {}},

      // Host CPU for device: cpu layers
      {"host.op_overhead_us", T::Double, "5", "us", "fixed cost of one host (cpu) layer", {}},
      {"host.bandwidth_gbps", T::Double, "10", "GB/s", "host copy bandwidth for cpu layers", {}},

      // Energy (optional: 0 disables the energy columns)
      {"energy.pj_per_mac", T::Double, "0", "pJ", "energy per MAC", {}},
      {"energy.pj_per_dram_byte", T::Double, "0", "pJ", "energy per DRAM byte", {}},
      {"energy.pj_per_sram_byte", T::Double, "0", "pJ", "energy per on-chip buffer byte", {}},
  };
  s.insert(s.end(), rest.begin(), rest.end());
  // GPU (models/gpu/gpu_timing.h, docs/gpu.md): chip-level numbers as vendors state them; the
  // NPU keys above do not matter for a GPU run. Defaults: an H100 SXM5 (configs/gpu_h100.yaml).
  std::vector<ParamDecl> gpu = {
      {"gpu.arch", T::String, "CUDA_90", "",
       "architecture: picks ARK's default op configs for plans built from a model alone", {"CUDA_80", "CUDA_90", "ROCM_942"}},
      {"gpu.num_sms", T::Int, "132", "SMs", "streaming multiprocessors (CUs on AMD); ARK runs one thread block (processor) per SM", {}},
      {"gpu.warp_size", T::Int, "32", "threads",
       "threads per warp (64: AMD wavefront): a warp keeps warp_size x mem.bytes_in_flight_per_thread loads outstanding", {}},
      {"gpu.max_warps_per_block", T::Int, "32", "warps", "most warps of one thread block: a plan's NumWarpsPerProcessor limit", {}},
      {"gpu.sub_partitions", T::Int, "4", "",
       "warp schedulers per SM (SIMDs per CU): a slot of w warps gets min(1, w/this) of the SM's math rate", {}},
      {"gpu.smem_per_block_kib", T::Double, "227", "KiB", "most shared memory one thread block may use (ARK reserves 128 B of it)", {}},
      {"gpu.registers_per_sm_kib", T::Double, "256", "KiB",
       "register file of one SM: the fp32 accumulators of the matmul tiles it runs at once must fit (gpu-calibrate occupancy)", {}},
      {"gpu.smem_bytes_per_cycle", T::Double, "128", "B/cycle", "shared-memory read bandwidth of one SM (MMA operand fetch)", {}},
      {"gpu.tensor_tflops.fp16", T::Double, "989.4", "TFLOPS", "dense fp16 matrix (tensor core) throughput of the chip", {}},
      {"gpu.tensor_tflops.bf16", T::Double, "989.4", "TFLOPS", "dense bf16 matrix throughput of the chip", {}},
      {"gpu.tensor_tflops.fp32", T::Double, "494.7", "TFLOPS", "dense matrix throughput for fp32 inputs (TF32 on NVIDIA)", {}},
      {"gpu.vector_tflops", T::Double, "66.9", "TFLOPS", "non-matrix fp32 throughput: element-wise and reduce arithmetic", {}},
      {"gpu.transcendental_flops", T::Double, "4", "flop",
       "cost of one exp/sigmoid/gelu/sqrt/rsqrt/div/rope element in fp32 flops", {}},
      {"gpu.matmul.mma_efficiency", T::Double, "0.8", "fraction",
       "share of the peak matrix rate a tile's K loop sustains (calibrated, docs/gpu.md#calibration)", {}},
      {"gpu.matmul.k_step_cycles", T::Double, "40", "cycles",
       "fixed cost of one K iteration of a matmul tile: stage barrier, pipeline advance (a smaller TK pays it more often)", {}},
      {"gpu.hbm.bandwidth_gbps", T::Double, "3350", "GB/s", "peak DRAM (HBM) bandwidth", {}},
      {"gpu.hbm.efficiency", T::Double, "0.9", "fraction", "share of the peak a streaming copy sustains", {}},
      {"gpu.hbm.latency_ns", T::Double, "600", "ns", "latency of a load that misses to HBM; bounds what a warp's loads in flight can move", {}},
      {"gpu.l2.size_mib", T::Double, "50", "MiB", "last-level cache shared by all SMs (L2; Infinity Cache on MI300X)", {}},
      {"gpu.l2.latency_ns", T::Double, "200", "ns", "latency of a load that hits in L2 (matmul stages hide it, docs/gpu.md#matmul-the-tile-model)", {}},
      {"gpu.l2.bandwidth_gbps", T::Double, "10000", "GB/s", "bandwidth of that cache, shared by all SMs", {}},
      {"gpu.l2.sm_bytes_per_cycle", T::Double, "64", "B/cycle", "L2-to-SM bandwidth of one SM", {}},
      {"gpu.mem.bytes_in_flight_per_thread", T::Double, "64", "B",
       "global loads one thread keeps outstanding in element-wise ops (16 B vector loads x 4 unrolled)", {}},
      {"gpu.task_overhead_cycles", T::Double, "200", "cycles", "per task: index math, call, warp sync", {}},
      {"gpu.barrier_ns", T::Double, "1000", "ns", "sync_gpu across processors: last arrival to release", {}},
      {"gpu.launch_overhead_us", T::Double, "5", "us", "kernel launch to the first task, once per run", {}},
      {"gpu.link.bandwidth_gbps", T::Double, "450", "GB/s", "GPU-to-GPU bandwidth of one GPU per direction, all links together", {}},
      {"gpu.link.peer_bandwidth_gbps", T::Double, "450", "GB/s",
       "one GPU to one peer per direction (through a switch: the same as bandwidth_gbps)", {}},
      {"gpu.link.latency_ns", T::Double, "1000", "ns", "one-way latency of a remote write or signal", {}},
      {"gpu.link.proxy_latency_us", T::Double, "3", "us", "host proxy service time of a Proxy-channel put", {}},
  };
  s.insert(s.end(), gpu.begin(), gpu.end());
  set_ranges(s);
  return s;
}
}  // namespace

const std::vector<ParamDecl>& schema() {
  static const std::vector<ParamDecl> s = build_schema();
  return s;
}

const ParamDecl* find_param(const std::string& path) {
  for (const auto& p : schema())
    if (p.path == path) return &p;
  return nullptr;
}

}  // namespace npusim::config
