// The `sim` command's subcommands. main.cpp parses options (CLI11 lives only there) and calls
// these; each returns the process exit code (docs/exit_codes.md) or throws a typed error.
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace CLI { class App; }
namespace npusim::ir { struct Graph; struct System; }
namespace npusim::config { class HwConfig; }
namespace npusim::mapping { struct LibraryOptions; }
namespace npusim::run { class RunRecord; struct RunOptions; struct ServingWorkload; }

namespace npusim::cli {

enum ExitCode { kOk = 0, kCheckFailed = 1, kBadInput = 2, kInternal = 3 };

struct RunOptions {
  std::string ir;     // workload file (any registered format)
  std::string format; // --format: force a reader by name (empty: sniff the content)
  std::string module; // --module: the module of a TVM Model Library Format archive
  std::string hw = "configs/npu.yaml";
  std::vector<std::string> sets;  // --set path=value
  std::string report_json, csv, trace;
  bool quiet = false;
  // GPU configs (docs/gpu_library.md): library kernels (default) or ARK's DefaultPlanner.
  std::string gpu_plan = "library";  // library | ark
  std::string launch = "graph";      // graph | eager
  std::string fusion = "on";         // on | off
  bool tf32 = false;
  std::string row_kernels;           // one-pass | looped; empty: looped with --fusion off, else one-pass
  int64_t max_memory_mib = 8192;     // --max-memory: the NPU mapping's budget (mapping::NpuParams::max_program_bytes)
  std::vector<std::string> tenants;  // --tenant: more workloads at once on a multi-core NPU
  std::vector<int> tenant_cores;     // --tenant-cores: cores of each (--ir first)
};
// `sim --ir X --hw Y` on any device (run::run): read, validate, simulate, write the outputs.
int run_npu(const RunOptions& o);
// Writes an output file (report, CSV, trace...); InputError naming it when it cannot.
void write_output(const std::string& path, const std::string& text);
// A run's console table (unless -q) and its --report, --csv and --trace files.
void write_outputs(const run::RunRecord& rec, const RunOptions& o);
// run::run's options from the command line's.
run::RunOptions run_options(const RunOptions& o);
// The library plan's options from --launch, --fusion, --tf32 and --row-kernels.
mapping::LibraryOptions library_options(const RunOptions& o);
// `sim --model PATH` without --plan (run_gpu.cpp): the ARK model file itself with ARK's default
// plan on the GPU of o.hw, reported like `sim --model`. `sim --ir` of an ARK model on a GPU
// config runs this, not a lowering of the converted IR.
int run_ark_model(const std::string& path, const RunOptions& o);

struct ZooCliOptions {
  std::vector<std::string> args;  // MODEL, or: op OP key=value ...
  int batch = 1;
  std::string dtype;  // int8, fp16, fp32; empty: int8 for CNNs, fp16 for transformers and ops
  std::string input;  // "HxW" (CNNs)
  int seq = 0, kv_len = 0, layers = 0;  // transformers (0: the model's default)
  int tp = 0, pp = 0;  // Llama models: a tp x pp pipeline (0: not given)
  int ep = 0;          // mixture of experts: expert-parallel groups of that pipeline (0: not given, 1)
  double expert_skew = 1;  // mixture of experts: the busiest expert's load over the mean
  int microbatches = 0;  // that pipeline's microbatches through its stages (0: not given, 1)
  int shard = 0;  // transformers: one of this many tensor-parallel ranks (0: not given, the whole model)
  std::string logits;  // decoders: all or last (empty: all)
  std::string out;
};
int run_zoo(const ZooCliOptions& o);

struct CompareTraceOptions {
  std::string trace;  // ZeBu *_sim.txt
  std::string ir;
  std::string hw = "configs/gemini_zebu.yaml";
  std::vector<std::string> sets;
  std::string csv;
  std::string program;  // --program: the compiled program (assembler output) run instruction by instruction
};
int run_compare_trace(const CompareTraceOptions& o);

// `sim program`: a compiled Gemini program run instruction by instruction (run_program.cpp).
struct ProgramOptions {
  std::string program;  // the assembler's *_asm.txt (or a ZeBu trace: its instructions)
  std::string hw = "configs/gemini_zebu.yaml";
  std::vector<std::string> sets;
  std::string ir;      // optional: the Frontend IR, for layer names
  std::string csv;     // per-layer rows
  std::string report;  // JSON
  std::string instructions;  // CSV: every instruction's simulated start and end
  std::string trace;         // Perfetto / chrome://tracing JSON: a track per queue
  bool quiet = false;        // -q: print nothing (the files only)
};
int run_program(const ProgramOptions& o);

int run_config(bool markdown, const std::string& hw, const std::vector<std::string>& sets);
int run_report_fields();  // `sim config --report-fields`: docs/reports.md's table

// `sim sweep` with its merge and report subcommands (run_sweep.cpp keeps their options): adds
// them to app; the returned function runs the one parsed, or returns -1 if none was.
std::function<int()> add_sweep_command(CLI::App& app);
// `sim llm MODEL --hw H ...` (run_llm.cpp, docs/llm.md).
std::function<int()> add_llm_command(CLI::App& app);
// `sim collective KIND --hw SYSTEM` (run_collective.cpp, docs/system.md#collective-command).
std::function<int()> add_collective_command(CLI::App& app);

// `sim --ir X --check` (run_check.cpp, docs/golden.md): the functional check against golden
// .npy files, then (unless check_only) the timing simulation; exit 1 when a layer fails.
struct CheckCliOptions {
  bool check = false, check_only = false, chain = false;
  std::string npy_dir;  // default: the IR's folder
  std::string dump;     // write the computed outputs here
  bool wanted() const { return check || check_only || chain || !dump.empty(); }  // --chain, --dump imply --check
};
void add_check_options(CLI::App& app, CheckCliOptions& o);
int run_check(const RunOptions& run, const CheckCliOptions& o);
// `sim regress [--update] DIR`: returns the function that runs it if parsed, else -1.
std::function<int()> add_regress_command(CLI::App& app);

// GPU runs (run_gpu.cpp, docs/gpu.md): adds --model, --plan (repeatable) and --write-plan to
// app (sharing run's --hw, --set, --report, --csv, --trace, -q) and the gpu-calibrate
// subcommand; the returned function runs them if asked for, else returns -1.
std::function<int()> add_gpu_command(CLI::App& app, RunOptions& run);

}  // namespace npusim::cli
