// GPU timing: pure formulas, no SystemC (docs/gpu.md#timing). One task (an ARK output tile) on
// one slot (a group of warps of one SM) asks the hardware for: its own latency on the slot, a
// share of the SM's math pipes and shared-memory port, bytes through its SM's L2 port, the L2
// and HBM shared by all SMs, and bytes over the links to other GPUs. The SM model
// (models/gpu/sm.h) reserves the shared parts on arbitrated servers, so concurrent tasks and
// processor groups slow each other down.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/kernel/rate_server.h"
#include "sim/config/hw_config.h"
#include "sim/ir/gpu_program.h"

namespace npusim::models {

// Every number in cycles / bytes / flops of the SM clock (clock_mhz). The initializers are an
// H100 SXM5 at 1830 MHz (configs/gpu_h100.yaml) for tests that build the struct by hand; the
// declared defaults are in params().
struct GpuParams {
  std::string arch = "CUDA_90";
  int num_sms = 132;
  int warp_size = 32;
  int max_warps_per_block = 32;
  int max_warps_per_sm = 64;
  int sub_partitions = 4;
  int64_t smem_per_block_bytes = 227 * 1024;
  int64_t smem_per_sm_bytes = 228 * 1024;
  int64_t registers_per_sm_bytes = 256 * 1024;
  double clock_mhz = 1830;              // as written (reports print it; periods divide by it)
  double clock_ghz = 1.83;
  double smem_bytes_per_cycle = 128;    // per SM
  double tensor_fpc_fp16 = 4096;        // flop/cycle per SM
  double tensor_fpc_bf16 = 4096;
  double tensor_fpc_fp32 = 2048;
  double tensor_fpc_int8 = 8192;        // op/cycle per SM
  double tensor_fpc_fp8 = 8192;         // flop/cycle per SM (0: no fp8 tensor cores)
  double vector_fpc = 256;              // flop/cycle per SM
  double transcendental_flops = 4;
  double mma_efficiency = 0.8;
  double k_step_cycles = 40;            // fixed cost of one K iteration of a matmul tile
  double loaded_latency_factor = 1;     // a matmul's pipelined loads see this x the idle latency
  double warp_load_bytes_in_flight = 0; // bytes a warp's tile loads keep in flight (0: the stages alone bound them)
  double warp_mma_share = 1;            // of the tensor rate, for warp-level mma.sync (Hopper: wgmma only)
  double int8_mma_share = 1;            // of the int8 tensor rate that int8 GEMM kernels reach beside fp16's
  double fp8_mma_share = 1;             // of the fp8 tensor rate that fp8 GEMM kernels reach beside fp16's
  double hbm_bytes_per_cycle = 1648;    // whole GPU, sustained (peak x efficiency)
  double hbm_latency_cycles = 1098;
  double hbm_capacity_bytes = 80.0 * (1 << 30);  // gpu.hbm.capacity_gib
  double l2_latency_cycles = 366;       // a load that hits in L2
  int64_t l2_bytes = 50LL << 20;
  int l2_partitions = 1;                // a matmul's shared panels find l2_bytes / l2_partitions
  double l2_drift_waves = 0;            // waves until an SM's co-resident tiles start staggered (0: never)
  double l2_jitter_per_wave = 0;        // how fast the SMs' phases wander apart (several tiles per SM)
  double l2_bytes_per_cycle = 5464;     // whole GPU
  double sm_l2_bytes_per_cycle = 64;    // one SM's port
  double bytes_in_flight_per_warp = 2048;  // warp_size x gpu.mem.bytes_in_flight_per_thread
  double task_overhead_cycles = 200;
  double reduce_step_cycles = 30;       // one step of a block reduction (a shuffle and its add)
  double block_exchange_cycles = 60;    // a block reduction's exchange between warps (store, barrier, load)
  double barrier_ns = 1000;             // as written (the report's critical-path tolerance)
  double barrier_cycles = 1830;
  double launch_overhead_cycles = 9150;
  double graph_gap_cycles = 1830;       // library plan, graph launch: one kernel's end to the next's first task
  double eager_host_cycles = 16470;     // library plan, eager launch: host time per kernel launch
  double link_bytes_per_cycle = 246;       // per GPU and direction
  double link_peer_bytes_per_cycle = 246;  // per GPU pair and direction
  double link_latency_cycles = 1830;
  double proxy_latency_cycles = 5490;

  // The gpu.* keys: the one place their defaults and ranges are written.
  static const std::vector<config::ParamDecl>& params();
  // Reads the keys of params() (and clock_mhz); a rate or size that is not > 0 is an InputError.
  static GpuParams read(const config::HwConfig& c);
  double tensor_flops_per_cycle(gpu::DataType t) const;  // per SM: int8 types at the int8 rate, other non-float types at fp32's
  double cycles_per_ns() const { return clock_ghz; }
};

// In the header: sim/config assembles the schema from it without linking the units. Defaults:
// an H100 SXM5 (configs/gpu_h100.yaml); chip-level numbers as vendors state them (docs/gpu.md).
inline const std::vector<config::ParamDecl>& GpuParams::params() {
  using T = config::ParamType;
  namespace r = config::range;
  static const std::vector<config::ParamDecl> decls = {
      {"gpu.arch", T::String, "CUDA_90", "",
       "architecture: picks ARK's default op configs for plans built from a model alone", {"CUDA_80", "CUDA_90", "ROCM_942"},
       r::none},
      {"gpu.num_sms", T::Int, "132", "SMs", "streaming multiprocessors (CUs on AMD); ARK runs one thread block (processor) per SM",
       {}, r::count},
      {"gpu.warp_size", T::Int, "32", "threads",
       "threads per warp (64: AMD wavefront): a warp keeps warp_size x mem.bytes_in_flight_per_thread loads outstanding", {},
       r::count},
      {"gpu.max_warps_per_block", T::Int, "32", "warps", "most warps of one thread block: a plan's NumWarpsPerProcessor limit",
       {}, r::count},
      {"gpu.max_warps_per_sm", T::Int, "64", "warps",
       "warps one SM holds at once (2048 threads): how many small thread blocks of a row-wise kernel run side by side "
       "(gpu-calibrate --ops)",
       {}, r::count},
      {"gpu.sub_partitions", T::Int, "4", "",
       "warp schedulers per SM (SIMDs per CU): a slot of w warps gets min(1, w/this) of the SM's math rate", {}, r::count},
      {"gpu.smem_per_block_kib", T::Double, "227", "KiB", "most shared memory one thread block may use (ARK reserves 128 B of it)",
       {}, r::size},
      {"gpu.smem_per_sm_kib", T::Double, "228", "KiB",
       "shared memory of one SM, shared by the thread blocks resident on it (each also takes CUDA's 1 KiB reserve): how "
       "many matmul and attention tiles run side by side",
       {}, r::size},
      {"gpu.registers_per_sm_kib", T::Double, "256", "KiB",
       "register file of one SM: the fp32 accumulators of the matmul tiles it runs at once must fit (gpu-calibrate occupancy)",
       {}, r::size},
      {"gpu.smem_bytes_per_cycle", T::Double, "128", "B/cycle", "shared-memory read bandwidth of one SM (MMA operand fetch)", {},
       r::rate},
      {"gpu.tensor_tflops.fp16", T::Double, "989.4", "TFLOPS", "dense fp16 matrix (tensor core) throughput of the chip", {},
       r::rate},
      {"gpu.tensor_tflops.bf16", T::Double, "989.4", "TFLOPS", "dense bf16 matrix throughput of the chip", {}, r::rate},
      {"gpu.tensor_tflops.fp32", T::Double, "494.7", "TFLOPS",
       "dense matrix throughput for fp32 inputs (TF32 on NVIDIA): ARK plans, and library GEMMs given --tf32", {}, r::rate},
      {"gpu.tensor_tflops.int8", T::Double, "1979", "TOPS", "dense int8 matrix (tensor core) throughput of the chip", {},
       r::rate},
      {"gpu.tensor_tflops.fp8", T::Double, "1979", "TFLOPS",
       "dense fp8 (E4M3 / E5M2) matrix throughput of the chip; 0: no fp8 tensor cores (fp8 workloads are refused)", {},
       r::optional_rate},
      {"gpu.vector_tflops", T::Double, "66.9", "TFLOPS", "non-matrix fp32 throughput: element-wise and reduce arithmetic", {},
       r::rate},
      {"gpu.transcendental_flops", T::Double, "4", "flop",
       "cost of one exp/sigmoid/gelu/sqrt/rsqrt/div/rope element in fp32 flops", {}, r::rate},
      {"gpu.matmul.mma_efficiency", T::Double, "0.8", "fraction",
       "share of the peak matrix rate a tile's K loop sustains (calibrated, docs/gpu.md#calibration)", {}, r::fraction},
      {"gpu.matmul.k_step_cycles", T::Double, "40", "cycles",
       "fixed cost of one K iteration of a matmul tile: stage barrier, pipeline advance (a smaller TK pays it more often)", {},
       r::delay},
      {"gpu.matmul.loaded_latency_factor", T::Double, "1", "factor",
       "latency of a matmul tile's pipelined loads over the idle L2 / HBM latency (every SM streams at once; "
       "docs/gpu.md#matmul-the-tile-model)",
       {}, r::rate},
      {"gpu.matmul.warp_load_bytes_in_flight", T::Double, "0", "B",
       "bytes one warp's copies of a matmul tile's stages keep in flight: a tile's loads move at most warps x this "
       "per load latency (Ampere's cp.async, issued thread by thread); 0: the stages alone bound them (Hopper's TMA), "
       "docs/gpu.md#matmul-the-tile-model",
       {}, r::optional_rate},
      {"gpu.matmul.warp_mma_share", T::Double, "1", "fraction",
       "share of the tensor rate that warp-level MMA (mma.sync) reaches: 1 where it is the only MMA (Ampere); "
       "below 1 where the full rate needs warpgroup MMA (Hopper's wgmma), docs/gpu.md#warp-level-mma",
       {}, r::fraction},
      {"gpu.matmul.int8_mma_share", T::Double, "1", "fraction",
       "share of mma_efficiency x the int8 rate that int8 GEMMs reach (cuBLASLt's int8 kernels fall further short "
       "of their peak than its fp16 ones, docs/gpu_library.md)",
       {}, r::fraction},
      {"gpu.matmul.fp8_mma_share", T::Double, "1", "fraction",
       "share of mma_efficiency x the fp8 rate that fp8 GEMMs reach (docs/gpu_library.md)", {}, r::fraction},
      {"gpu.hbm.bandwidth_gbps", T::Double, "3350", "GB/s", "peak DRAM (HBM) bandwidth", {}, r::rate},
      {"gpu.hbm.efficiency", T::Double, "0.9", "fraction", "share of the peak a streaming copy sustains", {}, r::fraction},
      {"gpu.hbm.latency_ns", T::Double, "600", "ns", "latency of a load that misses to HBM; bounds what a warp's loads in flight can move",
       {}, r::latency},
      {"gpu.hbm.capacity_gib", T::Double, "80", "GiB", "device memory: weights, activations and the KV cache of `sim llm` must fit (docs/llm.md)",
       {}, r::rate},
      {"gpu.l2.size_mib", T::Double, "50", "MiB", "last-level cache shared by all SMs (L2; Infinity Cache on MI300X)", {}, r::size},
      {"gpu.l2.latency_ns", T::Double, "200", "ns",
       "latency of a load that hits in L2 (matmul stages hide it, docs/gpu.md#matmul-the-tile-model)", {}, r::latency},
      {"gpu.l2.partitions", T::Int, "1", "partitions",
       "L2 partitions that each keep a copy of what the SMs on both sides read (A100, H100: 2); a matmul's panels "
       "find size_mib / partitions (docs/gpu.md#l2-reuse-in-time)",
       {}, r::count},
      {"gpu.l2.drift_waves", T::Double, "0", "waves",
       "waves of a matmul after which the co-resident tiles of an SM run evenly staggered instead of in step, so "
       "that tile rows no longer read a panel together (0: in step; docs/gpu.md#l2-reuse-in-time)",
       {}, r::delay},
      {"gpu.l2.jitter_per_wave", T::Double, "0", "per wave",
       "with several tiles per SM, how fast the SMs' phases wander apart: after w waves a slot's tiles start "
       "spread over min(1, w x this) of a slot's period (docs/gpu.md#l2-reuse-in-time)",
       {}, r::delay},
      {"gpu.l2.bandwidth_gbps", T::Double, "10000", "GB/s", "bandwidth of that cache, shared by all SMs", {}, r::rate},
      {"gpu.l2.sm_bytes_per_cycle", T::Double, "64", "B/cycle", "L2-to-SM bandwidth of one SM", {}, r::rate},
      {"gpu.mem.bytes_in_flight_per_thread", T::Double, "64", "B",
       "global loads one thread keeps outstanding in element-wise ops (16 B vector loads x 4 unrolled)", {}, r::rate},
      {"gpu.task_overhead_cycles", T::Double, "200", "cycles", "per task: index math, call, warp sync", {}, r::delay},
      {"gpu.row.reduce_step_cycles", T::Double, "30", "cycles",
       "one step of a looped row kernel's reduction: a warp shuffle and its add (docs/gpu_library.md#looped-row-kernels)",
       {}, r::delay},
      {"gpu.row.block_exchange_cycles", T::Double, "60", "cycles",
       "a looped row kernel's block reduction passing its warps' partials through shared memory: a store, a barrier "
       "of the block's warps and a load (docs/gpu_library.md#looped-row-kernels)",
       {}, r::delay},
      {"gpu.barrier_ns", T::Double, "1000", "ns", "sync_gpu across processors: last arrival to release", {}, r::delay},
      {"gpu.launch_overhead_us", T::Double, "5", "us", "kernel launch to the first task, once per run", {}, r::delay},
      {"gpu.launch.graph_gap_us", T::Double, "0.5", "us",
       "library plan in graph launch mode (CUDA Graphs, TensorRT): from one kernel's last task to the next kernel's first "
       "(docs/gpu_library.md#launch-modes)",
       {}, r::delay},
      {"gpu.launch.eager_host_us", T::Double, "9", "us",
       "library plan in eager launch mode (PyTorch eager): host time to launch one kernel; the GPU waits when its "
       "kernels are shorter (docs/gpu_library.md#launch-modes)",
       {}, r::delay},
      {"gpu.link.bandwidth_gbps", T::Double, "450", "GB/s", "GPU-to-GPU bandwidth of one GPU per direction, all links together",
       {}, r::rate},
      {"gpu.link.peer_bandwidth_gbps", T::Double, "450", "GB/s",
       "one GPU to one peer per direction (through a switch: the same as bandwidth_gbps)", {}, r::rate},
      {"gpu.link.latency_ns", T::Double, "1000", "ns", "one-way latency of a remote write or signal", {}, r::delay},
      {"gpu.link.proxy_latency_us", T::Double, "3", "us", "host proxy service time of a Proxy-channel put", {}, r::delay},
  };
  return decls;
}

// Which term decided a task's time (reports name a processor group's bound after them): Port is
// the SM's own path from the L2 (gpu.l2.sm_bytes_per_cycle), L2 the slices all SMs share
// (gpu.l2.bandwidth_gbps): a wider port or a faster L2 are different fixes.
enum class Limiter { Math, Smem, Latency, Port, L2, Hbm, Link, Sync };
const char* limiter_name(Limiter l);  // "math", "smem", "latency", "port", "l2", "hbm", "link", "sync"
constexpr int kNumLimiters = 8;

// One task of one op on one slot.
struct TaskDemand {
  double own_cycles = 0;       // alone on its slot with an idle memory system
  Limiter own_limiter = Limiter::Latency;
  double sm_math_cycles = 0;   // occupancy of the SM's math pipes at the whole SM's rate
  double sm_smem_cycles = 0;   // occupancy of the SM's shared-memory port (matmul operand reads)
  double l2_bytes = 0;         // loads and stores of this SM through the L2 (and its SM port)
  double l2_slice_bytes = 0;   // of them, what the L2 slices serve (fewer with TMA multicast)
  double hbm_bytes = 0;        // the part of them that reaches HBM
  double flops = 0;
  std::vector<std::pair<int, double>> link_bytes;  // (destination rank, bytes) written remotely
  double proxy_put_bytes = 0;  // Send over a Proxy channel: copied asynchronously by the proxy
};

// Warps of a slot get min(1, warps / sub_partitions) of the SM's math rate: a warp issues on
// one scheduler only.
double slot_math_share(const GpuParams& p, int slot_warps);

// Bytes per cycle one slot can keep moving with its loads in flight (Little's law), capped
// by the SM's L2 port.
double slot_memory_rate(const GpuParams& p, int slot_warps);

// The matmul tile of one task: TM x TN output with the whole K loop in TK steps.
struct MatmulTile {
  int64_t tm = 128, tn = 256, tk = 64;
  int64_t m_valid = 128, n_valid = 256;  // rows/cols of the tile inside the problem
  int64_t k = 0;
  gpu::DataType in_type = gpu::DataType::FP16, out_type = gpu::DataType::FP16;
  bool warp_mma = false;  // compiled to warp-level mma.sync (also any tile not made of whole warpgroups)
  // Thread-block cluster (Hopper): cluster_m tiles along M share their B slices and cluster_n
  // along N their A slices, loaded once from L2 and multicast by TMA to every SM of the cluster.
  int64_t cluster_m = 1, cluster_n = 1;
  bool simt = false;               // FFMA on the CUDA cores at the vector rate (fp32 without TF32)
  double epilogue_read_bytes = 0;  // per output element, read by a fused epilogue (a residual)
  // Attention (FlashAttention): tm query rows x tn = head dim, K = keys in tk-key steps; each
  // step runs QK^T and PV (4 tm tn tk flops) and the softmax of tm x tk scores; Q is loaded once.
  bool attention = false;
  bool softmax_overlap = false;    // the softmax overlaps the MMAs (FlashAttention-3 on Hopper)
  bool shared_kv = false;          // K and V are one tensor (FlashMLA's latent cache): one slice loaded a step
};

struct MatmulTiming {
  int64_t k_steps = 0;
  int warps_m = 1, warps_n = 1;          // grid of the operand readers: warps (warpgroups for wgmma)
  int64_t stage_bytes = 0;               // A and B slices of one K step
  int64_t stages = 2;                    // K steps in flight (shared-memory pipeline depth)
  double load_latency = 0;               // of one stage: L2 hit latency + miss share x (HBM - L2)
  // Cycles per K step: tensor math, shared-memory operand reads, the stage through the SM's
  // L2 port, and the load latency the other stages in flight do not hide.
  double math_step = 0, smem_step = 0, load_step = 0, latency_step = 0;
  double softmax_step = 0;               // attention: the tile's softmax on the CUDA cores
  double step = 0;                       // max of the four + gpu.matmul.k_step_cycles
  double prologue = 0, epilogue = 0;
  double own_cycles = 0;
  Limiter limiter = Limiter::Math;
  double sm_math_cycles = 0, sm_smem_cycles = 0;
  double l2_bytes = 0;        // through the SM's port: A and B stages and the C tile
  double l2_slice_bytes = 0;  // what the L2 serves for them: shared slices once per cluster
};

// docs/gpu.md#matmul-the-tile-model: own = overhead + latency + k_steps * (max(math, smem,
// load, latency / (stages - 1)) + k_step) + epilogue. miss_share: the part of the tile's loads
// that misses L2. Attention tiles (docs/gpu_library.md#attention): math = 4 tm tn tk flops a step,
// load = the K and V slices, softmax = tm tk scores x (transcendental_flops + 5) / vector rate,
// added to the step (FlashAttention-2) or overlapped with it (softmax_overlap).
MatmulTiming matmul_timing(const GpuParams& p, const MatmulTile& t, int slot_warps, int64_t slot_sram,
                           double miss_share = 0);

// CUDA (sm_80 and later) reserves 1 KiB of an SM's shared memory for each resident thread block
// (cudaDevAttrReservedSharedMemoryPerBlock).
constexpr int64_t kSmemReservedPerBlock = 1024;

// Thread blocks using `block_smem` bytes of shared memory each that an SM of `sm_smem` bytes
// holds at once: sm_smem / (block_smem + kSmemReservedPerBlock).
int64_t blocks_by_smem(int64_t sm_smem, int64_t block_smem);

// Tiles one SM runs at once (at least 1): what its warps (max_warps_per_block / warps), its
// shared memory (blocks_by_smem(smem_per_sm, stages x stage)) and its register file
// (registers_per_sm / (1.5 x TM x TN x 4 B): the fp32 accumulators and the registers around
// them) allow.
int64_t matmul_tiles_per_sm(const GpuParams& p, const MatmulTile& t, int warps, int64_t stages);

// Waves of `tiles` tiles over `sms` SMs running `per_sm` tiles each at once: ceil(tiles / (sms * per_sm)).
// Programs of a row-wise kernel (one thread block of `warps` warps per row, as Triton's norm
// and activation kernels launch) that one SM holds at once: by warps (max_warps_per_sm) and by
// registers, each thread holding `live_values_per_thread` fp32 values of its row slice on top
// of `base_registers` of addresses and indices (estimates: ~32 in a Triton kernel, ~16 in a
// simple CUDA loop; past 255 the kernel spills, which is not modelled). At least 1.
int64_t rowwise_programs_per_sm(const GpuParams& p, int warps, int64_t live_values_per_thread, int base_registers = 32);

int64_t matmul_waves(int64_t tiles, int64_t sms, int64_t per_sm);

// The matmul tile of task `task_id` of op (edge tiles have fewer valid rows/cols).
MatmulTile matmul_tile(const gpu::Op& op, int64_t task_id);
// Tile (row, column) of the i-th tile of one batch's mt x nt tiles: row-major when group_m is
// 1 (ARK); else Triton's grouped order, group_m tile rows walked column by column, so the tiles
// running at once share fewer B columns.
std::pair<int64_t, int64_t> matmul_tile_index(int64_t i, int64_t mt, int64_t nt, int64_t group_m);

// A stream-K worker's share of a matmul (docs/gpu.md#stream-k): K steps [k_begin, k_end) of
// tile `tile`, which `parts` workers compute together (1: the whole tile).
struct MatmulSegment {
  int64_t tile = 0;
  int64_t k_begin = 0, k_end = 0;
  int64_t parts = 1;
};
// The segments of worker `worker` of `workers` over `tiles` tiles of `k_steps` K steps each, as
// CUTLASS's and cuBLAS's data-parallel + stream-K schedule splits them: all whole waves but the
// last run data-parallel (worker w takes tiles w, w + workers, ...); the last whole wave and the
// remainder are shared out by K steps, each worker an equal contiguous range in tile order.
std::vector<MatmulSegment> stream_k_segments(int64_t tiles, int64_t k_steps, int64_t workers, int64_t worker);

// Flops an element-wise/reduce op costs per counted flop (transcendental functions cost more).
double flop_weight(const GpuParams& p, gpu::OpType t);

// One task of op on a slot of slot_warps warps and slot_sram bytes. wait_bytes_per_task (a
// Matmul's): the load bytes it waits on HBM for (sim/mapping/gpu_traffic.h); < 0: hbm_bytes_per_task.
// hbm_bytes_per_task: this
// op's HBM traffic per task (sim/mapping/gpu_traffic.h); own_rank tells remote tensors apart.
TaskDemand task_demand(const GpuParams& p, const gpu::Op& op, int own_rank, int slot_warps, int64_t slot_sram,
                       double hbm_bytes_per_task, int64_t task_id = 0, double wait_bytes_per_task = -1);

}  // namespace npusim::models
