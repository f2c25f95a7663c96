// What one run of a multi-device system measured (the system engine, sim/engine/system_engine.h,
// fills it; the system report, sim/report/system_report.h, reads it): per supertask, per device,
// per link, and the critical path. No SystemC.
#pragma once
#include <string>
#include <vector>

#include "models/interconnect/network.h"

namespace npusim::models {

struct SuperTaskTiming {
  double start_ns = 0, end_ns = 0;
  double ready_ns = 0;          // when its last input was ready
  int critical_input = -1;      // supertask whose output was ready last (-1: none)
  bool waited_on_device = false;  // started after ready because its device was busy
  int device_prev = -1;         // the supertask before it on the same device
  std::string collective;       // a collective's plan: "ring/simple", "nvls/simple"... (plain: "ring")
};

struct DeviceTiming {
  std::string name;       // "dev0", or the cpu lane "host:<slot>"
  std::string config;     // the device config as the system file names it
  double busy_ns = 0;     // compute
  double comm_ns = 0;     // inside collectives it is a member of (start: every member ready)
  double comm_wait_ns = 0;  // idle with work pending, waiting for a collective's output
  double mem_stall_ns = 0;  // compute stretched by collectives' memory traffic (part of busy_ns)
  double idle_ns = 0;     // makespan - busy - comm_wait
};

struct SystemSimResult {
  std::vector<SuperTaskTiming> tasks;  // by supertask index
  std::vector<DeviceTiming> devices;   // system devices, then host lanes
  std::vector<models::Network::LinkStats> links;
  double makespan_ns = 0;
  std::vector<int> critical_path;      // supertask indices, first to last
};

}  // namespace npusim::models
