// `sim --check`: runs the functional reference (models/functional) layer by layer and compares
// each output with the golden .npy its file_list names (docs/golden.md). SystemC-free, so it
// runs in the same process before the timing simulation.
#pragma once
#include <string>
#include <vector>

#include "models/functional/compare.h"
#include "sim/ir/graph.h"

namespace npusim::check {

struct CheckOptions {
  std::string npy_dir;   // file_list names are relative to it
  bool chain = false;    // feed each layer its producers' computed outputs, not the golden inputs
  std::string dump_dir;  // when set: write every computed output under its file_list name
};

enum class LayerStatus { Pass, Fail, Skipped };

struct LayerCheck {
  int index = 0;
  std::string name, op, device;
  ir::DType dtype = ir::DType::Float32;  // output dtype: the unit of the error
  LayerStatus status = LayerStatus::Skipped;
  std::string note;  // why the layer was skipped
  functional::CompareResult cmp;
  double seconds = 0;  // load + compute + compare
};

struct CheckReport {
  std::string workload, npy_dir;
  bool chain = false;
  std::vector<LayerCheck> layers;  // in execution order
  int passed = 0, failed = 0, skipped = 0;
  double seconds = 0;
  bool ok() const { return failed == 0; }
};

// Checks every layer of g. A missing or malformed file, or a layer the functional model rejects,
// is an InputError naming the file (exit code 2); numeric differences are reported, not thrown.
// A layer is skipped (not failed) when its file_list names no output_activation1, or no input
// it needs.
CheckReport check_graph(const ir::Graph& g, const CheckOptions& o);

// Per-layer table: max abs error, max error in LSBs / ULPs of the output dtype, elements that
// differ and that are out of tolerance, pass / FAIL; then a summary line.
std::string format_check_table(const CheckReport& r, bool failures_only = false);
// One line: "74 layers: 74 pass, 0 fail, 0 skipped (9.1 s)".
std::string check_summary(const CheckReport& r);

}  // namespace npusim::check
