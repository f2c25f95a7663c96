// Helpers for whole-simulation tests: run the `sim` binary as a child process (SystemC
// elaborates once per process) and read what it wrote.
#pragma once
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace npusim::test {

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}
inline std::string source_dir() { return env_or("NPUSIM_SOURCE_DIR", NPUSIM_SOURCE_DIR); }
// The sim binary built beside this test binary (any build directory); NPUSIM_SIM overrides.
inline std::string sim_binary() { return env_or("NPUSIM_SIM", NPUSIM_SIM_PATH); }
inline std::string shared_dir() { return source_dir() + "/../shared"; }
inline std::string example(const std::string& rel) { return shared_dir() + "/examples/" + rel; }

struct ProcResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `sim <args>` through the shell, capturing output.
inline ProcResult run_sim(const std::string& args) {
  ProcResult r;
  const std::string cmd = "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 '" + sim_binary() + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

// A fresh scratch directory under the build tree for one test.
// A folder for this test process's files. Emptied the first time the process asks for it: a
// folder left by an earlier run whose process had the same id would otherwise hold its files
// (a sweep's --out refuses a folder that already holds a sweep).
inline std::string scratch_dir(const std::string& name) {
  static std::set<std::string> made;
  const std::string d = env_or("TMPDIR", "/tmp") + "/npusim_test_" + name + "_" + std::to_string(::getpid());
  if (made.insert(d).second) std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace npusim::test
