// fx payloads: each supported aten target lowers to its IR op with its shapes and attributes;
// unknown targets and rule failures become opaque; payload forms, bindings and errors; payloads
// that cannot be read make the supertask an estimate.
#include <gtest/gtest.h>

#include "tests/unit/pipeline/pipeline_test_util.h"

namespace npusim::frontends::pipeline {
namespace {

using json::Json;
using test::bool_arg;
using test::expect_input_error;
using test::float_arg;
using test::FxGraph;
using test::int_arg;
using test::ints_arg;
using test::lower;
using test::none_arg;
using test::op_names;
using test::tensor_arg;
using test::tensors_arg;

const char* kAten = "torch.ops.aten.";
std::string aten(const std::string& op) { return kAten + op; }

using Strings = std::vector<std::string>;

TEST(FxLower, Gemms) {
  FxGraph g;
  const auto a = g.input({4, 8}), b = g.input({8, 16}), a3 = g.input({2, 4, 8}), b3 = g.input({2, 8, 16});
  const auto q = g.input({1, 2, 4, 8}), k = g.input({1, 2, 8, 4}), bias = g.input({16}), full = g.input({4, 16});
  const auto w = g.input({16, 8});
  const auto mm = g.op(aten("mm.default"), {{"self", tensor_arg(a)}, {"mat2", tensor_arg(b)}}, {4, 16});
  g.op(aten("bmm.default"), {{"self", tensor_arg(a3)}, {"mat2", tensor_arg(b3)}}, {2, 4, 16});
  g.op(aten("matmul.default"), {{"self", tensor_arg(q)}, {"other", tensor_arg(k)}}, {1, 2, 4, 4});
  g.op(aten("matmul.default"), {{"self", tensor_arg(a3)}, {"other", tensor_arg(b)}}, {2, 4, 16});
  g.op(aten("addmm.default"), {{"self", tensor_arg(bias)}, {"mat1", tensor_arg(a)}, {"mat2", tensor_arg(b)}}, {4, 16});
  g.op(aten("addmm.default"), {{"self", tensor_arg(full)}, {"mat1", tensor_arg(a)}, {"mat2", tensor_arg(b)}}, {4, 16});
  g.op(aten("linear.default"), {{"input", tensor_arg(a)}, {"weight", tensor_arg(w)}, {"bias", tensor_arg(bias)}}, {4, 16});
  g.op(aten("linear.default"), {{"input", tensor_arg(a3)}, {"weight", tensor_arg(w)}, {"bias", none_arg()}}, {2, 4, 16});
  g.output({mm});
  const auto low = lower(g);
  const auto& L = low.graph.layers;
  EXPECT_EQ(op_names(low.graph), (Strings{"matmul", "batch_matmul", "batch_matmul", "matmul", "matmul", "matmul",
                                          "element_wise_add", "dense", "matmul"}));
  EXPECT_EQ(L[0].macs(), 4 * 16 * 8);
  EXPECT_EQ(L[1].macs(), 2 * 4 * 16 * 8);
  EXPECT_EQ(L[2].macs(), 2 * 4 * 4 * 8);
  EXPECT_EQ(L[4].inputs.size(), 3u);  // addmm with a bias of N elements: one matmul with bias
  EXPECT_NE(L[5].name.find("/mm"), std::string::npos);  // the full bias: matmul then add
  EXPECT_NE(L[6].name.find("/bias"), std::string::npos);
  EXPECT_EQ(L[7].macs(), 4 * 16 * 8);  // dense [4,8] x [16,8]^T
  EXPECT_TRUE(L[8].transpose_b);       // linear of a 3-D input
  EXPECT_EQ(L[8].macs(), 2 * 4 * 16 * 8);
  EXPECT_EQ(low.num_opaque, 0);
  EXPECT_EQ(low.graph.tensors[static_cast<size_t>(L[0].outputs[0])].role, ir::TensorRole::GraphOutput);
  EXPECT_EQ(L[0].pointer, "/supertasks/1/data/nodes/0");
}

TEST(FxLower, Convolution) {
  FxGraph g;
  const auto x = g.input({1, 3, 8, 8}), w = g.input({4, 3, 3, 3}), b = g.input({4});
  const auto y = g.op(aten("convolution.default"),
                      {{"input", tensor_arg(x)}, {"weight", tensor_arg(w)}, {"bias", tensor_arg(b)}, {"stride", ints_arg({1, 1})},
                       {"padding", ints_arg({1, 1})}, {"dilation", ints_arg({1, 1})}, {"transposed", bool_arg(false)},
                       {"output_padding", ints_arg({0, 0})}, {"groups", int_arg(1)}},
                      {1, 4, 8, 8});
  g.op(aten("conv2d.default"),
       {{"input", tensor_arg(x)}, {"weight", tensor_arg(w)}, {"bias", none_arg()}, {"stride", ints_arg({2, 2})},
        {"padding", ints_arg({0})}, {"dilation", ints_arg({1, 1})}, {"groups", int_arg(1)}},
       {1, 4, 3, 3});
  g.op(aten("convolution.default"),
       {{"input", tensor_arg(x)}, {"weight", tensor_arg(w)}, {"bias", none_arg()}, {"stride", ints_arg({1, 1})},
        {"padding", ints_arg({0, 0})}, {"dilation", ints_arg({1, 1})}, {"transposed", bool_arg(true)},
        {"output_padding", ints_arg({0, 0})}, {"groups", int_arg(1)}},
       {1, 4, 10, 10});
  g.output({y});
  const auto low = lower(g);
  const auto& L = low.graph.layers;
  EXPECT_EQ(op_names(low.graph), (Strings{"conv2d", "conv2d", "opaque"}));
  EXPECT_EQ(L[0].padding, (std::array<int, 4>{1, 1, 1, 1}));
  EXPECT_EQ(L[0].kernel, (std::array<int, 2>{3, 3}));
  EXPECT_EQ(L[0].macs(), 4 * 8 * 8 * 3 * 3 * 3);
  EXPECT_EQ(L[1].stride, (std::array<int, 2>{2, 2}));
  EXPECT_EQ(L[2].opaque_label, "torch.ops.aten.convolution.default (transposed convolution)");
}

TEST(FxLower, ElementWise) {
  FxGraph g;
  const auto x = g.input({4, 8}), y = g.input({8});
  g.op(aten("add.Tensor"), {{"self", tensor_arg(x)}, {"other", tensor_arg(y)}}, {4, 8});
  g.op(aten("add.Tensor"), {{"self", tensor_arg(x)}, {"other", float_arg(1.0)}, {"alpha", int_arg(1)}}, {4, 8});
  g.op(aten("sub.Scalar"), {{"self", tensor_arg(x)}, {"other", int_arg(2)}}, {4, 8});
  g.op(aten("sub.Tensor"), {{"self", tensor_arg(x)}, {"other", tensor_arg(x)}}, {4, 8});
  g.op(aten("mul.Tensor"), {{"self", tensor_arg(x)}, {"other", tensor_arg(y)}}, {4, 8});
  g.op(aten("mul.Scalar"), {{"self", tensor_arg(x)}, {"other", float_arg(0.5)}}, {4, 8});
  g.op(aten("div.Tensor"), {{"self", tensor_arg(x)}, {"other", float_arg(8.0)}}, {4, 8});
  g.op(aten("div.Scalar"), {{"self", tensor_arg(x)}, {"other", float_arg(8.0)}}, {4, 8});
  const auto r = g.op(aten("rsub.Scalar"), {{"self", tensor_arg(x)}, {"other", float_arg(1.0)}}, {4, 8});
  g.op(aten("maximum.default"), {{"self", tensor_arg(x)}, {"other", tensor_arg(y)}}, {4, 8});
  g.output({r});
  const auto low = lower(g);
  const auto& L = low.graph.layers;
  EXPECT_EQ(op_names(low.graph), (Strings{"element_wise_add", "element_wise_add", "element_wise_sub", "element_wise_sub",
                                          "element_wise_mul", "element_wise_mul", "element_wise_div", "element_wise_div",
                                          "element_wise_sub", "element_wise_max"}));
  // A scalar operand is a [1] constant.
  const ir::Tensor& c = low.graph.tensors[static_cast<size_t>(L[1].inputs[1])];
  EXPECT_EQ(c.shape, (ir::Shape{1}));
  EXPECT_EQ(c.role, ir::TensorRole::Constant);
  // rsub: other - self.
  EXPECT_EQ(low.graph.tensors[static_cast<size_t>(L[8].inputs[1])].name, "arg0_1");
}

TEST(FxLower, Unary) {
  FxGraph g;
  const auto x = g.input({4, 8});
  std::vector<std::string> outs;
  for (const char* op : {"relu", "gelu", "silu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "neg"})
    outs.push_back(g.op(aten(std::string(op) + ".default"), {{"self", tensor_arg(x)}}, {4, 8}));
  g.op(aten("hardtanh.default"), {{"self", tensor_arg(x)}, {"min_val", float_arg(0)}, {"max_val", float_arg(6)}}, {4, 8});
  g.output({outs[0]});
  const auto low = lower(g);
  EXPECT_EQ(op_names(low.graph), (Strings{"relu", "gelu", "silu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "neg", "clip"}));
  EXPECT_EQ(low.graph.layers.back().clip_min, 0);
  EXPECT_EQ(low.graph.layers.back().clip_max, 6);
}

TEST(FxLower, Normalization) {
  FxGraph g;
  const auto x = g.input({2, 4, 8}), w = g.input({8}), b = g.input({8});
  g.op(aten("_softmax.default"), {{"self", tensor_arg(x)}, {"dim", int_arg(1)}, {"half_to_float", bool_arg(false)}}, {2, 4, 8});
  g.op(aten("softmax.int"), {{"self", tensor_arg(x)}, {"dim", int_arg(-1)}, {"dtype", none_arg()}}, {2, 4, 8});
  g.op(aten("layer_norm.default"),
       {{"input", tensor_arg(x)}, {"normalized_shape", ints_arg({8})}, {"weight", tensor_arg(w)}, {"bias", tensor_arg(b)},
        {"eps", float_arg(1e-6)}, {"cudnn_enable", bool_arg(true)}},
       {2, 4, 8});
  // native_layer_norm: mean and rstd are read by the next node, so an extra op makes them.
  const auto ln = g.node(aten("native_layer_norm.default"),
                         {{"input", tensor_arg(x)}, {"normalized_shape", ints_arg({4, 8})}, {"weight", none_arg()},
                          {"bias", none_arg()}, {"eps", float_arg(1e-5)}},
                         {{2, 4, 8}, {2, 1, 1}, {2, 1, 1}});
  g.op(aten("mul.Tensor"), {{"self", tensor_arg(ln[1])}, {"other", tensor_arg(ln[2])}}, {2, 1, 1});
  g.op(aten("rms_norm.default"), {{"input", tensor_arg(x)}, {"normalized_shape", ints_arg({8})}, {"weight", tensor_arg(w)},
                                  {"eps", float_arg(1e-6)}}, {2, 4, 8});
  g.op(aten("mean.dim"), {{"self", tensor_arg(x)}, {"dim", ints_arg({-1})}, {"keepdim", bool_arg(true)}}, {2, 4, 1});
  g.op(aten("sum.dim_IntList"), {{"self", tensor_arg(x)}, {"dim", ints_arg({1})}, {"keepdim", bool_arg(false)}}, {2, 8});
  g.output({ln[0]});
  const auto low = lower(g);
  const auto& L = low.graph.layers;
  EXPECT_EQ(op_names(low.graph), (Strings{"softmax", "softmax", "layer_norm", "layer_norm", "opaque", "element_wise_mul", "rms_norm",
                                          "reduce_mean", "reduce_sum"}));
  EXPECT_EQ(L[0].axes, (std::vector<int64_t>{1}));
  EXPECT_EQ(L[1].axes, (std::vector<int64_t>{2}));
  EXPECT_EQ(L[2].axes, (std::vector<int64_t>{2}));
  EXPECT_DOUBLE_EQ(L[2].epsilon, 1e-6);
  EXPECT_EQ(L[2].inputs.size(), 3u);
  EXPECT_EQ(L[3].axes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(L[4].outputs.size(), 2u);  // the mean and rstd
  EXPECT_EQ(low.num_opaque, 0);        // a side product, not a failed lowering
  EXPECT_EQ(L[7].axes, (std::vector<int64_t>{2}));
  EXPECT_FALSE(L[8].keepdims);
}

TEST(FxLower, DataMovementAndGather) {
  FxGraph g;
  const auto x = g.input({2, 4, 8}), table = g.input({100, 8}), ids = g.input({2, 4}, test::kI64), one = g.input({1, 4, 8});
  const std::vector<std::pair<std::string, std::vector<int64_t>>> reshapes = {
      {"view.default", {8, 8}}, {"reshape.default", {64}}, {"_unsafe_view.default", {2, 32}}, {"clone.default", {2, 4, 8}},
      {"contiguous.default", {2, 4, 8}}, {"detach.default", {2, 4, 8}}, {"_to_copy.default", {2, 4, 8}},
      {"unsqueeze.default", {2, 1, 4, 8}}};
  for (const auto& [op, shape] : reshapes) g.op(aten(op), {{"self", tensor_arg(x)}}, shape);
  g.op(aten("expand.default"), {{"self", tensor_arg(x)}, {"size", ints_arg({2, 4, 8})}}, {2, 4, 8});
  g.op(aten("expand.default"), {{"self", tensor_arg(one)}, {"size", ints_arg({3, 4, 8})}}, {3, 4, 8});  // broadcast
  g.op(aten("permute.default"), {{"self", tensor_arg(x)}, {"dims", ints_arg({2, 0, 1})}}, {8, 2, 4});
  g.op(aten("transpose.int"), {{"self", tensor_arg(x)}, {"dim0", int_arg(-1)}, {"dim1", int_arg(-2)}}, {2, 8, 4});
  g.op(aten("t.default"), {{"self", tensor_arg(table)}}, {8, 100});
  g.op(aten("cat.default"), {{"tensors", tensors_arg({x, x})}, {"dim", int_arg(1)}}, {2, 8, 8});
  g.op(aten("slice.Tensor"), {{"self", tensor_arg(x)}, {"dim", int_arg(2)}, {"start", int_arg(2)},
                              {"end", int_arg(9223372036854775807LL)}, {"step", int_arg(2)}}, {2, 4, 3});
  g.node(aten("split.Tensor"), {{"self", tensor_arg(x)}, {"split_size", int_arg(4)}, {"dim", int_arg(-1)}}, {{2, 4, 4}, {2, 4, 4}},
         test::kF32, true);
  g.node(aten("split_with_sizes.default"), {{"self", tensor_arg(x)}, {"split_sizes", ints_arg({1, 3})}, {"dim", int_arg(1)}},
         {{2, 1, 8}, {2, 3, 8}}, test::kF32, true);
  g.op(aten("constant_pad_nd.default"), {{"self", tensor_arg(x)}, {"pad", ints_arg({1, 2})}, {"value", float_arg(0)}}, {2, 4, 11});
  const auto e = g.op(aten("embedding.default"), {{"weight", tensor_arg(table)}, {"indices", tensor_arg(ids)}}, {2, 4, 8});
  g.op(aten("index_select.default"), {{"self", tensor_arg(table)}, {"dim", int_arg(0)}, {"index", tensor_arg(g.input({5}, test::kI64))}},
       {5, 8});
  g.output({e});
  const auto low = lower(g);
  const auto& L = low.graph.layers;
  EXPECT_EQ(op_names(low.graph),
            (Strings{"reshape", "reshape", "reshape", "reshape", "reshape", "reshape", "reshape", "reshape", "reshape", "opaque",
                     "transpose", "transpose", "transpose", "concat", "slice", "split", "split", "pad", "gather", "gather"}));
  EXPECT_EQ(L[9].opaque_label, "torch.ops.aten.expand.default (broadcast copy)");
  EXPECT_EQ(L[9].opaque_bytes, (32 + 96) * 4);
  EXPECT_EQ(L[10].perm, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(L[11].perm, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(L[12].perm, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(L[13].axes, (std::vector<int64_t>{1}));
  EXPECT_EQ(L[14].starts, (std::vector<int64_t>{0, 0, 2}));
  EXPECT_EQ(L[14].ends, (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(L[14].steps, (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(L[15].outputs.size(), 2u);
  EXPECT_EQ(L[15].axes, (std::vector<int64_t>{2}));
  EXPECT_EQ(L[17].pads, (std::vector<int64_t>{0, 0, 0, 0, 1, 2}));
  EXPECT_EQ(L[18].axes, (std::vector<int64_t>{0}));
  // The embedding table is the gather's weight when it is a parameter (bound below); here a graph input.
  EXPECT_EQ(low.num_opaque, 1);
}

TEST(FxLower, UnknownTargetsBecomeOpaque) {
  FxGraph g;
  const auto x = g.input({4, 8});
  const auto c = g.op(aten("cumsum.default"), {{"self", tensor_arg(x)}, {"dim", int_arg(1)}}, {4, 8});
  g.op("torch.ops.furiosa.sparse_select.default", {{"x", tensor_arg(c)}}, {2, 8});
  g.op(aten("cumsum.default"), {{"self", tensor_arg(c)}, {"dim", int_arg(0)}}, {4, 8});
  // A node whose tensor metadata contradicts its op's shape rule.
  g.op(aten("mm.default"), {{"self", tensor_arg(x)}, {"mat2", tensor_arg(x)}}, {4, 4});
  g.output({c});
  const auto low = lower(g);
  const auto& L = low.graph.layers;
  EXPECT_EQ(op_names(low.graph), (Strings{"opaque", "opaque", "opaque", "opaque"}));
  EXPECT_EQ(L[0].opaque_label, "torch.ops.aten.cumsum.default");
  EXPECT_EQ(L[0].opaque_bytes, 2 * 32 * 4);
  EXPECT_EQ(L[0].opaque_flops, 32);
  EXPECT_EQ(L[1].opaque_label, "torch.ops.furiosa.sparse_select.default");
  EXPECT_NE(L[3].opaque_label.find("torch.ops.aten.mm.default (matmul: matmul reduction dims differ"), std::string::npos)
      << L[3].opaque_label;
  EXPECT_EQ(low.num_opaque, 4);
  EXPECT_EQ(low.opaque_targets, (Strings{"torch.ops.aten.cumsum.default", "torch.ops.furiosa.sparse_select.default",
                                         "torch.ops.aten.mm.default"}));
}

TEST(FxLower, NodesWithoutTensorsSymbolicSizesAndDtypeNames) {
  FxGraph g;
  const auto x = g.input({4, 8});
  Json gj = g.graph();
  gj["nodes"].push_back({{"target", aten("sym_size.int")},
                         {"inputs", {{{"name", "self"}, {"arg", tensor_arg(x)}}, {{"name", "dim"}, {"arg", int_arg(0)}}}},
                         {"outputs", {{{"as_sym_int", {{"as_name", "s0"}}}}}},
                         {"metadata", Json::object()}});
  gj["nodes"].push_back({{"target", aten("relu.default")},
                         {"inputs", {{{"name", "self"}, {"arg", tensor_arg(x)}}}},
                         {"outputs", {tensor_arg("r")}},
                         {"metadata", Json::object()}});
  gj["tensor_values"]["r"] = {{"dtype", "BFLOAT16"},
                              {"sizes", {{{"as_expr", {{"expr_str", "s0"}, {"hint", {{"as_int", 4}}}}}}, {{"as_int", 8}}}}};
  gj["outputs"] = {tensor_arg("r")};
  FxLowerOptions o;
  o.source = "t.json";
  const auto low = lower_fx_graph(gj, o);
  EXPECT_EQ(low.num_skipped, 1);
  EXPECT_EQ(op_names(low.graph), (Strings{"relu"}));
  EXPECT_EQ(low.graph.tensors.back().dtype, ir::DType::BFloat16);
  EXPECT_EQ(low.graph.tensors.back().shape, (ir::Shape{4, 8}));
  gj["tensor_values"]["r"]["sizes"][0] = {{"as_expr", {{"expr_str", "s0"}}}};
  expect_input_error([&] { lower_fx_graph(gj, o); }, "/tensor_values/r/sizes/0", "symbolic size 's0' has no hint");
}

TEST(FxLower, PayloadForms) {
  FxGraph g;
  const auto x = g.input({4, 8});
  g.output({g.op(aten("relu.default"), {{"self", tensor_arg(x)}}, {4, 8})});
  FxLowerOptions o;
  o.source = "t.json";
  o.pointer = "/blobs/b";
  EXPECT_EQ(op_names(lower_fx_graph({{"graph", g.graph()}}, o).graph), (Strings{"relu"}));
  EXPECT_EQ(op_names(lower_fx_graph({{"graph_module", {{"graph", g.graph()}, {"signature", Json::object()}}},
                                     {"schema_version", {{"major", 8}, {"minor", 0}}}},
                                    o)
                         .graph),
            (Strings{"relu"}));
  expect_input_error([&] { lower_fx_graph({{"what", 1}}, o); }, "/blobs/b", "no graph in the fx payload");
  // base64 both ways, and what is not base64 or not JSON.
  const std::string text = g.graph().dump();
  EXPECT_EQ(base64_decode(base64_encode(text), "t", ""), text);
  for (const std::string s : {"", "a", "ab", "abc", "abcd", "\xff\x01"})
    EXPECT_EQ(base64_decode(base64_encode(s), "t", ""), s);
  EXPECT_EQ(decode_fx_payload(g.payload(), "t", "/p"), g.graph());
  expect_input_error([] { decode_fx_payload("ab$d", "t.json", "/supertasks/1/data"); }, "/supertasks/1/data",
                     "not base64: character '$' at offset 2");
  expect_input_error([] { decode_fx_payload(base64_encode("{oops"), "t.json", "/blobs/b"); }, "/blobs/b",
                     "the decoded fx payload is not JSON");
}

TEST(FxLower, BindingsToThePipeline) {
  FxGraph g;
  const auto x = g.input({4, 8}), w = g.input({8, 16}), b = g.input({16});
  const auto y = g.op(aten("addmm.default"), {{"self", tensor_arg(b)}, {"mat1", tensor_arg(x)}, {"mat2", tensor_arg(w)}}, {4, 16});
  g.output({y, x});  // the second output passes the input through
  FxLowerOptions o;
  o.source = "p.json";
  o.pointer = "/supertasks/7/data";
  o.inputs = std::vector<FxBinding>{{"act", {4, 8}, ir::DType::Float32, false}, {"weight", {8, 16}, ir::DType::Float32, true},
                                    {"bias", {16}, ir::DType::Float32, true}};
  o.outputs = std::vector<FxBinding>{{"out", {4, 16}, ir::DType::Float32, false}, {"copy", {4, 8}, ir::DType::Float32, false}};
  const auto low = lower_fx_graph(g.graph(), o);
  const ir::Graph& G = low.graph;
  EXPECT_EQ(op_names(G), (Strings{"matmul", "reshape"}));
  auto T = [&](int id) -> const ir::Tensor& { return G.tensors[static_cast<size_t>(id)]; };
  EXPECT_EQ(T(G.layers[0].inputs[0]).name, "act");
  EXPECT_EQ(T(G.layers[0].inputs[0]).role, ir::TensorRole::GraphInput);
  EXPECT_EQ(T(G.layers[0].inputs[1]).role, ir::TensorRole::Weight);
  EXPECT_EQ(T(G.layers[0].inputs[2]).role, ir::TensorRole::Bias);
  EXPECT_TRUE(G.layers[0].weight_is_parameter);
  EXPECT_EQ(T(G.layers[0].outputs[0]).name, "out");
  EXPECT_EQ(T(G.layers[1].outputs[0]).name, "copy");
  EXPECT_EQ(G.graph_outputs.size(), 2u);
  // Counts and shapes must agree with the supertask.
  auto bad = o;
  bad.inputs->pop_back();
  expect_input_error([&] { lower_fx_graph(g.graph(), bad); }, "/supertasks/7/data/inputs",
                     "the graph has 3 tensor inputs but the supertask has 2");
  bad = o;
  (*bad.inputs)[1].shape = {8, 8};
  expect_input_error([&] { lower_fx_graph(g.graph(), bad); }, "/supertasks/7/data/tensor_values/arg1_1",
                     "graph input 1 'arg1_1' [8,16] differs from the supertask's input 'weight' [8,8]");
  bad = o;
  (*bad.outputs)[0].shape = {4, 4};
  expect_input_error([&] { lower_fx_graph(g.graph(), bad); }, "/supertasks/7/data/outputs/0/as_tensor/name",
                     "graph output 0 'v0' [4,16] differs from the supertask's output 'out' [4,4]");
}

TEST(FxLower, Errors) {
  FxGraph g;
  const auto x = g.input({4, 8});
  g.op(aten("relu.default"), {{"self", tensor_arg("nope")}}, {4, 8});
  g.output({x});
  FxLowerOptions o;
  o.source = "t.json";
  o.pointer = "/p";
  expect_input_error([&] { lower_fx_graph(g.graph(), o); }, "/p/nodes/0/inputs/0/arg/as_tensor/name",
                     "tensor 'nope' is not defined before it is used");
  Json gj = FxGraph().graph();
  gj["inputs"] = {tensor_arg("a")};
  gj["outputs"] = {tensor_arg("a")};
  expect_input_error([&] { lower_fx_graph(gj, o); }, "/p/inputs/0/as_tensor/name", "tensor 'a' has no entry in tensor_values");
}

// ---- fx payloads inside a pipeline ----

json::Json with_fx(const std::string& data) {
  Json p = test::small_pipeline();
  p["supertasks"]["ca"]["kind"] = "fx";
  p["supertasks"]["ca"]["data"] = data;
  return p;
}

TEST(PipelineFx, PayloadLowersOnItsDevice) {
  FxGraph g;
  const auto x = g.input({4, 8}), w = g.input({8, 8});
  g.output({g.op(aten("mm.default"), {{"self", tensor_arg(x)}, {"mat2", tensor_arg(w)}}, {4, 8})});
  const ir::System s = test::read_json(with_fx(g.payload()));
  const ir::SuperTask& ca = s.supertasks[static_cast<size_t>(s.find_supertask("ca"))];
  EXPECT_FALSE(ca.compute->estimated);
  EXPECT_EQ(op_names(ca.compute->graph), (Strings{"matmul"}));
  EXPECT_EQ(ca.compute->macs, 4 * 8 * 8);
  EXPECT_EQ(ca.compute->graph.name, "small/ca");
  EXPECT_EQ(ca.compute->graph.layers[0].pointer, "/supertasks/ca/data/nodes/0");
}

TEST(PipelineFx, UnreadablePayloadsAreEstimates) {
  for (const auto& [data, reason] : std::vector<std::pair<std::string, std::string>>{
           {"!!!", "not base64"},
           {base64_encode("[1, 2"), "not JSON"},
           {FxGraph().payload(), "the graph has 0 tensor inputs but the supertask has 2"}}) {
    const ir::System s = test::read_json(with_fx(data));
    const ir::SuperTask& ca = s.supertasks[static_cast<size_t>(s.find_supertask("ca"))];
    EXPECT_TRUE(ca.compute->estimated) << reason;
    EXPECT_NE(ca.compute->estimate_reason.find(reason), std::string::npos) << ca.compute->estimate_reason;
    EXPECT_EQ(ca.compute->flops, 0);
    EXPECT_EQ(ca.compute->bytes, (32 + 64 + 32) * 4);
    EXPECT_EQ(op_names(ca.compute->graph), (Strings{"opaque"}));
    bool warned = false;
    for (const auto& w : s.warnings) warned |= w.find("supertask 'ca': fx payload") != std::string::npos;
    EXPECT_TRUE(warned) << reason;
    PipelineReadOptions strict;
    strict.strict_payloads = true;
    try {
      test::read_json(with_fx(data), "", strict);
      ADD_FAILURE() << "strict: no error for " << reason;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where().rfind("/supertasks/ca/data", 0), 0u) << e.what();
    }
  }
}

}  // namespace
}  // namespace npusim::frontends::pipeline
