// A compiled Gemini program, instruction by instruction (docs/timing.md#compiled-programs).
#include "sim/engine/isa_program.h"

#include <algorithm>
#include <array>
#include <set>
#include <cmath>
#include <initializer_list>

#include "frontends/zebu_trace/py_literal.h"
#include "models/memory/dram_timing.h"
#include "models/npu/dma_timing.h"
#include "models/npu/vector_processor_timing.h"
#include "sim/ir/error.h"

namespace npusim::engine {

namespace zebu = frontends::zebu;

IsaUnits IsaUnits::read(const config::HwConfig& c) {
  IsaUnits u;
  u.pe = models::PeArrayParams::read(c);
  u.vp_lanes = models::VpParams::read(c).lanes;
  const auto dma = models::DmaParams::read(c);
  u.dma_setup_cycles = dma.setup_cycles;
  u.dram_bytes_per_cycle = models::DramParams::read(c, dma.burst_bytes, dma.segment_overhead_cycles).bytes_per_cycle;
  u.isa = models::IsaParams::read(c);
  return u;
}

namespace {

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

}  // namespace

std::string isa_queue(const std::string& name) {
  if (starts(name, "ct_")) return "CT";
  if (starts(name, "lw")) return "LW";
  if (starts(name, "ld")) return "LD";
  if (starts(name, "pe_")) return "PE";
  if (starts(name, "vp_")) return "VP";
  if (starts(name, "dt_")) return "DT";
  if (starts(name, "st")) return "ST";
  if (starts(name, "si")) return "SI";
  return "SO";  // the reader admits no other family
}

namespace {

bool is_cfg(const std::string& name) { return name.find("_cfg") != std::string::npos; }

[[noreturn]] void bad(const zebu::Trace& p, const zebu::Instruction& i, const std::string& what) {
  throw InputError(p.source, "line " + std::to_string(i.line), i.name + ": " + what);
}

// A field's value in a message: bytes that are not UTF-8 replaced, long values cut.
std::string shown(const json::Json& v) {
  std::string t = v.dump(-1, ' ', false, json::Json::error_handler_t::replace);
  return t.size() > 60 ? t.substr(0, 57) + "..." : t;
}

// Any dimension of a tile: 1 ... 2^20 (a tile is far smaller; products stay inside int64).
constexpr int64_t kMaxDim = int64_t{1} << 20;

std::vector<int64_t> dims(const zebu::Trace& p, const zebu::Instruction& i, const json::Json& params, const char* key,
                          size_t count, int64_t lo = 1) {
  if (!params.contains(key)) bad(p, i, std::string("missing '") + key + "'");
  const json::Json& v = params[key];
  if (!v.is_array() || v.size() != count)
    bad(p, i, std::string("'") + key + "' must be a list of " + std::to_string(count) + " integers");
  std::vector<int64_t> out;
  for (const auto& e : v) {
    const auto x = zebu::enum_or_int(e);
    if (!x || *x < lo || *x > kMaxDim)
      bad(p, i, std::string("'") + key + "' holds " + shown(e) + ": expected integers " + std::to_string(lo) + " ... " +
                    std::to_string(kMaxDim));
    out.push_back(*x);
  }
  return out;
}

int64_t integer(const zebu::Trace& p, const zebu::Instruction& i, const json::Json& params, const char* key, int64_t lo,
                int64_t hi) {
  if (!params.contains(key)) bad(p, i, std::string("missing '") + key + "'");
  const auto x = zebu::enum_or_int(params[key]);
  if (!x || *x < lo || *x > hi)
    bad(p, i, std::string("'") + key + "' is " + shown(params[key]) + ": expected an integer " + std::to_string(lo) + " ... " +
                  std::to_string(hi));
  return *x;
}

// Bytes of one element of a DataFmt (ISA_Format.md: INT8 = 1, FP16 = 3), by its name when the
// enum is written out.
int64_t elem_bytes(const zebu::Trace& p, const zebu::Instruction& i, const json::Json& params, const char* key) {
  if (!params.contains(key)) bad(p, i, std::string("missing '") + key + "'");
  const json::Json& v = params[key];
  if (v.is_object() && v.contains("enum") && v["enum"].is_string()) {
    const std::string n = v["enum"].get<std::string>();
    if (n.find("INT8") != std::string::npos || n.find("FP8") != std::string::npos) return 1;
    if (n.find("16") != std::string::npos) return 2;
    if (n.find("32") != std::string::npos) return 4;
  } else if (const auto x = zebu::enum_or_int(v)) {
    if (*x == 1) return 1;
    if (*x == 3) return 2;
  }
  bad(p, i, std::string("'") + key + "' is " + shown(v) + ": not a data format the model knows (INT8, FP16, BF16, FP32)");
}

// Whatever the fields, an instruction's cycles and bytes stay far inside int64: the product of
// its padded extents (an upper bound of every term of its formula) is at most 10^15.
void guard(const zebu::Trace& p, const zebu::Instruction& i, std::initializer_list<int64_t> extents) {
  double product = 1;
  for (int64_t e : extents) product *= static_cast<double>(e);
  if (product > 1e15) bad(p, i, "its tile's extents multiply to more than 10^15 (elements x taps): not a tile a core runs");
}

const json::Json& cfg(const zebu::Trace& p, const zebu::Instruction& i, const std::map<std::string, const json::Json*>& last,
                      const char* name) {
  auto it = last.find(name);
  if (it == last.end()) bad(p, i, std::string("no ") + name + " before it: the instruction has no configuration");
  return *it->second;
}

}  // namespace

std::vector<int64_t> isa_instruction_cycles(const zebu::Trace& program, const IsaUnits& u, std::vector<IsaInstructionWork>* work) {
  const auto& ins = program.instructions;
  std::map<int, int64_t> vp_per_workload;  // vector instructions of a workload share one image's stream
  for (const auto& i : ins)
    if (starts(i.name, "vp_") && !is_cfg(i.name)) ++vp_per_workload[i.wkl];
  std::map<std::string, const json::Json*> last;  // the latest *_cfg* of each name
  std::map<int, bool> weights_in_l2;              // layers whose weights a lw_mov SS=0 streams from L2
  std::vector<int64_t> cycles(ins.size(), 0);
  std::vector<IsaInstructionWork> w_of(ins.size());
  for (size_t k = 0; k < ins.size(); ++k) {
    const auto& i = ins[k];
    const json::Json& prm = i.params;
    const std::string& n = i.name;
    if (is_cfg(n)) {
      last[n] = &i.params;
      cycles[k] = u.isa.issue_cycles;
    } else if (starts(n, "ct_")) {
      cycles[k] = u.isa.control_cycles;
    } else if (n == "lda_mov" || n == "sta_mov") {
      const auto t = dims(program, i, prm, "Tile", 4);
      const int64_t e = elem_bytes(program, i, cfg(program, i, last, n == "lda_mov" ? "lda_cfg" : "sta_cfg"), "DF");
      guard(program, i, {t[0], t[1] * e + models::kIsaPixelAlignBytes, t[2], t[3]});
      const int64_t bytes = models::isa_activation_bytes(t[0], t[1], t[2], t[3], e);
      w_of[k].dram_bytes = w_of[k].sram_bytes = bytes;
      cycles[k] = models::isa_dma_cycles(bytes, u.dma_setup_cycles, u.dram_bytes_per_cycle);
    } else if (n == "ldw_mov" || n == "lw_mov") {
      const auto w = dims(program, i, prm, "Wsize", 4);
      // lw_mov SS=0 fills the weight buffer from L2: no transfer of its own, the pe_conv streams
      // the weights out of L2 while it runs (docs/calibration_data.md section 1).
      if (n == "lw_mov" && integer(program, i, prm, "SS", 0, 1) == 0) {
        for (int l : i.clyr) weights_in_l2[l] = true;
        continue;
      }
      guard(program, i, {w[0], w[1] + u.pe.channel_align + models::kIsaQuantParamBytesPerChannel, w[2], w[3]});
      const int64_t bytes = models::isa_weight_bytes(w[0], w[1], w[2], w[3], u.pe.channel_align);
      w_of[k].dram_bytes = w_of[k].sram_bytes = bytes;
      cycles[k] = models::isa_dma_cycles(bytes, u.dma_setup_cycles, u.dram_bytes_per_cycle);
    } else if (n == "dt_cal") {
      cycles[k] = 0;  // measured 0 on every trace: the layout change rides on the next transfer
      const auto t = dims(program, i, prm, "Tile", 4);
      const int64_t e = elem_bytes(program, i, cfg(program, i, last, "dt_cfg"), "DF");
      guard(program, i, {t[0], t[1] * e, t[2], t[3]});
      w_of[k].sram_bytes = 2 * t[0] * t[1] * t[2] * t[3] * e;  // read and written back
    } else if (n == "pe_conv") {
      const json::Json& tp = cfg(program, i, last, "pe_cfg_tp");
      const json::Json& pm = cfg(program, i, last, "pe_cfg_pm");
      const auto t = dims(program, i, tp, "Tile", 5);
      const auto kernel = dims(program, i, tp, "KERNEL", 2);
      const auto mti = dims(program, i, tp, "MTI", 2, 0);
      const auto xy = dims(program, i, pm, "XYmode", 2, 0);
      if (xy[1] > 4) bad(program, i, "pe_cfg_pm XYmode[1] is " + std::to_string(xy[1]) + ": not a cut axis (W 0, H 1, N 2, K 3, C 4)");
      models::IsaPeConv c;
      c.n = t[0], c.k = t[1], c.c = t[2], c.h = t[3], c.w = t[4];
      c.r = kernel[0], c.s = kernel[1];
      c.mtk0 = integer(program, i, tp, "MTK0", 1, kMaxDim);
      c.mini_h = mti[0] + 1, c.mini_w = mti[1] + 1;
      c.cut = static_cast<models::IsaCutAxis>(xy[1]);
      c.weights_from_l2 = weights_in_l2.count(i.slyr) > 0;
      guard(program, i, {c.n, c.k + u.pe.rows * c.mtk0, c.c + u.pe.channel_align + models::kIsaQuantParamBytesPerChannel,
                         c.h + c.mini_h, c.w + c.mini_w, c.r, c.s});
      cycles[k] = models::isa_pe_conv_cycles(u.pe, u.isa, c).total;
      const json::Json& fm = cfg(program, i, last, "pe_cfg_fm");
      const int64_t e_in = elem_bytes(program, i, fm, "SF"), e_out = elem_bytes(program, i, fm, "DF");
      const auto stride = dims(program, i, pm, "STRIDE", 2);
      guard(program, i, {c.n, c.c * e_in + c.k * e_out + c.k * c.r * c.s, c.h * stride[0], c.w * stride[1]});
      w_of[k].macs = c.n * c.k * c.c * c.h * c.w * c.r * c.s;
      w_of[k].mac_dtype = e_in == 1 ? ir::DType::Int8 : e_in == 2 ? ir::DType::Float16 : ir::DType::Float32;
      // The input pixels the outputs read (stride apart), the outputs, the weights once.
      w_of[k].sram_bytes = c.n * c.c * c.h * stride[0] * c.w * stride[1] * e_in + c.n * c.k * c.h * c.w * e_out + c.k * c.c * c.r * c.s;
    } else if (n == "vp_self" || n == "vp_pool") {
      const json::Json& fm = cfg(program, i, last, "vp_cfg_fm");
      const auto s = dims(program, i, fm, "STile", 3);
      const int64_t e = std::max(elem_bytes(program, i, fm, "IDF"), elem_bytes(program, i, fm, "ODF"));
      guard(program, i, {s[0] * e + u.vp_lanes, s[1], s[2]});
      cycles[k] = models::isa_vp_cycles(u.vp_lanes, u.isa, s[0], s[1], s[2], e, vp_per_workload[i.wkl]);
      const auto d = dims(program, i, fm, "DTile", 3);
      guard(program, i, {d[0] * 4, d[1], d[2]});
      // One image in, one out (the workload's other images are its other instructions).
      w_of[k].sram_bytes = s[0] * s[1] * s[2] * elem_bytes(program, i, fm, "IDF") + d[0] * d[1] * d[2] * elem_bytes(program, i, fm, "ODF");
    } else {
      bad(program, i, "not modelled (the instruction model times pe_conv, vp_self, vp_pool, dt_cal, lda/ldw/lw/sta_mov, "
                      "*_cfg* and ct_*; multi-core si_/so_ transfers are not)");
    }
  }
  if (work) *work = std::move(w_of);
  return cycles;
}

IsaProgramRun run_isa_program(const zebu::Trace& program, const IsaUnits& u) {
  std::vector<IsaInstructionWork> work;
  const auto cycles = isa_instruction_cycles(program, u, &work);
  IsaProgramRun run = schedule_isa_program(program, cycles);
  for (const auto& w : work) run.dram_bytes += w.dram_bytes;
  run.work = std::move(work);
  return run;
}

IsaEnergy isa_program_energy(const IsaProgramRun& run, const models::EnergyParams& e, int64_t vp_lanes, double clock_mhz,
                             const std::map<int, int64_t>& layer_cycles) {
  IsaEnergy r;
  r.modelled = e.modelled();
  const auto& ins = run.simulated.instructions;
  for (size_t k = 0; k < ins.size() && k < run.work.size(); ++k) {
    const IsaInstructionWork& w = run.work[k];
    const double pe = static_cast<double>(w.macs) * e.mac_pj(w.mac_dtype);
    const double vp = starts(ins[k].name, "vp_") && !is_cfg(ins[k].name)
                          ? static_cast<double>(ins[k].end - ins[k].start) * static_cast<double>(vp_lanes) * e.pj_per_vector_lane_cycle
                          : 0;
    const double sram = static_cast<double>(w.sram_bytes) * e.pj_per_sram_byte;
    const double dram = static_cast<double>(w.dram_bytes) * e.pj_per_dram_byte;
    const double dma = static_cast<double>(w.dram_bytes) * e.pj_per_dma_byte;
    r.pe_array_uj += pe * 1e-6, r.vector_uj += vp * 1e-6, r.sram_uj += sram * 1e-6, r.dram_uj += dram * 1e-6, r.dma_uj += dma * 1e-6;
    r.layer_uj[ins[k].slyr] += (pe + vp + sram + dram + dma) * 1e-6;
  }
  // Static power: W x s = uJ x 1e-6; cycles / (MHz x 1e6) s.
  for (const auto& [layer, cycles] : layer_cycles) {
    const double uj = e.static_w * static_cast<double>(cycles) / clock_mhz;
    r.static_uj += uj;
    r.layer_uj[layer] += uj;
  }
  r.total_uj = r.pe_array_uj + r.vector_uj + r.sram_uj + r.dram_uj + r.dma_uj + r.static_uj;
  const double seconds = static_cast<double>(run.end_cycle) / (clock_mhz * 1e6);
  r.average_power_w = seconds > 0 ? r.total_uj * 1e-6 / seconds : 0;
  return r;
}

IsaProgramRun schedule_isa_program(const zebu::Trace& program, const std::vector<int64_t>& cycles) {
  IsaProgramRun run;
  const auto& ins = program.instructions;
  if (cycles.size() != ins.size()) throw InternalError("schedule_isa_program: one duration per instruction");
  auto known = [](const std::string& q) { return std::find(kIsaQueues.begin(), kIsaQueues.end(), q) != kIsaQueues.end(); };
  std::map<std::string, std::vector<size_t>> queues;
  std::map<std::pair<std::string, std::string>, int64_t> sent, taken;  // tokens per (from, to)
  std::vector<std::vector<std::string>> prev(ins.size()), next(ins.size());
  auto names = [&](const zebu::Instruction& i, const char* key, std::vector<std::string>& out) {
    if (!i.params.contains(key)) return;
    const json::Json& v = i.params[key];
    if (!v.is_array()) bad(program, i, std::string("'") + key + "' must be a list of queue names");
    for (const auto& e : v) {
      if (!e.is_string() || !known(e.get<std::string>()))
        bad(program, i, std::string("'") + key + "' names " + shown(e) + ": not a queue (CT, LD, LW, PE, VP, DT, ST, SI, SO)");
      out.push_back(e.get<std::string>());
    }
  };
  for (size_t k = 0; k < ins.size(); ++k) {
    const std::string q = isa_queue(ins[k].name);
    queues[q].push_back(k);
    names(ins[k], "Prev_Insts", prev[k]);
    names(ins[k], "Next_Insts", next[k]);
    for (const auto& f : prev[k]) ++taken[{f, q}];
    for (const auto& t : next[k]) ++sent[{q, t}];
  }
  // Every token waited for is sent (and none is left over): a mismatch is a broken program,
  // named by the first instruction of the queue that would wait or send in vain.
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& [k, v] : sent) pairs.insert(k);
  for (const auto& [k, v] : taken) pairs.insert(k);
  for (const auto& pr : pairs)
    if (sent[pr] != taken[pr])
      throw InputError(program.source, pr.first + " -> " + pr.second,
                       std::to_string(taken[pr]) + " instructions of " + pr.second + " wait for a token from " + pr.first +
                           " (Prev_Insts) but " + std::to_string(sent[pr]) + " of " + pr.first +
                           " send one (Next_Insts): the program's tokens do not pair up");

  std::map<std::pair<std::string, std::string>, std::vector<int64_t>> tokens;  // send times, in order
  std::map<std::pair<std::string, std::string>, size_t> popped;
  std::map<std::string, size_t> at;
  std::map<std::string, int64_t> free_at;
  run.simulated = program;
  size_t done = 0;
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [q, list] : queues) {
      for (size_t& a = at[q]; a < list.size(); ++a) {
        const size_t k = list[a];
        int64_t start = free_at[q];
        bool ready = true;
        for (const auto& f : prev[k]) {
          const auto& sends = tokens[{f, q}];
          const size_t nth = popped[{f, q}];
          if (nth >= sends.size()) { ready = false; break; }
          start = std::max(start, sends[nth]);
        }
        if (!ready) break;
        for (const auto& f : prev[k]) ++popped[{f, q}];
        const int64_t end = start + cycles[k];
        run.simulated.instructions[k].start = start;
        run.simulated.instructions[k].end = end;
        free_at[q] = end;
        for (const auto& t : next[k]) tokens[{q, t}].push_back(end);
        run.queue_busy_cycles[q] += cycles[k];
        ++run.instructions_by_queue[q];
        run.end_cycle = std::max(run.end_cycle, end);
        ++done;
        progress = true;
      }
    }
  }
  if (done != ins.size()) {
    // Every queue waits for another: name the earliest instruction that never started.
    size_t first = ins.size();
    for (const auto& [q, list] : queues)
      if (at[q] < list.size()) first = std::min(first, list[at[q]]);
    bad(program, ins[first], "waits for a token that never comes: the program deadlocks (its queues wait for each other)");
  }
  return run;
}

}  // namespace npusim::engine
