// Forked worker pool (sim/run/fork_pool.h).
#include "sim/run/fork_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "sim/ir/error.h"

namespace npusim::run {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  pid_t pid = -1;
  int fd = -1;
  size_t index = 0;
  std::string buf;
  Clock::time_point t0;
  bool timed_out = false;
};

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

[[noreturn]] void child_main(int fd, pid_t parent, size_t index, const ChildFn& fn) {
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed sweep leaves no workers behind
#endif
  if (::getppid() != parent) ::_exit(1);
  // Hold nothing of the parent's: the output directory lock, other workers' pipes.
  if (fd > 3) ::close_range(3, static_cast<unsigned>(fd - 1), 0);
  ::close_range(static_cast<unsigned>(fd + 1), ~0U, 0);
  // Simulator chatter would interleave with the progress bar; results travel over the pipe.
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, 1), ::dup2(null, 2);
  std::string out;
  char tag = 'E';
  try {
    out = fn(index);
    tag = 'O';
  } catch (const std::exception& e) {
    out = e.what();
  } catch (...) {
    out = "unknown exception";
  }
  write_all(fd, std::string(1, tag) + out);
  ::_exit(0);  // no static destructors, no SystemC teardown
}

Running spawn(size_t index, const ChildFn& fn) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw InternalError(std::string("pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw InternalError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(p[0]);
    child_main(p[1], parent, index, fn);
  }
  ::close(p[1]);
  Running r;
  r.pid = pid;
  r.fd = p[0];
  r.index = index;
  r.t0 = Clock::now();
  return r;
}

TaskOutcome reap(Running& r) {
  ::close(r.fd);
  int status = 0;
  while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
  }
  TaskOutcome o;
  o.index = r.index;
  o.wall_s = std::chrono::duration<double>(Clock::now() - r.t0).count();
  if (r.timed_out) {
    o.payload = "timed out";
  } else if (!r.buf.empty() && r.buf[0] == 'O' && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    o.ok = true;
    o.payload = r.buf.substr(1);
  } else if (!r.buf.empty() && r.buf[0] == 'E') {
    o.payload = r.buf.substr(1);
  } else if (WIFSIGNALED(status)) {
    o.payload = std::string("worker killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                strsignal(WTERMSIG(status)) + ")";
  } else {
    o.payload = "worker exited with code " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                " without a result";
  }
  return o;
}

}  // namespace

void run_forked(size_t count, const PoolOptions& opt, const ChildFn& child, const DoneFn& done) {
  const size_t jobs = static_cast<size_t>(std::max(1, opt.jobs));
  std::vector<Running> running;
  size_t next = 0;
  try {
    while (next < count || !running.empty()) {
      while (running.size() < jobs && next < count) running.push_back(spawn(next++, child));
      std::vector<pollfd> fds;
      int wait_ms = -1;
      const auto now = Clock::now();
      for (auto& r : running) {
        fds.push_back({r.fd, POLLIN, 0});
        if (opt.timeout_s > 0) {
          const double left = opt.timeout_s - std::chrono::duration<double>(now - r.t0).count();
          if (left <= 0 && !r.timed_out) r.timed_out = true, ::kill(r.pid, SIGKILL);
          const int ms = std::max(1, static_cast<int>(left * 1000) + 1);
          wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
        }
      }
      if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR)
        throw InternalError(std::string("poll: ") + std::strerror(errno));
      for (size_t i = running.size(); i-- > 0;) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char chunk[65536];
        const ssize_t n = ::read(running[i].fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
          running[i].buf.append(chunk, static_cast<size_t>(n));
          continue;
        }
        Running r = std::move(running[i]);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        done(reap(r));
      }
    }
  } catch (...) {
    for (auto& r : running) {
      ::kill(r.pid, SIGKILL);
      reap(r);
    }
    throw;
  }
}

}  // namespace npusim::run
