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
  bool no_reference = false;  // skipped because the op has no functional reference (opaque)
  functional::CompareResult cmp;
  double seconds = 0;  // load + compute + compare
};

struct CheckReport {
  std::string workload, npy_dir;
  bool chain = false;
  std::vector<LayerCheck> layers;  // in execution order
  int passed = 0, failed = 0, skipped = 0;
  int no_reference = 0;  // of the skipped: layers without a functional reference (opaque)
  double seconds = 0;
  bool ok() const { return failed == 0; }
};

// Checks every layer of g. A missing or malformed file, or a layer the functional model rejects,
// is an InputError naming the file (exit code 2); numeric differences are reported, not thrown.
// A layer is skipped (not failed) when its file_list names no output_activation1, or no input
// it needs, or when its op has no functional reference (opaque: no_reference, counted in
// CheckReport::no_reference as well as in skipped; ok() is unaffected). A layer with several
// outputs (split) compares output k with output_activation<k+1>, every one that is named, and
// reports their combined statistics. An input without input_activation<i> is read from k / b
// when the tensor table makes it a weight / bias (layer_norm gamma / beta, gather's table).
// With chain, outputs are passed on by tensor id, so a split's outputs reach their readers.
CheckReport check_graph(const ir::Graph& g, const CheckOptions& o);

// Per-layer table: max abs error, max error in LSBs / ULPs of the output dtype, elements that
// differ and that are out of tolerance, pass / FAIL; then a summary line.
std::string format_check_table(const CheckReport& r, bool failures_only = false);
// One line: "74 layers: 74 pass, 0 fail, 0 skipped (9.1 s)"; with opaque layers
// "5 layers: 4 pass, 0 fail, 1 skipped (1 no reference) (0.1 s)".
std::string check_summary(const CheckReport& r);

}  // namespace npusim::check
