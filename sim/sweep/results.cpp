#include "sim/sweep/results.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <map>
#include <sstream>

#include "sim/ir/error.h"
#include "sim/llm/serving.h"
#include "sim/report/gpu_library_report.h"
#include "sim/report/system_report.h"

namespace npusim::sweep {

const std::vector<std::string>& metric_columns(const std::string& device) {
  static const std::vector<std::string> npu = [] {
    std::vector<std::string> names;
    for (const auto& f : report::run_fields())
      if (f.in & report::kInSweep) names.push_back(f.name);
    return names;
  }();
  static const std::vector<std::string> gpu = [] {
    std::vector<std::string> names;
    for (const auto& f : report::library_fields())
      if (f.in & report::kInSweep) names.push_back(f.name);
    return names;
  }();
  static const std::vector<std::string> serving = [] {
    std::vector<std::string> names;
    for (const auto& f : llm::serving_sweep_fields()) names.push_back(f.name);
    return names;
  }();
  if (device == "gpu") return gpu;
  if (device == "system") return report::system_sweep_fields();
  if (device == "llm") return serving;
  if (device != "npu") throw InternalError("metric_columns: device " + device);
  return npu;
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
             const std::string& error, const std::string& device) {
  Row row;
  row["point"] = p.id;
  row["workload"] = workload;
  row["status"] = metrics ? "ok" : "failed";
  for (size_t i = 0; i < keys.size(); ++i) row[keys[i]] = value_json(p.values[i]);
  for (const auto& c : metric_columns(device)) row[c] = metrics ? metrics->at(c) : Row(nullptr);
  row["error"] = error;
  row["layers"] = metrics ? metrics->at("layers") : Row::array();
  return row;
}

std::string csv_header(const std::vector<std::string>& keys, const std::string& device) {
  std::string h = "point,workload,status";
  for (const auto& k : keys) h += "," + k;
  for (const auto& c : metric_columns(device)) h += "," + c;
  return h + ",error\n";
}

std::string csv_line(const Row& row, const std::vector<std::string>& keys, const std::string& device) {
  std::string s = csv_cell(row.at("point")) + "," + csv_cell(row.at("workload")) + "," + csv_cell(row.at("status"));
  for (const auto& k : keys) s += "," + csv_cell(row.value(k, Row(nullptr)));
  for (const auto& c : metric_columns(device)) s += "," + csv_cell(row.value(c, Row(nullptr)));
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

std::vector<JournalEntry> Journal::index(const std::string& path, size_t file, bool repair) {
  std::vector<JournalEntry> out;
  std::ifstream f(path, std::ios::binary);
  if (!f) return out;  // no journal yet
  std::string line;
  uint64_t offset = 0;
  int number = 0;
  while (std::getline(f, line)) {
    ++number;
    const bool complete = !f.eof();  // getline stopped at a newline
    JournalEntry e;
    bool ok = complete;
    if (ok) {
      try {
        const Row r = Row::parse(line);
        e.point = r.at("point").get<int>();
        e.workload = r.at("workload").get<std::string>();
        e.status = r.value("status", "");
      } catch (const nlohmann::json::exception&) {
        ok = false;
      }
    }
    if (!ok) {
      if (complete && f.peek() != std::char_traits<char>::eof())
        throw InputError(path, "line " + std::to_string(number), "not a journal line: the journal is damaged");
      break;  // torn by a kill during the write: that point runs again
    }
    e.file = file;
    e.offset = offset;
    e.length = static_cast<uint32_t>(line.size());
    out.push_back(std::move(e));
    offset += line.size() + 1;
  }
  f.close();
  std::error_code ec;
  if (repair && offset < std::filesystem::file_size(path, ec) && !ec && ::truncate(path.c_str(), static_cast<off_t>(offset)) != 0)
    throw InputError(path, "", std::string("cannot cut the torn last line: ") + std::strerror(errno));
  return out;
}

namespace {
std::string read_line(std::ifstream& f, const JournalEntry& e) {
  std::string line(e.length, '\0');
  f.clear();
  f.seekg(static_cast<std::streamoff>(e.offset));
  f.read(line.data(), static_cast<std::streamsize>(e.length));
  if (!f) throw InternalError("journal changed while it was read");
  return line;
}

// Output written to path.tmp and renamed over path on commit().
struct AtomicFile {
  explicit AtomicFile(std::string p) : path(std::move(p)), out(path + ".tmp", std::ios::binary | std::ios::trunc) {
    if (!out) throw InputError(path + ".tmp", "", "cannot open for writing");
  }
  void commit() {
    out.close();
    if (!out) throw InputError(path + ".tmp", "", "write failed");
    if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0)
      throw InputError(path, "", std::string("rename failed: ") + std::strerror(errno));
  }
  std::string path;
  std::ofstream out;
};
}  // namespace

std::vector<Row> Journal::read(const std::string& path, bool repair) {
  const auto entries = index(path, 0, repair);
  std::ifstream f(path, std::ios::binary);
  std::vector<Row> rows;
  for (const auto& e : entries) rows.push_back(Row::parse(read_line(f, e)));
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

void write_results(const std::string& dir, const std::vector<std::string>& journals, std::vector<JournalEntry> entries,
                   const std::vector<std::string>& keys, const std::vector<std::string>& workloads, bool write_journal,
                   const std::string& device) {
  auto rank = [&](const JournalEntry& e) {
    return std::make_pair(e.point, std::find(workloads.begin(), workloads.end(), e.workload) - workloads.begin());
  };
  std::stable_sort(entries.begin(), entries.end(),
                   [&](const JournalEntry& a, const JournalEntry& b) { return rank(a) < rank(b); });
  std::vector<std::ifstream> in;
  for (const auto& j : journals) {
    in.emplace_back(j, std::ios::binary);
    if (!in.back()) throw InputError(j, "", "cannot open file");
  }
  AtomicFile csv(dir + "/results.csv"), jsonl(dir + "/results.jsonl"), timing(dir + "/timing.csv");
  std::unique_ptr<AtomicFile> journal;
  if (write_journal) journal = std::make_unique<AtomicFile>(dir + "/journal.jsonl");
  csv.out << csv_header(keys, device);
  timing.out << "point,workload,status,wall_s\n";
  for (const auto& e : entries) {
    const std::string line = read_line(in.at(e.file), e);
    if (journal) journal->out << line << "\n";
    Row row = Row::parse(line);
    const Row wall = row.value("wall_s", Row(nullptr));
    row.erase("wall_s");
    csv.out << csv_line(row, keys, device);
    jsonl.out << row.dump() << "\n";
    timing.out << e.point << "," << csv_cell(row["workload"]) << "," << e.status << "," << csv_cell(wall) << "\n";
  }
  csv.commit();
  jsonl.commit();
  timing.commit();
  if (journal) journal->commit();
}

}  // namespace npusim::sweep
