// Result rows of a sweep and the files that hold them (docs/sweeps.md#results):
//  journal.jsonl  every finished (point, workload), appended and fsync'd at once, finish order,
//                 with its wall time: the file that survives a kill
//  results.jsonl  the same rows sorted by (point, workload), without wall time (+ per-layer cycles)
//  results.csv    the same without per-layer cycles
//  timing.csv     point, workload, status, wall_s (not deterministic, kept apart)
// results.* are byte-identical for the same sweep, however it was run, resumed or sharded.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/config/hw_config.h"
#include "sim/report/report.h"
#include "sim/sweep/points.h"

namespace npusim::sweep {

using Row = nlohmann::ordered_json;

// Metric columns of a sweep of this device ("npu": report::run_fields() in the sweep; "gpu": the
// library plan's report::library_fields() in the sweep; "system": report::system_sweep_fields()), in
// file order; "llm": llm::serving_sweep_fields(). A row's values come from the worker's
// run::RunRecord::sweep_metrics() (a serving row: from `sim llm`'s report).
const std::vector<std::string>& metric_columns(const std::string& device = "npu");

// point, workload, status ("ok"/"failed"), axis values, metrics (null when failed), error.
Row make_row(const Point& p, const std::string& workload, const std::vector<std::string>& keys,
             const Row* metrics, const std::string& error, const std::string& device = "npu");

// CSV header and line of a row (no layers); values quoted when needed.
std::string csv_header(const std::vector<std::string>& keys, const std::string& device = "npu");
std::string csv_line(const Row& row, const std::vector<std::string>& keys, const std::string& device = "npu");

// Where a journal line is and whose it is: enough to resume, check, sort and count without
// holding the rows (a row carries per-layer cycles, a few KB).
struct JournalEntry {
  int point = 0;
  std::string workload, status;
  size_t file = 0;      // index into the list of journals passed to write_results
  uint64_t offset = 0;  // of the line in that file
  uint32_t length = 0;  // without the newline
};

// Append-only journal. index() and read() see the complete lines; a torn last line (a kill
// during the write) is ignored, and with repair=true cut off the file so appends continue
// cleanly. A bad line before the last is an InputError. A missing file has no lines.
class Journal {
 public:
  static std::vector<JournalEntry> index(const std::string& path, size_t file, bool repair);
  static std::vector<Row> read(const std::string& path, bool repair);
  explicit Journal(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void append(const Row& entry);  // one write() of one line, then fsync

 private:
  int m_fd = -1;
  std::string m_path;
};

// Sorts entries by (point, position of their workload in workloads) and writes results.csv,
// results.jsonl and timing.csv into dir (and, with write_journal, a sorted journal.jsonl),
// streaming the lines from journals, each output through a temporary file and rename.
void write_results(const std::string& dir, const std::vector<std::string>& journals, std::vector<JournalEntry> entries,
                   const std::vector<std::string>& keys, const std::vector<std::string>& workloads,
                   bool write_journal = false, const std::string& device = "npu");

// Small file helpers shared by the sweep driver and merge.
void write_file_atomic(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);  // InputError when unreadable

}  // namespace npusim::sweep
