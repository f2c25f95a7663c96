// GraphExecutor JSON parsing and checks (tvm_graph.h).
#include "frontends/tvm_mlf/tvm_graph.h"

#include <set>

#include "frontends/tvm_mlf/tvm_params.h"

namespace npusim::frontends::tvm {

namespace {

using json::Cursor;

constexpr int64_t kMaxOutputs = 1 << 16;

// A tvm_op attribute: TVM writes numbers as strings ("3"); integers are accepted too.
int64_t attr_int(const Cursor& attrs, const std::string& key, int64_t lo, int64_t hi) {
  const Cursor v = attrs.at(key);
  int64_t n = 0;
  if (v.value().is_string()) {
    const std::string s = v.as_string();
    if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos)
      v.fail("expected a decimal integer string, got \"" + s + "\"");
    n = std::stoll(s);
  } else {
    n = v.as_int();
  }
  if (n < lo || n > hi) v.fail("must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + std::to_string(n));
  return n;
}

// [node, index] or [node, index, version].
EntryRef entry_ref(const Cursor& c, const std::vector<GraphNode>& nodes, int64_t before, int64_t total, const std::string& what) {
  c.expect_array();
  if (c.size() != 2 && c.size() != 3) c.fail(what + " must be [node, index] or [node, index, version], got " + std::to_string(c.size()) + " elements");
  EntryRef r;
  r.node = c.at(size_t{0}).as_int();
  r.index = c.at(size_t{1}).as_int();
  if (c.size() == 3) c.at(size_t{2}).as_int();
  if (r.node < 0 || r.node >= total)
    c.at(size_t{0}).fail("node " + std::to_string(r.node) + " does not exist (the graph has " + std::to_string(total) + " nodes)");
  if (r.node >= before)
    c.at(size_t{0}).fail("refers to node " + std::to_string(r.node) + ", which does not come before this node (nodes are in topological order)");
  const GraphNode& src = nodes[static_cast<size_t>(r.node)];
  if (r.index < 0 || r.index >= src.num_outputs)
    c.at(size_t{1}).fail("output " + std::to_string(r.index) + " of node " + std::to_string(r.node) + " ('" + src.name +
                         "') does not exist (it has " + std::to_string(src.num_outputs) + ")");
  return r;
}

// ["list_str", [...]] and the like: the tag, then the list, which has one value per entry.
Cursor typed_list(const Cursor& attrs, const std::string& key, const std::string& tag, size_t entries) {
  const Cursor v = attrs.at(key);
  v.expect_array();
  if (v.size() != 2) v.fail("expected [\"" + tag + "\", [...]], got " + std::to_string(v.size()) + " elements");
  const Cursor t = v.at(size_t{0});
  if (t.as_string() != tag) t.fail("expected the type tag \"" + tag + "\", got \"" + t.as_string() + "\"");
  const Cursor list = v.at(size_t{1});
  list.expect_array();
  if (list.size() != entries)
    list.fail("has " + std::to_string(list.size()) + " entries but node_row_ptr gives " + std::to_string(entries) +
              " (one per node output)");
  return list;
}

}  // namespace

ExecutorGraph parse_executor_graph(const json::Json& doc, const std::string& file, const std::string& prefix) {
  const std::string member = prefix.size() >= 2 ? prefix.substr(0, prefix.size() - 2) : "";
  if (!doc.is_object())
    throw InputError(file, member, std::string("a GraphExecutor graph must be a JSON object, got ") + json::type_name(doc));
  const Cursor root(doc, file, prefix);
  static const std::set<std::string> known = {"nodes", "arg_nodes", "node_row_ptr", "heads", "attrs", "metadata"};
  for (const auto& [key, v] : root.members())
    if (!known.count(key))
      root.fail_at(key, "unknown key '" + key + "'; a GraphExecutor graph has nodes, arg_nodes, node_row_ptr, heads, attrs");
  ExecutorGraph g;

  // Nodes, each checked against the ones before it.
  const Cursor nodes = root.at("nodes");
  nodes.expect_array();
  const std::vector<Cursor> node_cs = nodes.elements();
  g.nodes.reserve(node_cs.size());
  for (size_t i = 0; i < node_cs.size(); ++i) {
    const Cursor& c = node_cs[i];
    c.expect_object();
    GraphNode n;
    n.pointer = c.pointer();
    const std::string op = c.get_string("op");
    if (op != "null" && op != "tvm_op") c.at("op").fail("unknown node op \"" + op + "\" (expected \"null\" or \"tvm_op\")");
    n.is_op = op == "tvm_op";
    n.name = c.get_string("name");
    if (n.name.empty()) c.at("name").fail("empty node name");
    std::optional<Cursor> attrs = c.find("attrs");
    if (!attrs) attrs = c.find("attr");
    int64_t num_inputs = -1;
    if (n.is_op) {
      if (!attrs) c.fail_at("attrs", "missing required field (a tvm_op needs func_name, num_inputs, num_outputs, flatten_data)");
      attrs->expect_object();
      n.func_name = attrs->get_string("func_name");
      if (n.func_name.empty()) attrs->at("func_name").fail("empty func_name");
      num_inputs = attr_int(*attrs, "num_inputs", 0, kMaxOutputs);
      n.num_outputs = attr_int(*attrs, "num_outputs", 1, kMaxOutputs);
      attr_int(*attrs, "flatten_data", 0, 1);
    }
    const Cursor inputs = c.at("inputs");
    inputs.expect_array();
    const std::vector<Cursor> in_cs = inputs.elements();
    for (size_t k = 0; k < in_cs.size(); ++k)
      n.inputs.push_back(entry_ref(in_cs[k], g.nodes, static_cast<int64_t>(i), static_cast<int64_t>(node_cs.size()), "an input"));
    if (!n.is_op && !n.inputs.empty()) inputs.fail("a \"null\" node (input or parameter) has no inputs");
    if (n.is_op && num_inputs != static_cast<int64_t>(n.inputs.size()))
      attrs->at("num_inputs").fail("says " + std::to_string(num_inputs) + " but the node has " + std::to_string(n.inputs.size()) + " inputs");
    if (auto deps = c.find("control_deps")) deps->as_int_array();
    g.nodes.push_back(std::move(n));
  }
  if (g.nodes.empty()) nodes.fail("the graph has no nodes");
  const int64_t num_nodes = static_cast<int64_t>(g.nodes.size());

  const Cursor args = root.at("arg_nodes");
  g.arg_nodes = args.as_int_array();
  for (size_t k = 0; k < g.arg_nodes.size(); ++k) {
    const int64_t a = g.arg_nodes[k];
    if (a < 0 || a >= num_nodes) args.at(k).fail("node " + std::to_string(a) + " does not exist (the graph has " + std::to_string(num_nodes) + " nodes)");
    if (g.nodes[static_cast<size_t>(a)].is_op) args.at(k).fail("node " + std::to_string(a) + " ('" + g.nodes[static_cast<size_t>(a)].name + "') is a tvm_op, not an input");
  }

  // node_row_ptr: a prefix sum of the nodes' output counts.
  const Cursor rows = root.at("node_row_ptr");
  g.node_row_ptr = rows.as_int_array();
  if (g.node_row_ptr.size() != g.nodes.size() + 1)
    rows.fail("has " + std::to_string(g.node_row_ptr.size()) + " entries, expected " + std::to_string(g.nodes.size() + 1) + " (one per node, plus the total)");
  if (g.node_row_ptr[0] != 0) rows.at(size_t{0}).fail("must be 0, got " + std::to_string(g.node_row_ptr[0]));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int64_t step = g.node_row_ptr[i + 1] - g.node_row_ptr[i];
    if (step != g.nodes[i].num_outputs)
      rows.at(i + 1).fail("is " + std::to_string(g.node_row_ptr[i + 1]) + " but node " + std::to_string(i) + " ('" + g.nodes[i].name +
                          "') has " + std::to_string(g.nodes[i].num_outputs) + " output(s) after entry " + std::to_string(g.node_row_ptr[i]));
  }
  const size_t entries = static_cast<size_t>(g.node_row_ptr.back());

  const Cursor heads = root.at("heads");
  heads.expect_array();
  for (const Cursor& h : heads.elements()) g.heads.push_back(entry_ref(h, g.nodes, num_nodes, num_nodes, "a head"));
  if (g.heads.empty()) heads.fail("the graph has no outputs (heads is empty)");

  // Per-entry attributes.
  const Cursor attrs = root.at("attrs");
  attrs.expect_object();
  g.entries.resize(entries);
  const Cursor dltypes = typed_list(attrs, "dltype", "list_str", entries);
  const Cursor shapes = typed_list(attrs, "shape", "list_shape", entries);
  const Cursor sids = typed_list(attrs, "storage_id", "list_int", entries);
  std::optional<Cursor> devices;
  if (attrs.find("device_index")) devices = typed_list(attrs, "device_index", "list_int", entries);
  for (size_t e = 0; e < entries; ++e) {
    GraphEntry& ge = g.entries[e];
    const Cursor dt = dltypes.at(e);
    ge.dltype = dt.as_string();
    const auto t = parse_tvm_dtype(ge.dltype);
    if (!t) dt.fail("unknown dltype \"" + ge.dltype + "\" (npusim reads int8/16/32/64, uint8/16/32/64, float16/32/64, bfloat16, bool)");
    ge.dtype = *t;
    ge.shape = shapes.at(e).as_shape();
    ge.storage_id = sids.at(e).as_int_in(-1, int64_t{1} << 40);
    if (devices) ge.device_index = devices->at(e).as_int_in(-1, 1 << 20);
  }
  return g;
}

}  // namespace npusim::frontends::tvm
