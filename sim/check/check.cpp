#include "sim/check/check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "models/functional/layer.h"
#include "models/functional/tensor.h"
#include "sim/check/golden_io.h"
#include "sim/ir/error.h"

namespace npusim::check {

namespace {

using functional::Tensor;
using Clock = std::chrono::steady_clock;

std::string role_of_input(size_t i) { return "input_activation" + std::to_string(i + 1); }
std::string output_role(size_t k) { return "output_activation" + std::to_string(k + 1); }

// The statistics of several outputs of one layer (split) as one: counts add up, maxima are
// the largest, and it passes when every output passes.
functional::CompareResult merge(const functional::CompareResult& a, const functional::CompareResult& b) {
  functional::CompareResult r = a;
  r.shape_match = a.shape_match && b.shape_match;
  r.count += b.count;
  r.mismatches += b.mismatches;
  r.beyond_one += b.beyond_one;
  r.out_of_tolerance += b.out_of_tolerance;
  r.nan_mismatches += b.nan_mismatches;
  r.max_abs_error = std::max(a.max_abs_error, b.max_abs_error);
  r.max_units = std::max(a.max_units, b.max_units);
  r.max_abs_expected = std::max(a.max_abs_expected, b.max_abs_expected);
  r.pass = a.pass && b.pass;
  return r;
}

class GraphChecker {
 public:
  GraphChecker(const ir::Graph& g, const CheckOptions& o) : m_g(g), m_o(o) {
    // How many layers read each output, so chained outputs are freed after their last use.
    for (const ir::Layer& l : g.layers)
      for (size_t i = 0; i < l.previous.size(); ++i)
        if (const std::string key = input_key(l, i); !key.empty()) ++m_readers[key];
  }

  LayerCheck run(const ir::Layer& l) {
    const auto t0 = Clock::now();
    LayerCheck c;
    c.index = l.index;
    c.name = l.name;
    c.op = ir::op_name(l.op);
    c.device = l.device == ir::Device::Cpu ? "cpu" : "npu";
    c.dtype = l.output_dtypes.empty() ? ir::DType::Float32 : l.output_dtypes[0];

    std::vector<Tensor> inputs;
    std::string why_not;
    if (l.op == ir::OpKind::Opaque) {
      // Nothing to compute: skipped, counted apart (consumers read their golden inputs).
      c.no_reference = true;
      c.note = "no reference (opaque op '" + (l.opaque_label.empty() ? l.name : l.opaque_label) + "')";
    } else if (collect_inputs(l, &inputs, &why_not)) {
      const functional::ParamMap params = load_params(l);
      // Golden output k is file_list's output_activation<k+1> (split has several).
      const size_t n_out = std::max<size_t>(l.output_shapes.size(), 1);
      std::vector<std::optional<Tensor>> golden(n_out);
      bool any_golden = false;
      for (size_t k = 0; k < n_out; ++k)
        if (auto it = l.files.find(output_role(k)); it != l.files.end()) {
          const ir::DType dt = k < l.output_dtypes.size() ? l.output_dtypes[k] : ir::DType::Float32;
          golden[k] = load_activation(path(it->second), dt, l.output_shapes.at(k),
                                      l.name + " output" + (k ? " " + std::to_string(k + 1) : ""));
          any_golden = true;
        }
      std::vector<Tensor> ys = functional::run_layer_outputs(l, inputs, params);
      inputs.clear();
      if (any_golden) {
        bool first = true;
        for (size_t k = 0; k < ys.size() && k < golden.size(); ++k) {
          if (!golden[k]) continue;
          const ir::DType dt = k < l.output_dtypes.size() ? l.output_dtypes[k] : ir::DType::Float32;
          functional::CompareResult one = functional::compare_tensors(ys[k], *golden[k], dt);
          c.cmp = first ? one : merge(c.cmp, one);
          first = false;
          if (!m_o.dump_dir.empty()) save_tensor(npy_path(m_o.dump_dir, l.files.at(output_role(k))), ys[k]);
        }
        c.status = c.cmp.pass ? LayerStatus::Pass : LayerStatus::Fail;
      } else {
        c.note = "file_list names no output_activation1";
      }
      if (m_o.chain)
        for (size_t k = 0; k < ys.size(); ++k) {
          const std::string key = output_key(l, k);
          if (m_readers.count(key)) m_outputs[key] = std::move(ys[k]);
        }
    } else {
      c.note = why_not;
    }
    release_inputs(l);
    c.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return c;
  }

 private:
  std::string path(const std::string& name) const { return npy_path(m_o.npy_dir, name); }

  // Chain-mode key of a layer's output k and of the producer output its input i reads: the
  // tensor id when the graph has a tensor table, else the edge name ("<layer>" for output 0,
  // "<layer>:<k>" for output k of a split). Empty for an input no layer produces.
  std::string output_key(const ir::Layer& l, size_t k) const {
    if (k < l.outputs.size()) return "#" + std::to_string(l.outputs[k]);
    return k == 0 ? l.name : l.name + ":" + std::to_string(k);
  }
  std::string input_key(const ir::Layer& l, size_t i) const {
    if (i < l.inputs.size()) {
      const int id = l.inputs[i];
      const bool produced = id >= 0 && static_cast<size_t>(id) < m_g.tensors.size() && m_g.tensor(id).producer >= 0;
      return produced ? "#" + std::to_string(id) : "";
    }
    if (i < l.previous.size() && m_g.find(ir::edge_layer(l.previous[i]))) {
      const int port = ir::edge_port(l.previous[i]);
      return port == 0 ? ir::edge_layer(l.previous[i]) : l.previous[i];
    }
    return "";
  }

  // The file_list role that holds input i when no input_activation<i+1> does: k for a weight
  // (gamma of a normalization, the table of a gather), b for a bias (beta), as the tensor table
  // assigns them (sim/ir/validate.cpp). Empty if none.
  std::string parameter_file(const ir::Layer& l, size_t i) const {
    if (i >= l.inputs.size() || l.inputs[i] < 0 || static_cast<size_t>(l.inputs[i]) >= m_g.tensors.size()) return "";
    const ir::TensorRole r = m_g.tensor(l.inputs[i]).role;
    const char* key = r == ir::TensorRole::Weight ? "k" : r == ir::TensorRole::Bias ? "b" : nullptr;
    if (!key) return "";
    auto f = l.files.find(key);
    return f == l.files.end() ? "" : f->second;
  }

  // The activations in file_list order; PE layers whose weights come as `k` read only input 1.
  bool collect_inputs(const ir::Layer& l, std::vector<Tensor>* in, std::string* why_not) {
    const bool pe = ir::runs_on_pe_array(l.op);
    size_t n = std::max<size_t>(l.input_shapes.size(), 1);
    if (pe && l.files.count("k")) n = 1;
    for (size_t i = 0; i < n; ++i) {
      const ir::DType dt = i < l.input_dtypes.size() ? l.input_dtypes[i] : ir::DType::Float32;
      if (m_o.chain && i < l.previous.size()) {
        auto it = m_outputs.find(input_key(l, i));
        if (it != m_outputs.end()) {
          Tensor t = it->second;
          if (i < l.input_shapes.size() && t.shape != l.input_shapes[i] && ir::num_elements(l.input_shapes[i]) == t.size())
            t.shape = l.input_shapes[i];  // e.g. [N,C,1,1] read as [N,C]
          t.dtype = dt;
          in->push_back(std::move(t));
          continue;
        }
      }
      auto f = l.files.find(role_of_input(i));
      if (f == l.files.end()) {
        if (const std::string p = parameter_file(l, i); !p.empty() && !pe) {
          in->push_back(load_constant(path(p)));
          continue;
        }
        *why_not = "file_list names no " + role_of_input(i);
        return false;
      }
      if (i >= l.input_shapes.size()) {
        *why_not = "the IR gives no input_shape for " + role_of_input(i);
        return false;
      }
      in->push_back(load_activation(path(f->second), dt, l.input_shapes[i], l.name + " input " + std::to_string(i + 1)));
    }
    return true;
  }

  functional::ParamMap load_params(const ir::Layer& l) const {
    functional::ParamMap p;
    for (const char* role : {"k", "b", "k_scale"})
      if (auto f = l.files.find(role); f != l.files.end()) p[role] = load_constant(path(f->second));
    return p;
  }

  void release_inputs(const ir::Layer& l) {
    for (size_t i = 0; i < l.previous.size(); ++i) {
      const std::string key = input_key(l, i);
      auto it = m_readers.find(key);
      if (it != m_readers.end() && --it->second == 0) m_outputs.erase(key);
    }
  }

  const ir::Graph& m_g;
  const CheckOptions& m_o;
  std::map<std::string, int> m_readers;
  std::map<std::string, Tensor> m_outputs;  // chain mode: computed outputs still to be read
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

CheckReport check_graph(const ir::Graph& g, const CheckOptions& o) {
  const auto t0 = Clock::now();
  CheckReport r;
  r.workload = g.name;
  r.npy_dir = o.npy_dir;
  r.chain = o.chain;
  // .npy has no float8 type, so there is no golden data to compare an fp8 layer with.
  for (const ir::Layer& l : g.layers)
    for (const auto* ts : {&l.input_dtypes, &l.output_dtypes})
      for (ir::DType t : *ts)
        if (ir::is_fp8(t))
          throw InputError(g.source, l.name, std::string("has ") + ir::dtype_name(t) +
                                                 " tensors: the functional check has no fp8 reference (.npy has no "
                                                 "float8 type)");
  GraphChecker checker(g, o);
  for (const ir::Layer& l : g.layers) {
    r.layers.push_back(checker.run(l));
    switch (r.layers.back().status) {
      case LayerStatus::Pass: ++r.passed; break;
      case LayerStatus::Fail: ++r.failed; break;
      case LayerStatus::Skipped:
        ++r.skipped;
        r.no_reference += r.layers.back().no_reference;
        break;
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::string check_summary(const CheckReport& r) {
  std::ostringstream o;
  o << r.layers.size() << " layers: " << r.passed << " pass, " << r.failed << " fail, " << r.skipped << " skipped";
  if (r.no_reference > 0) o << " (" << r.no_reference << " no reference)";
  o << " (" << fmt("%.1f", r.seconds) << " s)";
  return o.str();
}

std::string format_check_table(const CheckReport& r, bool failures_only) {
  size_t w = 5;
  for (const auto& l : r.layers) w = std::max(w, l.name.size());
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%4s  %-*s %-16s %-8s %11s %9s %4s %10s %10s %10s  %s\n", "idx", static_cast<int>(w),
                "layer", "op", "dtype", "max_abs", "max_err", "", "differ", "out_of_tol", "elements", "result");
  o << line;
  for (const auto& l : r.layers) {
    if (failures_only && l.status != LayerStatus::Fail) continue;
    const auto& c = l.cmp;
    if (l.status == LayerStatus::Skipped) {
      std::snprintf(line, sizeof line, "%4d  %-*s %-16s %-8s %11s %9s %4s %10s %10s %10s  skipped: %s\n", l.index,
                    static_cast<int>(w), l.name.c_str(), l.op.c_str(), ir::dtype_name(l.dtype), "-", "-", "", "-", "-",
                    "-", l.note.c_str());
    } else if (!c.shape_match) {
      std::snprintf(line, sizeof line, "%4d  %-*s %-16s %-8s %11s %9s %4s %10s %10s %10s  FAIL: shapes differ\n",
                    l.index, static_cast<int>(w), l.name.c_str(), l.op.c_str(), ir::dtype_name(l.dtype), "-", "-", "",
                    "-", "-", "-");
    } else {
      std::snprintf(line, sizeof line, "%4d  %-*s %-16s %-8s %11.5g %9.4g %-4s %10lld %10lld %10lld  %s\n", l.index,
                    static_cast<int>(w), l.name.c_str(), l.op.c_str(), ir::dtype_name(l.dtype), c.max_abs_error,
                    c.max_units, c.unit, static_cast<long long>(c.mismatches),
                    static_cast<long long>(c.out_of_tolerance), static_cast<long long>(c.count),
                    l.status == LayerStatus::Pass ? "pass" : "FAIL");
    }
    o << line;
  }
  o << "check: " << check_summary(r) << "\n";
  if (r.failed > 0) {
    o << "failed:";
    for (const auto& l : r.layers)
      if (l.status == LayerStatus::Fail) o << " " << l.name;
    o << "\n";
  }
  return o.str();
}

}  // namespace npusim::check
