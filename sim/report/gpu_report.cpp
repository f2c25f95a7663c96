#include "sim/report/gpu_report.h"

#include "sim/report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

namespace npusim::report {

namespace {

std::string bound_of(const models::LimiterCycles& c) { return models::bound_of(c).name; }

// "T5 Matmul", or with the IR origins "T5 Matmul Conv_0 (conv2d)".
std::string pg_ops(const gpu::Program& p, const gpu::ProcessorGroup& pg, const std::map<std::string, std::string>* ir_ops) {
  std::string s;
  std::set<int64_t> seen;
  for (const gpu::ResourceGroup& rg : pg.resource_groups)
    for (const gpu::TaskGroup& tg : rg.task_groups) {
      if (!seen.insert(tg.task_id).second) continue;
      const gpu::TaskInfo* t = p.find_task(tg.task_id);
      std::string ops;
      for (const gpu::Op& op : t->ops) {
        if (op.is_virtual) continue;
        ops += (ops.empty() ? "" : "+") + std::string(gpu::op_type_name(op.type));
        if (!ir_ops) continue;
        auto it = ir_ops->find(op.name);
        ops += " " + op.name + (it != ir_ops->end() ? " (" + it->second + ")" : "");
      }
      s += (s.empty() ? "" : ", ") + std::string("T") + std::to_string(t->id) + " " + ops;
    }
  return s;
}

// Marks the groups whose end decides the rank's end: from the group that ends last, step to
// the earlier overlapping group that ended last before it started, and so on.
void mark_critical(const gpu::Program& p, std::vector<GpuPgRow>& rows, double slack_us) {
  int cur = -1;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].tasks > 0 && (cur < 0 || rows[i].end_us > rows[cur].end_us)) cur = static_cast<int>(i);
  while (cur >= 0) {
    rows[cur].critical = true;
    const gpu::Range& r = p.processor_groups[cur].processor_range;
    int prev = -1;
    for (int j = 0; j < cur; ++j) {
      const gpu::Range& q = p.processor_groups[j].processor_range;
      if (rows[j].tasks == 0 || q.end <= r.begin || r.end <= q.begin) continue;
      if (rows[j].end_us > rows[cur].start_us + slack_us) continue;
      if (prev < 0 || rows[j].end_us >= rows[prev].end_us) prev = j;
    }
    cur = prev;
  }
}

}  // namespace

GpuReport build_gpu_report(const std::string& workload, const std::vector<gpu::Program>& plans,
                           const models::GpuSimResult& sim, const config::HwConfig& cfg, const models::GpuParams& params,
                           const std::map<std::string, std::string>* ir_ops) {
  GpuReport r;
  r.workload = workload;
  r.hw_name = cfg.get_string("name");
  r.hw_source = cfg.source();
  r.clock_mhz = sim.clock_mhz;
  r.num_sms = params.num_sms;
  const double us = 1.0 / sim.clock_mhz;  // cycles -> microseconds
  r.launch_us = sim.launch_cycles * us;
  r.total_us = sim.end_cycles * us;
  for (const auto& kv : cfg.resolved())
    if (kv.first.rfind("gpu.", 0) == 0 || kv.first == "name" || kv.first == "clock_mhz") r.config.push_back(kv);
  for (const models::GpuRankResult& res : sim.ranks) {
    const gpu::Program& p = plans.at(res.rank);
    GpuRankReport rr;
    rr.rank = res.rank;
    rr.plan = p.source;
    rr.end_us = std::max(res.end_cycles, sim.launch_cycles) * us;
    rr.kernel_us = rr.end_us - r.launch_us;
    rr.hbm_bytes = res.hbm_bytes;
    rr.l2_bytes = res.l2_bytes;
    rr.link_out_bytes = res.link_out_bytes;
    const double kernel_cycles = std::max(1e-9, res.end_cycles - sim.launch_cycles);
    rr.hbm_utilization = res.hbm_busy_cycles / kernel_cycles;
    double busy = 0;
    for (double b : res.sm_busy_cycles) {
      busy += b;
      rr.sm_busy_us.push_back(b * us);
    }
    rr.sm_occupancy = busy / (kernel_cycles * std::max(1, r.num_sms));
    // Processor groups.
    std::vector<double> span_busy(p.processor_groups.size(), 0);
    for (const models::GpuSpan& s : res.spans)
      if (s.seq >= 0 && s.start >= 0) span_busy[s.pg] += s.end - s.start;
    for (size_t i = 0; i < p.processor_groups.size(); ++i) {
      const models::GpuPgStats& st = res.pgs[i];
      GpuPgRow row;
      row.index = static_cast<int>(i);
      const gpu::Range& pr = p.processor_groups[i].processor_range;
      row.processors = "[" + std::to_string(pr.begin) + "," + std::to_string(pr.end) + ")";
      row.ops = pg_ops(p, p.processor_groups[i], ir_ops);
      row.tasks = st.work.tasks;
      if (st.start >= 0) {
        row.start_us = st.start * us;
        row.end_us = st.end * us;
        row.time_us = row.end_us - row.start_us;
        const double cycles = st.end - st.start;
        row.share = rr.kernel_us > 0 ? row.time_us / rr.kernel_us : 0;
        row.occupancy = cycles > 0 ? std::min(1.0, span_busy[i] / (cycles * std::max<int64_t>(1, pr.end - pr.begin))) : 0;
        row.tflops = row.time_us > 0 ? st.work.flops / (row.time_us * 1e6) : 0;
      }
      row.flops = st.work.flops;
      row.hbm_bytes = st.work.hbm_bytes;
      row.l2_bytes = st.work.l2_bytes;
      row.link_bytes = st.work.link_bytes;
      row.bound = bound_of(st.work.limiter_cycles);
      rr.flops += st.work.flops;
      rr.pgs.push_back(row);
    }
    mark_critical(p, rr.pgs, params.barrier_ns / 1000.0 + 0.01);
    // Ops.
    for (size_t ti = 0; ti < p.task_infos.size(); ++ti)
      for (size_t oi = 0; oi < p.task_infos[ti].ops.size(); ++oi) {
        const gpu::Op& op = p.task_infos[ti].ops[oi];
        const models::GpuWork& w = res.ops[ti][oi];
        if (op.is_virtual || w.tasks == 0) continue;
        GpuOpRow o;
        o.task_info = p.task_infos[ti].id;
        o.op_index = static_cast<int>(oi);
        o.name = op.name;
        o.type = gpu::op_type_name(op.type);
        if (ir_ops) {
          auto it = ir_ops->find(op.name);
          if (it != ir_ops->end()) o.ir_op = it->second;
        }
        o.tasks = w.tasks;
        o.slot_us = w.slot_cycles * us;
        o.flops = w.flops;
        o.hbm_bytes = w.hbm_bytes;
        o.l2_bytes = w.l2_bytes;
        o.link_bytes = w.link_bytes;
        o.bound = bound_of(w.limiter_cycles);
        rr.ops.push_back(o);
      }
    r.ranks.push_back(std::move(rr));
  }
  return r;
}

std::string format_gpu_table(const GpuReport& r) {
  std::ostringstream o;
  o << "workload: " << r.workload << "\n";
  o << "hardware: " << r.hw_name << " (" << r.hw_source << "), " << r.num_sms << " SMs at " << fmt("%.0f", r.clock_mhz)
    << " MHz\n";
  o << "time: " << fmt("%.2f", r.total_us) << " us (kernel " << fmt("%.2f", r.total_us - r.launch_us)
    << " us + launch " << fmt("%.2f", r.launch_us) << " us)\n";
  // One table for a single rank; with many ranks, a line per rank and the slowest rank's table.
  size_t detail = 0;
  for (size_t i = 0; i < r.ranks.size(); ++i)
    if (r.ranks[i].end_us > r.ranks[detail].end_us) detail = i;
  if (r.ranks.size() > 1) {
    o << "\nrank  end_us     HBM_GB   link_out_GB  SM_occupancy  plan\n";
    for (const GpuRankReport& k : r.ranks)
      o << fmt("%4.0f", k.rank) << "  " << fmt("%-9.2f", k.end_us) << "  " << fmt("%-7.3f", k.hbm_bytes / 1e9) << "  "
        << fmt("%-11.4f", k.link_out_bytes / 1e9) << "  " << fmt("%-12.3f", k.sm_occupancy) << "  " << k.plan << "\n";
  }
  const GpuRankReport& k = r.ranks[detail];
  o << "\nprocessor groups" << (r.ranks.size() > 1 ? " of rank " + std::to_string(k.rank) : std::string()) << " ("
    << k.plan << "); * = critical path\n";
  o << "  pg  processors   tasks    start_us   time_us  share   occ    TFLOPS   HBM_MB    L2_MB  link_MB  bound    ops\n";
  for (const GpuPgRow& g : k.pgs) {
    o << (g.critical ? "*" : " ") << fmt("%3.0f", g.index) << "  ";
    char line[512];
    std::snprintf(line, sizeof line, "%-11s %7lld  %9.2f  %8.2f  %5.1f%%  %4.2f  %7.1f  %7.1f  %7.1f  %7.2f  %-7s  %s\n",
                  g.processors.c_str(), static_cast<long long>(g.tasks), g.start_us, g.time_us, 100 * g.share, g.occupancy,
                  g.tflops, g.hbm_bytes / 1e6, g.l2_bytes / 1e6, g.link_bytes / 1e6, g.bound.c_str(), g.ops.c_str());
    o << line;
  }
  const bool lowered = std::any_of(k.ops.begin(), k.ops.end(), [](const GpuOpRow& op) { return !op.ir_op.empty(); });
  if (lowered)  // a workload lowered from the IR: the IR op kind and longer names
    o << "\nops\n  task.op  type          ir_op              name                              tasks   slot_us     GFLOP   "
         "HBM_MB    L2_MB  bound\n";
  else
    o << "\nops\n  task.op  type                   name                   tasks   slot_us     GFLOP   HBM_MB    L2_MB  bound\n";
  for (const GpuOpRow& op : k.ops) {
    char line[512];
    if (lowered)
      std::snprintf(line, sizeof line, "  %4lld.%-2d  %-12s  %-17s  %-32s %7lld  %8.2f  %8.2f  %7.1f  %7.1f  %s\n",
                    static_cast<long long>(op.task_info), op.op_index, op.type.c_str(), op.ir_op.c_str(),
                    op.name.substr(0, 32).c_str(), static_cast<long long>(op.tasks), op.slot_us, op.flops / 1e9,
                    op.hbm_bytes / 1e6, op.l2_bytes / 1e6, op.bound.c_str());
    else
      std::snprintf(line, sizeof line, "  %4lld.%-2d  %-21s  %-21s %7lld  %8.2f  %8.2f  %7.1f  %7.1f  %s\n",
                    static_cast<long long>(op.task_info), op.op_index, op.type.c_str(), op.name.substr(0, 21).c_str(),
                    static_cast<long long>(op.tasks), op.slot_us, op.flops / 1e9, op.hbm_bytes / 1e6, op.l2_bytes / 1e6,
                    op.bound.c_str());
    o << line;
  }
  o << "\ntotal: " << fmt("%.3f", k.flops / 1e12) << " TFLOP, " << fmt("%.1f", k.hbm_bytes / 1e6) << " MB HBM ("
    << fmt("%.0f", 100 * k.hbm_utilization) << "% busy), " << fmt("%.1f", k.l2_bytes / 1e6) << " MB L2, SM occupancy "
    << fmt("%.2f", k.sm_occupancy) << "\n";
  return o.str();
}

nlohmann::ordered_json gpu_to_json(const GpuReport& r) {
  nlohmann::ordered_json j;
  j["workload"] = r.workload;
  j["hw"] = {{"name", r.hw_name}, {"source", r.hw_source}, {"clock_mhz", r.clock_mhz}, {"num_sms", r.num_sms}};
  j["totals"] = {{"device", "gpu"},
                 {"time_us", round3(r.total_us)},
                 {"cycles", std::llround(r.total_us * r.clock_mhz)},
                 {"launch_us", round3(r.launch_us)},
                 {"kernel_us", round3(r.total_us - r.launch_us)}, {"ranks", r.ranks.size()}};
  j["ranks"] = nlohmann::ordered_json::array();
  for (const GpuRankReport& k : r.ranks) {
    nlohmann::ordered_json rk;
    rk["rank"] = k.rank;
    rk["plan"] = k.plan;
    rk["end_us"] = round3(k.end_us);
    rk["kernel_us"] = round3(k.kernel_us);
    rk["flops"] = k.flops;
    rk["hbm_bytes"] = std::round(k.hbm_bytes);
    rk["hbm_utilization"] = round3(k.hbm_utilization);
    rk["l2_bytes"] = std::round(k.l2_bytes);
    rk["link_out_bytes"] = std::round(k.link_out_bytes);
    rk["sm_occupancy"] = round3(k.sm_occupancy);
    rk["sm_busy_us"] = nlohmann::ordered_json::array();
    for (double b : k.sm_busy_us) rk["sm_busy_us"].push_back(round3(b));
    rk["processor_groups"] = nlohmann::ordered_json::array();
    for (const GpuPgRow& g : k.pgs)
      rk["processor_groups"].push_back({{"index", g.index}, {"processors", g.processors}, {"ops", g.ops},
                                        {"tasks", g.tasks}, {"start_us", round3(g.start_us)}, {"end_us", round3(g.end_us)},
                                        {"time_us", round3(g.time_us)}, {"share", round3(g.share)},
                                        {"occupancy", round3(g.occupancy)}, {"tflops", round3(g.tflops)},
                                        {"flops", g.flops}, {"hbm_bytes", std::round(g.hbm_bytes)},
                                        {"l2_bytes", std::round(g.l2_bytes)}, {"link_bytes", std::round(g.link_bytes)},
                                        {"bound", g.bound}, {"critical", g.critical}});
    rk["ops"] = nlohmann::ordered_json::array();
    for (const GpuOpRow& op : k.ops) {
      nlohmann::ordered_json row = {{"task_info", op.task_info}, {"op", op.op_index}, {"name", op.name}, {"type", op.type}};
      if (!op.ir_op.empty()) row["ir_op"] = op.ir_op;
      row["tasks"] = op.tasks;
      row["slot_us"] = round3(op.slot_us);
      row["flops"] = op.flops;
      row["hbm_bytes"] = std::round(op.hbm_bytes);
      row["l2_bytes"] = std::round(op.l2_bytes);
      row["link_bytes"] = std::round(op.link_bytes);
      row["bound"] = op.bound;
      rk["ops"].push_back(row);
    }
    j["ranks"].push_back(rk);
  }
  nlohmann::ordered_json c;
  for (const auto& [k, v] : r.config) c[k] = v;
  j["config"] = c;
  return j;
}

std::string gpu_to_csv(const GpuReport& r) {
  std::ostringstream o;
  o << "kind,rank,index,name,processors,tasks,start_us,end_us,time_us,share,occupancy,tflops,flops,hbm_bytes,"
       "l2_bytes,link_bytes,bound,critical,ir_op\n";
  auto q = [](const std::string& s) { return "\"" + s + "\""; };
  for (const GpuRankReport& k : r.ranks) {
    for (const GpuPgRow& g : k.pgs)
      o << "pg," << k.rank << "," << g.index << "," << q(g.ops) << "," << q(g.processors) << "," << g.tasks << ","
        << fmt("%.3f", g.start_us) << "," << fmt("%.3f", g.end_us) << "," << fmt("%.3f", g.time_us) << ","
        << fmt("%.4f", g.share) << "," << fmt("%.4f", g.occupancy) << "," << fmt("%.3f", g.tflops) << ","
        << fmt("%.0f", g.flops) << "," << fmt("%.0f", g.hbm_bytes) << "," << fmt("%.0f", g.l2_bytes) << ","
        << fmt("%.0f", g.link_bytes) << "," << g.bound << "," << (g.critical ? 1 : 0) << ",\n";
    for (const GpuOpRow& op : k.ops)
      o << "op," << k.rank << "," << op.task_info << "." << op.op_index << "," << q(op.type + " " + op.name) << ",,"
        << op.tasks << ",,," << fmt("%.3f", op.slot_us) << ",,,," << fmt("%.0f", op.flops) << ","
        << fmt("%.0f", op.hbm_bytes) << "," << fmt("%.0f", op.l2_bytes) << "," << fmt("%.0f", op.link_bytes) << ","
        << op.bound << ",," << op.ir_op << "\n";
  }
  return o.str();
}

}  // namespace npusim::report
