#include "frontends/frontend_ir/frontend_ir_reader.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "frontends/frontend_ir/frontend_ir_checks.h"

namespace npusim::frontends {

namespace {

using json::Cursor;

// Window sizes, strides and paddings are bounded so that shape arithmetic stays in int64.
constexpr int64_t kMaxWindow = int64_t{1} << 24;

std::string valid_ops() {
  // OpKind is a scoped enum (underlying int): walk it until op_name no longer knows the value.
  std::string r;
  for (int i = 0;; ++i) {
    std::string n = ir::op_name(static_cast<ir::OpKind>(i));
    if (n == "?") break;
    r += (i ? ", " : "") + n;
  }
  return r;
}

std::string valid_dtypes() {
  std::string r;
  for (int i = 0;; ++i) {
    std::string n = ir::dtype_name(static_cast<ir::DType>(i));
    if (n == "?") break;
    r += (i ? ", " : "") + n;
  }
  return r;
}

std::vector<ir::DType> parse_dtypes(const Cursor& c) {
  c.expect_array();
  std::vector<ir::DType> r;
  for (const Cursor& e : c.elements()) {
    std::string s = e.as_string();
    auto t = ir::parse_dtype(s);
    if (!t) e.fail("unknown dtype '" + s + "'; valid: " + valid_dtypes());
    r.push_back(*t);
  }
  return r;
}

// A list of tensor shapes; every tensor has rank >= 1 and dims >= 1.
std::vector<ir::Shape> parse_shapes(const Cursor& c) {
  std::vector<ir::Shape> r = c.as_shape_list();
  if (r.empty()) c.fail("expected at least one shape");
  for (size_t i = 0; i < r.size(); ++i) {
    Cursor s = c.at(i);
    if (r[i].empty()) s.fail("expected a shape of rank >= 1, got []");
    for (size_t j = 0; j < r[i].size(); ++j)
      if (r[i][j] < 1) s.at(j).fail("dimension must be >= 1, got " + std::to_string(r[i][j]));
  }
  return r;
}

std::array<int, 2> window_pair(const Cursor& l, const std::string& key, int64_t min) {
  Cursor c = l.at(key);
  std::vector<int64_t> v = c.as_int_array(2);
  for (size_t i = 0; i < 2; ++i) c.at(i).as_int_in(min, kMaxWindow);
  return {static_cast<int>(v[0]), static_cast<int>(v[1])};
}

// [top, bottom, left, right]; two values [h, w] mean symmetric padding.
std::array<int, 4> parse_padding(const Cursor& c) {
  if (!c.value().is_array() || (c.value().size() != 2 && c.value().size() != 4))
    c.fail("expected 4 integers [top, bottom, left, right] (or 2 [h, w]), got " +
           (c.value().is_array() ? std::to_string(c.value().size()) + " elements" : json::type_name(c.value())));
  std::vector<int64_t> v = c.as_int_array();
  for (size_t i = 0; i < v.size(); ++i) c.at(i).as_int_in(0, kMaxWindow);
  if (v.size() == 2) return {int(v[0]), int(v[0]), int(v[1]), int(v[1])};
  return {int(v[0]), int(v[1]), int(v[2]), int(v[3])};
}

std::array<int, 3> parse_lut(const Cursor& c) {
  std::vector<int64_t> v = c.as_int_array(3);
  for (size_t i = 0; i < 3; ++i) c.at(i).as_int_in(0, 1);
  return {int(v[0]), int(v[1]), int(v[2])};
}

// One batchdim per tensor: -1 (no batch dimension) or an axis of that tensor. The ResNet-50
// files list only the activation's entry for conv2d/dense ([0] for two inputs), so missing
// trailing entries default to -1 for constants and 0 otherwise.
std::vector<int> parse_batchdim(const Cursor& l, const std::string& key, const std::vector<ir::Shape>& shapes,
                                const std::vector<std::string>* sources) {
  std::vector<int> r;
  if (auto c = l.find(key)) {
    std::vector<int64_t> v = c->as_int_array();
    if (v.size() > shapes.size())
      c->fail("has " + std::to_string(v.size()) + " entries for " + std::to_string(shapes.size()) + " tensors");
    for (size_t i = 0; i < v.size(); ++i)
      r.push_back(static_cast<int>(c->at(i).as_int_in(-1, static_cast<int64_t>(shapes[i].size()) - 1)));
  }
  for (size_t i = r.size(); i < shapes.size(); ++i)
    r.push_back(sources && i < sources->size() && ir::is_constant_name((*sources)[i]) ? -1 : 0);
  return r;
}

bool is_known_stage(const std::string& k) {
  const std::string sum_sub = "fp32_sum_sub_group";  // followed by a group number
  if (k.size() > sum_sub.size() && k.compare(0, sum_sub.size(), sum_sub) == 0)
    return std::all_of(k.begin() + sum_sub.size(), k.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  return k == "pre_cal" || k == "post_cal" || k == "compare_group" || k == "relu_group" ||
         k == "fp32_mul_group" || k == "acc_tree_group";
}

std::vector<ir::VpStage> parse_modules(const Cursor& c) {
  std::vector<ir::VpStage> r;
  for (const auto& [kind, sc] : c.members()) {
    if (!is_known_stage(kind))
      sc.fail("unknown module '" + kind + "'; valid: pre_cal, compare_group, fp32_sum_sub_group<N>, "
              "relu_group, fp32_mul_group, acc_tree_group, post_cal");
    sc.expect_object();
    ir::VpStage st;
    st.kind = kind;
    for (const auto& [key, v] : sc.members()) {
      const json::Json& j = v.value();
      if (key == "input_shape")
        st.input_shapes = v.as_shape_list();
      else if (key == "output_shape")
        st.output_shapes = v.as_shape_list();
      else if (j.is_number())
        st.numbers[key] = j.get<double>();
      else if (j.is_boolean())
        st.numbers[key] = j.get<bool>() ? 1.0 : 0.0;
      else if (j.is_string())
        st.strings[key] = j.get<std::string>();
      // null, arrays and objects: unknown extras, ignored.
    }
    r.push_back(std::move(st));
  }
  return r;
}

ir::QuantInfo parse_quant(const Cursor& c) {
  c.expect_object();
  ir::QuantInfo q;
  q.present = true;
  q.input_scale1 = c.optional_double("input_scale1");
  q.input_zero_point1 = c.optional_double("input_zero_point1");
  q.input_scale2 = c.optional_double("input_scale2");
  q.input_zero_point2 = c.optional_double("input_zero_point2");
  q.output_scale = c.optional_double("output_scale");
  q.output_zero_point = c.optional_double("output_zero_point");
  if (auto rt = c.optional_string("round_type")) {
    if (*rt != "round" && *rt != "floor" && *rt != "ceil")
      c.fail_at("round_type", "unknown round_type '" + *rt + "'; valid: round, floor, ceil");
    q.round_type = *rt;
  }
  return q;
}

// Attributes of the npusim extension operations (docs/format_frontend_ir.md#npusim-extensions); keys the
// real Gemini files never use, so they are read for every op when present.
void parse_extension_attrs(const Cursor& c, ir::Layer& l) {
  constexpr int64_t kBig = int64_t{1} << 40;
  auto ints = [&](const char* key, std::vector<int64_t>& out) {
    if (auto v = c.find(key)) {
      out = v->as_int_array();
      for (size_t i = 0; i < out.size(); ++i) v->at(i).as_int_in(-kBig, kBig);
    }
  };
  if (auto v = c.optional_bool_like("transpose_a")) l.transpose_a = *v;
  if (auto v = c.optional_bool_like("transpose_b")) l.transpose_b = *v;
  ints("axes", l.axes);
  if (auto v = c.find("axis")) l.axes = {v->as_int_in(-64, 63)};
  if (auto v = c.optional_bool_like("keepdims")) l.keepdims = *v;
  if (auto v = c.optional_double("epsilon")) l.epsilon = *v;
  if (auto v = c.optional_double("clip_min")) l.clip_min = *v;
  if (auto v = c.optional_double("clip_max")) l.clip_max = *v;
  ints("perm", l.perm);
  ints("starts", l.starts);
  ints("ends", l.ends);
  ints("steps", l.steps);
  ints("pads", l.pads);
  if (auto v = c.find("flops")) l.opaque_flops = v->as_int_in(0, int64_t{1} << 62);
  if (auto v = c.find("bytes")) l.opaque_bytes = v->as_int_in(0, int64_t{1} << 62);
  if (auto v = c.optional_string("label")) l.opaque_label = *v;
}

ir::Layer parse_layer(const Cursor& c, const std::string& key) {
  c.expect_object();
  ir::Layer l;
  l.pointer = c.pointer();
  l.index = static_cast<int>(c.at("layer_index").as_int_in(0, 0x7fffffff));
  l.name = c.get_string("name");
  if (l.name != key) c.fail_at("name", "name '" + l.name + "' differs from its key '" + key + "'");
  std::string op = c.get_string("operation");
  auto kind = ir::parse_op(op);
  if (!kind) c.fail_at("operation", "unknown operation '" + op + "'; valid: " + valid_ops());
  l.op = *kind;
  std::string dev = c.get_string("device");
  if (dev == "npu")
    l.device = ir::Device::Npu;
  else if (dev == "cpu")
    l.device = ir::Device::Cpu;
  else
    c.fail_at("device", "unknown device '" + dev + "'; valid: npu, cpu");

  l.input_dtypes = parse_dtypes(c.at("input_dtype"));
  l.output_dtypes = parse_dtypes(c.at("output_dtype"));
  l.input_shapes = parse_shapes(c.at("input_shape"));
  l.output_shapes = parse_shapes(c.at("output_shape"));
  auto count = [](size_t n) { return std::to_string(n) + (n == 1 ? " entry" : " entries"); };
  if (l.input_dtypes.size() != l.input_shapes.size())
    c.fail_at("input_dtype", "has " + count(l.input_dtypes.size()) + " but input_shape has " +
                                 std::to_string(l.input_shapes.size()));
  if (l.output_dtypes.size() != l.output_shapes.size())
    c.fail_at("output_dtype", "has " + count(l.output_dtypes.size()) + " but output_shape has " +
                                  std::to_string(l.output_shapes.size()));
  l.previous = c.get_string_array("previous_layer");
  l.next = c.get_string_array("next_layer");
  // previous_layer[i] produces input i (activations, then constants such as weights).
  if (l.previous.size() != l.input_shapes.size())
    c.fail_at("previous_layer", "has " + count(l.previous.size()) + " but input_shape has " +
                                    std::to_string(l.input_shapes.size()));

  if (auto fl = c.find("file_list"))
    for (const auto& [role, f] : fl->members()) l.files[role] = f.as_string();
  l.input_batchdim = parse_batchdim(c, "input_batchdim", l.input_shapes, &l.previous);
  l.output_batchdim = parse_batchdim(c, "output_batchdim", l.output_shapes, nullptr);

  bool conv = l.op == ir::OpKind::Conv2d;
  bool pool = l.op == ir::OpKind::MaxPool2d || l.op == ir::OpKind::AvgPool2d;
  if (conv || c.find("kernel_size")) l.kernel = window_pair(c, "kernel_size", 1);
  if (pool || c.find("pool_size")) l.pool = window_pair(c, "pool_size", 1);
  if (c.find("stride")) l.stride = window_pair(c, "stride", 1);
  if (c.find("dilation")) l.dilation = window_pair(c, "dilation", 1);
  if (auto p = c.find("padding")) l.padding = parse_padding(*p);
  if (auto g = c.find("groups")) l.groups = static_cast<int>(g->as_int_in(1, kMaxWindow));
  l.ceil_mode = c.optional_bool_like("ceil_mode").value_or(false);

  parse_extension_attrs(c, l);
  l.activation = c.optional_string("activation_type").value_or("");
  l.activation_attr = c.optional_double("activation_attr");
  if (auto q = c.find("quant_info")) l.gemini.quant = parse_quant(*q);
  if (auto t = c.find("tensor0_lut")) l.gemini.tensor0_lut = parse_lut(*t);
  if (auto t = c.find("tensor1_lut")) l.gemini.tensor1_lut = parse_lut(*t);
  if (auto t = c.find("tensor_mode")) l.gemini.tensor_mode = static_cast<int>(t->as_int_in(-0x7fffffff, 0x7fffffff));
  if (auto m = c.find("module_list")) l.gemini.modules = parse_modules(*m);
  l.gemini.ori_name = c.optional_string("ori_name").value_or("");
  // The producer spells it "nhwc_consistant"; accept the dictionary spelling too.
  l.gemini.nhwc_consistant = c.optional_bool_like("nhwc_consistant");
  if (!l.gemini.nhwc_consistant) l.gemini.nhwc_consistant = c.optional_bool_like("nhwc_consistent");
  // Any other member is an extra of some producer version: accepted and ignored.
  return l;
}

}  // namespace

ir::Graph parse_frontend_ir(const json::Json& doc, const std::string& source_name) {
  Cursor root(doc, source_name, "");
  if (!doc.is_object()) root.fail(std::string("expected an object of layers (name -> layer), got ") + json::type_name(doc));
  if (doc.empty()) root.fail("no layers");

  ir::Graph g;
  g.source = source_name;
  g.name = std::filesystem::path(source_name).stem().string();
  g.layers.reserve(doc.size());
  std::unordered_map<int, std::string> by_index;
  for (const auto& [key, c] : root.members()) {
    ir::Layer l = parse_layer(c, key);
    auto [it, fresh] = by_index.emplace(l.index, l.name);
    if (!fresh)
      c.fail_at("layer_index", "duplicate layer_index " + std::to_string(l.index) + ", also used by '" +
                                   it->second + "'");
    g.layers.push_back(std::move(l));
  }
  std::sort(g.layers.begin(), g.layers.end(),
            [](const ir::Layer& a, const ir::Layer& b) { return a.index < b.index; });

  g.format = "frontend_ir";
  ir::check_ops(g);
  frontend_ir::check_edges(g);
  frontend_ir::check_order(g);
  frontend_ir::check_edge_tensors(g);
  frontend_ir::check_batch(g);
  ir::link_tensors_by_name(g);
  ir::validate_tensors(g);
  return g;
}

ir::Graph read_frontend_ir(const std::string& path) {
  json::Json doc = json::read_json_file(path);
  return parse_frontend_ir(doc, path);
}

}  // namespace npusim::frontends
