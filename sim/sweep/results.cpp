#include "sim/sweep/results.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/ir/error.h"

namespace npusim::sweep {

const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> c = {"cycles", "host_cycles", "time_ms", "pe_count", "l2_bytes",
                                             "pe_utilization", "dram_read_bytes", "dram_write_bytes", "dram_bytes",
                                             "bound", "energy_uj"};
  return c;
}

Row metrics_of(const report::RunReport& r, const config::HwConfig& cfg) {
  // Dominant bound: most cycles summed over layers; ties go to the earlier name in this list.
  static const char* order[] = {"compute", "memory", "vector", "host"};
  std::map<std::string, int64_t> by_bound;
  for (const auto& l : r.layers) by_bound[l.bound] += l.cycles;
  std::string bound;
  int64_t best = -1;
  for (const char* b : order)
    if (by_bound.count(b) && by_bound[b] > best) best = by_bound[b], bound = b;
  const bool energy = cfg.get_double("energy.pj_per_mac") > 0 || cfg.get_double("energy.pj_per_dram_byte") > 0 ||
                      cfg.get_double("energy.pj_per_sram_byte") > 0;
  Row m;
  m["cycles"] = r.npu_cycles;
  m["host_cycles"] = r.host_cycles;
  m["time_ms"] = r.npu_cycles / (r.clock_mhz * 1e3);
  m["pe_count"] = cfg.get_int("npu.pe_array.rows") * cfg.get_int("npu.pe_array.cols");
  m["l2_bytes"] = cfg.get_int("npu.l2.size_kib") * 1024;
  m["pe_utilization"] = r.pe_utilization;
  m["dram_read_bytes"] = r.dram_read_bytes;
  m["dram_write_bytes"] = r.dram_write_bytes;
  m["dram_bytes"] = r.dram_read_bytes + r.dram_write_bytes;
  m["bound"] = bound;
  m["energy_uj"] = energy ? Row(r.energy_uj) : Row(nullptr);
  Row layers = Row::array();
  for (const auto& l : r.layers) layers.push_back({{"name", l.name}, {"op", l.op}, {"cycles", l.cycles}, {"bound", l.bound}});
  m["layers"] = layers;
  return m;
}

namespace {
// Axis values as JSON numbers where they are numbers, so tools read them as such.
Row value_json(const std::string& t) {
  char* end = nullptr;
  const long long i = std::strtoll(t.c_str(), &end, 10);
  if (!t.empty() && *end == '\0') return Row(static_cast<int64_t>(i));
  const double d = std::strtod(t.c_str(), &end);
  if (!t.empty() && *end == '\0') return Row(d);
  return Row(t);
}

std::string csv_cell(const Row& v) {
  if (v.is_null()) return "";
  if (!v.is_string()) return v.dump();
  const std::string& s = v.get_ref<const std::string&>();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}
}  // namespace

Row make_row(const Point& p, const std::string& workload, const std::vector<std::string>& keys, const Row* metrics,
             const std::string& error) {
  Row row;
  row["point"] = p.id;
  row["workload"] = workload;
  row["status"] = metrics ? "ok" : "failed";
  for (size_t i = 0; i < keys.size(); ++i) row[keys[i]] = value_json(p.values[i]);
  for (const auto& c : metric_columns()) row[c] = metrics ? metrics->at(c) : Row(nullptr);
  row["error"] = error;
  row["layers"] = metrics ? metrics->at("layers") : Row::array();
  return row;
}

std::string csv_header(const std::vector<std::string>& keys) {
  std::string h = "point,workload,status";
  for (const auto& k : keys) h += "," + k;
  for (const auto& c : metric_columns()) h += "," + c;
  return h + ",error\n";
}

std::string csv_line(const Row& row, const std::vector<std::string>& keys) {
  std::string s = csv_cell(row.at("point")) + "," + csv_cell(row.at("workload")) + "," + csv_cell(row.at("status"));
  for (const auto& k : keys) s += "," + csv_cell(row.value(k, Row(nullptr)));
  for (const auto& c : metric_columns()) s += "," + csv_cell(row.value(c, Row(nullptr)));
  return s + "," + csv_cell(row.value("error", Row(""))) + "\n";
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, "", "cannot open file");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw InputError(tmp, "", "cannot open for writing");
    f << text;
    if (!f.flush()) throw InputError(tmp, "", "write failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw InputError(path, "", std::string("rename failed: ") + std::strerror(errno));
}

std::vector<Row> Journal::read(const std::string& path, bool repair) {
  std::vector<Row> rows;
  std::ifstream probe(path);
  if (!probe) return rows;  // no journal yet
  const std::string text = read_file(path);
  size_t pos = 0, good_end = 0;
  int line = 0;
  while (pos < text.size()) {
    ++line;
    const size_t nl = text.find('\n', pos);
    const bool last = nl == std::string::npos || nl + 1 == text.size();
    const std::string s = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    Row r;
    bool ok = nl != std::string::npos;
    if (ok) {
      try {
        r = Row::parse(s);
        ok = r.is_object() && r.contains("point") && r.contains("workload");
      } catch (const nlohmann::json::exception&) {
        ok = false;
      }
    }
    if (!ok) {
      if (!last) throw InputError(path, "line " + std::to_string(line), "not a journal line: the journal is damaged");
      break;  // torn by a kill during the write: that point runs again
    }
    rows.push_back(std::move(r));
    pos = nl + 1;
    good_end = pos;
  }
  if (repair && good_end < text.size() && ::truncate(path.c_str(), static_cast<off_t>(good_end)) != 0)
    throw InputError(path, "", std::string("cannot cut the torn last line: ") + std::strerror(errno));
  return rows;
}

Journal::Journal(const std::string& path) : m_path(path) {
  m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (m_fd < 0) throw InputError(path, "", std::string("cannot open for appending: ") + std::strerror(errno));
}

Journal::~Journal() {
  if (m_fd >= 0) ::close(m_fd);
}

void Journal::append(const Row& entry) {
  const std::string line = entry.dump() + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(m_fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError(m_path, "", std::string("write failed: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  ::fsync(m_fd);
}

void write_results(const std::string& dir, std::vector<Row> entries, const std::vector<std::string>& keys,
                   const std::vector<std::string>& workloads) {
  auto rank = [&](const Row& r) {
    const auto& w = r.at("workload").get_ref<const std::string&>();
    return std::make_pair(r.at("point").get<int>(), std::find(workloads.begin(), workloads.end(), w) - workloads.begin());
  };
  std::stable_sort(entries.begin(), entries.end(), [&](const Row& a, const Row& b) { return rank(a) < rank(b); });
  std::string csv = csv_header(keys), jsonl, timing = "point,workload,status,wall_s\n";
  for (auto& e : entries) {
    Row row = e;
    const Row wall = row.value("wall_s", Row(nullptr));
    row.erase("wall_s");
    csv += csv_line(row, keys);
    jsonl += row.dump() + "\n";
    timing += csv_cell(row["point"]) + "," + csv_cell(row["workload"]) + "," + csv_cell(row["status"]) + "," +
              csv_cell(wall) + "\n";
  }
  write_file_atomic(dir + "/results.csv", csv);
  write_file_atomic(dir + "/results.jsonl", jsonl);
  write_file_atomic(dir + "/timing.csv", timing);
}

}  // namespace npusim::sweep
