#include "models/gpu/sm.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace npusim::models {

namespace {

// Identical tasks of one slot are played in at most this many wake-ups (their demands add up),
// so a task group of 100k tiny tasks costs a few wake-ups per slot, not 100k.
constexpr size_t kMaxWakeupsPerSlot = 32;

std::string channel(const gpu::Op& op) { return op.config.channel_type.empty() ? "Proxy" : op.config.channel_type; }

// The peer of a point-to-point op: the rank of its first remote tensor.
int peer_of(const gpu::Op& op, int own) {
  for (const auto* list : {&op.write_tensors, &op.read_tensors})
    for (const gpu::Tensor& t : *list)
      if (t.is_remote(own)) return t.buffer_rank;
  return -1;
}

bool batchable(const gpu::TaskInfo& t) {
  for (const gpu::Op& op : t.ops) {
    const gpu::OpClass c = gpu::op_class(op.type);
    if (c == gpu::OpClass::Communication || c == gpu::OpClass::Sync) return false;
  }
  return true;
}

// tasks: counted per op here; a processor group counts tasks in run_slot instead.
void add(GpuWork& w, const TaskDemand& d, size_t tasks, double wait, double exec,
         Limiter lim) {
  w.tasks += static_cast<int64_t>(tasks);
  w.slot_cycles += wait + exec;
  w.flops += d.flops;
  w.l2_bytes += d.l2_bytes;
  w.hbm_bytes += d.hbm_bytes;
  for (const auto& [dst, b] : d.link_bytes) w.link_bytes += b;
  w.link_bytes += d.proxy_put_bytes;
  w.limiter_cycles[static_cast<int>(Limiter::Sync)] += wait;
  w.limiter_cycles[static_cast<int>(lim)] += exec;
}

}  // namespace

SmArray::SmArray(sc_core::sc_module_name name, const gpu::Program& plan, const GpuSchedule& sched, const PacketDeps& comm,
                 std::vector<std::vector<OpHbm>> hbm, const GpuParams& params, GpuSystem& sys, double start_cycle)
    : sc_module(name), m_plan(plan), m_sched(sched), m_comm(comm), m_p(params), m_sys(sys), m_rank(plan.rank),
      m_start(start_cycle), m_hbm(std::move(hbm)),
      m_hbm_server(params.hbm_bytes_per_cycle), m_l2(params.l2_bytes_per_cycle) {
  const int procs = static_cast<int>(sched.programs.size());
  m_res.rank = m_rank;
  m_res.pgs.resize(plan.processor_groups.size());
  m_res.ops.resize(plan.task_infos.size());
  for (size_t i = 0; i < plan.task_infos.size(); ++i) m_res.ops[i].resize(plan.task_infos[i].ops.size());
  m_res.sm_busy_cycles.assign(procs, 0);
  m_res.sm_tasks.assign(procs, 0);
  m_demand_cache.resize(sched.seqs.size());
  for (size_t s = 0; s < sched.seqs.size(); ++s) m_demand_cache[s].resize(sched.seqs[s].task->ops.size());
  m_slot_base.resize(procs);
  m_span_base.resize(procs);
  m_warps.assign(procs, 0);
  m_active.assign(procs, 0);
  m_busy_since.assign(procs, 0);
  m_warp_base.resize(procs);
  for (int x = 0; x < procs; ++x) {
    m_math.emplace_back(1.0);
    m_smem.emplace_back(1.0);
    m_port.emplace_back(params.sm_l2_bytes_per_cycle);
    m_span_base[x] = m_res.spans.size();
    for (const GpuStep& st : sched.programs[x]) {
      m_slot_base[x].push_back(m_slot_sync.size());
      GpuSpan span;
      span.sm = x;
      span.start = span.end = -1;
      if (st.barrier) {
        span.barrier = st.index;
        span.pg = sched.barriers[st.index].pg;
      } else {
        const GpuSeq& q = sched.seqs[st.index];
        span.seq = st.index;
        span.pg = q.pg;
        for (size_t k = 0; k < st.slot_tasks.size(); ++k) m_slot_sync.emplace_back();
        m_warps[x] = std::max(m_warps[x], static_cast<int>(st.slot_tasks.size()) * q.slot_warps);
      }
      m_res.spans.push_back(span);
    }
  }
  for (size_t b = 0; b < sched.barriers.size(); ++b) {
    m_barriers.emplace_back();
    const ProcSpan& r = sched.barriers[b].range;
    for (int64_t x = r.begin; x < r.end && x < procs; ++x) m_barriers.back().expected += m_warps[x];
  }
  size_t threads = 0;
  for (int x = 0; x < procs; ++x) m_warp_base[x] = threads, threads += m_warps[x];
  m_waiting.assign(threads, "");
  m_finished.assign(threads, false);
  sc_core::sc_spawn_options opt, method;
  opt.set_stack_size(256 * 1024);
  method.spawn_method();
  for (int x = 0; x < procs; ++x) {
    // The warps that lead a slot in some step: the first of the slot's warps.
    std::vector<bool> leads(static_cast<size_t>(m_warps[x]), false);
    for (const GpuStep& st : sched.programs[x])
      if (!st.barrier) {
        const int w = std::max(1, sched.seqs[st.index].slot_warps);
        for (size_t k = 0; k < st.slot_tasks.size(); ++k) leads[k * static_cast<size_t>(w)] = true;
      }
    for (int w = 0; w < m_warps[x]; ++w) {
      const std::string name = "p" + std::to_string(x) + "_w" + std::to_string(w);
      if (leads[static_cast<size_t>(w)]) {
        sc_core::sc_spawn([this, x, w] { warp_thread(x, w); }, sc_core::sc_gen_unique_name(name.c_str()), &opt);
        continue;
      }
      const size_t f = m_followers.size();
      m_followers.push_back({x, w, m_warp_base[x] + static_cast<size_t>(w)});
      sc_core::sc_spawn([this, f] { follow(f); }, sc_core::sc_gen_unique_name(name.c_str()), &method);
    }
  }
}

bool SmArray::trigger_at(double cycle) {
  const Clock& clk = m_sys.clock;
  const double d = cycle - clk.now();
  if (d <= 0) return false;
  next_trigger(sc_core::sc_time(d * clk.period_ps(), sc_core::SC_PS));
  return true;
}

void SmArray::follow(size_t f) {
  Follower& w = m_followers[f];
  const Clock& clk = m_sys.clock;
  const auto& prog = m_sched.programs[static_cast<size_t>(w.proc)];
  // At the barrier of step w.si, arrived: whether it may leave (released, and its release cycle
  // reached; the step's span ends), else what to wait for is named. The wait until the release
  // is taken once, as Clock::wait_until takes it (one under the time resolution is a delta).
  auto leave_barrier = [&] {
    const BarrierState& b = m_barriers[prog[w.si].index];
    if (w.at == Follower::At::Barrier) {
      if (!b.released) {
        next_trigger(b.event);
        return false;
      }
      w.at = Follower::At::Release;
      if (trigger_at(b.release)) return false;
    }
    m_waiting[w.me].clear();
    m_res.spans[m_span_base[static_cast<size_t>(w.proc)] + w.si].end = clk.now();
    return true;
  };
  // What it waited for has happened: go on from there.
  switch (w.at) {
    case Follower::At::Start:
      w.at = Follower::At::Step;
      if (trigger_at(m_start)) return;
      break;
    case Follower::At::Slot:  // the slot's tasks are done
      ++w.si;
      break;
    case Follower::At::Barrier:
    case Follower::At::Release:
      if (!leave_barrier()) return;
      ++w.si;
      break;
    case Follower::At::Step:
      break;
  }
  w.at = Follower::At::Step;
  for (; w.si < prog.size(); ++w.si) {
    const GpuStep& st = prog[w.si];
    GpuSpan& span = m_res.spans[m_span_base[static_cast<size_t>(w.proc)] + w.si];
    if (st.barrier) {
      span.start = std::max(span.start, clk.now());
      const ProcSpan& r = m_sched.barriers[st.index].range;
      m_waiting[w.me] = "the barrier over processors [" + std::to_string(r.begin) + "," + std::to_string(r.end) +
                        ") before processor group " + std::to_string(m_sched.barriers[st.index].pg);
      m_barriers[st.index].arrive_only(clk, m_p.barrier_cycles, w.last_pg);
      w.at = Follower::At::Barrier;
      if (!leave_barrier()) return;
      w.at = Follower::At::Step;
      continue;
    }
    const GpuSeq& q = m_sched.seqs[st.index];
    w.last_pg = q.pg;
    const int k = w.warp / std::max(1, q.slot_warps);
    if (k >= static_cast<int>(st.slot_tasks.size())) continue;
    SlotSync& ss = m_slot_sync[m_slot_base[static_cast<size_t>(w.proc)][w.si] + static_cast<size_t>(k)];
    if (++ss.arrived == q.slot_warps) ss.joined.notify(sc_core::SC_ZERO_TIME);
    w.at = Follower::At::Slot;
    next_trigger(ss.finished);
    return;
  }
  m_finished[w.me] = true;  // no trigger named: it never runs again
}

void SmArray::busy(int proc, bool start) {
  const double now = m_sys.clock.now();
  if (start) {
    if (m_active[proc]++ == 0) m_busy_since[proc] = now;
  } else if (--m_active[proc] == 0) {
    m_res.sm_busy_cycles[proc] += now - m_busy_since[proc];
  }
}

void SmArray::warp_thread(int proc, int warp) {
  const Clock& clk = m_sys.clock;
  const size_t me = m_warp_base[proc] + warp;
  clk.wait_until(m_start);
  const auto& prog = m_sched.programs[proc];
  int last_pg = -1;
  for (size_t si = 0; si < prog.size(); ++si) {
    const GpuStep& st = prog[si];
    GpuSpan& span = m_res.spans[m_span_base[proc] + si];
    if (st.barrier) {
      span.start = std::max(span.start, clk.now());
      const ProcSpan& r = m_sched.barriers[st.index].range;
      m_waiting[me] = "the barrier over processors [" + std::to_string(r.begin) + "," + std::to_string(r.end) +
                      ") before processor group " + std::to_string(m_sched.barriers[st.index].pg);
      m_barriers[st.index].arrive(clk, m_p.barrier_cycles, last_pg);
      m_waiting[me].clear();
      span.end = clk.now();
      continue;
    }
    const GpuSeq& q = m_sched.seqs[st.index];
    last_pg = q.pg;
    const int k = warp / std::max(1, q.slot_warps);
    if (k >= static_cast<int>(st.slot_tasks.size())) continue;
    SlotSync& ss = m_slot_sync[m_slot_base[proc][si] + k];
    ++ss.arrived;
    if (warp == k * q.slot_warps) {
      while (ss.arrived < q.slot_warps) sc_core::wait(ss.joined);
      run_slot(proc, me, si, k);
      ss.done = true;
      ss.finished.notify(sc_core::SC_ZERO_TIME);
    } else {
      if (ss.arrived == q.slot_warps) ss.joined.notify(sc_core::SC_ZERO_TIME);
      while (!ss.done) sc_core::wait(ss.finished);
    }
  }
  m_finished[me] = true;
}

void SmArray::run_slot(int proc, size_t thread, size_t si, int slot) {
  const GpuStep& st = m_sched.programs[proc][si];
  const GpuSeq& q = m_sched.seqs[st.index];
  const std::vector<int64_t>& tasks = st.slot_tasks[slot];
  const int ti = task_index(q.task);
  const size_t batch = batchable(*q.task) ? std::max<size_t>(1, (tasks.size() + kMaxWakeupsPerSlot - 1) / kMaxWakeupsPerSlot) : 1;
  GpuSpan& span = m_res.spans[m_span_base[proc] + si];
  GpuPgStats& pg = m_res.pgs[q.pg];
  for (size_t i = 0; i < tasks.size(); i += batch) {
    const size_t n = std::min(batch, tasks.size() - i);
    const double t0 = m_sys.clock.now();
    busy(proc, true);
    for (size_t oi = 0; oi < q.task->ops.size(); ++oi) run_op(proc, thread, q, ti, static_cast<int>(oi), &tasks[i], n);
    busy(proc, false);
    const double t1 = m_sys.clock.now();
    span.start = span.start < 0 ? t0 : std::min(span.start, t0);
    span.end = std::max(span.end, t1);
    span.tasks += static_cast<int64_t>(n);
    pg.start = pg.start < 0 ? t0 : std::min(pg.start, t0);
    pg.end = std::max(pg.end, t1);
    pg.work.tasks += static_cast<int64_t>(n);
    m_res.sm_tasks[proc] += static_cast<int64_t>(n);
  }
}

TaskDemand SmArray::demand(const GpuSeq& q, int seq_index, int ti, int oi, int64_t task) {
  const gpu::Op& op = q.task->ops[oi];
  const int64_t n = q.task->num_tasks;
  const double hbm = n > 0 ? m_hbm[ti][oi].bytes / static_cast<double>(n) : 0;
  if (op.type == gpu::OpType::Matmul)
    return task_demand(m_p, op, m_rank, q.slot_warps, q.slot_sram, hbm, task,
                       n > 0 ? m_hbm[ti][oi].wait_bytes / static_cast<double>(n) : 0);
  auto& c = m_demand_cache[seq_index][oi];
  if (!c) c = task_demand(m_p, op, m_rank, q.slot_warps, q.slot_sram, hbm, task);
  return *c;
}

void SmArray::run_op(int proc, size_t thread, const GpuSeq& q, int ti, int oi, const int64_t* ids, size_t n) {
  const gpu::Op& op = q.task->ops[oi];
  if (op.is_virtual || gpu::op_class(op.type) == gpu::OpClass::Virtual) return;
  const Clock& clk = m_sys.clock;
  const double t0 = clk.now();
  // Built only when a wait is recorded: no string of this frame lives across a wait (a thread of
  // a deadlocked plan never resumes, and what its stack owned would never be freed).
  auto where = [&] {
    return " (rank " + std::to_string(m_rank) + ", processor " + std::to_string(proc) + ", " + op.pointer + ")";
  };
  // What the op waits for before it can run.
  switch (op.type) {
    case gpu::OpType::Recv:
      if (op.config.wait.value_or(true)) {
        const int src = peer_of(op, m_rank);
        m_waiting[thread] = "a signal from rank " + std::to_string(src) + where();
        m_sys.semaphores.wait(src, m_rank, channel(op), clk);
      }
      break;
    case gpu::OpType::SendDone: {
      const int dst = peer_of(op, m_rank);
      auto it = m_sys.proxy_done.find({m_rank, dst});
      if (it != m_sys.proxy_done.end()) clk.wait_until(it->second);
      break;
    }
    case gpu::OpType::DeviceSync:
      for (int r = 0; r < m_plan.world_size; ++r)
        if (r != m_rank) m_sys.semaphores.signal(m_rank, r, channel(op), clk.now() + m_sys.links.latency());
      for (int r = 0; r < m_plan.world_size; ++r)
        if (r != m_rank) {
          m_waiting[thread] = "a DeviceSync signal from rank " + std::to_string(r) + where();
          m_sys.semaphores.wait(r, m_rank, channel(op), clk);
        }
      break;
    default:
      if (spins_on_packets(op.type))
        for (size_t i = 0; i < n; ++i)
          for (const TaskKey& src : m_comm.packet_sources(m_rank, ti, oi, ids[i])) {
            m_waiting[thread] = "packets from rank " + std::to_string(std::get<0>(src)) + where();
            const int job = m_sys.packet_job(src);
            if (job >= 0) m_sys.packets.wait_ready(job);
          }
      break;
  }
  m_waiting[thread].clear();
  const double ready = clk.now();
  // The op's demand for the n tasks; shared parts are reserved now, in arrival order.
  const int seq_index = static_cast<int>(&q - m_sched.seqs.data());
  TaskDemand d;
  for (size_t i = 0; i < n; ++i) {
    const TaskDemand one = demand(q, seq_index, ti, oi, ids[i]);
    if (i == 0) {
      d = one;
      continue;
    }
    d.own_cycles += one.own_cycles;
    d.sm_math_cycles += one.sm_math_cycles;
    d.sm_smem_cycles += one.sm_smem_cycles;
    d.l2_bytes += one.l2_bytes;
    d.l2_slice_bytes += one.l2_slice_bytes;
    d.hbm_bytes += one.hbm_bytes;
    d.flops += one.flops;
    d.proxy_put_bytes += one.proxy_put_bytes;
    for (size_t j = 0; j < one.link_bytes.size() && j < d.link_bytes.size(); ++j) d.link_bytes[j].second += one.link_bytes[j].second;
  }
  double end = ready + d.own_cycles;
  Limiter lim = d.own_limiter;
  auto consider = [&](double t, Limiter l) {
    if (t > end) end = t, lim = l;
  };
  consider(m_math[proc].reserve(ready, d.sm_math_cycles), Limiter::Math);
  consider(m_smem[proc].reserve(ready, d.sm_smem_cycles), Limiter::Smem);
  consider(m_port[proc].reserve(ready, d.l2_bytes), Limiter::Port);
  consider(m_l2.reserve(ready, d.l2_slice_bytes), Limiter::L2);
  consider(m_hbm_server.reserve(ready, d.hbm_bytes), Limiter::Hbm);
  for (const auto& [dst, bytes] : d.link_bytes) consider(m_sys.links.transfer(m_rank, dst, ready, bytes), Limiter::Link);
  clk.wait_until(end);
  // What the op leaves behind for other ranks.
  if (op.type == gpu::OpType::Send) {
    const int dst = peer_of(op, m_rank);
    if (d.proxy_put_bytes > 0 || channel(op) != "Sm") {
      const double landed = m_sys.links.transfer(m_rank, dst, clk.now() + m_p.proxy_latency_cycles, d.proxy_put_bytes);
      double& pd = m_sys.proxy_done[{m_rank, dst}];
      pd = std::max(pd, landed);
      if (op.config.signal.value_or(true)) m_sys.semaphores.signal(m_rank, dst, channel(op), landed);
    } else if (op.config.signal.value_or(false)) {
      m_sys.semaphores.signal(m_rank, dst, channel(op), clk.now() + m_sys.links.latency());
    }
  }
  if (m_comm.is_packet_source(m_rank, ti, oi))
    for (size_t i = 0; i < n; ++i) {
      const int job = m_sys.packet_job({m_rank, ti, oi, ids[i]});
      if (job >= 0) m_sys.packets.finish_at(job, clk.now());
    }
  const double wait = ready - t0, exec = clk.now() - ready;
  add(m_res.ops[ti][oi], d, n, wait, exec, lim);
  add(m_res.pgs[q.pg].work, d, 0, wait, exec, lim);
}

GpuRankResult SmArray::result() const {
  GpuRankResult r = m_res;
  for (const GpuSpan& s : r.spans) r.end_cycles = std::max(r.end_cycles, s.end);
  r.hbm_bytes = m_hbm_server.total();
  r.hbm_busy_cycles = m_hbm_server.busy_cycles();
  r.l2_bytes = m_l2.total();
  r.l2_busy_cycles = m_l2.busy_cycles();
  r.link_out_bytes = m_sys.links.bytes_out(m_rank);
  for (const BarrierState& b : m_barriers) {
    r.barrier_release.push_back(b.released ? b.release : -1);
    r.barrier_last_pg.push_back(b.last_pg);
  }
  return r;
}

std::string SmArray::stuck_report() const {
  // Waits on other ranks first (the cause), then barriers and slots (the consequence).
  std::string s;
  int stuck = 0, shown = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t x = 0; x < m_warps.size(); ++x)
      for (int w = 0; w < m_warps[x]; ++w) {
        const size_t i = m_warp_base[x] + w;
        if (m_finished[i]) continue;
        if (pass == 0) ++stuck;
        const bool barrier = m_waiting[i].rfind("the barrier", 0) == 0;
        if (m_waiting[i].empty() || barrier != (pass == 1) || shown >= 3) continue;
        ++shown;
        s += "  rank " + std::to_string(m_rank) + " processor " + std::to_string(x) + " warp " + std::to_string(w) +
             " waits for " + m_waiting[i] + "\n";
      }
  if (stuck > shown && stuck > 0)
    s += "  (" + std::to_string(stuck) + " warps of rank " + std::to_string(m_rank) + " never finished)\n";
  return s;
}

}  // namespace npusim::models
