#include "frontends/zebu_trace/zebu_trace.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "frontends/zebu_trace/py_literal.h"
#include "sim/ir/input_file.h"

namespace npusim::frontends::zebu {
namespace {

int to_int(const json::Json& v, const std::string& field) {
  if (!v.is_number_integer()) throw PyLiteralError{0, "'" + field + "' must be an integer"};
  int64_t x = v.get<int64_t>();
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    throw PyLiteralError{0, "'" + field + "' out of range"};
  return static_cast<int>(x);
}

std::vector<int> to_int_list(const json::Json& v, const std::string& field) {
  if (!v.is_array()) throw PyLiteralError{0, "'" + field + "' must be a list of integers"};
  std::vector<int> out;
  for (const auto& e : v) out.push_back(to_int(e, field));
  return out;
}

const json::Json& require(const json::Json& obj, const char* key, const char* where) {
  if (!obj.contains(key)) throw PyLiteralError{0, std::string("missing '") + key + "' in the " + where};
  return obj[key];
}

// The instruction families of the Gemini ISA (ISA_Format.md, ZeBu_Trace_Format.md): control
// ct_*, PE pe_*, vector processor vp_*, data transform dt_*, and the DMA queues' *_cfg / *_mov
// (ld*, lw*, st*, si*, so*). Anything else is not a Gemini trace line.
bool known_instruction(const std::string& n) {
  auto starts = [&](const char* p) { return n.rfind(p, 0) == 0; };
  if ((starts("ct_") || starts("pe_") || starts("vp_") || starts("dt_")) && n.size() > 3) return true;
  const bool queue = starts("ld") || starts("lw") || starts("st") || starts("si") || starts("so");
  const bool ends = n.size() > 4 && (n.compare(n.size() - 4, 4, "_cfg") == 0 || n.compare(n.size() - 4, 4, "_mov") == 0);
  return queue && ends;
}

void read_mapping(Instruction& ins, const json::Json& mapping) {
  ins.slyr = to_int(require(mapping, "slyr", "layer-mapping dict"), "slyr");
  ins.clyr = to_int_list(require(mapping, "clyr", "layer-mapping dict"), "clyr");
  ins.wkl = to_int(require(mapping, "wkl", "layer-mapping dict"), "wkl");
  ins.tile = to_int(require(mapping, "tile", "layer-mapping dict"), "tile");
  if (mapping.contains("s_flyr")) ins.s_flyr = to_int(mapping["s_flyr"], "s_flyr");
  if (mapping.contains("c_flyr")) ins.c_flyr = to_int_list(mapping["c_flyr"], "c_flyr");
}

// timed: the line must carry the {'inst_idx', 'time'} dict (a trace); otherwise it may also be an
// assembler line, [name, {mapping}, {params}], whose third dict is the parameters.
Instruction parse_line(std::string_view line, bool timed) {
  PyLiteralParser p(line);
  Instruction ins;
  p.expect('[', "at the start of an instruction");
  ins.name = p.parse_identifier();
  if (!known_instruction(ins.name))
    throw PyLiteralError{0, "unknown instruction '" + ins.name +
                                "' (Gemini instructions: ct_*, pe_*, vp_*, dt_*, and ld*/lw*/st*/si*/so* ending in _cfg or _mov)"};
  p.expect(',', "after the instruction name");
  json::Json mapping = p.parse_value();
  if (!mapping.is_object()) throw PyLiteralError{p.pos(), "second element must be the layer-mapping dict"};
  p.expect(',', "after the layer-mapping dict");
  json::Json timing = p.parse_value();
  if (!timing.is_object()) throw PyLiteralError{p.pos(), "third element must be the {'inst_idx', 'time'} dict"};
  if (!timed && !timing.contains("time") && !timing.contains("inst_idx")) {  // an assembler line
    ins.params = std::move(timing);
    p.accept(',');
    p.expect(']', "at the end of the instruction");
    if (!p.at_end()) p.fail("unexpected text after the instruction");
    read_mapping(ins, mapping);
    return ins;
  }
  ins.timed = true;
  if (!p.accept(']')) {  // three-element lines have no parameter dict
    p.expect(',', "after the timing dict");
    if (!p.accept(']')) {
      ins.params = p.parse_value();
      if (!ins.params.is_object()) throw PyLiteralError{p.pos(), "fourth element must be the parameter dict"};
      p.accept(',');
      p.expect(']', "at the end of the instruction");
    }
  }
  if (!p.at_end()) p.fail("unexpected text after the instruction");

  read_mapping(ins, mapping);
  ins.inst_idx = to_int(require(timing, "inst_idx", "timing dict"), "inst_idx");
  const json::Json& time = require(timing, "time", "timing dict");
  if (!time.is_array() || time.size() != 2 || !time[0].is_number_integer() || !time[1].is_number_integer())
    throw PyLiteralError{0, "'time' must be [start, end] integers"};
  ins.start = time[0].get<int64_t>();
  ins.end = time[1].get<int64_t>();
  if (ins.start < 0) throw PyLiteralError{0, "'time' start is negative"};
  if (ins.end < ins.start) throw PyLiteralError{0, "'time' ends before it starts"};
  return ins;
}

bool has_prefix(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

struct Interval {
  int64_t a, b;
};

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.a < y.a; });
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (iv.b <= iv.a) continue;
    if (!out.empty() && iv.a <= out.back().b)
      out.back().b = std::max(out.back().b, iv.b);
    else
      out.push_back(iv);
  }
  return out;
}

int64_t overlap(const std::vector<Interval>& sorted_union, int64_t a, int64_t b) {
  int64_t sum = 0;
  auto it = std::upper_bound(sorted_union.begin(), sorted_union.end(), a,
                             [](int64_t x, const Interval& iv) { return x < iv.b; });
  for (; it != sorted_union.end() && it->a < b; ++it) sum += std::min(b, it->b) - std::max(a, it->a);
  return sum;
}

}  // namespace

int64_t Trace::end_cycle() const {
  int64_t e = 0;
  for (const auto& i : instructions) e = std::max(e, i.end);
  return e;
}

namespace {

Trace parse_lines(const std::string& text, const std::string& source, bool timed) {
  Trace t;
  t.source = source;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      Instruction ins = parse_line(line, timed);
      ins.line = n;
      if (!ins.timed) ins.inst_idx = static_cast<int>(t.instructions.size()) + 1;
      t.instructions.push_back(std::move(ins));
    } catch (const PyLiteralError& e) {
      std::string what = e.column > 0 ? "column " + std::to_string(e.column) + ": " + e.what : e.what;
      throw InputError(source, "line " + std::to_string(n), what);
    }
  }
  // An empty trace would compare as "0 layers, +0.0%": it is no measurement.
  if (t.instructions.empty())
    throw InputError(source, "", std::string("no instructions: an empty ") + (timed ? "trace" : "program") +
                                     " (one instruction per line)");
  return t;
}

}  // namespace

Trace parse_zebu_trace(const std::string& text, const std::string& source) { return parse_lines(text, source, true); }

Trace parse_gemini_program(const std::string& text, const std::string& source) {
  return parse_lines(text, source, false);
}

Trace read_gemini_program(const std::string& path) {
  return parse_gemini_program(read_input_file(path, "a Gemini program (assembler output or ZeBu trace, text)", kMaxTraceBytes),
                              path);
}

Trace read_zebu_trace(const std::string& path) {
  // A regular file of at most kMaxTraceBytes, checked before reading (sim/ir/input_file.h).
  return parse_zebu_trace(read_input_file(path, "a ZeBu trace (text)", kMaxTraceBytes), path);
}

bool is_compute(const Instruction& i) {
  if (i.name.find("_cfg") != std::string::npos) return false;
  return has_prefix(i.name, "pe_") || has_prefix(i.name, "vp_") || has_prefix(i.name, "dt_");
}

bool is_dma(const Instruction& i) {
  const std::string& n = i.name;
  if (n.size() < 4 || n.compare(n.size() - 4, 4, "_mov") != 0) return false;
  return has_prefix(n, "ld") || has_prefix(n, "lw") || has_prefix(n, "st") || has_prefix(n, "si") ||
         has_prefix(n, "so");
}

std::map<std::string, int> count_by_name(const Trace& t) {
  std::map<std::string, int> c;
  for (const auto& i : t.instructions) ++c[i.name];
  return c;
}

std::vector<LayerMeasurement> measure_layers(const Trace& t) {
  std::vector<const Instruction*> comp;
  std::vector<Interval> pe, vp, dma;
  for (const auto& i : t.instructions) {
    if (is_compute(i)) {
      comp.push_back(&i);
      (has_prefix(i.name, "vp_") ? vp : pe).push_back({i.start, i.end});  // dt_* moves via the PE path
    } else if (is_dma(i)) {
      dma.push_back({i.start, i.end});
    }
  }
  if (comp.empty()) return {};
  std::stable_sort(comp.begin(), comp.end(), [](const Instruction* a, const Instruction* b) { return a->end < b->end; });
  pe = merged(pe);
  vp = merged(vp);
  dma = merged(dma);

  std::map<int, LayerMeasurement> by_layer;
  auto charge = [&](int layer, int64_t a, int64_t b) {
    LayerMeasurement& m = by_layer[layer];
    m.layer_index = layer;
    m.cycles += b - a;
    m.pe_busy += overlap(pe, a, b);
    m.vp_busy += overlap(vp, a, b);
    m.dma_busy += overlap(dma, a, b);
  };
  int64_t frontier = 0;
  std::map<int, bool> seen;
  for (const Instruction* i : comp) {
    int64_t b = std::max(frontier, i->end);
    charge(i->slyr, frontier, b);
    frontier = b;
    LayerMeasurement& m = by_layer[i->slyr];
    m.first_start = seen[i->slyr] ? std::min(m.first_start, i->start) : i->start;
    m.last_end = seen[i->slyr] ? std::max(m.last_end, i->end) : i->end;
    seen[i->slyr] = true;
  }
  charge(comp.back()->slyr, frontier, std::max(frontier, t.end_cycle()));

  std::vector<LayerMeasurement> out;
  for (auto& kv : by_layer) out.push_back(kv.second);
  std::stable_sort(out.begin(), out.end(),
                   [](const LayerMeasurement& a, const LayerMeasurement& b) { return a.last_end < b.last_end; });
  return out;
}

}  // namespace npusim::frontends::zebu
