#include "frontends/frontend_ir/frontend_ir_checks.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "frontends/json_util.h"
#include "sim/ir/error.h"

namespace npusim::frontends::frontend_ir {

namespace {

using ir::Layer;
using ir::Shape;
using ir::shape_str;

// InputError at a member of the layer: sub is a pointer suffix such as "output_shape/0".
[[noreturn]] void fail(const std::string& file, const Layer& l, const std::string& sub, const std::string& what) {
  throw InputError(file, l.pointer + "/" + sub, what);
}

std::string idx(const std::string& field, size_t i) { return field + "/" + std::to_string(i); }

bool lists(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

void check_edges(ir::Graph& g) {
  std::unordered_map<std::string, const Layer*> by_name;
  for (const Layer& l : g.layers) by_name[l.name] = &l;
  // First every name must resolve, so that a misspelt name is reported where it is written
  // rather than as a one-sided edge at the layer it was meant to reach.
  std::unordered_set<std::string> seen_in, seen_out;
  for (const Layer& l : g.layers) {
    for (size_t i = 0; i < l.previous.size(); ++i) {
      const std::string& p = l.previous[i];
      if (auto it = by_name.find(ir::edge_layer(p)); it != by_name.end()) {
        const size_t port = static_cast<size_t>(ir::edge_port(p));
        if (port >= it->second->output_shapes.size())
          fail(g.source, l, idx("previous_layer", i),
               "'" + p + "' names output " + std::to_string(port) + " of '" + it->first + "', which has " +
                   std::to_string(it->second->output_shapes.size()));
        continue;
      }
      if (ir::is_graph_input_name(p)) {
        if (seen_in.insert(p).second) g.graph_inputs.push_back(p);
      } else if (!ir::is_constant_name(p)) {
        fail(g.source, l, idx("previous_layer", i),
             "dangling reference: '" + p + "' is neither a layer, a graph input (input<N>) nor a constant (constant_*)");
      }
    }
    for (size_t i = 0; i < l.next.size(); ++i) {
      const std::string& n = l.next[i];
      if (by_name.count(n)) continue;
      if (!ir::is_graph_output_name(n))
        fail(g.source, l, idx("next_layer", i),
             "dangling reference: '" + n + "' is neither a layer nor a graph output (output<N>)");
      if (seen_out.insert(n).second) g.graph_outputs.push_back(n);
    }
  }
  // Then every edge between layers must be listed on both sides.
  for (const Layer& l : g.layers) {
    for (size_t i = 0; i < l.previous.size(); ++i) {
      auto it = by_name.find(ir::edge_layer(l.previous[i]));
      if (it != by_name.end() && !lists(it->second->next, l.name))
        fail(g.source, l, idx("previous_layer", i),
             "one-sided edge: '" + it->first + "' is listed here but '" + it->first + "' does not list '" + l.name +
                 "' in its next_layer");
    }
    for (size_t i = 0; i < l.next.size(); ++i) {
      auto it = by_name.find(l.next[i]);
      if (it != by_name.end() && !lists(it->second->previous, l.name))
        fail(g.source, l, idx("next_layer", i),
             "one-sided edge: '" + it->first + "' is listed here but '" + it->first + "' does not list '" + l.name +
                 "' in its previous_layer");
    }
  }
}

void check_order(const ir::Graph& g) {
  // Kahn's algorithm over previous_layer edges between layers; what is left holds a cycle.
  size_t n = g.layers.size();
  std::unordered_map<std::string, size_t> pos;
  for (size_t i = 0; i < n; ++i) pos[g.layers[i].name] = i;
  std::vector<std::vector<size_t>> preds(n), succs(n);
  std::vector<size_t> indeg(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (const std::string& p : g.layers[i].previous) {
      auto it = pos.find(ir::edge_layer(p));
      if (it == pos.end()) continue;
      preds[i].push_back(it->second);
      succs[it->second].push_back(i);
      ++indeg[i];
    }
  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push_back(i);
  size_t done = 0;
  while (!ready.empty()) {
    size_t i = ready.back();
    ready.pop_back();
    ++done;
    for (size_t s : succs[i])
      if (--indeg[s] == 0) ready.push_back(s);
  }
  if (done < n) {
    // Every layer left has a predecessor that is left too: walk back until one repeats.
    size_t start = 0;
    while (indeg[start] == 0) ++start;
    std::vector<size_t> walk;
    std::vector<int> at(n, -1);
    size_t cur = start;
    while (at[cur] < 0) {
      at[cur] = static_cast<int>(walk.size());
      walk.push_back(cur);
      for (size_t p : preds[cur])
        if (indeg[p] > 0) {
          cur = p;
          break;
        }
    }
    // walk[k + 1] feeds walk[k], so the data flows from the end of the walk back to cur.
    std::string path = g.layers[cur].name;
    for (size_t k = walk.size(); k-- > static_cast<size_t>(at[cur]) + 1;) path += " -> " + g.layers[walk[k]].name;
    path += " -> " + g.layers[cur].name;
    fail(g.source, g.layers[cur], "previous_layer", "cycle: " + path);
  }
  // No cycle: the order by layer_index must run every producer before its consumers.
  for (size_t i = 0; i < n; ++i)
    for (size_t p : preds[i])
      if (p > i)
        fail(g.source, g.layers[i], "layer_index",
             "layer_index order is not a topological order: '" + g.layers[i].name + "' (layer_index " +
                 std::to_string(g.layers[i].index) + ") reads '" + g.layers[p].name + "' (layer_index " +
                 std::to_string(g.layers[p].index) + ")");
}

void check_edge_tensors(const ir::Graph& g) {
  std::unordered_map<std::string, const Layer*> by_name;
  for (const Layer& l : g.layers) by_name[l.name] = &l;
  for (const Layer& l : g.layers)
    for (size_t i = 0; i < l.previous.size(); ++i) {
      auto it = by_name.find(ir::edge_layer(l.previous[i]));
      if (it == by_name.end()) continue;
      const Layer& p = *it->second;
      const int port = ir::edge_port(l.previous[i]);
      auto o = port > 0 ? p.output_shapes.begin() + port
                        : std::find(p.output_shapes.begin(), p.output_shapes.end(), l.input_shapes[i]);
      if (port > 0 && *o != l.input_shapes[i]) o = p.output_shapes.end();
      if (o == p.output_shapes.end())
        fail(g.source, l, idx("input_shape", i),
             "input " + shape_str(l.input_shapes[i]) + " differs from the output " + shape_str(p.output_shapes[0]) +
                 " of its producer '" + p.name + "'");
      ir::DType produced = p.output_dtypes[o - p.output_shapes.begin()];
      if (l.input_dtypes[i] != produced)
        fail(g.source, l, idx("input_dtype", i),
             std::string("input dtype ") + ir::dtype_name(l.input_dtypes[i]) + " differs from the output dtype " +
                 ir::dtype_name(produced) + " of its producer '" + p.name + "'");
    }
}

void check_batch(const ir::Graph& g) {
  // The batch: the first input of the first layer that has a batch axis (a gather's table has
  // none: its batch is its indices'); a graph with no batch axis at all has nothing to check.
  const Layer& first = g.layers.front();
  size_t bi = 0;
  while (bi < first.input_batchdim.size() && first.input_batchdim[bi] < 0) ++bi;
  if (bi == first.input_batchdim.size()) {
    if (first.input_batchdim.empty() || first.input_batchdim[0] >= 0) return;
    bi = 0;  // every input says -1: the leading dim of the first, as the real files imply
  }
  const int bd0 = std::max(0, first.input_batchdim[bi]);
  const int64_t batch = first.input_shapes[bi][bd0];
  auto check = [&](const Layer& l, const std::vector<Shape>& shapes, const std::vector<int>& dims,
                   const char* field) {
    for (size_t i = 0; i < shapes.size(); ++i)
      if (dims[i] >= 0 && shapes[i][dims[i]] != batch)
        fail(g.source, l, idx(field, i),
             "batch dimension " + std::to_string(dims[i]) + " of " + shape_str(shapes[i]) + " is " +
                 std::to_string(shapes[i][dims[i]]) + " but the graph's batch is " + std::to_string(batch) +
                 " (from '" + first.name + "')");
  };
  for (const Layer& l : g.layers) {
    check(l, l.input_shapes, l.input_batchdim, "input_shape");
    check(l, l.output_shapes, l.output_batchdim, "output_shape");
  }
}

}  // namespace npusim::frontends::frontend_ir
