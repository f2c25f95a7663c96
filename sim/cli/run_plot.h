// `sim ... --plot OUT.png` (README.md#outputs): after a run, scripts/plot_run.py draws
// its pictures from the JSON report: per-layer cycles by bound and the roofline, or the
// per-device timeline of a multi-device run. main.cpp calls these two around the run.
#pragma once
#include <string>

namespace npusim::cli {

struct RunOptions;

// With --plot and no --report: the run writes its JSON report to a temporary file.
void plot_prepare(const std::string& png, RunOptions& run);

// After the run (rc its exit code): when png is given and the run succeeded, draws the
// pictures with Debian's /usr/bin/python3 ($NPUSIM_PYTHON overrides) running plot_run.py from
// <binary>/../share/npusim/scripts or the checkout's scripts/. Returns rc, or the script's
// failure (2: no matplotlib or no script, with the reason on stderr). The temporary report
// is removed when sim exits.
int plot_finish(int rc, const std::string& png, const RunOptions& run);

}  // namespace npusim::cli
