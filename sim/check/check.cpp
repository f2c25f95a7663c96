#include "sim/check/check.h"

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

class GraphChecker {
 public:
  GraphChecker(const ir::Graph& g, const CheckOptions& o) : m_g(g), m_o(o) {
    // How many layers read each output, so chained outputs are freed after their last use.
    for (const ir::Layer& l : g.layers)
      for (const std::string& p : l.previous)
        if (g.find(p)) ++m_readers[p];
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
    if (collect_inputs(l, &inputs, &why_not)) {
      const functional::ParamMap params = load_params(l);
      std::optional<Tensor> golden;
      if (auto it = l.files.find("output_activation1"); it != l.files.end())
        golden = load_activation(path(it->second), c.dtype, l.output_shapes.at(0), l.name + " output");
      Tensor y = functional::run_layer(l, inputs, params);
      inputs.clear();
      if (golden) {
        c.cmp = functional::compare_tensors(y, *golden, c.dtype);
        c.status = c.cmp.pass ? LayerStatus::Pass : LayerStatus::Fail;
        if (!m_o.dump_dir.empty()) save_tensor(npy_path(m_o.dump_dir, l.files.at("output_activation1")), y);
      } else {
        c.note = "file_list names no output_activation1";
      }
      if (m_o.chain && m_readers.count(l.name)) m_outputs[l.name] = std::move(y);
    } else {
      c.note = why_not;
    }
    release_inputs(l);
    c.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return c;
  }

 private:
  std::string path(const std::string& name) const { return npy_path(m_o.npy_dir, name); }

  // The activations in file_list order; PE layers whose weights come as `k` read only input 1.
  bool collect_inputs(const ir::Layer& l, std::vector<Tensor>* in, std::string* why_not) {
    const bool pe = ir::runs_on_pe_array(l.op);
    size_t n = std::max<size_t>(l.input_shapes.size(), 1);
    if (pe && l.files.count("k")) n = 1;
    for (size_t i = 0; i < n; ++i) {
      const ir::DType dt = i < l.input_dtypes.size() ? l.input_dtypes[i] : ir::DType::Float32;
      if (m_o.chain && i < l.previous.size()) {
        auto it = m_outputs.find(l.previous[i]);
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
    for (const std::string& p : l.previous) {
      auto it = m_readers.find(p);
      if (it != m_readers.end() && --it->second == 0) m_outputs.erase(p);
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
  GraphChecker checker(g, o);
  for (const ir::Layer& l : g.layers) {
    r.layers.push_back(checker.run(l));
    switch (r.layers.back().status) {
      case LayerStatus::Pass: ++r.passed; break;
      case LayerStatus::Fail: ++r.failed; break;
      case LayerStatus::Skipped: ++r.skipped; break;
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::string check_summary(const CheckReport& r) {
  std::ostringstream o;
  o << r.layers.size() << " layers: " << r.passed << " pass, " << r.failed << " fail, " << r.skipped << " skipped ("
    << fmt("%.1f", r.seconds) << " s)";
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
