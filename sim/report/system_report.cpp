#include "sim/report/system_report.h"

#include "sim/report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace npusim::report {

namespace {

std::string kind_of(const ir::SuperTask& t) { return t.kind_name.empty() ? ir::supertask_kind_name(t.kind) : t.kind_name; }

// "dev3->dev4", "dev3 port" (a switch port), "dev3 nic".
std::string link_name(const models::Network::LinkStats& l) {
  const std::string d = "dev" + std::to_string(l.from);
  return l.to == -2 ? d + " nic" : l.to < 0 ? d + " port" : d + "->dev" + std::to_string(l.to);
}

bool on_path(const SystemReport& r, int t) {
  const auto& p = r.sim->critical_path;
  return std::find(p.begin(), p.end(), t) != p.end();
}

}  // namespace

std::string format_system_table(const SystemReport& r) {
  const ir::System& s = *r.sys;
  const engine::SystemSimResult& m = *r.sim;
  std::ostringstream o;
  o << "workload: " << r.workload << " (" << s.supertasks.size() << " supertasks on " << s.devices.size()
    << " device slots)\nsystem: " << r.hw_name << " (" << r.hw_source << ")\n\n";
  size_t w = 9;
  for (const auto& t : s.supertasks) w = std::max(w, t.id.size());
  w = std::min<size_t>(w, 36);
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-14s  %-8s  %12s  %12s  %12s  %s\n", static_cast<int>(w), "supertask", "kind",
                "device", "start_us", "end_us", "time_us", "critical");
  o << line;
  for (int t : s.order) {
    const auto& st = s.supertasks[static_cast<size_t>(t)];
    const auto& tt = m.tasks[static_cast<size_t>(t)];
    std::string kind = kind_of(st);
    if (std::find(r.estimated.begin(), r.estimated.end(), t) != r.estimated.end()) kind += " (est)";
    if (tt.collective.find('/') != std::string::npos) kind += " " + tt.collective;  // a library's plan
    std::snprintf(line, sizeof line, "%-*s  %-14s  %-8s  %12.3f  %12.3f  %12.3f  %s\n", static_cast<int>(w),
                  st.id.substr(0, w).c_str(), kind.c_str(), r.lane_of_task[static_cast<size_t>(t)].c_str(),
                  tt.start_ns / 1000, tt.end_ns / 1000, (tt.end_ns - tt.start_ns) / 1000, on_path(r, t) ? "*" : "");
    o << line;
  }
  o << "\ndevices:\n";
  std::snprintf(line, sizeof line, "  %-10s  %-22s  %12s  %12s  %12s  %12s  %6s\n", "device", "config", "busy_us", "comm_us",
                "comm_wait_us", "idle_us", "busy%");
  o << line;
  for (const auto& d : m.devices) {
    std::snprintf(line, sizeof line, "  %-10s  %-22s  %12.3f  %12.3f  %12.3f  %12.3f  %5.1f%%\n", d.name.c_str(),
                  d.config.substr(0, 22).c_str(), d.busy_ns / 1000, d.comm_ns / 1000, d.comm_wait_ns / 1000, d.idle_ns / 1000,
                  m.makespan_ns > 0 ? 100.0 * d.busy_ns / m.makespan_ns : 0.0);
    o << line;
  }
  if (!m.links.empty()) {
    o << "\nlinks:\n";
    for (const auto& l : m.links) {
      const std::string name = link_name(l);
      std::snprintf(line, sizeof line, "  %-14s  %12.3f MB  busy %10.3f us  %5.1f%%\n", name.c_str(), l.bytes / 1e6, l.busy_ns / 1000,
                    m.makespan_ns > 0 ? 100.0 * l.busy_ns / m.makespan_ns : 0.0);
      o << line;
    }
  }
  o << "\nmakespan: " << fmt("%.3f us", m.makespan_ns / 1000) << "\ncritical path:";
  for (int t : m.critical_path) o << " " << s.supertasks[static_cast<size_t>(t)].id;
  o << "\n";
  if (!r.estimated.empty())
    o << "estimated supertasks (payload not lowered; costed from bytes): " << r.estimated.size() << "\n";
  return o.str();
}

nlohmann::json system_to_json(const SystemReport& r) {
  const ir::System& s = *r.sys;
  const engine::SystemSimResult& m = *r.sim;
  nlohmann::json j;
  j["workload"] = r.workload;
  j["system"] = {{"name", r.hw_name}, {"source", r.hw_source}};
  j["totals"] = {{"device", "system"}, {"time_us", m.makespan_ns / 1000}, {"makespan_us", m.makespan_ns / 1000}};
  nlohmann::json tasks = nlohmann::json::array();
  for (int t : s.order) {
    const auto& st = s.supertasks[static_cast<size_t>(t)];
    const auto& tt = m.tasks[static_cast<size_t>(t)];
    tasks.push_back({{"id", st.id}, {"kind", kind_of(st)}, {"device", r.lane_of_task[static_cast<size_t>(t)]},
                     {"start_us", tt.start_ns / 1000}, {"end_us", tt.end_ns / 1000},
                     {"estimated", std::find(r.estimated.begin(), r.estimated.end(), t) != r.estimated.end()},
                     {"critical", on_path(r, t)}});
    if (!tt.collective.empty()) tasks.back()["collective"] = tt.collective;  // the plan: "nvls/simple"
  }
  j["supertasks"] = tasks;
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : m.devices)
    devs.push_back({{"name", d.name}, {"config", d.config}, {"busy_us", d.busy_ns / 1000}, {"comm_us", d.comm_ns / 1000},
                    {"comm_wait_us", d.comm_wait_ns / 1000}, {"idle_us", d.idle_ns / 1000},
                    {"mem_stall_us", d.mem_stall_ns / 1000}});
  j["devices"] = devs;
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : m.links)
    links.push_back({{"from", l.from}, {"to", l.to}, {"bytes", l.bytes}, {"busy_us", l.busy_ns / 1000},
                     {"utilization", m.makespan_ns > 0 ? l.busy_ns / m.makespan_ns : 0.0}});
  j["links"] = links;
  nlohmann::json path = nlohmann::json::array();
  for (int t : m.critical_path) path.push_back(s.supertasks[static_cast<size_t>(t)].id);
  j["critical_path"] = path;
  return j;
}

namespace {

// A system run's totals over its accelerators (host lanes left out).
struct SystemTotals {
  double makespan_ns = 0, busy_ns = 0, comm_ns = 0, wait_ns = 0, stall_ns = 0, link_bytes = 0;
  int devices = 0;
};

// Rounded to the picosecond so that rows compare as text (sums of doubles).
double ps_us(double ns) { return std::round(ns * 1000) / 1e6; }

// The columns of a system sweep row, each with its value: one table, so the header and the
// values cannot drift.
struct SystemField {
  const char* name;
  nlohmann::ordered_json (*value)(const SystemTotals&);
};

const std::vector<SystemField>& system_fields() {
  using J = nlohmann::ordered_json;
  static const std::vector<SystemField> f = {
      {"time_ms", [](const SystemTotals& t) { return J(std::round(t.makespan_ns) / 1e6); }},
      {"makespan_us", [](const SystemTotals& t) { return J(ps_us(t.makespan_ns)); }},
      {"busy_us", [](const SystemTotals& t) { return J(ps_us(t.busy_ns)); }},
      {"comm_us", [](const SystemTotals& t) { return J(ps_us(t.comm_ns)); }},
      {"comm_wait_us", [](const SystemTotals& t) { return J(ps_us(t.wait_ns)); }},
      {"mem_stall_us", [](const SystemTotals& t) { return J(ps_us(t.stall_ns)); }},
      {"link_bytes", [](const SystemTotals& t) { return J(static_cast<int64_t>(std::llround(t.link_bytes))); }},
      {"devices", [](const SystemTotals& t) { return J(t.devices); }},
  };
  return f;
}

}  // namespace

const std::vector<std::string>& system_sweep_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const SystemField& f : system_fields()) n.push_back(f.name);
    return n;
  }();
  return names;
}

nlohmann::ordered_json system_sweep_metrics(const SystemReport& r) {
  const engine::SystemSimResult& m = *r.sim;
  SystemTotals t;
  t.makespan_ns = m.makespan_ns;
  for (const auto& d : m.devices) {
    if (d.name.rfind("host:", 0) == 0) continue;
    t.busy_ns += d.busy_ns, t.comm_ns += d.comm_ns, t.wait_ns += d.comm_wait_ns, t.stall_ns += d.mem_stall_ns, ++t.devices;
  }
  for (const auto& l : m.links) t.link_bytes += l.bytes;
  nlohmann::ordered_json j;
  for (const SystemField& f : system_fields()) j[f.name] = f.value(t);
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (int i : r.sys->order) {
    const auto& st = r.sys->supertasks[static_cast<size_t>(i)];
    const auto& tt = m.tasks[static_cast<size_t>(i)];
    layers.push_back({{"name", st.id}, {"op", kind_of(st)}, {"device", r.lane_of_task[static_cast<size_t>(i)]},
                      {"time_us", ps_us(tt.end_ns - tt.start_ns)}});
  }
  j["layers"] = layers;
  return j;
}

std::string system_to_csv(const SystemReport& r) {
  std::ostringstream o;
  o << "id,kind,device,start_us,end_us,time_us,estimated,critical\n";
  for (int t : r.sys->order) {
    const auto& st = r.sys->supertasks[static_cast<size_t>(t)];
    const auto& tt = r.sim->tasks[static_cast<size_t>(t)];
    o << st.id << "," << kind_of(st) << "," << r.lane_of_task[static_cast<size_t>(t)] << "," << fmt("%.6f", tt.start_ns / 1000)
      << "," << fmt("%.6f", tt.end_ns / 1000) << "," << fmt("%.6f", (tt.end_ns - tt.start_ns) / 1000) << ","
      << (std::find(r.estimated.begin(), r.estimated.end(), t) != r.estimated.end() ? 1 : 0) << "," << (on_path(r, t) ? 1 : 0)
      << "\n";
  }
  return o.str();
}

nlohmann::json system_chrome_trace(const SystemReport& r) {
  const ir::System& s = *r.sys;
  const engine::SystemSimResult& m = *r.sim;
  nlohmann::json ev = nlohmann::json::array();
  // One process per device (compute on track 0, collectives on track 1), one for the network.
  for (size_t d = 0; d < m.devices.size(); ++d) {
    ev.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", d + 1}, {"args", {{"name", m.devices[d].name}}}});
    ev.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", d + 1}, {"tid", 0}, {"args", {{"name", "compute"}}}});
    ev.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", d + 1}, {"tid", 1}, {"args", {{"name", "communication"}}}});
  }
  for (int t : s.order) {
    const auto& st = s.supertasks[static_cast<size_t>(t)];
    const std::string& lane = r.lane_of_task[static_cast<size_t>(t)];
    size_t pid = 0;
    for (size_t d = 0; d < m.devices.size(); ++d)
      if (m.devices[d].name == lane) pid = d + 1;
    if (pid == 0) continue;
    const auto& tt = m.tasks[static_cast<size_t>(t)];
    ev.push_back({{"ph", "X"}, {"name", st.id}, {"cat", kind_of(st)}, {"pid", pid},
                  {"tid", st.kind == ir::SuperTaskKind::Communication ? 1 : 0}, {"ts", tt.start_ns / 1000},
                  {"dur", (tt.end_ns - tt.start_ns) / 1000}});
  }
  const size_t net_pid = m.devices.size() + 1;
  ev.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", net_pid}, {"args", {{"name", "network"}}}});
  for (size_t i = 0; i < m.links.size(); ++i) {
    const auto& l = m.links[i];
    const std::string name = link_name(l);
    ev.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", net_pid}, {"tid", i}, {"args", {{"name", name}}}});
    ev.push_back({{"ph", "C"}, {"name", name + " MB"}, {"pid", net_pid}, {"tid", i}, {"ts", 0}, {"args", {{"MB", l.bytes / 1e6}}}});
  }
  return {{"traceEvents", ev}, {"displayTimeUnit", "ns"}};
}

}  // namespace npusim::report
