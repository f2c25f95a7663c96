// `sim --plan P... [--model M] --hw H` and `sim --model M --hw H [--write-plan F]`: ARK plans on
// the GPU model; `sim gpu-calibrate`: single-kernel plans vs measured times (sim/run/gpu_calibrate.h,
// docs/gpu.md). The options live here so main.cpp only wires them in.
#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <memory>

#include "frontends/ark/ark_reader.h"
#include "sim/cli/commands.h"
#include "sim/config/hw_config.h"
#include "sim/ir/error.h"
#include "sim/ir/graph.h"
#include "sim/mapping/gpu_default_plan.h"
#include "sim/mapping/gpu_library.h"
#include "sim/report/gpu_report.h"
#include "sim/run/gpu_calibrate.h"
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


}  // namespace

mapping::LibraryOptions library_options(const RunOptions& o) {
  mapping::LibraryOptions l;
  l.fuse = o.fusion != "off";
  l.tf32 = o.tf32;
  l.looped_rows = o.row_kernels.empty() ? !l.fuse : o.row_kernels == "looped";
  l.launch = o.launch == "eager" ? mapping::LaunchMode::Eager : mapping::LaunchMode::Graph;
  return l;
}

int run_calibrate(const GpuCliOptions& o) {
  run::CalibrateOptions c;
  c.hw = o.cal_hw, c.sets = o.cal_sets, c.gemm = o.gemm, c.conv = o.conv, c.ops = o.ops, c.tiles = o.tiles, c.jobs = o.jobs;
  const std::string csv = run::calibrate_gpu(c);
  if (!o.cal_csv.empty()) write_output(o.cal_csv, csv);
  return kOk;
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
  cal->add_option("--gemm", o->gemm, "measured GEMM times (JSON rows: M, N, K, ms, optional tile, group_m, mma, cluster, dtype)");
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
