// Forked workers: results come back over pipes; a throw, a crash, an exit without a result or
// a timeout is a failed outcome that does not stop the others.
#include "sim/run/fork_pool.h"
#include "sim/sweep/runner.h"

#include <csignal>
#include <map>
#include <stdexcept>
#include <unistd.h>

#include <gtest/gtest.h>

using namespace npusim::run;
using npusim::sweep::format_duration;

TEST(SweepRunner, EveryTaskRunsInItsOwnProcessAndReportsBack) {
  const pid_t parent = ::getpid();
  std::map<size_t, TaskOutcome> got;
  PoolOptions o;
  o.jobs = 3;
  // Each child returns its index and whether it is a different process than the test.
  run_forked(7, o, [&](size_t i) { return std::to_string(i) + (::getpid() != parent ? ":child" : ":parent"); },
             [&](const TaskOutcome& t) { got[t.index] = t; });
  ASSERT_EQ(got.size(), 7u);
  for (size_t i = 0; i < 7; ++i) {
    EXPECT_TRUE(got[i].ok) << got[i].payload;
    EXPECT_EQ(got[i].payload, std::to_string(i) + ":child");
  }
}

TEST(SweepRunner, FailuresAreRecordedAndTheRestStillRuns) {
  std::map<size_t, TaskOutcome> got;
  PoolOptions o;
  o.jobs = 2;
  o.timeout_s = 1;
  run_forked(6, o, [](size_t i) -> std::string {
    if (i == 1) throw std::runtime_error("bad point");
    if (i == 2) ::kill(::getpid(), SIGKILL);  // killed (a crash, without a core dump)
    if (i == 3) ::_exit(5);             // no result
    if (i == 4) for (;;) ::pause();     // hangs until the timeout kills it
    return std::string(100000, 'x');    // larger than a pipe buffer
  }, [&](const TaskOutcome& t) { got[t.index] = t; });
  ASSERT_EQ(got.size(), 6u);
  EXPECT_TRUE(got[0].ok);
  EXPECT_EQ(got[5].payload.size(), 100000u);
  EXPECT_FALSE(got[1].ok);
  EXPECT_EQ(got[1].payload, "bad point");
  EXPECT_FALSE(got[2].ok);
  EXPECT_NE(got[2].payload.find("signal " + std::to_string(SIGKILL)), std::string::npos) << got[2].payload;
  EXPECT_FALSE(got[3].ok);
  EXPECT_NE(got[3].payload.find("exited with code 5 without a result"), std::string::npos) << got[3].payload;
  EXPECT_FALSE(got[4].ok);
  EXPECT_EQ(got[4].payload, "timed out");
}

TEST(SweepRunner, DurationsPrintAsMinutesOrHours) {
  EXPECT_EQ(format_duration(65), "1:05");
  EXPECT_EQ(format_duration(3723), "1:02:03");
}
