#include "sim/mapping/gpu_schedule.h"

#include <algorithm>
#include <list>
#include <map>

#include "sim/ir/error.h"

namespace npusim::mapping {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

ProcSpan intersect(const ProcSpan& a, const ProcSpan& b) {
  return {std::max(a.begin, b.begin), std::min(a.end, b.end)};
}

}  // namespace

ProcSpan span_of(const gpu::Range& r) { return {r.begin, std::max(r.begin, r.end)}; }

std::vector<std::vector<ProcSpan>> plan_barriers(const gpu::Program& p) {
  std::vector<std::vector<ProcSpan>> out(p.processor_groups.size());
  std::list<ProcSpan> unsynced;
  for (size_t i = 0; i < p.processor_groups.size(); ++i) {
    const ProcSpan pr = span_of(p.processor_groups[i].processor_range);
    if (pr.size() == 0) continue;
    bool need_sync = false;
    for (auto it = unsynced.begin(); it != unsynced.end();) {
      const int64_t common = intersect(pr, *it).size();
      if (common == 0) {
        ++it;
        continue;
      }
      if (common < it->size()) {
        out[i].push_back(*it);  // U reaches outside P: U's processors wait for each other
        if (common < pr.size()) need_sync = true;
      } else {
        need_sync = true;
      }
      it = unsynced.erase(it);
    }
    if (need_sync) out[i].push_back(pr);
    unsynced.push_back(pr);
  }
  return out;
}

std::vector<int64_t> slot_tasks(const TaskSeq& s, int64_t proc, int64_t slot) {
  std::vector<int64_t> ids;
  const int64_t n = s.n_procs();
  if (n <= 0 || proc < s.proc_begin || proc >= s.proc_end || slot < 0 || slot >= s.num_slots) return ids;
  const int64_t g = std::max<int64_t>(1, s.granularity);
  const int64_t p = ((proc - s.proc_current) % n + n) % n;
  for (int64_t t = slot;; t += s.num_slots) {
    const int64_t id = s.task_begin + p * g + t % g + (t / g) * g * n;
    if (id >= s.task_end) break;
    ids.push_back(id);
  }
  return ids;
}

std::vector<TaskSeq> resource_group_seqs(const gpu::ResourceGroup& rg, const gpu::Program& p) {
  std::vector<TaskSeq> seqs;
  const ProcSpan pr = span_of(rg.processor_range);
  int64_t current = pr.begin;
  for (const gpu::TaskGroup& tg : rg.task_groups) {
    const gpu::TaskInfo* task = p.find_task(tg.task_id);
    if (!task) throw InternalError("resource_group_seqs: unknown TaskId " + std::to_string(tg.task_id));
    TaskSeq s;
    s.proc_begin = pr.begin;
    s.proc_end = pr.end;
    s.proc_current = current;
    s.task_begin = tg.task_range.begin;
    s.task_end = std::max(tg.task_range.begin, tg.task_range.end);
    s.granularity = std::max<int64_t>(1, tg.granularity);
    s.num_slots = gpu::num_slots(rg, *task);
    seqs.push_back(s);
    if (pr.size() > 0)
      current = pr.begin + ((current - pr.begin) + ceil_div(s.task_end - s.task_begin, s.granularity)) % pr.size();
  }
  return seqs;
}

GpuSchedule build_schedule(const gpu::Program& p) {
  GpuSchedule s;
  s.num_processors = p.num_processors;
  s.warps_per_processor = p.num_warps_per_processor;
  s.programs.resize(std::max(0, p.num_processors));
  const auto barriers = plan_barriers(p);
  std::map<std::pair<int64_t, int64_t>, int> state_ids;
  for (size_t pg = 0; pg < p.processor_groups.size(); ++pg) {
    for (const ProcSpan& r : barriers[pg]) {
      const int state = state_ids.emplace(std::make_pair(r.begin, r.end), static_cast<int>(state_ids.size())).first->second;
      const int b = static_cast<int>(s.barriers.size());
      s.barriers.push_back({r, static_cast<int>(pg), state});
      for (int64_t x = r.begin; x < r.end && x < p.num_processors; ++x) s.programs[x].push_back({true, b, {}});
    }
    const gpu::ProcessorGroup& g = p.processor_groups[pg];
    if (span_of(g.processor_range).size() == 0) continue;  // codegen skips it
    for (size_t ri = 0; ri < g.resource_groups.size(); ++ri) {
      const gpu::ResourceGroup& rg = g.resource_groups[ri];
      const std::vector<TaskSeq> seqs = resource_group_seqs(rg, p);
      for (size_t ti = 0; ti < seqs.size(); ++ti) {
        GpuSeq q;
        q.pg = static_cast<int>(pg);
        q.rg = static_cast<int>(ri);
        q.tg = static_cast<int>(ti);
        q.task = p.find_task(rg.task_groups[ti].task_id);
        q.seq = seqs[ti];
        q.slot_warps = q.task->num_warps;
        q.slot_sram = q.seq.num_slots > 0 ? rg.sram_range.size() / q.seq.num_slots : 0;
        const int idx = static_cast<int>(s.seqs.size());
        s.seqs.push_back(q);
        for (int64_t x = q.seq.proc_begin; x < q.seq.proc_end && x < p.num_processors; ++x) {
          GpuStep step{false, idx, {}};
          bool any = false;
          for (int64_t k = 0; k < q.seq.num_slots; ++k) {
            step.slot_tasks.push_back(slot_tasks(q.seq, x, k));
            any = any || !step.slot_tasks.back().empty();
          }
          if (any) s.programs[x].push_back(std::move(step));
        }
      }
    }
  }
  return s;
}

}  // namespace npusim::mapping
