// The layering of sim/ (../shared/ARCHITECTURE.md: cli -> check/sweep -> run -> report -> engine
// -> mapping -> config/llm -> ir), checked on the sources' #include lines so that it lasts:
// a library below the command line never includes it, sweeps load workloads through the one
// loader (sim/run/workload_loader.h) and import no frontend, the SystemC-free libraries include
// no engine, and report writers read only the run's record (no mapper, engine or run header).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/test_util.h"

namespace {

namespace fs = std::filesystem;
using npusim::test::source_dir;

// (file relative to the source root, included path) of every #include "..." under dir.
std::vector<std::pair<std::string, std::string>> includes_under(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> r;
  const fs::path root(source_dir());
  for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    std::ifstream f(e.path());
    for (std::string line; std::getline(f, line);) {
      if (line.rfind("#include \"", 0) != 0) continue;
      const size_t end = line.find('"', 10);
      r.push_back({fs::relative(e.path(), root).string(), line.substr(10, end - 10)});
    }
  }
  return r;
}

bool starts(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

TEST(Structure, NoLibraryBelowTheCommandLineIncludesIt) {
  for (const auto& [file, inc] : includes_under("sim")) {
    if (!starts(file, "sim/cli/")) {
      EXPECT_FALSE(starts(inc, "sim/cli/")) << file << " includes " << inc;
    }
  }
}

TEST(Structure, TheCommandLineRunsTheEngineOnlyThroughLibraryCalls) {
  for (const auto& [file, inc] : includes_under("sim/cli"))
    EXPECT_FALSE(starts(inc, "sim/engine/")) << file << " includes " << inc << ": call run::run, run::collective or llm::serve";
}

TEST(Structure, SweepsImportNoFrontendAndNoEngine) {
  for (const auto& [file, inc] : includes_under("sim/sweep")) {
    EXPECT_FALSE(starts(inc, "frontends/")) << file << " includes " << inc << ": load workloads with run::load_workload";
    EXPECT_FALSE(starts(inc, "sim/engine/")) << file << " includes " << inc << " (sweeps are SystemC-free)";
  }
}

TEST(Structure, TheServingArithmeticIsSystemCFree) {
  for (const auto& [file, inc] : includes_under("sim/llm")) {
    if (file != "sim/llm/serve.cpp" && file != "sim/llm/serve.h") {
      EXPECT_FALSE(starts(inc, "sim/run/") || starts(inc, "sim/engine/")) << file << " includes " << inc;
    }
  }
}

TEST(Structure, ReportWritersReadOnlyTheRecord) {
  for (const auto& [file, inc] : includes_under("sim/report"))
    EXPECT_FALSE(starts(inc, "sim/mapping/") || starts(inc, "sim/engine/") || starts(inc, "sim/run/"))
        << file << " includes " << inc << ": a writer reads the run's record (built in sim/run/record_build.cpp)";
}

}  // namespace
