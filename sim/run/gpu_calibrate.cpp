// gpu-calibrate: measured kernels against the GPU model (sim/run/gpu_calibrate.h).
#include "sim/run/gpu_calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "frontends/calibration/calibration_rows.h"
#include "frontends/json_util.h"
#include "sim/config/hw_config.h"
#include "sim/ir/error.h"
#include "sim/mapping/gpu_library.h"
#include "sim/run/device_run.h"
#include "sim/run/fork_pool.h"
#include "sim/run/run.h"

namespace npusim::run {

namespace {

// "128x256x64:8[:3]" -> tile, warps and pipeline stages (default 3): the slot's shared memory
// holds that many stages of the A and B slices. where / place: what to blame when it is not one.
mapping::MatmulPlanSpec parse_tile(const std::string& s, const std::string& where = "--tile",
                                   const std::string& place = "") {
  frontends::TileText t;
  if (!frontends::parse_tile_text(s, &t))
    throw InputError(where, place.empty() ? s : place,
                     "expected TMxTNxTK:WARPS[:STAGES] (sizes up to 65536, 2-64 stages), e.g. 128x256x64:8:3");
  mapping::MatmulPlanSpec spec;
  spec.tm = t.tm, spec.tn = t.tn, spec.tk = t.tk, spec.warps = t.warps, spec.stages = t.stages;
  spec.sram_bytes = t.stages * (t.tm + t.tn) * t.tk * 2;
  return spec;
}

// One simulated kernel: its time, the bytes it moved to and from HBM, and the term that decided
// most of its tasks' time (models::Limiter, as the reports' "bound") with that share of it.
struct Simulated {
  double us = -1;  // negative: the candidate does not fit
  double hbm_bytes = 0;
  std::string bound = "-";
  double bound_share = 0;
};

// Runs n simulations, each in its own forked child (one simulation per process).
std::vector<Simulated> simulate_forked(size_t n, int jobs, const std::function<Simulated(size_t)>& sim_one) {
  std::vector<Simulated> predicted(n);
  run::PoolOptions pool;
  pool.jobs = jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string failure;
  run::run_forked(
      n, pool,
      [&](size_t i) {
        const Simulated r = sim_one(i);
        run::RunSummary s;
        s.ns = r.us * 1e3;
        s.memory_bytes = r.hbm_bytes;
        s.bound = r.bound;
        s.bound_share = r.bound_share;
        return s.to_json();
      },
      [&](const run::TaskOutcome& out) {
        if (!out.ok) {
          if (failure.empty()) failure = out.payload;
          return;
        }
        const run::RunSummary s = run::RunSummary::from_json(out.payload);
        // At the resolution the tables print (1e-6 us, whole bytes).
        char us[64];
        std::snprintf(us, sizeof us, "%.6f", s.ns / 1e3);
        predicted[out.index] = {std::strtod(us, nullptr), std::round(s.memory_bytes), s.bound, s.bound_share};
      });
  if (!failure.empty()) throw InternalError("gpu-calibrate: a simulation failed: " + failure);
  return predicted;
}

Simulated simulate_one(const gpu::Program& p, const run::Hardware& hw) {
  const std::vector<gpu::Program> plans{p};
  run::Workload w;
  w.plans = &plans;
  const run::RunRecord rec = run::run(w, hw);
  const mapping::GpuSimResult& sim = *rec.gpu_sim();
  Simulated r{sim.end_cycles / sim.clock_mhz, sim.ranks.empty() ? 0.0 : sim.ranks[0].hbm_bytes};
  // The kernel's bound: over all its ops (a split-K sum too), the term that decided the most.
  if (!sim.ranks.empty()) {
    const models::Bound b = models::bound_of(sim.ranks[0].limiter_cycles);
    if (b.name != "-") r.bound = b.name, r.bound_share = b.share;
  }
  return r;
}

// "l2 64%": the bound and its share of the tasks' time.
std::string bound_text(const Simulated& s) {
  if (s.bound == "-") return s.bound;
  return s.bound + " " + std::to_string(static_cast<int>(std::lround(100 * s.bound_share))) + "%";
}

// "median |error| over N rows: M%, worst W%" (prefix: what the rows are, e.g. "kind gemm_triton: ").
void print_error_summary(std::vector<double> errors, const std::string& prefix = "") {
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  const double median = n == 0 ? 0 : (n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2);
  std::printf("%smedian |error| over %zu rows: %.1f%%, worst %.1f%%\n", prefix.c_str(), n, median,
              n ? errors.back() : 0.0);
}

// Rows of several kinds (Triton tiles and cuBLAS in one file): a summary per kind first, then
// the whole (the last line stays the summary of every row).
void print_error_summaries(const std::vector<double>& errors, const std::vector<std::string>& kinds) {
  std::map<std::string, std::vector<double>> by_kind;
  for (size_t i = 0; i < errors.size(); ++i) by_kind[kinds[i]].push_back(errors[i]);
  if (by_kind.size() > 1)
    for (const auto& [kind, e] : by_kind) print_error_summary(e, "kind " + (kind.empty() ? "(none)" : kind) + ": ");
  print_error_summary(errors);
}

// One GEMM to predict: its sizes and the tiles that may run it (one when the kernel's tile is
// known; else the candidates, of which the fastest stands for the library's choice).
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t a_rows = 0;  // rows of the A that HBM holds (0: M); an implicit GEMM reads its input, not im2col
  int64_t group_m = 1;
  bool warp_mma = false;  // the measured kernel used mma.sync
  int64_t cluster_m = 1, cluster_n = 1;  // its thread-block cluster
  gpu::DataType dtype = gpu::DataType::FP16;
  std::vector<mapping::MatmulPlanSpec> tiles;
  std::string file, pointer;  // the row, blamed when no tile fits
  bool own_tile = false;      // the row named its kernel's tile
};

// A measured row's problem with its own tile (what ran) or, without one, the candidates.
GemmProblem row_problem(const std::string& tile, const std::vector<mapping::MatmulPlanSpec>& candidates,
                        const std::string& file, const std::string& pointer) {
  GemmProblem g;
  g.file = file, g.pointer = pointer, g.own_tile = !tile.empty();
  g.tiles = tile.empty() ? candidates : std::vector<mapping::MatmulPlanSpec>{parse_tile(tile, file, pointer + "/tile")};
  return g;
}

struct BestTile {
  Simulated sim;  // us negative: no tile fits
  std::string tile;
};

// Default candidates (mapping::default_gemm_tiles, shared with the library plan) unless --tile
// names them.
std::vector<mapping::MatmulPlanSpec> candidate_tiles(const CalibrateOptions& o,
                                                     gpu::DataType dtype = gpu::DataType::FP16) {
  if (o.tiles.empty()) return mapping::default_gemm_tiles(dtype);
  std::vector<mapping::MatmulPlanSpec> tiles;
  for (const std::string& t : o.tiles) tiles.push_back(parse_tile(t));
  return tiles;
}

// Simulates every tile of every problem (one forked child each) and keeps each problem's fastest.
std::vector<BestTile> best_tiles(const std::vector<GemmProblem>& problems, const CalibrateOptions& o,
                                 const run::Hardware& hw, const models::GpuParams& params) {
  std::vector<std::pair<size_t, size_t>> jobs;  // (problem, tile)
  for (size_t i = 0; i < problems.size(); ++i)
    for (size_t t = 0; t < problems[i].tiles.size(); ++t) jobs.emplace_back(i, t);
  // What the row says of its kernel (its MMA, a cluster) holds for its own tile, and for the
  // candidates when it says it.
  std::vector<mapping::MatmulPlanSpec> specs;
  for (const auto& [pi, ti] : jobs) {
    const GemmProblem& g = problems[pi];
    mapping::MatmulPlanSpec s = g.tiles[ti];
    s.warp_mma = s.warp_mma || g.warp_mma;
    if (g.own_tile || g.cluster_m * g.cluster_n > 1) s.cluster_m = g.cluster_m, s.cluster_n = g.cluster_n;
    specs.push_back(s);
  }
  const std::vector<Simulated> predicted = simulate_forked(jobs.size(), o.jobs, [&](size_t j) -> Simulated {
    const GemmProblem& g = problems[jobs[j].first];
    mapping::GemmProblem gp;
    gp.m = g.m, gp.n = g.n, gp.k = g.k, gp.a_rows = g.a_rows, gp.group_m = g.group_m;
    gp.dtype = gp.out_dtype = g.dtype;
    // int8 and fp8 GEMMs of the frameworks write scaled 16-bit outputs.
    if (g.dtype == gpu::DataType::INT8 || g.dtype == gpu::DataType::FP8_E4M3) gp.out_dtype = gpu::DataType::FP16;
    const std::optional<gpu::Program> plan = mapping::gemm_plan(gp, specs[j], params);
    return plan ? simulate_one(*plan, hw) : Simulated{};
  });
  std::vector<BestTile> best(problems.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    BestTile& b = best[jobs[j].first];
    const Simulated& v = predicted[j];
    if (v.us > 0 && (b.sim.us <= 0 || v.us < b.sim.us)) b.sim = v, b.tile = mapping::gemm_tile_name(specs[j]);
  }
  for (size_t i = 0; i < problems.size(); ++i)
    if (best[i].sim.us <= 0)
      throw InputError(problems[i].file, problems[i].pointer + (problems[i].own_tile ? "/tile" : ""),
                       "no tile fits the shared memory");
  return best;
}

double signed_error_pct(double predicted, double measured) { return 100.0 * (predicted - measured) / measured; }

std::string run_calibrate_gemm(const CalibrateOptions& o, const run::Hardware& hw, const models::GpuParams& params) {
  const std::vector<frontends::GemmRow> rows = frontends::parse_gemm_rows(json::read_json_file(o.gemm), o.gemm);
  std::vector<GemmProblem> problems;
  for (const frontends::GemmRow& r : rows) {
    // A row's own tile is what ran; --tile replaces the candidates of the others only.
    GemmProblem g = row_problem(r.tile, candidate_tiles(o, r.dtype), o.gemm, r.pointer);
    g.m = r.m, g.n = r.n, g.k = r.k, g.group_m = r.group_m, g.warp_mma = r.warp_mma;
    g.cluster_m = r.cluster_m, g.cluster_n = r.cluster_n, g.dtype = r.dtype;
    problems.push_back(g);
  }
  const std::vector<BestTile> best = best_tiles(problems, o, hw, params);
  std::ostringstream csv;
  csv << "M,N,K,measured_us,predicted_us,error_pct,tile,group_m,hbm_mb,bound,bound_pct\n";
  std::printf("%-7s %-7s %-7s %12s %12s %8s  %-12s %s\n", "M", "N", "K", "measured_us", "predicted_us", "error", "bound",
              "tile (given, or best)");
  std::vector<double> errors;
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    const frontends::GemmRow& r = rows[ri];
    const Simulated& v = best[ri].sim;
    const double err = signed_error_pct(v.us, r.measured_us);
    errors.push_back(std::fabs(err));
    const std::string order = r.group_m > 1 ? " group " + std::to_string(r.group_m) : "";
    std::printf("%-7lld %-7lld %-7lld %12.2f %12.2f %+7.1f%%  %-12s %s%s\n", static_cast<long long>(r.m),
                static_cast<long long>(r.n), static_cast<long long>(r.k), r.measured_us, v.us, err, bound_text(v).c_str(),
                best[ri].tile.c_str(), order.c_str());
    csv << r.m << "," << r.n << "," << r.k << "," << r.measured_us << "," << v.us << "," << err << "," << best[ri].tile
        << "," << r.group_m << "," << v.hbm_bytes / 1e6 << "," << v.bound << "," << 100 * v.bound_share << "\n";
  }
  std::vector<std::string> kinds;
  for (const frontends::GemmRow& r : rows) kinds.push_back(r.kind);
  print_error_summaries(errors, kinds);
  return csv.str();
}

// Convolutions as the implicit GEMMs cuDNN runs (docs/gpu.md#measured-on-an-h200-held-out):
// M = N x P x Q output pixels, N = K filters, K = C x R x S; A streams from the input tensor.
std::string run_calibrate_conv(const CalibrateOptions& o, const run::Hardware& hw, const models::GpuParams& params) {
  const std::vector<frontends::ConvRow> rows = frontends::parse_conv_rows(json::read_json_file(o.conv), o.conv);
  std::vector<GemmProblem> problems;
  for (const frontends::ConvRow& r : rows) {
    GemmProblem g = row_problem(r.tile, candidate_tiles(o, r.dtype), o.conv, r.pointer);
    // Tensor-core implicit GEMMs take channels in vectors of at least 4 (cuDNN's first-layer
    // kernels name it: "c4"): C = 3 computes as 4.
    const int64_t channels = (r.c + 3) / 4 * 4;
    g.m = r.n * r.p * r.q, g.n = r.k, g.k = channels * r.r * r.s, g.dtype = r.dtype;
    g.a_rows = std::min(g.m, (r.n * r.h * r.w * channels + g.k - 1) / g.k);
    g.warp_mma = r.warp_mma, g.cluster_m = r.cluster_m, g.cluster_n = r.cluster_n;
    problems.push_back(g);
  }
  const std::vector<BestTile> best = best_tiles(problems, o, hw, params);
  std::ostringstream csv;
  csv << "layer,N,C,H,W,K,R,S,stride,pad,dtype,gemm_m,gemm_n,gemm_k,measured_us,predicted_us,error_pct,tile,hbm_mb,bound,"
         "bound_pct\n";
  std::printf("%-12s %4s %5s %4s %5s %2s %2s %5s %12s %12s %8s  %-12s %s\n", "layer", "N", "C", "H", "K", "RS", "st",
              "dtype", "measured_us", "predicted_us", "error", "bound", "tile (given, or best)");
  std::vector<double> errors;
  for (size_t i = 0; i < rows.size(); ++i) {
    const frontends::ConvRow& r = rows[i];
    const GemmProblem& g = problems[i];
    const Simulated& v = best[i].sim;
    const double err = signed_error_pct(v.us, r.measured_us);
    errors.push_back(std::fabs(err));
    std::printf("%-12s %4lld %5lld %4lld %5lld %2lld %2lld %5s %12.2f %12.2f %+7.1f%%  %-12s %s\n", r.layer.c_str(),
                static_cast<long long>(r.n), static_cast<long long>(r.c), static_cast<long long>(r.h),
                static_cast<long long>(r.k), static_cast<long long>(r.r), static_cast<long long>(r.stride),
                r.dtype_name.c_str(), r.measured_us, v.us, err, bound_text(v).c_str(), best[i].tile.c_str());
    csv << r.layer << "," << r.n << "," << r.c << "," << r.h << "," << r.w << "," << r.k << "," << r.r << "," << r.s << ","
        << r.stride << "," << r.pad << "," << r.dtype_name << "," << g.m << "," << g.n << "," << g.k << ","
        << r.measured_us << "," << v.us << "," << err << "," << best[i].tile << "," << v.hbm_bytes / 1e6 << ","
        << v.bound << "," << 100 * v.bound_share << "\n";
  }
  print_error_summary(errors);
  return csv.str();
}

// Rows of fused row-wise kernels (docs/gpu.md#memory-bound-kernels): each row names the kernel's
// tensors and launch, the model predicts its time.
std::string run_calibrate_ops(const CalibrateOptions& o, const run::Hardware& hw, const models::GpuParams& params) {
  struct Row {
    frontends::RowKernelRow in;
    mapping::RowKernelSpec spec;
  };
  std::vector<Row> rows;
  for (const frontends::RowKernelRow& in : frontends::parse_rowwise_rows(json::read_json_file(o.ops), o.ops,
                                                                          params.max_warps_per_block)) {
    Row row{in, {}};
    mapping::RowKernelSpec& s = row.spec;
    s.name = in.kind;
    s.rows = in.m, s.cols = in.n, s.dtype = in.dtype;
    s.row_inputs = in.row_inputs, s.row_outputs = in.row_outputs, s.col_vectors = in.col_vectors;
    s.row_stats = in.row_stats;
    s.warps = in.warps;
    // Plain fp32 operations per element, plus the transcendentals (exp, div, rsqrt) weighted
    // like ARK's element-wise ops (gpu.transcendental_flops).
    s.flops_per_element = in.flops_per_element + in.transcendentals_per_element * params.transcendental_flops;
    // The op's flops are an int64: refuse what would not fit.
    if (s.flops_per_element * static_cast<double>(s.rows) * static_cast<double>(s.cols) > 1e18)
      throw InputError(o.ops, in.pointer + "/flops_per_element",
                       "times M times N exceeds 10^18 flops (the count the model keeps)");
    // Triton pads the row to a power of two; each thread holds its share of every row input and
    // weight vector in registers.
    int64_t block = 1;
    while (block < s.cols) block *= 2;
    const int64_t per_thread = (block + int64_t{s.warps} * params.warp_size - 1) / (int64_t{s.warps} * params.warp_size);
    s.programs_per_sm = models::rowwise_programs_per_sm(params, s.warps, (s.row_inputs + s.col_vectors) * per_thread);
    rows.push_back(row);
  }
  const std::vector<Simulated> predicted = simulate_forked(rows.size(), o.jobs, [&](size_t i) {
    return simulate_one(mapping::single_rowwise_plan(rows[i].spec, params.num_sms), hw);
  });
  std::ostringstream csv;
  csv << "kind,M,N,dtype,warps,measured_us,predicted_us,error_pct,programs_per_sm,bound,bound_pct\n";
  std::printf("%-20s %-7s %-7s %-5s %5s %12s %12s %8s  %-12s %s\n", "kind", "M", "N", "dtype", "warps", "measured_us",
              "predicted_us", "error", "bound", "programs/SM");
  std::vector<double> errors;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Simulated& v = predicted[i];
    const double err = signed_error_pct(v.us, r.in.measured_us);
    errors.push_back(std::fabs(err));
    std::printf("%-20s %-7lld %-7lld %-5s %5d %12.2f %12.2f %+7.1f%%  %-12s %lld\n", r.in.kind.c_str(),
                static_cast<long long>(r.spec.rows), static_cast<long long>(r.spec.cols), r.in.dtype_name.c_str(),
                r.spec.warps, r.in.measured_us, v.us, err, bound_text(v).c_str(),
                static_cast<long long>(r.spec.programs_per_sm));
    csv << r.in.kind << "," << r.spec.rows << "," << r.spec.cols << "," << r.in.dtype_name << "," << r.spec.warps << ","
        << r.in.measured_us << "," << v.us << "," << err << "," << r.spec.programs_per_sm << "," << v.bound << ","
        << 100 * v.bound_share << "\n";
  }
  print_error_summary(errors);
  return csv.str();
}

}  // namespace

std::string calibrate_gpu(const CalibrateOptions& o) {
  const int given = !o.gemm.empty() + !o.ops.empty() + !o.conv.empty();
  if (given != 1)
    throw InputError("gpu-calibrate", o.gemm.empty() ? (o.ops.empty() ? "--conv" : "--ops") : "--gemm",
                     "give one of --gemm, --conv or --ops");
  if (!o.ops.empty() && !o.tiles.empty()) throw InputError("gpu-calibrate", "--tile", "applies to --gemm and --conv rows only");
  const config::HwConfig cfg = config::HwConfig::load(o.hw, o.sets);
  const models::GpuParams params = models::GpuParams::read(cfg);
  const run::Hardware hw = run::Hardware::of(cfg);
  if (!o.conv.empty()) return run_calibrate_conv(o, hw, params);
  return o.gemm.empty() ? run_calibrate_ops(o, hw, params) : run_calibrate_gemm(o, hw, params);
}

}  // namespace npusim::run
