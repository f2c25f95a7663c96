// `--plot OUT.png`: the run's pictures through scripts/plot_run.py (run_plot.h).
#include "sim/cli/run_plot.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/config/hw_paths.h"
#include "sim/ir/error.h"

extern char** environ;

namespace npusim::cli {

namespace {
// The report plot_prepare made up; removed when sim exits, however the run ended.
struct TempReport {
  std::string path;
  ~TempReport() {
    if (!path.empty()) std::remove(path.c_str());
  }
} g_temp_report;
}  // namespace

void plot_prepare(const std::string& png, RunOptions& run) {
  if (png.empty() || !run.report_json.empty()) return;
  std::string tmpl = (std::filesystem::temp_directory_path() / "npusim_plot_XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw InputError("--plot", png, "cannot create a temporary file for the report");
  ::close(fd);
  g_temp_report.path = run.report_json = tmpl;
}

int plot_finish(int rc, const std::string& png, const RunOptions& run) {
  if (png.empty() || rc != kOk) return rc;
  const std::string script = config::find_shipped_file("scripts/plot_run.py");
  if (script.empty())
    throw InputError("--plot", png, "scripts/plot_run.py not found (looked in <sim's folder>/../share/npusim/scripts "
                                    "and the source checkout)");
  std::string python = "/usr/bin/python3";
  if (const char* p = std::getenv("NPUSIM_PYTHON")) python = p;
  else if (::access(python.c_str(), X_OK) != 0) python = "python3";
  std::vector<std::string> args = {python, script, run.report_json, "-o", png};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout << std::flush;
  pid_t pid = 0;
  if (::posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    throw InputError("--plot", png, "cannot run " + python + " (Debian: apt-get install python3 python3-matplotlib)");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw InternalError("--plot: waitpid failed");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return kOk;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return kBadInput;  // the script said why
  std::cerr << "sim: error: --plot: " << script << " failed\n";
  return kInternal;
}

}  // namespace npusim::cli
