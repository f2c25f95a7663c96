// `sim --plan P... [--model M] --hw H` and `sim --model M --hw H [--write-plan F]`: ARK plans on
// the GPU model; `sim gpu-calibrate`: single-kernel plans vs measured times (docs/gpu.md). The
// options live here so main.cpp only wires them in.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "frontends/ark/ark_reader.h"
#include "frontends/calibration/calibration_rows.h"
#include "sim/cli/commands.h"
#include "sim/config/hw_config.h"
#include "sim/engine/gpu_engine.h"
#include "sim/ir/error.h"
#include "sim/ir/graph.h"
#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_lower.h"
#include "sim/mapping/gpu_library.h"
#include "sim/report/gpu_library_report.h"
#include "sim/report/gpu_report.h"
#include "sim/run/fork_pool.h"
#include "sim/run/run.h"

namespace npusim::cli {

namespace {

struct GpuCliOptions {
  std::string model;
  std::vector<std::string> plans;
  std::string write_plan;
  // gpu-calibrate
  std::string cal_hw = "configs/gpu_h100.yaml", gemm, ops, conv;
  std::vector<std::string> cal_sets;
  std::vector<std::string> tiles;
  std::string cal_csv;
  int jobs = 0;
};

// Without --hw, the configuration of the GPU the plan was written for.
std::string default_hw(const std::string& arch) {
  if (arch.rfind("ROCM", 0) == 0) return "configs/gpu_mi300x.yaml";
  if (arch == "CUDA_80") return "configs/gpu_a100.yaml";
  return "configs/gpu_h100.yaml";
}

// The plans of one run, validated against the device, simulated and reported (console table,
// --report, --csv, --trace).
int simulate_and_report(const RunOptions& run, const std::vector<gpu::Program>& plans, const config::HwConfig& cfg,
                        const std::string& workload) {
  const models::GpuParams params = models::GpuParams::read(cfg);
  for (const gpu::Program& p : plans)
    frontends::validate_against_device(p, params.num_sms, params.max_warps_per_block, params.smem_per_block_bytes);
  run::Workload w;
  w.plans = &plans;
  w.plans_name = workload;
  write_outputs(run::run(w, run::Hardware::of(cfg)), run);
  return kOk;
}

int run_gpu(const RunOptions& run, const GpuCliOptions& o, bool hw_given) {
  // Read and validate everything before simulating.
  std::vector<gpu::Program> plans;
  for (const std::string& f : o.plans) plans.push_back(frontends::read_ark_plan(f));
  std::unique_ptr<gpu::Model> model;
  if (!o.model.empty()) model = std::make_unique<gpu::Model>(frontends::read_ark_model(o.model));
  std::string arch = !plans.empty() ? plans[0].architecture : "";
  const config::HwConfig cfg = config::HwConfig::load(hw_given ? run.hw : default_hw(arch), run.sets);
  const models::GpuParams params = models::GpuParams::read(cfg);
  if (plans.empty()) {
    plans.push_back(mapping::default_plan(*model, params.num_sms, params.arch));
  } else if (model) {
    const gpu::Program* same = nullptr;
    for (const gpu::Program& p : plans)
      if (p.rank == model->rank) same = &p;
    if (!same)
      throw InputError(o.model, "/Rank", "no plan of rank " + std::to_string(model->rank) + " was given to check the model against");
    frontends::cross_check(*model, *same);
  }
  if (!o.write_plan.empty()) {
    if (plans.size() != 1) throw InputError("--write-plan", o.write_plan, "writes one plan; give one --plan or a --model");
    write_output(o.write_plan, report::plan_to_json(plans[0]).dump(2) + "\n");
  }
  if (plans.size() > 1 || plans[0].world_size > 1) frontends::check_send_recv_pairs(plans);
  std::sort(plans.begin(), plans.end(), [](const gpu::Program& a, const gpu::Program& b) { return a.rank < b.rank; });
  std::string workload = !o.plans.empty() ? o.plans[0] : o.model + " (default plan)";
  if (o.plans.size() > 1) workload += " and " + std::to_string(o.plans.size() - 1) + " more ranks";
  return simulate_and_report(run, plans, cfg, workload);
}

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
        char b[128];
        std::snprintf(b, sizeof b, "%.6f %.0f %s %.6f", r.us, r.hbm_bytes, r.bound.c_str(), r.bound_share);
        return std::string(b);
      },
      [&](const run::TaskOutcome& out) {
        if (!out.ok) {
          if (failure.empty()) failure = out.payload;
          return;
        }
        std::istringstream in(out.payload);
        Simulated& p = predicted[out.index];
        in >> p.us >> p.hbm_bytes >> p.bound >> p.bound_share;
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
  models::LimiterCycles c{};
  double total = 0;
  if (!sim.ranks.empty())
    for (const auto& task : sim.ranks[0].ops)
      for (const models::GpuWork& w : task)
        for (int i = 0; i < models::kNumLimiters; ++i) c[i] += w.limiter_cycles[i], total += w.limiter_cycles[i];
  const int best = models::dominant_limiter(c);
  if (best >= 0) r.bound = models::limiter_name(static_cast<models::Limiter>(best)), r.bound_share = c[best] / total;
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
std::vector<mapping::MatmulPlanSpec> candidate_tiles(const GpuCliOptions& o) {
  if (o.tiles.empty()) return mapping::default_gemm_tiles();
  std::vector<mapping::MatmulPlanSpec> tiles;
  for (const std::string& t : o.tiles) tiles.push_back(parse_tile(t));
  return tiles;
}

// Simulates every tile of every problem (one forked child each) and keeps each problem's fastest.
std::vector<BestTile> best_tiles(const std::vector<GemmProblem>& problems, const GpuCliOptions& o,
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

int run_calibrate_gemm(const GpuCliOptions& o, const run::Hardware& hw, const models::GpuParams& params) {
  const std::vector<frontends::GemmRow> rows = frontends::parse_gemm_rows(json::read_json_file(o.gemm), o.gemm);
  const std::vector<mapping::MatmulPlanSpec> candidates = candidate_tiles(o);
  std::vector<GemmProblem> problems;
  for (const frontends::GemmRow& r : rows) {
    // A row's own tile is what ran; --tile replaces the candidates of the others only.
    GemmProblem g = row_problem(r.tile, candidates, o.gemm, r.pointer);
    g.m = r.m, g.n = r.n, g.k = r.k, g.group_m = r.group_m, g.warp_mma = r.warp_mma;
    g.cluster_m = r.cluster_m, g.cluster_n = r.cluster_n;
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
  if (!o.cal_csv.empty()) write_output(o.cal_csv, csv.str());
  return kOk;
}

// Convolutions as the implicit GEMMs cuDNN runs (docs/gpu.md#measured-on-an-h200-held-out):
// M = N x P x Q output pixels, N = K filters, K = C x R x S; A streams from the input tensor.
int run_calibrate_conv(const GpuCliOptions& o, const run::Hardware& hw, const models::GpuParams& params) {
  const std::vector<frontends::ConvRow> rows = frontends::parse_conv_rows(json::read_json_file(o.conv), o.conv);
  const std::vector<mapping::MatmulPlanSpec> candidates = candidate_tiles(o);
  std::vector<GemmProblem> problems;
  for (const frontends::ConvRow& r : rows) {
    GemmProblem g = row_problem(r.tile, candidates, o.conv, r.pointer);
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
  if (!o.cal_csv.empty()) write_output(o.cal_csv, csv.str());
  return kOk;
}

// Rows of fused row-wise kernels (docs/gpu.md#memory-bound-kernels): each row names the kernel's
// tensors and launch, the model predicts its time.
int run_calibrate_ops(const GpuCliOptions& o, const run::Hardware& hw, const models::GpuParams& params) {
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
  if (!o.cal_csv.empty()) write_output(o.cal_csv, csv.str());
  return kOk;
}

int run_calibrate(const GpuCliOptions& o) {
  const int given = !o.gemm.empty() + !o.ops.empty() + !o.conv.empty();
  if (given != 1)
    throw InputError("gpu-calibrate", o.gemm.empty() ? (o.ops.empty() ? "--conv" : "--ops") : "--gemm",
                     "give one of --gemm, --conv or --ops");
  if (!o.ops.empty() && !o.tiles.empty()) throw InputError("gpu-calibrate", "--tile", "applies to --gemm and --conv rows only");
  const config::HwConfig cfg = config::HwConfig::load(o.cal_hw, o.cal_sets);
  const models::GpuParams params = models::GpuParams::read(cfg);
  const run::Hardware hw = run::Hardware::of(cfg);
  if (!o.conv.empty()) return run_calibrate_conv(o, hw, params);
  return o.gemm.empty() ? run_calibrate_ops(o, hw, params) : run_calibrate_gemm(o, hw, params);
}

}  // namespace

mapping::LibraryOptions library_options(const RunOptions& o) {
  mapping::LibraryOptions l;
  l.fuse = o.fusion != "off";
  l.tf32 = o.tf32;
  l.looped_rows = o.row_kernels.empty() ? !l.fuse : o.row_kernels == "looped";
  l.launch = o.launch == "eager" ? mapping::LaunchMode::Eager : mapping::LaunchMode::Graph;
  return l;
}

int run_ark_model(const std::string& path, const RunOptions& o) {
  GpuCliOptions g;
  g.model = path;
  return run_gpu(o, g, true);
}

std::function<int()> add_gpu_command(CLI::App& app, RunOptions& run) {
  auto o = std::make_shared<GpuCliOptions>();
  app.add_option("--model", o->model, "ARK model file (.json) to simulate on the GPU (with --plan: cross-checked)");
  app.add_option("--plan", o->plans, "ARK plan file; repeat for every rank of a multi-GPU run");
  app.add_option("--write-plan", o->write_plan, "write the plan that runs (ARK's default plan without --plan)");
  auto* cal = app.add_subcommand("gpu-calibrate", "simulate single-kernel plans (GEMMs, row-wise kernels) and compare with measured times");
  cal->add_option("--hw", o->cal_hw, "GPU hardware description")->capture_default_str();
  cal->add_option("--gemm", o->gemm, "measured GEMM times (JSON rows: M, N, K, ms, optional tile, group_m, mma, cluster)");
  cal->add_option("--conv", o->conv,
                  "measured convolution times (JSON rows: N, C, H, W, K, R, S, stride, pad, dtype, ms; docs/gpu.md)");
  cal->add_option("--ops", o->ops,
                  "measured row-wise kernel times (JSON rows: kind, M, N, dtype, tensors, flops, warps, ms; docs/gpu.md)");
  cal->add_option("--set", o->cal_sets, "override a hardware parameter (repeatable)");
  cal->add_option("--tile", o->tiles, "candidate tile TMxTNxTK:WARPS[:STAGES] (repeatable; default: ten tiles, best taken)");
  cal->add_option("--csv", o->cal_csv, "write the comparison as CSV");
  cal->add_option("-j,--jobs", o->jobs, "simulations in parallel (default: number of cores)");
  CLI::Option* hw = app.get_option("--hw");
  return [o, cal, hw, &run]() -> int {
    if (cal->parsed()) return run_calibrate(*o);
    if (o->model.empty() && o->plans.empty()) return -1;
    if (!run.ir.empty()) throw InputError("sim", "--ir", "give either --ir (NPU) or --model/--plan (GPU), not both");
    return run_gpu(run, *o, hw->count() > 0);
  };
}

}  // namespace npusim::cli
