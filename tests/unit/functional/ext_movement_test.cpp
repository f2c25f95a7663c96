// Functional kernels of the npusim extension ops, part 3: transpose, concat, split (several
// outputs), slice, gather, pad, requantize and opaque. Every expected value is worked out by
// hand in the comments.
#include <gtest/gtest.h>

#include "models/functional/movement.h"
#include "tests/unit/functional/ext_layer.h"

namespace npusim::functional {
namespace {

using namespace ext_test;

// [0, 1, ..., n-1] in `shape`.
Tensor iota(ir::Shape shape, DType dt = DType::Float32) {
  Tensor t(std::move(shape), dt);
  for (int64_t i = 0; i < t.size(); ++i) t.data[i] = static_cast<float>(i);
  return t;
}

TEST(ExtTranspose, TwoAndThreeAxes) {
  // [[0,1,2],[3,4,5]]^T = [[0,3],[1,4],[2,5]]
  Tensor y = transpose(iota({2, 3}), {1, 0});
  EXPECT_EQ(y.shape, (ir::Shape{3, 2}));
  EXPECT_EQ(y.data, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // x[i,j,k] = 12i + 4j + k, perm [2,0,1]: y[k,i,j] = x[i,j,k].
  y = transpose(iota({2, 3, 4}), {2, 0, 1});
  EXPECT_EQ(y.shape, (ir::Shape{4, 2, 3}));
  EXPECT_EQ(y.data, (std::vector<float>{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}));
  EXPECT_THROW(transpose(iota({2, 3}), {0, 0}), InternalError);
}

TEST(ExtTranspose, RunLayerKeepsIntegersAndRoundsToFloat16) {
  ir::Layer l = layer(OpKind::Transpose, {{2, 3}}, {{3, 2}}, DType::Int8);
  l.perm = {1, 0};
  Tensor y = run_layer(l, {Tensor({2, 3}, {-128, 1, 2, 3, 4, 127}, DType::Int8)}, {});
  EXPECT_EQ(y.dtype, DType::Int8);
  EXPECT_EQ(y.data, (std::vector<float>{-128, 3, 1, 4, 2, 127}));
  // float32 in, float16 out: 0.1 -> 0.0999755859375 (numpy float16 agrees).
  l = layer(OpKind::Transpose, {{1, 2}}, {{2, 1}});
  l.perm = {1, 0};
  l.output_dtypes = {DType::Float16};
  EXPECT_EQ(run_layer(l, {Tensor({1, 2}, {0.1f, 2})}, {}).data, (std::vector<float>{0.0999755859375f, 2}));
  l.perm = {0, 0};
  EXPECT_EQ(failure(l, {Tensor({1, 2})}).where, "/L/perm");
}

TEST(ExtConcat, AlongAnAxisNegativeToo) {
  // [[1],[2]] ++ [[3,4],[5,6]] along axis 1 = [[1,3,4],[2,5,6]]
  const Tensor a({2, 1}, {1, 2}), b({2, 2}, {3, 4, 5, 6});
  EXPECT_EQ(concat({a, b}, 1).data, (std::vector<float>{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(concat({a, b}, -1).shape, (ir::Shape{2, 3}));
  // along axis 0: rows appended.
  EXPECT_EQ(concat({Tensor({1, 2}, {1, 2}), Tensor({2, 2}, {3, 4, 5, 6})}, 0).data, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_THROW(concat({a, Tensor({3, 2})}, 1), InternalError);
  ir::Layer l = layer(OpKind::Concat, {{2, 1}, {2, 2}}, {{2, 3}});
  l.axes = {-1};
  EXPECT_EQ(run_layer(l, {a, b}, {}).data, (std::vector<float>{1, 3, 4, 2, 5, 6}));
  l.axes = {0};
  EXPECT_EQ(failure(l, {a, b}).where, "/L/input_shape/1");
}

TEST(ExtSplit, SeveralOutputs) {
  // [[0,1,2],[3,4,5]] split along the last axis into 1 + 2: [[0],[3]] and [[1,2],[4,5]].
  std::vector<Tensor> parts = split(iota({2, 3}), -1, {1, 2});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape, (ir::Shape{2, 1}));
  EXPECT_EQ(parts[0].data, (std::vector<float>{0, 3}));
  EXPECT_EQ(parts[1].data, (std::vector<float>{1, 2, 4, 5}));
  EXPECT_THROW(split(iota({2, 3}), 1, {1, 1}), InternalError);

  ir::Layer l = layer(OpKind::Split, {{2, 3}}, {{2, 1}, {2, 2}});
  l.axes = {1};
  l.output_dtypes = {DType::Float32, DType::Float16};  // output 2 rounds to float16
  const std::vector<Tensor> out = run_layer_outputs(l, {Tensor({2, 3}, {0, 0.1f, 2, 3, 4, 5})}, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data, (std::vector<float>{0, 3}));
  EXPECT_EQ(out[1].dtype, DType::Float16);
  EXPECT_EQ(out[1].data, (std::vector<float>{0.0999755859375f, 2, 4, 5}));
  // run_layer gives output 1 of the split (the first).
  EXPECT_EQ(run_layer(l, {Tensor({2, 3}, {0, 0.1f, 2, 3, 4, 5})}, {}).data, (std::vector<float>{0, 3}));
  l.output_shapes = {{2, 1}, {2, 1}};  // covers 2 of 3
  EXPECT_EQ(failure(l, {iota({2, 3})}).where, "/L/output_shape");
}

TEST(ExtSlice, NegativeClampedAndStepped) {
  const Tensor x = iota({5});  // [0,1,2,3,4]
  EXPECT_EQ(slice(x, {-3}, {100}, {}).data, (std::vector<float>{2, 3, 4}));  // end clamped to 5
  EXPECT_EQ(slice(x, {-10}, {2}, {}).data, (std::vector<float>{0, 1}));      // start clamped to 0
  EXPECT_EQ(slice(x, {0}, {5}, {2}).data, (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(slice(x, {1}, {-1}, {2}).data, (std::vector<float>{1, 3}));
  // [3,4] = 0..11, rows 1..2, columns 0 and 2 of [0, 3): [[4,6],[8,10]].
  const Tensor y = slice(iota({3, 4}), {1, 0}, {3, -1}, {1, 2});
  EXPECT_EQ(y.shape, (ir::Shape{2, 2}));
  EXPECT_EQ(y.data, (std::vector<float>{4, 6, 8, 10}));
  std::string why;
  EXPECT_TRUE(slice_output_shape({5}, {3}, {2}, {}, &why).empty());
  EXPECT_NE(why.find("empty"), std::string::npos) << why;
  EXPECT_THROW(slice(x, {0}, {5}, {0}), InternalError);

  ir::Layer l = layer(OpKind::Slice, {{3, 4}}, {{2, 2}});
  l.starts = {1, 0};
  l.ends = {3, -1};
  l.steps = {1, 2};
  EXPECT_EQ(run_layer(l, {iota({3, 4})}, {}).data, (std::vector<float>{4, 6, 8, 10}));
  l.steps = {1, 0};
  EXPECT_EQ(failure(l, {iota({3, 4})}).where, "/L/steps/1");
}

TEST(ExtGather, EmbeddingRowsNegativeIndicesAndOtherAxis) {
  // table [[1,2],[3,4],[5,6]], indices [[2,0],[-1,1]] along axis 0 -> [2,2,2]:
  // rows 2, 0, 2 (= -1), 1.
  const Tensor table({3, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor ix({2, 2}, {2, 0, -1, 1}, DType::Int32);
  Tensor y = gather(table, ix, 0);
  EXPECT_EQ(y.shape, (ir::Shape{2, 2, 2}));
  EXPECT_EQ(y.data, (std::vector<float>{5, 6, 1, 2, 5, 6, 3, 4}));
  // Along axis 1 of [[1,2,3],[4,5,6]] with [2, 0]: [[3,1],[6,4]].
  y = gather(Tensor({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor({2}, {2, 0}, DType::Int64), -1);
  EXPECT_EQ(y.shape, (ir::Shape{2, 2}));
  EXPECT_EQ(y.data, (std::vector<float>{3, 1, 6, 4}));
  EXPECT_THROW(gather(table, Tensor({1}, {3}), 0), InternalError);
}

TEST(ExtGather, RunLayerAndOutOfRangeIndex) {
  ir::Layer l = layer(OpKind::Gather, {{3, 2}, {2, 2}}, {{2, 2, 2}});
  l.name = "embed";
  l.pointer = "/embed";
  l.input_dtypes[1] = DType::Int32;
  const Tensor table({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(run_layer(l, {table, Tensor({2, 2}, {2, 0, -1, 1}, DType::Int32)}, {}).data,
            (std::vector<float>{5, 6, 1, 2, 5, 6, 3, 4}));
  // Index 3 at position 2 (table has rows 0..2, or -3..-1).
  Failure f = failure(l, {table, Tensor({2, 2}, {0, 1, 3, 0}, DType::Int32)});
  EXPECT_EQ(f.where, "/embed/file_list/input_activation2");
  EXPECT_NE(f.message.find("gather 'embed'"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("index 3 (position 2"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("[-3, 2]"), std::string::npos) << f.message;
  f = failure(l, {table, Tensor({2, 2}, {0, -4, 0, 0}, DType::Int32)});
  EXPECT_NE(f.message.find("index -4 (position 1"), std::string::npos) << f.message;
  // Float indices break the IR's rule.
  l.input_dtypes[1] = DType::Float32;
  EXPECT_EQ(failure(l, {table, Tensor({2, 2})}).where, "/embed/input_dtype/1");
}

TEST(ExtPad, ConstantZero) {
  // [[1,2],[3,4]] with one row before and two columns after: [[0,0,0,0],[1,2,0,0],[3,4,0,0]].
  const Tensor x({2, 2}, {1, 2, 3, 4});
  Tensor y = pad(x, {1, 0, 0, 2});
  EXPECT_EQ(y.shape, (ir::Shape{3, 4}));
  EXPECT_EQ(y.data, (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  ir::Layer l = layer(OpKind::Pad, {{2, 2}}, {{3, 4}}, DType::Int8);
  l.pads = {1, 0, 0, 2};
  y = run_layer(l, {Tensor({2, 2}, {1, 2, 3, 4}, DType::Int8)}, {});
  EXPECT_EQ(y.dtype, DType::Int8);
  EXPECT_EQ(y.data, (std::vector<float>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  l.pads = {1, 0};
  EXPECT_EQ(failure(l, {x}).where, "/L/pads");
}

TEST(ExtRequantize, WithAndWithoutQuantInfo) {
  // real = (q + 0) * 0.5 = [5, -10, 50]; * 3 - 1 = [14, -31, 149] -> saturated [14, -31, 127].
  ir::Layer l = layer(OpKind::Requantize, {{3}}, {{3}}, DType::Int8);
  l.gemini.quant.present = true;
  l.gemini.quant.input_scale1 = 0.5;
  l.gemini.quant.output_scale = 3;
  l.gemini.quant.output_zero_point = -1;
  const Tensor q({3}, {10, -20, 100}, DType::Int8);
  Tensor y = run_layer(l, {q}, {});
  EXPECT_EQ(y.dtype, DType::Int8);
  EXPECT_EQ(y.data, (std::vector<float>{14, -31, 127}));
  // round_type floor: [1, -1] * 0.5 * 3 - 1 = [0.5, -2.5] -> [0, -3].
  l.gemini.quant.round_type = "floor";
  EXPECT_EQ(run_layer(l, {Tensor({3}, {1, -1, 0}, DType::Int8)}, {}).data, (std::vector<float>{0, -3, -1}));
  // Without quant_info: the identity, saturated to the output dtype (int16 300 -> int8 127).
  l.gemini.quant = {};
  EXPECT_EQ(run_layer(l, {q}, {}).data, (std::vector<float>{10, -20, 100}));
  l.input_dtypes = {DType::Int16};
  l.input_shapes = l.output_shapes = {{2}};
  EXPECT_EQ(run_layer(l, {Tensor({2}, {300, -300}, DType::Int16)}, {}).data, (std::vector<float>{127, -128}));
}

TEST(ExtOpaque, HasNoReference) {
  ir::Layer l = layer(OpKind::Opaque, {{2}}, {{2}});
  l.opaque_label = "LSTM";
  Failure f = failure(l, {Tensor({2})});
  EXPECT_EQ(f.where, "/L/operation");
  EXPECT_NE(f.message.find("opaque op 'LSTM' has no functional reference"), std::string::npos) << f.message;
  l.opaque_label.clear();  // no label: the layer's name
  EXPECT_NE(failure(l, {}).message.find("opaque op 'L'"), std::string::npos);
}

}  // namespace
}  // namespace npusim::functional
