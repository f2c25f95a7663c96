#include "sim/report/system_report.h"

#include "sim/report/fields.h"
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
  const models::SystemSimResult& m = *r.sim;
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

namespace {

// A system run's totals over its accelerators (host lanes left out).
struct SystemTotals {
  double makespan_ns = 0, busy_ns = 0, comm_ns = 0, wait_ns = 0, stall_ns = 0, link_bytes = 0;
  int64_t workload_macs = 0;
  int devices = 0;
  double energy_uj = -1, link_energy_uj = -1;
};

SystemTotals totals_of(const SystemReport& r) {
  const models::SystemSimResult& m = *r.sim;
  SystemTotals t;
  t.makespan_ns = m.makespan_ns;
  t.energy_uj = r.energy_uj;
  t.link_energy_uj = r.energy_uj >= 0 ? r.link_energy_uj : -1;
  for (const auto& d : m.devices) {
    if (d.name.rfind("host:", 0) == 0) continue;
    t.busy_ns += d.busy_ns, t.comm_ns += d.comm_ns, t.wait_ns += d.comm_wait_ns, t.stall_ns += d.mem_stall_ns, ++t.devices;
  }
  for (const auto& l : m.links) t.link_bytes += l.bytes;
  for (const ir::SuperTask& s : r.sys->supertasks)
    if (s.compute) t.workload_macs += s.compute->macs;
  return t;
}

// Rounded to the picosecond so that rows compare as text (sums of doubles).
double ps_us(double ns) { return std::round(ns * 1000) / 1e6; }

// The run-level fields: JSON totals and the columns of a system sweep row, one table.
using SystemField = Field<SystemTotals>;
const std::vector<SystemField>& system_fields() {
  using J = nlohmann::json;
  using T = SystemTotals;
  static const std::vector<SystemField> f = {
      {"device", "", "system (a core key: every device's report has it)", [](const T&) { return J("system"); }, kInTotals},
      {"time_us", "us", "the makespan (a core key)", [](const T& t) { return J(t.makespan_ns / 1000); }, kInTotals},
      {"makespan_us", "us", "first supertask start to last supertask end", [](const T& t) { return J(t.makespan_ns / 1000); },
       kInTotals},
      {"time_ms", "ms", "the makespan in ms", [](const T& t) { return J(std::round(t.makespan_ns) / 1e6); }, kInSweep},
      {"makespan_us", "us", "the makespan, to the picosecond", [](const T& t) { return J(ps_us(t.makespan_ns)); }, kInSweep},
      {"busy_us", "us", "compute time, summed over the accelerators", [](const T& t) { return J(ps_us(t.busy_ns)); },
       kInTotals | kInSweep},
      {"comm_us", "us", "time inside collectives (from when every member is ready), summed over the accelerators",
       [](const T& t) { return J(ps_us(t.comm_ns)); }, kInTotals | kInSweep},
      {"comm_wait_us", "us", "time an accelerator sat idle with work pending, waiting for a collective's output",
       [](const T& t) { return J(ps_us(t.wait_ns)); }, kInTotals | kInSweep},
      {"mem_stall_us", "us", "compute stretched by collectives sharing its memory (part of busy_us; docs/system.md#contention)",
       [](const T& t) { return J(ps_us(t.stall_ns)); }, kInTotals | kInSweep},
      {"link_bytes", "bytes", "bytes over every link", [](const T& t) { return J(static_cast<int64_t>(std::llround(t.link_bytes))); },
       kInTotals | kInSweep},
      {"devices", "", "accelerators (host lanes left out)", [](const T& t) { return J(t.devices); }, kInTotals | kInSweep},
      {"workload_macs", "MAC",
       "the MACs of every compute supertask's ops as they state them (a core key): a zoo pipeline has its model's on one device",
       [](const T& t) { return J(t.workload_macs); }, kInTotals | kInSweep},
      {"energy_uj", "uJ", "the devices the pipeline uses: their supertasks' energy and their idle power the rest of the makespan (empty when a device's power is not modelled; docs/energy.md#systems)",
       [](const T& t) { return t.energy_uj >= 0 ? J(t.energy_uj) : J(nullptr); }, kInTotals | kInSweep},
      {"average_power_w", "W", "energy_uj / the makespan",
       [](const T& t) { return t.energy_uj >= 0 && t.makespan_ns > 0 ? J(t.energy_uj * 1000 / t.makespan_ns) : J(nullptr); },
       kInTotals | kInSweep},
      {"link_energy_uj", "uJ", "of energy_uj, the bits the links and NICs carried at system.link.pj_per_bit and system.nodes.nic_pj_per_bit (empty when neither is set)",
       [](const T& t) { return t.link_energy_uj >= 0 ? J(t.link_energy_uj) : J(nullptr); }, kInTotals | kInSweep},
  };
  return f;
}

// One supertask of a run, in the pipeline's order.
struct SupertaskRow {
  const SystemReport* r;
  int t;
  const ir::SuperTask& task() const { return r->sys->supertasks[static_cast<size_t>(t)]; }
  const models::SuperTaskTiming& timing() const { return r->sim->tasks[static_cast<size_t>(t)]; }
};

std::vector<SupertaskRow> supertask_rows(const SystemReport& r) {
  std::vector<SupertaskRow> rows;
  for (int t : r.sys->order) rows.push_back({&r, t});
  return rows;
}

using SupertaskField = Field<SupertaskRow>;
const std::vector<SupertaskField>& supertask_fields() {
  using J = nlohmann::json;
  using S = SupertaskRow;
  static const std::vector<SupertaskField> f = {
      {"id", "", "the supertask's id in the pipeline", [](const S& s) { return J(s.task().id); }},
      {"kind", "", "input, output, fx (compute), all_reduce, send, recv...", [](const S& s) { return J(kind_of(s.task())); }},
      {"device", "", "the system device it ran on (empty: input / output)",
       [](const S& s) { return J(s.r->lane_of_task[static_cast<size_t>(s.t)]); }},
      {"start_us", "us", "start", [](const S& s) { return J(s.timing().start_ns / 1000); }},
      {"end_us", "us", "end", [](const S& s) { return J(s.timing().end_ns / 1000); }},
      {"time_us", "us", "end_us - start_us", [](const S& s) { return J((s.timing().end_ns - s.timing().start_ns) / 1000); }},
      {"estimated", "", "its compute time is an estimate from its bytes (payload not lowered)",
       [](const S& s) { return J(std::find(s.r->estimated.begin(), s.r->estimated.end(), s.t) != s.r->estimated.end()); }},
      {"critical", "", "on the critical path", [](const S& s) { return J(on_path(*s.r, s.t)); }},
      {"macs", "MAC", "its ops' MACs (0 for collectives)", [](const S& s) { return J(s.task().compute ? s.task().compute->macs : 0); }},
      {"collective", "", "a collective's plan, algorithm/protocol (nvls/simple); empty otherwise",
       [](const S& s) { return J(s.timing().collective); }},
  };
  return f;
}

}  // namespace

nlohmann::json system_to_json(const SystemReport& r) {
  const ir::System& s = *r.sys;
  const models::SystemSimResult& m = *r.sim;
  nlohmann::json j;
  j["workload"] = r.workload;
  j["system"] = {{"name", r.hw_name}, {"source", r.hw_source}};
  j["totals"] = fields_object(system_fields(), totals_of(r), kInTotals);
  nlohmann::json tasks = nlohmann::json::array();
  for (const SupertaskRow& t : supertask_rows(r)) tasks.push_back(fields_object(supertask_fields(), t, kInRows));
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

const std::vector<std::string>& system_sweep_fields() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const SystemField& f : system_fields())
      if (f.in & kInSweep) n.push_back(f.name);
    return n;
  }();
  return names;
}

nlohmann::ordered_json system_sweep_metrics(const SystemReport& r) {
  nlohmann::ordered_json j;
  const SystemTotals t = totals_of(r);
  for (const SystemField& f : system_fields())
    if (f.in & kInSweep) j[f.name] = nlohmann::ordered_json::parse(f.value(t).dump());
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const SupertaskRow& s : supertask_rows(r))
    layers.push_back({{"name", s.task().id}, {"op", kind_of(s.task())}, {"device", r.lane_of_task[static_cast<size_t>(s.t)]},
                      {"time_us", ps_us(s.timing().end_ns - s.timing().start_ns)}});
  j["layers"] = layers;
  return j;
}

std::string system_to_csv(const SystemReport& r) { return fields_csv(supertask_fields(), supertask_rows(r)); }

std::string system_fields_markdown() { return fields_markdown(system_fields(), true); }
std::string supertask_fields_markdown() { return fields_markdown(supertask_fields()); }

nlohmann::json system_chrome_trace(const SystemReport& r) {
  const ir::System& s = *r.sys;
  const models::SystemSimResult& m = *r.sim;
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
