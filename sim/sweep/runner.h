// Runs tasks in forked worker processes, N at a time. SystemC elaborates once per process, so
// every sweep point gets its own child: the child runs the task, sends its result back over a
// pipe and _exits; the parent never simulates. A task that throws, crashes, exits without a
// result or runs past the timeout is a failed outcome, never a stop of the whole run.
#pragma once
#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>

namespace npusim::sweep {

struct TaskOutcome {
  size_t index = 0;
  bool ok = false;
  std::string payload;  // ok: what the task returned; failed: the error
  double wall_s = 0;    // fork to exit, as seen by the parent
};

// Runs in the child; its return value travels to the parent. May throw.
using ChildFn = std::function<std::string(size_t index)>;
// Runs in the parent, in finish order, as soon as a task ends.
using DoneFn = std::function<void(const TaskOutcome&)>;

struct PoolOptions {
  int jobs = 1;
  double timeout_s = 0;  // per task; 0 = none
};

void run_forked(size_t count, const PoolOptions& opt, const ChildFn& child, const DoneFn& done);

// Progress of a sweep on stderr: a redrawn bar (points done, rate, ETA) on a terminal, a plain
// line per tenth of the work (and per failure) otherwise.
class Progress {
 public:
  Progress(std::ostream& out, bool tty, size_t total, size_t already_done);
  void tick(bool failed, const std::string& what);
  void finish();

 private:
  void draw();
  std::ostream& m_out;
  bool m_tty;
  size_t m_total, m_done, m_start_done, m_failed = 0;
  int m_last_tenth = 0;
  std::chrono::steady_clock::time_point m_t0;
};

// "1:05" / "1:02:03"
std::string format_duration(double seconds);

}  // namespace npusim::sweep
