#include "sim/engine/system_engine.h"
#include "sim/engine/simulation.h"

#include <systemc>

#include <algorithm>
#include <deque>
#include <memory>

#include "models/interconnect/collectives.h"
#include "models/kernel/clock.h"
#include "sim/ir/error.h"

namespace npusim::engine {

namespace {

struct Ready {
  bool ready = false;
  double t = 0;
  int producer = -1;
  sc_core::sc_event ev;
};

struct SystemTop : sc_core::sc_module {
  const ir::System& sys;
  const config::SystemConfig& cfg;
  const std::vector<int>& slot_device;
  const std::vector<double>& compute_ns;
  const std::vector<double>& compute_bytes;
  std::vector<bool> on_cores;  // by slot
  std::vector<int> active;       // by device: compute supertasks running now (slots on cores)
  std::vector<double> active_since, idle_since;
  models::Clock clk = models::Clock::from_ps(1000);  // time base: 1 ns
  models::Network net;
  std::deque<Ready> tensors;
  SystemSimResult res;
  int lanes;

  SystemTop(sc_core::sc_module_name n, const ir::System& s, const config::SystemConfig& c, const std::vector<int>& slots,
            int host_lanes, const std::vector<double>& ns, const std::vector<double>& bytes, const std::vector<double>& mem_rate,
            const std::vector<bool>& slot_on_cores)
      : sc_module(n), sys(s), cfg(c), slot_device(slots), compute_ns(ns), compute_bytes(bytes), on_cores(slot_on_cores),
        net(static_cast<int>(c.devices.size()), c.network), tensors(s.tensors.size()), lanes(static_cast<int>(c.devices.size()) + host_lanes) {
    for (size_t d = 0; d < mem_rate.size() && d < c.devices.size(); ++d) net.set_memory_rate(static_cast<int>(d), mem_rate[d]);
    res.tasks.resize(s.supertasks.size());
    res.devices.resize(static_cast<size_t>(lanes));
    for (size_t d = 0; d < c.devices.size(); ++d) res.devices[d] = {c.devices[d].name, c.devices[d].source};
    for (int h = 0; h < host_lanes; ++h) res.devices[c.devices.size() + h] = {"host:" + std::to_string(h), "host"};
    for (size_t i = 0; i < s.tensors.size(); ++i) {
      tensors[i].producer = s.tensors[i].producer;
      if (s.tensors[i].constant) tensors[i].ready = true;
    }
    on_cores.resize(slots.size(), false);
    active.assign(static_cast<size_t>(lanes), 0);
    active_since.assign(static_cast<size_t>(lanes), 0);
    idle_since.assign(static_cast<size_t>(lanes), 0);
    for (int d = 0; d < lanes; ++d) {
      // A chip whose slots run on their own cores runs one thread per slot; others one.
      std::vector<int> own;
      for (size_t k = 0; k < slots.size(); ++k)
        if (slots[k] == d && on_cores[k]) own.push_back(static_cast<int>(k));
      if (own.empty()) sc_core::sc_spawn([this, d] { run_device(d, -1); }, sc_core::sc_gen_unique_name("device"));
      for (int k : own) sc_core::sc_spawn([this, d, k] { run_device(d, k); }, sc_core::sc_gen_unique_name("device"));
    }
    std::vector<std::string> groups;
    for (int t : s.order) {
      const ir::SuperTask& st = s.supertasks[t];
      if (st.kind == ir::SuperTaskKind::Input) {
        for (int o : st.output_ids) mark(o, 0);
      } else if (st.kind == ir::SuperTaskKind::Communication) {
        // A collective (or a send/recv pair) is played once, by its first member.
        if (st.comm->members.empty() || st.comm->members.front() != t) continue;
        sc_core::sc_spawn([this, t] { run_collective(t); }, sc_core::sc_gen_unique_name("collective"));
      } else if (st.kind == ir::SuperTaskKind::Output) {
        sc_core::sc_spawn([this, t] { run_output(t); }, sc_core::sc_gen_unique_name("output"));
      }
    }
  }

  void mark(int tensor, double t) {
    Ready& r = tensors[static_cast<size_t>(tensor)];
    r.ready = true;
    r.t = t;
    r.ev.notify(sc_core::SC_ZERO_TIME);
  }

  // Waits for a supertask's inputs; returns the supertask whose output came last.
  int wait_inputs(int t) {
    int last = -1;
    double when = -1;
    for (int in : sys.supertasks[t].input_ids) {
      Ready& r = tensors[static_cast<size_t>(in)];
      while (!r.ready) sc_core::wait(r.ev);
      if (r.t > when) when = r.t, last = r.producer;
    }
    res.tasks[t].ready_ns = clk.now();
    res.tasks[t].critical_input = last;
    return last;
  }

  int lane_of(int t) const {
    const int slot = sys.supertasks[t].device_index;
    return slot < 0 ? -1 : slot_device[static_cast<size_t>(slot)];
  }

  // slot >= 0: only that slot's supertasks (a slot on some cores of the chip).
  void run_device(int d, int slot) {
    double prev_end = 0;
    int prev = -1;
    for (int t : sys.order) {
      const ir::SuperTask& st = sys.supertasks[t];
      if (st.kind != ir::SuperTaskKind::Compute || lane_of(t) != d || (slot >= 0 && st.device_index != slot)) continue;
      const int crit = wait_inputs(t);
      const double start = clk.now();
      SuperTaskTiming& tt = res.tasks[t];
      // Idle before it: waiting on communication when the last input came from a collective.
      // (Slots on cores: only while none of the chip's slots computes, since it last did.)
      const double idle_from = slot >= 0 ? std::max(prev_end, idle_since[static_cast<size_t>(d)]) : prev_end;
      if (start > idle_from && crit >= 0 && sys.supertasks[crit].kind == ir::SuperTaskKind::Communication &&
          (slot < 0 || active[static_cast<size_t>(d)] == 0))
        res.devices[d].comm_wait_ns += start - idle_from;
      tt.device_prev = prev;
      tt.waited_on_device = prev >= 0 && prev_end >= tt.ready_ns && prev_end > 0;
      tt.start_ns = start;
      // Busy: while any of its slots computes (a slot on cores shares the chip with others).
      if (active[static_cast<size_t>(d)]++ == 0) active_since[static_cast<size_t>(d)] = start;
      run_compute(d, t, slot >= 0);
      tt.end_ns = clk.now();
      if (--active[static_cast<size_t>(d)] == 0) {
        res.devices[d].busy_ns += tt.end_ns - active_since[static_cast<size_t>(d)];
        idle_since[static_cast<size_t>(d)] = tt.end_ns;
      }
      for (int o : st.output_ids) mark(o, tt.end_ns);
      prev_end = tt.end_ns;
      prev = t;
    }
  }

  // A compute supertask in slices: each needs its time alone or its share of the memory bytes
  // at what the collectives' transfers leave of the device's memory rate, whichever is longer.
  // A slot on some cores of a chip also loads the chip's memory for its siblings to see.
  void run_compute(int d, int t, bool on_cores_of_chip) {
    const double bytes = t < static_cast<int>(compute_bytes.size()) ? compute_bytes[static_cast<size_t>(t)] : 0;
    const double rate = d < static_cast<int>(cfg.devices.size()) ? net.memory_rate(d) : 0;
    if (bytes <= 0 || rate <= 0) return clk.wait_cycles(compute_ns[t]);
    constexpr int kSlices = 16;
    const double slice = compute_ns[t] / kSlices, b = bytes / kSlices;
    for (int k = 0; k < kSlices; ++k) {
      const double avail = std::max(rate - net.memory_load(d, clk.now()), 0.05 * rate);
      const double dt = std::max(slice, b / avail);
      if (on_cores_of_chip) net.add_memory_load(d, clk.now(), clk.now() + dt, b / dt);
      res.devices[static_cast<size_t>(d)].mem_stall_ns += dt - slice;
      clk.wait_cycles(dt);
    }
  }

  void run_collective(int first) {
    const ir::Collective& c = *sys.supertasks[first].comm;
    int crit = -1;
    double ready = -1;
    for (int m : c.members) {  // the member input that came last (a recv has none)
      const int k = wait_inputs(m);
      if (k >= 0 && res.tasks[m].ready_ns >= ready) ready = res.tasks[m].ready_ns, crit = k;
    }
    const double start = clk.now();
    const int n = c.size();
    std::vector<int> dev(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      dev[static_cast<size_t>(i)] = lane_of(c.members[static_cast<size_t>(i)]);
      if (dev[static_cast<size_t>(i)] < 0 || dev[static_cast<size_t>(i)] >= static_cast<int>(cfg.devices.size()))
        throw InputError(sys.source, sys.supertasks[c.members[static_cast<size_t>(i)]].pointer,
                         "a collective member runs on the host; collectives need system devices");
    }
    const std::string kind = c.kind == ir::CollectiveKind::Send || c.kind == ir::CollectiveKind::Recv
                                 ? "send"
                                 : ir::collective_name(c.kind);
    double size = static_cast<double>(c.bytes);
    if (kind == "all_gather" || kind == "gather") size *= n;
    int root = 0;
    const std::string& root_dev = c.kind == ir::CollectiveKind::Broadcast ? c.src : c.dst;
    for (int i = 0; i < n; ++i)
      if (!root_dev.empty() && c.devices[static_cast<size_t>(i)] == root_dev) root = i;
    if (kind == "send") {  // members are [send, recv] in some order: the transfer goes send -> recv
      const bool send_first = sys.supertasks[c.members[0]].comm->kind == ir::CollectiveKind::Send;
      if (!send_first) std::swap(dev[0], dev[1]);
    }
    const models::CollectivePlan plan = collective_plan(cfg, kind, n, size);
    clk.wait_until(models::play_collective(net, kind, plan, dev, size, root, clk.now()));
    const double end = clk.now();
    for (int i = 0; i < n; ++i) res.devices[static_cast<size_t>(dev[static_cast<size_t>(i)])].comm_ns += end - start;
    for (int m : c.members) {
      res.tasks[m].start_ns = start;
      res.tasks[m].end_ns = end;
      res.tasks[m].critical_input = crit;
      res.tasks[m].collective = plan_name(plan);
      for (int o : sys.supertasks[m].output_ids) mark(o, end);
    }
  }

  void run_output(int t) {
    wait_inputs(t);
    res.tasks[t].start_ns = res.tasks[t].end_ns = clk.now();
  }
};

}  // namespace

models::CollectivePlan collective_plan(const config::SystemConfig& cfg, const std::string& kind, int n, double size) {
  if (!cfg.library) return models::plain_plan(cfg.algorithm(kind));
  models::CollectiveTuning t = *models::CollectiveTuning::nccl(cfg.library->generation);
  t.protocol = cfg.library->protocol;
  t.channels = cfg.library->channels;
  t.ring_fill_bytes = cfg.library->ring_fill_mib * (1 << 20);
  t.nvls_fill_bytes = cfg.library->nvls_fill_mib * (1 << 20);
  if (!cfg.switch_reduction) t.nvls_efficiency = 0;
  std::optional<models::CollectiveAlgo> forced = cfg.forced_algorithm(kind);
  if (!forced && kind != "all_reduce" && kind != "all_gather" && kind != "reduce_scatter") forced = cfg.algorithm(kind);
  std::string why;
  auto p = models::tuned_plan(kind, n, size, cfg.network, t, forced, &why);
  if (!p) throw InputError(cfg.source, "system.collectives." + kind, "cannot run " + kind + " of " + std::to_string(n) + " members: " + why);
  return *p;
}

std::string plan_name(const models::CollectivePlan& p) {
  std::string s = models::algo_name(p.algo);
  if (p.protocol) s += std::string("/") + models::protocol_name(*p.protocol);
  return s;
}

SystemSimResult simulate_system(const ir::System& sys, const config::SystemConfig& cfg, const std::vector<int>& slot_device,
                                int host_lanes, const std::vector<double>& compute_ns, const std::vector<double>& compute_bytes,
                                const std::vector<double>& memory_rate, const std::vector<bool>& slot_on_cores) {
  auto top = std::make_unique<SystemTop>("system", sys, cfg, slot_device, host_lanes, compute_ns, compute_bytes, memory_rate,
                                         slot_on_cores);
  run_simulation();
  SystemSimResult r = std::move(top->res);
  for (const auto& t : r.tasks) r.makespan_ns = std::max(r.makespan_ns, t.end_ns);
  for (auto& d : r.devices) d.idle_ns = std::max(0.0, r.makespan_ns - d.busy_ns - d.comm_wait_ns);
  r.links = top->net.link_stats();
  // Critical path: back from the supertask that ends last, through whichever came later of its
  // last input and the previous work on its device.
  int cur = -1;
  for (size_t i = 0; i < r.tasks.size(); ++i)
    if (cur < 0 || r.tasks[i].end_ns > r.tasks[static_cast<size_t>(cur)].end_ns) cur = static_cast<int>(i);
  std::vector<int> path;
  while (cur >= 0 && path.size() <= r.tasks.size()) {
    path.push_back(cur);
    const SuperTaskTiming& t = r.tasks[static_cast<size_t>(cur)];
    int next = t.critical_input;
    if (t.device_prev >= 0 && (next < 0 || r.tasks[static_cast<size_t>(t.device_prev)].end_ns > r.tasks[static_cast<size_t>(next)].end_ns))
      next = t.device_prev;
    cur = next;
  }
  std::reverse(path.begin(), path.end());
  r.critical_path = path;
  return r;
}

}  // namespace npusim::engine
