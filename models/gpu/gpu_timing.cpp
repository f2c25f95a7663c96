#include "models/gpu/gpu_timing.h"

#include <algorithm>
#include <cmath>


namespace npusim::models {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

}  // namespace

GpuParams GpuParams::read(const config::HwConfig& c) {
  GpuParams p;
  p.arch = c.get_string("gpu.arch");
  // Ranges (every rate, size and count > 0, fractions in (0, 1]) and the key orders are the
  // schema's, checked when the config was loaded.
  p.clock_mhz = c.get_double("clock_mhz");
  p.clock_ghz = p.clock_mhz / 1000.0;
  const double hz = p.clock_ghz * 1e9;
  p.num_sms = static_cast<int>(c.get_int("gpu.num_sms"));
  p.warp_size = static_cast<int>(c.get_int("gpu.warp_size"));
  p.max_warps_per_block = static_cast<int>(c.get_int("gpu.max_warps_per_block"));
  p.max_warps_per_sm = static_cast<int>(c.get_int("gpu.max_warps_per_sm"));
  p.sub_partitions = static_cast<int>(c.get_int("gpu.sub_partitions"));
  p.smem_per_block_bytes = static_cast<int64_t>(c.get_double("gpu.smem_per_block_kib") * 1024);
  p.smem_per_sm_bytes = static_cast<int64_t>(c.get_double("gpu.smem_per_sm_kib") * 1024);
  p.registers_per_sm_bytes = static_cast<int64_t>(c.get_double("gpu.registers_per_sm_kib") * 1024);
  p.smem_bytes_per_cycle = c.get_double("gpu.smem_bytes_per_cycle");
  auto per_sm_cycle = [&](const std::string& key) { return c.get_double(key) * 1e12 / (hz * p.num_sms); };
  p.tensor_fpc_fp16 = per_sm_cycle("gpu.tensor_tflops.fp16");
  p.tensor_fpc_bf16 = per_sm_cycle("gpu.tensor_tflops.bf16");
  p.tensor_fpc_fp32 = per_sm_cycle("gpu.tensor_tflops.fp32");
  p.tensor_fpc_int8 = per_sm_cycle("gpu.tensor_tflops.int8");
  p.tensor_fpc_fp8 = c.get_double("gpu.tensor_tflops.fp8") * 1e12 / (hz * p.num_sms);  // 0: none
  p.vector_fpc = per_sm_cycle("gpu.vector_tflops");
  p.transcendental_flops = c.get_double("gpu.transcendental_flops");
  p.mma_efficiency = c.get_double("gpu.matmul.mma_efficiency");
  p.k_step_cycles = c.get_double("gpu.matmul.k_step_cycles");
  p.loaded_latency_factor = c.get_double("gpu.matmul.loaded_latency_factor");
  p.warp_load_bytes_in_flight = c.get_double("gpu.matmul.warp_load_bytes_in_flight");
  p.warp_mma_share = c.get_double("gpu.matmul.warp_mma_share");
  p.int8_mma_share = c.get_double("gpu.matmul.int8_mma_share");
  p.fp8_mma_share = c.get_double("gpu.matmul.fp8_mma_share");
  p.hbm_bytes_per_cycle = c.get_double("gpu.hbm.bandwidth_gbps") * 1e9 * c.get_double("gpu.hbm.efficiency") / hz;
  p.hbm_latency_cycles = c.get_double("gpu.hbm.latency_ns") * p.clock_ghz;
  p.hbm_capacity_bytes = c.get_double("gpu.hbm.capacity_gib") * (1 << 30);
  p.l2_latency_cycles = c.get_double("gpu.l2.latency_ns") * p.clock_ghz;
  p.l2_bytes = static_cast<int64_t>(c.get_double("gpu.l2.size_mib") * 1024 * 1024);
  p.l2_partitions = static_cast<int>(c.get_int("gpu.l2.partitions"));
  p.l2_drift_waves = c.get_double("gpu.l2.drift_waves");
  p.l2_jitter_per_wave = c.get_double("gpu.l2.jitter_per_wave");
  p.l2_bytes_per_cycle = c.get_double("gpu.l2.bandwidth_gbps") * 1e9 / hz;
  p.sm_l2_bytes_per_cycle = c.get_double("gpu.l2.sm_bytes_per_cycle");
  // Loads in flight scale with the threads of a warp (a 64-wide wavefront moves twice as much).
  p.bytes_in_flight_per_warp = p.warp_size * c.get_double("gpu.mem.bytes_in_flight_per_thread");
  p.task_overhead_cycles = c.get_double("gpu.task_overhead_cycles");
  p.reduce_step_cycles = c.get_double("gpu.row.reduce_step_cycles");
  p.block_exchange_cycles = c.get_double("gpu.row.block_exchange_cycles");
  p.barrier_ns = c.get_double("gpu.barrier_ns");
  p.barrier_cycles = p.barrier_ns * p.clock_ghz;
  p.launch_overhead_cycles = c.get_double("gpu.launch_overhead_us") * 1000 * p.clock_ghz;
  p.graph_gap_cycles = c.get_double("gpu.launch.graph_gap_us") * 1000 * p.clock_ghz;
  p.eager_host_cycles = c.get_double("gpu.launch.eager_host_us") * 1000 * p.clock_ghz;
  p.link_bytes_per_cycle = c.get_double("gpu.link.bandwidth_gbps") * 1e9 / hz;
  p.link_peer_bytes_per_cycle = c.get_double("gpu.link.peer_bandwidth_gbps") * 1e9 / hz;
  p.link_latency_cycles = c.get_double("gpu.link.latency_ns") * p.clock_ghz;
  p.proxy_latency_cycles = c.get_double("gpu.link.proxy_latency_us") * 1000 * p.clock_ghz;
  return p;
}

double GpuParams::tensor_flops_per_cycle(gpu::DataType t) const {
  switch (t) {
    case gpu::DataType::FP16: return tensor_fpc_fp16;
    case gpu::DataType::BF16: return tensor_fpc_bf16;
    case gpu::DataType::INT8: case gpu::DataType::UINT8: return tensor_fpc_int8;
    case gpu::DataType::FP8_E4M3: case gpu::DataType::FP8_E5M2: return tensor_fpc_fp8;
    default: return tensor_fpc_fp32;
  }
}

const char* limiter_name(Limiter l) {
  static const char* names[kNumLimiters] = {"math", "smem", "latency", "port", "l2", "hbm", "link", "sync"};
  return names[static_cast<int>(l)];
}

double slot_math_share(const GpuParams& p, int slot_warps) {
  return std::min(1.0, static_cast<double>(std::max(1, slot_warps)) / p.sub_partitions);
}

double slot_memory_rate(const GpuParams& p, int slot_warps) {
  const double little = std::max(1, slot_warps) * p.bytes_in_flight_per_warp / std::max(1.0, p.hbm_latency_cycles);
  return std::min(little, p.sm_l2_bytes_per_cycle);
}

MatmulTiming matmul_timing(const GpuParams& p, const MatmulTile& t, int slot_warps, int64_t slot_sram,
                           double miss_share) {
  MatmulTiming r;
  const int w = std::max(1, slot_warps);
  const int64_t in_b = gpu::data_type_bytes(t.in_type), out_b = gpu::data_type_bytes(t.out_type);
  // Warpgroup MMA (wgmma) needs whole warpgroups, one warp per scheduler; a tile of fewer or
  // odd warps, or one compiled to mma.sync, gets warp-level MMA's share of the rate.
  const int group = std::max(1, p.sub_partitions);
  const bool warp_mma = t.warp_mma || w % group != 0;
  // Grid wm x wn of the operand readers that reads the least shared memory per K step: each
  // reads its (TM/wm) x TK slice of A and TK x (TN/wn) slice of B. Warp-level MMA reads them
  // into each warp's registers; Hopper's wgmma reads them once per warpgroup.
  int64_t best = -1;
  const int readers = !warp_mma && p.arch == "CUDA_90" ? w / group : w;
  for (int wm = 1; wm <= readers; ++wm) {
    if (readers % wm) continue;
    const int wn = readers / wm;
    const int64_t elems = t.tm * t.tk * wn + t.tn * t.tk * wm;
    if (best < 0 || elems < best) best = elems, r.warps_m = wm, r.warps_n = wn;
  }
  r.k_steps = ceil_div(t.k, t.tk);
  r.stage_bytes = (t.tm + t.tn) * t.tk * in_b;
  r.stages = std::max<int64_t>(2, r.stage_bytes > 0 ? slot_sram / r.stage_bytes : 2);
  // Attention: QK^T (tm x tk x tn) and PV (tm x tn x tk) each step; otherwise one tm x tn x tk MMA.
  const double tile_step_flops = (t.attention ? 4.0 : 2.0) * t.tm * t.tn * t.tk;  // padded tiles are computed in full
  // FFMA on the CUDA cores reaches the same share of its peak as the tensor cores of theirs.
  const bool int8 = t.in_type == gpu::DataType::INT8 || t.in_type == gpu::DataType::UINT8;
  const bool fp8 = t.in_type == gpu::DataType::FP8_E4M3 || t.in_type == gpu::DataType::FP8_E5M2;
  const double rate = t.simt ? p.vector_fpc * p.mma_efficiency
                             : p.tensor_flops_per_cycle(t.in_type) * p.mma_efficiency * (warp_mma ? p.warp_mma_share : 1.0) *
                                   (int8 ? p.int8_mma_share : fp8 ? p.fp8_mma_share : 1.0);
  r.math_step = tile_step_flops / (rate * slot_math_share(p, w));
  r.smem_step = static_cast<double>(best) * in_b / p.smem_bytes_per_cycle * (t.attention ? 2.0 : 1.0);
  // An edge tile loads only its valid rows and columns (out-of-bounds ones are zero-filled);
  // an attention tile loads its K and V slices (Q once, in the prologue; one slice when K is V).
  const double step_bytes =
      static_cast<double>((t.attention ? (t.shared_kv ? 1 : 2) * t.n_valid : t.m_valid + t.n_valid) * t.tk * in_b);
  r.load_step = step_bytes / p.sm_l2_bytes_per_cycle;
  if (t.attention)  // scale, running max, exp, row sum, rescale: the exp at transcendental_flops, 5 more flops
    r.softmax_step = static_cast<double>(t.tm * t.tk) * (p.transcendental_flops + 5) / (p.vector_fpc * slot_math_share(p, w));
  // While one stage is consumed, the other stages - 1 are in flight: they hide a load latency
  // of (stages - 1) steps. Most loads hit in L2 (other tiles of the wave fetched the panel).
  const double miss = std::clamp(miss_share, 0.0, 1.0);
  // Every SM's tiles stream their stages at once: a load waits behind the others' in the L2
  // slices and HBM queues, so it takes loaded_latency_factor x the idle latency.
  r.load_latency =
      p.loaded_latency_factor * (p.l2_latency_cycles + miss * (p.hbm_latency_cycles - p.l2_latency_cycles));
  // Little's law: a step's bytes arrive load_latency after they were asked for, and stages - 1
  // steps' bytes are asked for ahead. Where each thread issues its share of a stage's copies
  // (Ampere's cp.async), the warps keep at most warp_load_bytes_in_flight each outstanding.
  double in_flight = static_cast<double>(r.stages - 1) * step_bytes;
  if (p.warp_load_bytes_in_flight > 0) in_flight = std::min(in_flight, w * p.warp_load_bytes_in_flight);
  r.latency_step = step_bytes > 0 ? r.load_latency * step_bytes / in_flight : r.load_latency / static_cast<double>(r.stages - 1);
  double step = r.math_step;
  r.limiter = Limiter::Math;
  if (r.smem_step > step) step = r.smem_step, r.limiter = Limiter::Smem;
  if (r.load_step > step) step = r.load_step, r.limiter = Limiter::Port;
  if (r.latency_step > step) step = r.latency_step, r.limiter = Limiter::Latency;
  // The softmax runs after the MMAs of its tile (FlashAttention-2) or beside the next tile's
  // (FlashAttention-3's ping-pong warpgroups).
  if (t.attention && !t.softmax_overlap) step += r.softmax_step;
  if (t.attention && t.softmax_overlap && r.softmax_step > step) step = r.softmax_step, r.limiter = Limiter::Math;
  // Each iteration also waits on its stage's barrier and advances the pipeline: a fixed cost
  // that a smaller TK pays more often.
  r.step = step + p.k_step_cycles;
  // Prologue: the first stage's load latency (and an attention tile's Q); epilogue: the C tile
  // stored through the SM port, with what a fused epilogue reads (a residual).
  const double q_bytes = t.attention ? static_cast<double>(t.m_valid * t.n_valid * in_b) : 0;
  r.prologue = p.task_overhead_cycles + r.load_latency + q_bytes / p.sm_l2_bytes_per_cycle;
  const double c_bytes = static_cast<double>(t.m_valid * t.n_valid) * (static_cast<double>(out_b) + t.epilogue_read_bytes);
  r.epilogue = c_bytes / p.sm_l2_bytes_per_cycle;
  r.own_cycles = r.prologue + r.k_steps * r.step + r.epilogue;
  r.sm_math_cycles = r.k_steps * tile_step_flops / rate;
  if (t.attention) r.sm_math_cycles += r.k_steps * r.softmax_step * slot_math_share(p, w);
  r.sm_smem_cycles = r.k_steps * r.smem_step;
  r.l2_bytes = static_cast<double>(r.k_steps) * step_bytes + q_bytes + c_bytes;
  // Multicast: each SM of a cluster still receives every byte through its port, but the L2
  // reads a slice shared along the cluster once for all of them (docs/gpu.md#clusters-and-tma-multicast).
  const double a_share = 1.0 / static_cast<double>(std::max<int64_t>(1, t.cluster_n));
  const double b_share = 1.0 / static_cast<double>(std::max<int64_t>(1, t.cluster_m));
  r.l2_slice_bytes = t.attention ? r.l2_bytes
                                : static_cast<double>(r.k_steps * t.tk * in_b) * (t.m_valid * a_share + t.n_valid * b_share) +
                                      static_cast<double>(t.m_valid * t.n_valid * out_b);
  r.l2_slice_bytes += static_cast<double>(t.m_valid * t.n_valid) * (t.attention ? 0 : t.epilogue_read_bytes);
  return r;
}

int64_t blocks_by_smem(int64_t sm_smem, int64_t block_smem) {
  return sm_smem / (std::max<int64_t>(0, block_smem) + kSmemReservedPerBlock);
}

int64_t matmul_tiles_per_sm(const GpuParams& p, const MatmulTile& t, int warps, int64_t stages) {
  const int64_t in_b = gpu::data_type_bytes(t.in_type);
  const int64_t by_warps = p.max_warps_per_block / std::max(1, warps);
  const int64_t by_smem = blocks_by_smem(p.smem_per_sm_bytes, (t.tm + t.tn) * t.tk * in_b * std::max<int64_t>(1, stages));
  // The fp32 accumulators are about two thirds of a GEMM thread's registers (128 of the ~170-230
  // that 128x256 tiles on 8 warps use in CUTLASS / Triton kernels): 1.5 x TM x TN x 4 bytes.
  const int64_t by_regs = p.registers_per_sm_bytes / std::max<int64_t>(1, t.tm * t.tn * 6);
  return std::max<int64_t>(1, std::min({by_warps, by_smem, by_regs}));
}

int64_t rowwise_programs_per_sm(const GpuParams& p, int warps, int64_t live_values_per_thread, int base_registers) {
  const int64_t w = std::max(1, warps);
  const int64_t by_warps = p.max_warps_per_sm / w;
  const int64_t regs_per_thread = std::min<int64_t>(255, base_registers + std::max<int64_t>(0, live_values_per_thread));
  const int64_t by_regs = p.registers_per_sm_bytes / std::max<int64_t>(1, w * p.warp_size * regs_per_thread * 4);
  return std::max<int64_t>(1, std::min(by_warps, by_regs));
}

int64_t matmul_waves(int64_t tiles, int64_t sms, int64_t per_sm) {
  return ceil_div(tiles, std::max<int64_t>(1, sms) * std::max<int64_t>(1, per_sm));
}

MatmulTile matmul_tile(const gpu::Op& op, int64_t task_id) {
  MatmulTile t;
  if (op.config.tile_shape_mnk) {
    t.tm = (*op.config.tile_shape_mnk)[0];
    t.tn = (*op.config.tile_shape_mnk)[1];
    t.tk = (*op.config.tile_shape_mnk)[2];
  }
  t.warp_mma = op.config.warp_mma;
  t.cluster_m = op.config.cluster_m, t.cluster_n = op.config.cluster_n;
  t.simt = op.config.simt;
  t.epilogue_read_bytes = op.config.epilogue_read_bytes;
  t.attention = op.config.attention;
  t.softmax_overlap = op.config.softmax_overlap;
  t.shared_kv = op.config.shared_kv;
  if (!op.read_tensors.empty()) t.in_type = op.read_tensors[0].dtype;
  if (!op.write_tensors.empty()) t.out_type = op.write_tensors[0].dtype;
  if (!op.matmul) return t;
  const gpu::MatmulShape& s = *op.matmul;
  t.k = s.k;
  // Task index -> (batch, m tile, n tile), row-major (ARK's UnitOp over [N, C, M/TM, N/TN]) or
  // grouped within a batch.
  const int64_t mt = std::max<int64_t>(1, ceil_div(s.m, t.tm)), nt = std::max<int64_t>(1, ceil_div(s.n, t.tn));
  const auto [m_idx, n_idx] = matmul_tile_index(task_id % (mt * nt), mt, nt, op.config.tile_group_m);
  t.m_valid = std::clamp<int64_t>(s.m - m_idx * t.tm, 0, t.tm);
  t.n_valid = std::clamp<int64_t>(s.n - n_idx * t.tn, 0, t.tn);
  // Causal attention: the tile's last query row sees keys up to its position after the K - M
  // earlier (cached) keys; the key tiles beyond are skipped.
  if (t.attention && op.config.causal) t.k = std::clamp<int64_t>(m_idx * t.tm + t.m_valid + (s.k - s.m), 0, s.k);
  return t;
}

std::pair<int64_t, int64_t> matmul_tile_index(int64_t i, int64_t mt, int64_t nt, int64_t group_m) {
  if (group_m <= 1) return {i / nt, i % nt};
  const int64_t in_group = group_m * nt, first = (i / in_group) * group_m;
  const int64_t rows = std::min(mt - first, group_m);
  return {first + (i % in_group) % rows, (i % in_group) / rows};
}

std::vector<MatmulSegment> stream_k_segments(int64_t tiles, int64_t k_steps, int64_t workers, int64_t worker) {
  std::vector<MatmulSegment> out;
  const int64_t p = std::max<int64_t>(1, workers);
  if (tiles <= 0 || k_steps <= 0 || worker < 0 || worker >= p) return out;
  const int64_t dp_tiles = tiles % p == 0 ? tiles : std::max<int64_t>(0, tiles / p - 1) * p;
  for (int64_t t = worker; t < dp_tiles; t += p) out.push_back({t, 0, k_steps, 1});
  // K steps [W w / P, W (w + 1) / P) of the shared region belong to worker w.
  const int64_t total = (tiles - dp_tiles) * k_steps;
  auto owner = [&](int64_t step) {
    int64_t w = step * p / total;
    while (w + 1 < p && total * (w + 1) / p <= step) ++w;
    while (w > 0 && total * w / p > step) --w;
    return w;
  };
  for (int64_t a = total * worker / p, b = total * (worker + 1) / p; a < b;) {
    const int64_t tile = a / k_steps, kb = a % k_steps, ke = std::min(k_steps, kb + (b - a));
    const int64_t parts = owner((tile + 1) * k_steps - 1) - owner(tile * k_steps) + 1;
    out.push_back({dp_tiles + tile, kb, ke, parts});
    a += ke - kb;
  }
  return out;
}

double flop_weight(const GpuParams& p, gpu::OpType t) {
  switch (t) {
    case gpu::OpType::Exp: case gpu::OpType::Gelu: case gpu::OpType::Sigmoid: case gpu::OpType::Rsqrt:
    case gpu::OpType::Sqrt: case gpu::OpType::Div: case gpu::OpType::Rope:
      return p.transcendental_flops;
    default: return 1.0;
  }
}

namespace {

// The tiles (or, for a stream-K worker, pieces of tiles: docs/gpu.md#stream-k) that one task
// computes one after the other, each a K loop over its steps with its own prologue. A piece of a
// shared tile that does not start it stores its fp32 partial instead of C; the one that starts
// it (it reaches the tile last) reads the other parts' partials from the L2 and stores C.
TaskDemand matmul_demand(const GpuParams& p, const gpu::Op& op, int slot_warps, int64_t slot_sram,
                         double hbm_bytes_per_task, int64_t task_id, double wait_bytes_per_task) {
  TaskDemand d;
  MatmulTile first = matmul_tile(op, 0);
  if (op.matmul) first.k = op.matmul->k;  // the op's K (0 without a shape)
  const int64_t k_steps = ceil_div(first.k, first.tk);
  std::vector<MatmulSegment> segs{{task_id, 0, k_steps, 1}};
  if (op.config.stream_k && op.matmul) {
    const gpu::MatmulShape& s = *op.matmul;
    segs = stream_k_segments(std::max<int64_t>(1, s.batch) * ceil_div(s.m, first.tm) * ceil_div(s.n, first.tn), k_steps,
                             std::max<int64_t>(1, op.config.num_tasks), task_id);
  }
  std::vector<MatmulTile> tiles;
  double loads = 0;
  for (const MatmulSegment& g : segs) {
    MatmulTile t = matmul_tile(op, g.tile);
    t.k = std::min(t.k, std::min(first.k, g.k_end * t.tk) - g.k_begin * t.tk);
    loads += static_cast<double>(ceil_div(t.k, t.tk) * (t.m_valid + t.n_valid) * t.tk * gpu::data_type_bytes(t.in_type));
    tiles.push_back(t);
  }
  // The bytes this task waits on HBM for (the L2 pass) over its A and B loads: the share that
  // misses. A tile that reads a panel another tile of its wave is fetching waits for the same
  // fill, so such reads count as misses here though HBM moves them once.
  const double waits = wait_bytes_per_task >= 0 ? wait_bytes_per_task : hbm_bytes_per_task;
  double longest = -1;
  for (size_t i = 0; i < segs.size(); ++i) {
    const MatmulTile& t = tiles[i];
    const MatmulTiming m = matmul_timing(p, t, slot_warps, slot_sram, loads > 0 ? waits / loads : 1);
    const double c_elems = static_cast<double>(t.m_valid * t.n_valid), out_b = gpu::data_type_bytes(t.out_type);
    // Fixup bytes through the SM port: a partial (fp32 instead of C), or the others' partials.
    const double fixup = segs[i].parts <= 1    ? 0
                         : segs[i].k_begin > 0 ? c_elems * (4 - out_b)
                                               : c_elems * 4 * static_cast<double>(segs[i].parts - 1);
    d.own_cycles += m.own_cycles + fixup / p.sm_l2_bytes_per_cycle;
    if (m.own_cycles > longest) longest = m.own_cycles, d.own_limiter = m.limiter;
    d.sm_math_cycles += m.sm_math_cycles;
    d.sm_smem_cycles += m.sm_smem_cycles;
    d.l2_bytes += m.l2_bytes + fixup;
    d.l2_slice_bytes += m.l2_slice_bytes + fixup;
  }
  d.hbm_bytes = std::min(hbm_bytes_per_task, d.l2_bytes);
  d.flops = static_cast<double>(op.task_cost.flops);
  return d;
}

}  // namespace

TaskDemand task_demand(const GpuParams& p, const gpu::Op& op, int own_rank, int slot_warps, int64_t slot_sram,
                       double hbm_bytes_per_task, int64_t task_id, double wait_bytes_per_task) {
  TaskDemand d;
  const gpu::OpClass cls = gpu::op_class(op.type);
  if (op.is_virtual || cls == gpu::OpClass::Virtual) return d;
  if (op.type == gpu::OpType::Matmul)
    return matmul_demand(p, op, slot_warps, slot_sram, hbm_bytes_per_task, task_id, wait_bytes_per_task);
  d.own_cycles = p.task_overhead_cycles;
  d.own_limiter = Limiter::Sync;
  // Signals, waits and flushes move no data; the SM model adds their waiting time.
  if (cls == gpu::OpClass::Sync || op.type == gpu::OpType::Recv || op.type == gpu::OpType::SendDone) return d;
  const int64_t n = std::max<int64_t>(1, op.config.present ? op.config.num_tasks : 1);
  const gpu::OpCost& c = op.task_cost;
  double local = static_cast<double>((c.bytes_read - c.remote_bytes_read) + (c.bytes_written - c.remote_bytes_written));
  if (op.type == gpu::OpType::Embedding && op.read_tensors.size() >= 2 && !op.write_tensors.empty()) {
    // A gather: the indices and only the weight rows it copies, not the whole table.
    local = static_cast<double>(ceil_div(op.read_tensors[0].bytes() + 2 * op.write_tensors[0].bytes(), n));
  }
  const bool proxy = op.type == gpu::OpType::Send && op.config.channel_type != "Sm";
  double remote = 0;
  for (const gpu::Tensor& t : op.write_tensors) {
    if (!t.is_remote(own_rank)) continue;
    const double b = static_cast<double>(ceil_div(t.bytes(), n));
    if (proxy) {
      d.proxy_put_bytes += b;
    } else {
      d.link_bytes.emplace_back(t.buffer_rank, b);
      remote += b;
    }
  }
  if (proxy) return d;  // thread 0 posts one request; the proxy copies the data
  d.flops = static_cast<double>(c.flops);
  d.sm_math_cycles = d.flops * flop_weight(p, op.type) / p.vector_fpc;
  const double math_own = d.sm_math_cycles / slot_math_share(p, slot_warps);
  if (op.config.row_loop_passes > 0) {
    // A looped row kernel (docs/gpu_library.md#looped-row-kernels): its steps wait one load round
    // trip each, from wherever the row is on the first pass; later passes find it in the L2 as far
    // as the rows in flight fit there, the rest comes from HBM again. The arithmetic and the block
    // reductions add to that chain.
    const double miss = local > 0 ? std::clamp(hbm_bytes_per_task / local, 0.0, 1.0) : 0.0;
    const double first = p.l2_latency_cycles + miss * (p.hbm_latency_cycles - p.l2_latency_cycles);
    const double reread_miss = op.config.row_resident_bytes > static_cast<double>(p.l2_bytes)
                                   ? 1.0 - static_cast<double>(p.l2_bytes) / op.config.row_resident_bytes
                                   : 0.0;
    const double later = p.l2_latency_cycles + reread_miss * (p.hbm_latency_cycles - p.l2_latency_cycles);
    const double iters = static_cast<double>(op.config.row_loop_iters);
    d.own_cycles += iters * first + (op.config.row_loop_passes - 1) * iters * later +
                    op.config.row_reduce_steps * p.reduce_step_cycles +
                    op.config.row_reduce_exchanges * p.block_exchange_cycles + math_own;
    d.own_limiter = Limiter::Latency;
    d.l2_bytes = d.l2_slice_bytes = local + op.config.row_reread_bytes;
    d.hbm_bytes = std::min(hbm_bytes_per_task, local) + reread_miss * op.config.row_reread_bytes;
    return d;
  }
  const double mem_own = local + remote > 0 ? p.hbm_latency_cycles + (local + remote) / slot_memory_rate(p, slot_warps) : 0;
  d.own_cycles += std::max(math_own, mem_own);
  d.own_limiter = math_own > mem_own ? Limiter::Math : Limiter::Latency;
  d.l2_bytes = d.l2_slice_bytes = local;
  d.hbm_bytes = std::min(hbm_bytes_per_task, local);
  return d;
}

}  // namespace npusim::models
