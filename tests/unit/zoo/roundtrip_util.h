// Writing a graph as Frontend IR and reading it back: what must survive (ops, shapes, dtypes,
// attributes, edges between operations, which operands are parameters).
#pragma once
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "frontends/frontend_ir/frontend_ir_writer.h"
#include "sim/ir/graph.h"

namespace zoo_test {

namespace ir = npusim::ir;

// The layer producing each input of l ("" for graph inputs and parameters).
inline std::vector<std::string> producers(const ir::Graph& g, const ir::Layer& l) {
  std::vector<std::string> r;
  for (int id : l.inputs) {
    const ir::Tensor& t = g.tensor(id);
    r.push_back(t.producer >= 0 ? g.layers[static_cast<size_t>(t.producer)].name : "");
  }
  return r;
}

inline std::vector<bool> parameters(const ir::Graph& g, const std::vector<int>& ids) {
  std::vector<bool> r;
  for (int id : ids) r.push_back(g.tensor(id).is_parameter());
  return r;
}

// Every property the writer must carry; returns the number of layers that differ.
inline int compare_graphs(const ir::Graph& a, const ir::Graph& b) {
  if (a.layers.size() != b.layers.size()) {
    ADD_FAILURE() << "layer count " << a.layers.size() << " vs " << b.layers.size();
    return 1;
  }
  int bad = 0;
  for (size_t i = 0; i < a.layers.size() && bad < 10; ++i) {
    const ir::Layer &x = a.layers[i], &y = b.layers[i];
    std::string diff;
    auto same = [&](bool ok, const char* what) {
      if (!ok) diff += std::string(diff.empty() ? "" : ", ") + what;
    };
    same(x.name == y.name, "name");
    same(x.op == y.op, "operation");
    same(x.device == y.device, "device");
    same(x.input_shapes == y.input_shapes, "input_shape");
    same(x.output_shapes == y.output_shapes, "output_shape");
    same(x.input_dtypes == y.input_dtypes, "input_dtype");
    same(x.output_dtypes == y.output_dtypes, "output_dtype");
    same(producers(a, x) == producers(b, y), "producers");
    same(parameters(a, x.inputs) == parameters(b, y.inputs), "parameter inputs");
    same(x.macs() == y.macs(), "macs");
    const bool window = x.op == ir::OpKind::Conv2d || x.op == ir::OpKind::MaxPool2d || x.op == ir::OpKind::AvgPool2d;
    same(!window || (x.stride == y.stride && x.padding == y.padding && x.dilation == y.dilation), "stride/padding/dilation");
    same(x.op != ir::OpKind::Conv2d || (x.kernel == y.kernel && x.groups == y.groups), "kernel/groups");
    same(!(x.op == ir::OpKind::MaxPool2d || x.op == ir::OpKind::AvgPool2d) || (x.pool == y.pool && x.ceil_mode == y.ceil_mode),
         "pool_size/ceil_mode");
    same(x.activation == y.activation, "activation");
    same(x.transpose_a == y.transpose_a && x.transpose_b == y.transpose_b, "transpose");
    same(x.axes == y.axes, "axes");
    same(x.keepdims == y.keepdims, "keepdims");
    same(x.epsilon == y.epsilon, "epsilon");
    same(x.clip_min == y.clip_min && x.clip_max == y.clip_max, "clip");
    same(x.perm == y.perm, "perm");
    same(x.starts == y.starts && x.ends == y.ends && x.steps == y.steps, "starts/ends/steps");
    same(x.pads == y.pads, "pads");
    same(x.opaque_flops == y.opaque_flops && x.opaque_bytes == y.opaque_bytes && x.opaque_label == y.opaque_label,
         "opaque flops/bytes/label");
    if (!diff.empty()) {
      ADD_FAILURE() << "layer " << i << " '" << x.name << "' (" << ir::op_name(x.op) << ") differs after the round trip: " << diff;
      ++bad;
    }
  }
  EXPECT_EQ(a.graph_outputs.size(), b.graph_outputs.size());
  return bad;
}

// write_frontend_ir, then parse_frontend_ir (which runs every reader check).
inline ir::Graph round_trip(const ir::Graph& g, const std::string& name = "roundtrip.json") {
  return npusim::frontends::parse_frontend_ir(npusim::frontends::write_frontend_ir(g), name);
}

inline int64_t total_macs(const ir::Graph& g) {
  int64_t m = 0;
  for (const ir::Layer& l : g.layers) m += l.macs();
  return m;
}

}  // namespace zoo_test
