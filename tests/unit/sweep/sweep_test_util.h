// Helpers for the in-process sweep tests: scratch files, error text of a throwing call, and a
// fake simulation (no SystemC) whose cycles follow from the config.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "sim/config/hw_config.h"
#include "sim/ir/error.h"
#include "sim/report/report.h"
#include "sim/run/record_build.h"

namespace sweep_test {

// A fresh directory per test under /tmp.
inline std::string scratch(const std::string& name) {
  const std::string d = "/tmp/npusim_sweep_unit_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "";
}

inline std::string npu_yaml() { return std::string(NPUSIM_SOURCE_DIR) + "/configs/npu.yaml"; }

// cycles = 1e6 / (rows * cols) + l2_kib: fewer cycles for bigger arrays, more for bigger L2,
// so tests can tell points apart by their cycles.
inline npusim::report::RunReport fake_report(const npusim::config::HwConfig& cfg) {
  npusim::report::RunReport r;
  npusim::run::describe_hardware(r, cfg);
  r.npu_cycles = 1000000 / (cfg.get_int("npu.pe_array.rows") * cfg.get_int("npu.pe_array.cols")) +
                 cfg.get_int("npu.l2.size_kib");
  npusim::report::LayerRow l;
  l.name = "conv";
  l.op = "conv2d";
  l.cycles = r.npu_cycles;
  l.bound = "compute";
  r.layers.push_back(l);
  return r;
}

}  // namespace sweep_test
