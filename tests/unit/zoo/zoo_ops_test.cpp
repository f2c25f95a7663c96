// `sim zoo op`: a single-operation workload for every ir::OpKind, valid and surviving the
// Frontend IR round trip; bad operations, keys and values are InputErrors naming the key.
#include <map>
#include <string>

#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"
#include "tests/unit/zoo/op_examples.h"
#include "tests/unit/zoo/roundtrip_util.h"

namespace {

using npusim::InputError;
using npusim::frontends::zoo::make_op_graph;
using npusim::frontends::zoo::op_keys;
using npusim::frontends::zoo::OpWorkload;
namespace ir = npusim::ir;

OpWorkload w(const std::string& op, std::vector<std::string> args, const std::string& dtype = "", int batch = 1) {
  OpWorkload o;
  o.op = op;
  o.args = std::move(args);
  o.dtype = dtype;
  o.batch = batch;
  return o;
}

using npusim::test::op_examples;
const auto& examples = op_examples;  // a function: examples() is the table

TEST(ZooOps, EveryOpKindBuildsValidatesAndRoundTrips) {
  for (int i = 0; i < ir::kNumOpKinds; ++i) {
    const std::string name = ir::op_name(static_cast<ir::OpKind>(i));
    SCOPED_TRACE(name);
    auto it = examples().find(name);
    ASSERT_NE(it, examples().end()) << "no example for " << name;
    EXPECT_FALSE(op_keys(static_cast<ir::OpKind>(i)).empty());
    for (const char* dtype : {"", "int8", "fp32"}) {
      const ir::Graph g = make_op_graph(w(name, it->second, dtype));
      ASSERT_EQ(g.layers.size(), 1u);
      EXPECT_EQ(g.layers[0].op, static_cast<ir::OpKind>(i));
      ir::validate(g);
      const ir::Graph back = zoo_test::round_trip(g, name + ".json");
      ir::validate(back);
      EXPECT_EQ(zoo_test::compare_graphs(g, back), 0);
      EXPECT_EQ(back.graph_inputs.size(), g.graph_inputs.size());
    }
  }
}

const ir::Layer& only(const ir::Graph& g) { return g.layers.at(0); }

TEST(ZooOps, ShapesAndAttributes) {
  const ir::Graph mm = make_op_graph(w("matmul", {"m=512", "n=11008", "k=4096"}, "fp16"));
  EXPECT_EQ(only(mm).input_shapes, (std::vector<ir::Shape>{{512, 4096}, {4096, 11008}}));
  EXPECT_EQ(only(mm).macs(), int64_t{512} * 11008 * 4096);
  EXPECT_EQ(mm.tensor(only(mm).inputs[1]).role, ir::TensorRole::Weight);
  EXPECT_EQ(mm.tensor(only(mm).inputs[0]).role, ir::TensorRole::GraphInput);
  EXPECT_EQ(only(mm).input_dtypes[0], ir::DType::Float16);

  const ir::Graph conv = make_op_graph(w("conv2d", examples().at("conv2d")));
  EXPECT_EQ(only(conv).output_shapes[0], (ir::Shape{1, 64, 56, 56}));
  EXPECT_EQ(only(conv).macs(), int64_t{56} * 56 * 64 * 64 * 9);

  const ir::Graph bmm = make_op_graph(w("bmm", {"m=128", "n=256", "k=64"}, "", 8));  // alias, --batch
  EXPECT_EQ(only(bmm).output_shapes[0], (ir::Shape{8, 128, 256}));
  EXPECT_EQ(bmm.tensor(only(bmm).inputs[1]).role, ir::TensorRole::GraphInput);

  EXPECT_EQ(only(make_op_graph(w("add", {"shape=1048576"}))).output_shapes[0], (ir::Shape{1048576}));
  EXPECT_EQ(only(make_op_graph(w("reduce_sum", {"shape=512x4096", "axis=-1"}))).output_shapes[0], (ir::Shape{512, 1}));
  EXPECT_EQ(only(make_op_graph(w("reduce_mean", examples().at("reduce_mean")))).output_shapes[0], (ir::Shape{2, 64}));
  EXPECT_EQ(only(make_op_graph(w("element_wise_mul", examples().at("element_wise_mul")))).output_shapes[0],
            (ir::Shape{4, 8, 256}));
  EXPECT_EQ(only(make_op_graph(w("slice", examples().at("slice")))).output_shapes[0], (ir::Shape{256, 1536}));
  EXPECT_EQ(only(make_op_graph(w("avg_pool2d", examples().at("avg_pool2d")))).output_shapes[0], (ir::Shape{1, 64, 8, 8}));

  const ir::Graph split = make_op_graph(w("split", examples().at("split")));
  EXPECT_EQ(only(split).output_shapes, (std::vector<ir::Shape>{{10, 768}, {10, 768}, {10, 768}}));
  EXPECT_EQ(split.graph_outputs.size(), 3u);

  const ir::Graph gather = make_op_graph(w("embedding", examples().at("gather")));
  EXPECT_EQ(only(gather).output_shapes[0], (ir::Shape{4, 128, 4096}));
  EXPECT_EQ(only(gather).input_dtypes[1], ir::DType::Int32);
  EXPECT_EQ(gather.tensor(only(gather).inputs[0]).role, ir::TensorRole::Weight);

  const ir::Graph ln = make_op_graph(w("layer_norm", {"shape=512x4096"}));
  EXPECT_EQ(only(ln).input_shapes, (std::vector<ir::Shape>{{512, 4096}, {4096}, {4096}}));
  EXPECT_EQ(only(make_op_graph(w("rms_norm", {"shape=512x4096", "affine=0"}))).inputs.size(), 1u);

  const ir::Graph q = make_op_graph(w("quantize", {"shape=16"}, "fp32"));
  EXPECT_EQ(only(q).input_dtypes[0], ir::DType::Float32);
  EXPECT_EQ(only(q).output_dtypes[0], ir::DType::Int8);

  const ir::Graph op = make_op_graph(w("opaque", {"shape=100", "flops=7"}, "fp32"));
  EXPECT_EQ(only(op).opaque_bytes, 800);  // default: input + output bytes
}

void expect_error(const OpWorkload& o, const std::string& where, const std::vector<std::string>& texts) {
  try {
    make_op_graph(o);
    ADD_FAILURE() << "no error for " << o.op << " at " << where;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "zoo op");
    EXPECT_EQ(e.where(), where) << e.what();
    for (const std::string& t : texts) EXPECT_NE(std::string(e.what()).find(t), std::string::npos) << e.what();
  }
}

TEST(ZooOps, BadOperationsKeysAndValuesAreInputErrors) {
  expect_error(w("convolution", {}), "op", {"unknown operation 'convolution'", "conv2d", "softmax"});
  expect_error(w("matmul", {"m=1", "n=2", "k=3", "q=4"}), "q",
               {"unknown key 'q' for matmul", "valid keys for matmul: m, n, k, b, bias, transpose_a, transpose_b"});
  expect_error(w("matmul", {"m=1", "k=3"}), "n", {"matmul needs n=", "valid keys"});
  expect_error(w("matmul", {"m=1", "n=x2", "k=3"}), "n", {"expected an integer, got 'x2'"});
  expect_error(w("matmul", {"m=0", "n=2", "k=3"}), "m", {"got 0"});
  expect_error(w("softmax", {"shape=4x0"}), "shape", {"got 0"});
  expect_error(w("softmax", {"shape=4x8", "axis=2"}), "axis", {"out of range"});
  expect_error(w("softmax", {"shape"}), "shape", {"expected key=value"});
  expect_error(w("softmax", {"shape=4", "shape=5"}), "shape", {"twice"});
  expect_error(w("clip", {"shape=4", "min=abc"}), "min", {"expected a number"});
  expect_error(w("relu", {"shape=4"}, "", 4), "batch", {"shape="});
  expect_error(w("add", {"shape=4x3", "shape2=5"}), "shape2", {"do not broadcast"});
  expect_error(w("transpose", {"shape=4x3", "perm=0,0"}), "perm", {"permutation"});
  expect_error(w("reshape", {"shape=4x3", "to=5"}), "to", {"12 elements"});
  expect_error(w("pad", {"shape=4x3", "pads=1,1"}), "pads", {"2 entries"});
  expect_error(w("conv2d", {"c=3", "h=2", "w=2", "k=8", "r=3"}), "r", {"does not fit"});
  expect_error(w("conv2d", {"c=6", "h=8", "w=8", "k=8", "r=3", "groups=4"}), "groups", {"must divide"});
  expect_error(w("relu", {"shape=4"}, "int4"), "dtype", {"int4"});
}

}  // namespace
