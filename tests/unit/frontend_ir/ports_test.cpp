// Multi-output operations in the Frontend IR: output k > 0 of a split is named "<layer>:<k>" in
// previous_layer, so consumers of equal-shaped outputs keep their own output.
#include <gtest/gtest.h>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "frontends/frontend_ir/frontend_ir_writer.h"
#include "sim/ir/graph.h"
#include "tests/unit/expect_input_error.h"

using namespace npusim;

namespace {

ir::Graph split_then_sub() {
  ir::Graph g;
  g.source = g.name = "ports";
  auto t = [&](const std::string& n, ir::Shape s, ir::TensorRole r) {
    ir::Tensor x;
    x.name = n;
    x.shape = std::move(s);
    x.role = r;
    x.dtype = ir::DType::Float16;
    return g.add_tensor(x);
  };
  const int x = t("input1", {1, 8, 4}, ir::TensorRole::GraphInput);
  const int a = t("a", {1, 4, 4}, ir::TensorRole::Activation);
  const int b = t("b", {1, 4, 4}, ir::TensorRole::Activation);
  const int y = t("y", {1, 4, 4}, ir::TensorRole::GraphOutput);
  ir::Layer s;
  s.name = "split";
  s.op = ir::OpKind::Split;
  s.axes = {1};
  s.inputs = {x};
  s.outputs = {a, b};
  ir::Layer d;
  d.index = 1;
  d.name = "sub";
  d.op = ir::OpKind::Sub;
  d.inputs = {b, a};  // the second half minus the first: order matters
  d.outputs = {y};
  g.layers = {s, d};
  ir::derive_edges(g);
  ir::validate(g);
  return g;
}

TEST(FrontendIrPorts, SplitOutputsKeepTheirIdentityThroughWriteAndRead) {
  const ir::Graph g = split_then_sub();
  EXPECT_EQ(g.layers[1].previous, (std::vector<std::string>{"split:1", "split"}));
  const auto doc = frontends::write_frontend_ir(g);
  EXPECT_EQ(doc["sub"]["previous_layer"][0], "split:1");
  const ir::Graph r = frontends::parse_frontend_ir(doc, "ports.json");
  const ir::Layer& sub = *r.find("sub");
  const ir::Layer& split = *r.find("split");
  ASSERT_EQ(split.outputs.size(), 2u);
  EXPECT_EQ(sub.inputs[0], split.outputs[1]);
  EXPECT_EQ(sub.inputs[1], split.outputs[0]);
}

TEST(FrontendIrPorts, APortBeyondTheProducersOutputsIsAnError) {
  auto doc = frontends::write_frontend_ir(split_then_sub());
  doc["sub"]["previous_layer"][0] = "split:2";
  test::expect_input_error([&] { frontends::parse_frontend_ir(doc, "ports.json"); }, "/sub/previous_layer/0", "names output 2");
}

}  // namespace
