// Runs tasks in forked worker processes, N at a time: the one child-process runner of npusim
// (sweeps, regress, system and LLM runs, gpu-calibrate). SystemC elaborates once per process, so
// every simulation gets its own child: the child runs the task, sends its result back over a
// pipe and _exits; the parent never simulates. A task that throws, crashes, exits without a
// result or runs past the timeout is a failed outcome, never a stop of the whole run. No
// SystemC here: SystemC-free libraries (sweeps, regress) use it too.
#pragma once
#include <functional>
#include <string>

namespace npusim::run {

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

}  // namespace npusim::run
