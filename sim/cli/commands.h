// The `sim` command's subcommands. main.cpp parses options (CLI11 lives only there) and calls
// these; each returns the process exit code (docs/exit_codes.md) or throws a typed error.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace CLI { class App; }

namespace npusim::cli {

enum ExitCode { kOk = 0, kCheckFailed = 1, kBadInput = 2, kInternal = 3 };

struct RunOptions {
  std::string ir;     // Frontend IR file
  std::string hw = "configs/npu.yaml";
  std::vector<std::string> sets;  // --set path=value
  std::string report_json, csv, trace;
  bool quiet = false;
};
int run_npu(const RunOptions& o);

struct ZooCliOptions {
  std::string model;
  int batch = 1;
  std::string dtype = "int8";
  std::string input;  // "HxW"
  std::string out;
};
int run_zoo(const ZooCliOptions& o);

struct CompareTraceOptions {
  std::string trace;  // ZeBu *_sim.txt
  std::string ir;
  std::string hw = "configs/gemini_zebu.yaml";
  std::vector<std::string> sets;
  std::string csv;
};
int run_compare_trace(const CompareTraceOptions& o);

int run_config(bool markdown, const std::string& hw, const std::vector<std::string>& sets);

// `sim sweep` with its merge and report subcommands (run_sweep.cpp keeps their options): adds
// them to app; the returned function runs the one parsed, or returns -1 if none was.
std::function<int()> add_sweep_command(CLI::App& app);

}  // namespace npusim::cli
