// `sim llm MODEL --hw H --batch B --input L --output G` (docs/llm.md): the command line of
// llm::serve() (sim/llm/serve.h). Its flags come from the serving option table
// (llm::serving_options(): --name with dashes, range-checked); this file parses them, prints the
// record's table and writes its report (and picture).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <variant>

#include "sim/cli/commands.h"
#include "sim/cli/run_plot.h"
#include "sim/llm/serve.h"

namespace npusim::cli {

namespace {

struct LlmCliOptions {
  std::string model, hw, report, plot;
  bool quiet = false;
  llm::ServingOptions serving;
};

// One CLI flag per serving option, bound to its field, with the table's range and meaning.
void add_serving_flags(CLI::App& cmd, llm::ServingOptions& o) {
  for (const llm::ServingOption& opt : llm::serving_options()) {
    const std::string flag = opt.flag();
    std::visit(
        [&](auto m) {
          using V = std::decay_t<decltype(o.*m)>;
          if constexpr (std::is_same_v<V, bool>) {
            cmd.add_flag(flag, o.*m, opt.meaning);
          } else {
            CLI::Option* f = cmd.add_option(flag, o.*m, opt.meaning);
            if constexpr (!std::is_same_v<V, std::string>) f->check(CLI::Range(opt.lo, opt.hi));
            if (!opt.default_value().empty()) f->capture_default_str();
          }
        },
        opt.member);
  }
}

}  // namespace

std::function<int()> add_llm_command(CLI::App& app) {
  auto o = std::make_shared<LlmCliOptions>();
  auto* cmd = app.add_subcommand("llm", "serve LLM requests (a static batch, or continuous batching of arrivals): prefill, then "
                                        "decode steps with a growing KV cache; TTFT, TPOT, tokens/s (docs/llm.md)");
  cmd->add_option("model", o->model, "gpt2*, gpt3*, llama2-7b, llama2-13b, llama2-70b, llama3-8b, a Hugging Face config.json (docs/llm_models.md), or --prefill and --decode pipeline files");
  cmd->add_option("--prefill", o->serving.prefill_pipeline, "a runtime's prefill pass as a pipeline file (with --decode, on a system)");
  cmd->add_option("--decode", o->serving.decode_pipeline, "a runtime's decode-step pipeline file (with --prefill)");
  cmd->add_option("--hw", o->hw, "GPU or NPU config, or a system (with --tp / --pp)")->required();
  cmd->add_option("--set", o->serving.sets, "override a hardware parameter (repeatable)");
  add_serving_flags(*cmd, o->serving);
  cmd->add_option("--report", o->report, "write the report as JSON");
  cmd->add_option("--plot", o->plot, "draw tokens/s, latency and the KV cache over time into this PNG (needs python3-matplotlib)");
  cmd->add_flag("-q,--quiet", o->quiet, "no table on stdout");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    RunOptions run;  // plot_prepare / plot_finish read and set only its report path
    run.report_json = o->report;
    plot_prepare(o->plot, run);
    const llm::ServingRecord rec = llm::serve(o->model, o->hw, o->serving);
    if (!o->quiet) std::fputs(rec.summary.c_str(), stdout);
    if (!run.report_json.empty()) write_output(run.report_json, rec.report.dump(2) + "\n");
    return plot_finish(kOk, o->plot, run);
  };
}

}  // namespace npusim::cli
