// Progress of a sweep's forked points (the pool itself is sim/run/fork_pool.h).
#pragma once
#include <chrono>
#include <iosfwd>
#include <string>

namespace npusim::sweep {

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
