// `sim`: command-line entry point. Exit codes: 0 ok, 1 check failed, 2 bad input or usage,
// 3 internal error (docs/exit_codes.md).
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <malloc.h>

#include "sim/cli/commands.h"
#include "sim/llm/serving.h"
#include "sim/cli/run_plot.h"
#include "sim/ir/error.h"

using namespace npusim;

static int sim_main(int argc, char** argv) {
  CLI::App app{"npusim: performance simulator for neural-network accelerators"};
  app.require_subcommand(0, 1);
  cli::RunOptions run;
  app.add_option("--ir", run.ir, "workload: Frontend IR, ARK model, ONNX, TVM Model Library Format (archive, folder or "
                                 "graph.json) or a multi-device pipeline; format found from the content");
  app.add_option("--format", run.format, "read --ir as this format (frontend_ir, ark_model, onnx, tvm_mlf, pipeline) "
                                         "instead of finding it from the content");
  app.add_option("--module", run.module, "the module to simulate from a TVM Model Library Format archive with several");
  app.add_option("--hw", run.hw, "hardware description: a YAML file or a shipped config's name (npu, gemini_zebu, gpu_h100...)")
      ->capture_default_str();
  app.add_option("--set", run.sets, "override a hardware parameter: path.to.key=value (repeatable)");
  app.add_option("--tenant", run.tenants, "multi-core NPU: another workload that runs at the same time on cores of its own "
                                         "(repeatable; docs/multicore.md#multi-tenancy)");
  app.add_option("--tenant-cores", run.tenant_cores, "cores of each workload run at once, --ir first (default: equal shares)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--report", run.report_json, "write the per-layer report as JSON");
  app.add_option("--csv", run.csv, "write the per-layer report as CSV");
  app.add_option("--trace", run.trace, "write a Chrome/Perfetto trace (JSON)");
  app.add_flag("-q,--quiet", run.quiet, "do not print the table");
  app.add_option("--gpu-plan", run.gpu_plan, "GPU configs: library kernels as production stacks fuse them (library), or "
                                             "the workload lowered to ARK ops under ARK's DefaultPlanner (ark)")
      ->check(CLI::IsMember({"library", "ark"}))
      ->capture_default_str();
  app.add_option("--launch", run.launch, "GPU library plan: graph (CUDA Graphs / TensorRT: kernels back to back) or "
                                         "eager (PyTorch eager: one host launch per kernel)")
      ->check(CLI::IsMember({"graph", "eager"}))
      ->capture_default_str();
  app.add_option("--fusion", run.fusion, "GPU library plan: on (fused epilogues, element-wise groups, attention) or "
                                         "off (one kernel per op, as PyTorch eager)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_flag("--tf32", run.tf32, "GPU library plan: fp32 GEMMs on the tensor cores as TF32 (default: FFMA)");
  app.add_option("--max-memory", run.max_memory_mib,
                 "MiB the NPU's mapped program may take; a workload beyond it is refused as soon as its mapping "
                 "passes it (exit 2)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  app.add_option("--row-kernels", run.row_kernels,
                 "GPU library plan: softmax and norms in one pass with the row in registers (one-pass: Triton, TensorRT) "
                 "or as a thread block looping over its row (looped: PyTorch's native kernels, vLLM's rms_norm); "
                 "default: looped with --fusion off, else one-pass")
      ->check(CLI::IsMember({"one-pass", "looped"}));
  std::string plot;  // --plot: scripts/plot_run.py draws the run's report (run_plot.h)
  app.add_option("--plot", plot, "draw the run's pictures into this PNG: cycles per layer by bound and a roofline, "
                                 "or the per-device timeline (needs python3-matplotlib)");

  cli::ZooCliOptions zoo;
  auto* zoo_cmd = app.add_subcommand("zoo", "write a Frontend IR for a known network or one operation");
  zoo_cmd->add_option("model", zoo.args,
                      "resnet18|resnet34|resnet50|resnet101|resnet152|vgg16|vgg19|mobilenetv2|bert-base|bert-large|"
                      "gpt2|gpt2-medium|gpt2-large|gpt2-xl|gpt3-xl|gpt3-2.7b|llama2-7b|llama2-13b|llama2-70b|llama3-8b, a Hugging Face config: hf PATH/config.json (docs/llm_models.md), or: op OP key=value ... (one operation, e.g. op matmul m=512 n=4096 k=4096)")
      ->required();
  zoo_cmd->add_option("--batch", zoo.batch, "batch size (zoo op: default of n= / b=)")->capture_default_str();
  zoo_cmd->add_option("--dtype", zoo.dtype, "int8, fp16 or fp32, and bf16 for transformers and ops (default: int8 for CNNs, fp16 for transformers and ops)");
  zoo_cmd->add_option("--input", zoo.input, "CNNs: input size HxW (default 224x224)");
  zoo_cmd->add_option("--seq", zoo.seq, "transformers: tokens in this pass (default 128, or 1 with --kv-len)");
  zoo_cmd->add_option("--kv-len", zoo.kv_len, "gpt2*, gpt3*, llama*: cached tokens; K/V caches of this length are inputs (a decode step)");
  zoo_cmd->add_option("--layers", zoo.layers, "transformers: keep the first K layers (default: all)");
  zoo_cmd->add_option("--shard", zoo.shard,
                      "transformers: the graph of one of this many tensor-parallel ranks on one device (heads, K/V heads, FFN "
                      "and vocabulary divided by it; no collectives), as a profiler measures one rank")
      ->check(CLI::Range(1, 4096));
  zoo_cmd->add_option("--tp", zoo.tp, "every decoder layout: Llama, Mistral, Qwen2, Gemma 2, Mixtral, Qwen2-MoE, DeepSeek, OPT, GPT-2, GPT-NeoX: write a multi-device pipeline with this many tensor-parallel ranks per stage (docs/system.md#zoo-pipelines)")
      ->check(CLI::Range(1, 4096));
  zoo_cmd->add_option("--pp", zoo.pp, "llama*: pipeline-parallel stages of that pipeline (default 1)")->check(CLI::Range(1, 4096));
  zoo_cmd->add_option("--ep", zoo.ep,
                      "mixture of experts (Mixtral's layout): expert parallelism, this many groups of --tp devices per stage, "
                      "each attending its share of the batch, the experts spread over them (docs/system.md#expert-parallelism)")
      ->check(CLI::Range(1, 4096));
  zoo_cmd->add_option("--expert-skew", zoo.expert_skew,
                      "mixture of experts: the busiest expert's tokens over the mean (default 1: a balanced router)")
      ->check(CLI::Range(1.0, 1e6));
  zoo_cmd->add_option("--microbatches", zoo.microbatches,
                      "llama* pipelines: split the batch into this many microbatches that flow through the stages one after "
                      "another (GPipe; default 1)")
      ->check(CLI::Range(1, 65536));
  zoo_cmd->add_option("--logits", zoo.logits, "decoders: the positions the LM head computes, all (the default, as Hugging Face's forward) or last (each sequence's last token, as serving runtimes run a prefill)")
      ->check(CLI::IsMember({"all", "last"}));
  zoo_cmd->add_option("-o,--output", zoo.out, "output file (default: stdout)");

  cli::CompareTraceOptions cmp;
  auto* cmp_cmd = app.add_subcommand("compare-trace", "per-layer measured (ZeBu trace) vs simulated cycles");
  cmp_cmd->add_option("--trace", cmp.trace, "ZeBu per-instruction trace (*_sim.txt)")->required();
  cmp_cmd->add_option("--ir", cmp.ir, "Frontend IR of the traced run")->required();
  cmp_cmd->add_option("--hw", cmp.hw, "hardware description")->capture_default_str();
  cmp_cmd->add_option("--set", cmp.sets, "override a hardware parameter (repeatable)");
  cmp_cmd->add_option("--csv", cmp.csv, "write the comparison as CSV");
  cmp_cmd->add_option("--program", cmp.program,
                      "simulate this compiled program (the assembler's *_asm.txt, or a trace's own instructions) "
                      "instruction by instruction instead of the IR (docs/timing.md#compiled-programs)");

  cli::ProgramOptions prog;
  auto* prog_cmd = app.add_subcommand("program", "a compiled Gemini program (assembler output) run instruction by instruction");
  prog_cmd->add_option("--program", prog.program, "the assembler's *_asm.txt (or a ZeBu trace: its instructions)")->required();
  prog_cmd->add_option("--hw", prog.hw, "hardware description of the core")->capture_default_str();
  prog_cmd->add_option("--set", prog.sets, "override a hardware parameter (repeatable)");
  prog_cmd->add_option("--ir", prog.ir, "the program's Frontend IR, for layer names");
  prog_cmd->add_option("--csv", prog.csv, "write the per-layer rows as CSV");
  prog_cmd->add_option("--report", prog.report, "write the run as JSON");
  prog_cmd->add_option("--instructions", prog.instructions, "write every instruction's simulated start and end as CSV");
  prog_cmd->add_option("--trace", prog.trace, "write a Perfetto / chrome://tracing file: one track per queue, a slice per instruction");
  prog_cmd->add_flag("-q,--quiet", prog.quiet, "print nothing (write the files only)");

  bool markdown = false;
  std::string cfg_hw;
  std::vector<std::string> cfg_sets;
  auto* cfg_cmd = app.add_subcommand("config", "list every hardware parameter with its resolved value");
  cfg_cmd->add_option("--hw", cfg_hw, "hardware description to resolve (default: schema defaults)");
  cfg_cmd->add_option("--set", cfg_sets, "override a hardware parameter (repeatable)");
  cfg_cmd->add_flag("--markdown", markdown, "print the schema as a Markdown table (docs/config.md)");
  bool serving_options = false;
  cfg_cmd->add_flag("--serving-options", serving_options, "print sim llm's serving options as a Markdown table (docs/llm.md#options)");
  bool report_fields = false;
  cfg_cmd->add_flag("--report-fields", report_fields, "print the per-layer report fields as a Markdown table (docs/reports.md)");
  auto run_sweep_cmd = cli::add_sweep_command(app);  // sim sweep [merge|report] (run_sweep.cpp)
  auto run_collective_cmd = cli::add_collective_command(app);  // run_collective.cpp
  auto run_llm_cmd = cli::add_llm_command(app);  // run_llm.cpp
  auto run_gpu_cmd = cli::add_gpu_command(app, run);  // --model/--plan, gpu-calibrate (run_gpu.cpp)
  cli::CheckCliOptions check;  // --check and friends, sim regress (run_check.cpp)
  cli::add_check_options(app, check);
  auto run_regress_cmd = cli::add_regress_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return cli::kBadInput;
  }
  try {
    if (zoo_cmd->parsed()) return cli::run_zoo(zoo);
    if (cmp_cmd->parsed()) return cli::run_compare_trace(cmp);
    if (prog_cmd->parsed()) return cli::run_program(prog);
    if (cfg_cmd->parsed() && report_fields) return cli::run_report_fields();
    if (cfg_cmd->parsed() && serving_options) {
      std::cout << llm::serving_options_markdown();
      return 0;
    }
    if (cfg_cmd->parsed()) return cli::run_config(markdown, cfg_hw, cfg_sets);
    if (const int rc = run_sweep_cmd(); rc >= 0) return rc;
    if (const int rc = run_collective_cmd(); rc >= 0) return rc;
    if (const int rc = run_llm_cmd(); rc >= 0) return rc;
    cli::plot_prepare(plot, run);
    if (check.wanted() && (app.get_option("--plan")->count() > 0 || app.get_option("--model")->count() > 0))
      throw InputError("sim", "--check", "checks a workload given with --ir against its golden .npy files; an ARK "
                                         "--plan/--model run has nothing to check");
    if (const int rc = run_gpu_cmd(); rc >= 0) return cli::plot_finish(rc, plot, run);
    if (const int rc = run_regress_cmd(); rc >= 0) return rc;
    if (run.ir.empty()) {
      std::cerr << "sim: nothing to do: give --ir <workload: Frontend IR, ARK model...> or --plan/--model <ARK file> (see --help)\n";
      return cli::kBadInput;
    }
    if (check.wanted()) return cli::plot_finish(cli::run_check(run, check), plot, run);
    return cli::plot_finish(cli::run_npu(run), plot, run);
  } catch (const InputError& e) {
    std::cerr << "sim: error: " << e.what() << "\n";
    return cli::kBadInput;
  } catch (const InternalError& e) {
    std::cerr << "sim: " << e.what() << "\n";
    return cli::kInternal;
  } catch (const std::exception& e) {
    std::cerr << "sim: internal error: " << e.what() << "\n";
    return cli::kInternal;
  }
}

// libsystemc.so also defines main() (which prints the SystemC banner and calls sc_main). The
// executable's own main() takes precedence, so `sim` output stays clean; sc_main exists only
// because the library refers to it.
int main(int argc, char** argv) {
  // The GPU model's L2 pass builds and frees large vectors op after op: kept in the heap
  // rather than mapped and unmapped each time, they are not zero-filled again by the kernel
  // (a tenth of a gpu-calibrate run's time). Ignored under AddressSanitizer.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  return sim_main(argc, argv);
}
extern "C" int sc_main(int argc, char** argv) { return sim_main(argc, argv); }
