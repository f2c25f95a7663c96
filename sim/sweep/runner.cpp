#include "sim/sweep/runner.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace npusim::sweep {

using Clock = std::chrono::steady_clock;

std::string format_duration(double s) {
  const long t = static_cast<long>(s + 0.5);
  char b[32];
  if (t >= 3600) std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
  return b;
}

Progress::Progress(std::ostream& out, bool tty, size_t total, size_t already_done)
    : m_out(out), m_tty(tty), m_total(total), m_done(already_done), m_start_done(already_done), m_t0(Clock::now()) {
  if (m_tty) draw();
}

void Progress::tick(bool failed, const std::string& what) {
  ++m_done;
  if (failed) {
    ++m_failed;
    if (m_tty) m_out << "\r\033[K";
    m_out << "failed: " << what << "\n";
  }
  const int tenth = m_total ? static_cast<int>(m_done * 10 / m_total) : 10;
  if (m_tty || tenth != m_last_tenth) draw();
  m_last_tenth = tenth;
}

void Progress::draw() {
  const double el = std::chrono::duration<double>(Clock::now() - m_t0).count();
  const size_t ran = m_done - m_start_done;
  const double rate = el > 0 ? ran / el : 0;
  char line[256];
  const std::string eta = rate > 0 ? format_duration((m_total - m_done) / rate) : "?";
  if (m_tty) {
    const int width = 30, fill = m_total ? static_cast<int>(width * m_done / m_total) : width;
    std::snprintf(line, sizeof line, "\r\033[K[%s%s] %zu/%zu points  %.1f/s  ETA %s%s",
                  std::string(fill, '#').c_str(), std::string(width - fill, '.').c_str(), m_done, m_total, rate,
                  eta.c_str(), m_failed ? ("  " + std::to_string(m_failed) + " failed").c_str() : "");
  } else {
    std::snprintf(line, sizeof line, "%zu/%zu points, %.1f/s, ETA %s%s\n", m_done, m_total, rate, eta.c_str(),
                  m_failed ? (", " + std::to_string(m_failed) + " failed").c_str() : "");
  }
  m_out << line << std::flush;
}

void Progress::finish() {
  if (m_tty) m_out << "\n";
  m_out << std::flush;
}

}  // namespace npusim::sweep
