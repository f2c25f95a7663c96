// check_graph on graphs of npusim extension ops built in memory, with .npy files written by the
// test: matmul -> gelu -> layer_norm -> softmax (values computed offline with PyTorch 1.13.1 in
// float64 and rounded to float32 with numpy), and split -> relu / opaque (by hand).
#include <gtest/gtest.h>

#include "models/functional/npy.h"
#include "sim/check/check.h"
#include "tests/unit/check/tiny_set.h"

using namespace npusim;
using namespace check_test;

namespace {

using ir::DType;
using ir::OpKind;
using ir::TensorRole;

int tensor(ir::Graph& g, const std::string& name, ir::Shape shape, TensorRole role) {
  ir::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = DType::Float32;
  t.role = role;
  return g.add_tensor(std::move(t));
}

ir::Layer& op(ir::Graph& g, const std::string& name, OpKind kind, std::vector<int> in, std::vector<int> out,
              std::map<std::string, std::string> files) {
  ir::Layer l;
  l.index = static_cast<int>(g.layers.size());
  l.name = name;
  l.pointer = "/" + name;
  l.op = kind;
  l.inputs = std::move(in);
  l.outputs = std::move(out);
  l.files = std::move(files);
  g.layers.push_back(std::move(l));
  return g.layers.back();
}

void npy(const std::string& path, std::vector<int64_t> shape, const std::vector<float>& v) {
  write_npy(path, make_npy(NpyType::F32, shape, v));
}

const check::LayerCheck& layer(const check::CheckReport& r, const std::string& name) {
  for (const auto& l : r.layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

// x [2,3] . W [3,4] + b = h; gelu(h); layer_norm over the last axis with gamma / beta (from
// file_list k / b: the tensor table's weight and bias roles); softmax over the last axis.
//   h = [[1, 0.5, -1.5, 0.5], [0.5, 2.5, -0.5, -1.5]]   (by hand: exact)
const std::vector<float> kX = {1, 0, -1, 0.5f, 2, 0};
const std::vector<float> kW = {1, 0, 0, 1, 0, 1, 0, -1, 0, 0, 1, 0.5f};
const std::vector<float> kBias = {0, 0.5f, -0.5f, 0};
const std::vector<float> kH = {1, 0.5f, -1.5f, 0.5f, 0.5f, 2.5f, -0.5f, -1.5f};
const std::vector<float> kGelu = {0.8413448f, 0.34573123f, -0.1002108f, 0.34573123f,
                                  0.34573123f, 2.4844759f, -0.15426877f, -0.1002108f};
const std::vector<float> kGamma = {1, 2, 0.5f, -1}, kBeta = {0, 0.25f, 0, 1};
const std::vector<float> kLn = {1.4504426f, 0.17544875f, -0.68794566f, 1.0372757f,
                                -0.27605733f, 3.6577435f, -0.36946455f, 1.6888853f};
const std::vector<float> kSoftmax = {0.48571295f, 0.13572408f, 0.05723866f, 0.32132432f,
                                     0.016626166f, 0.8496109f, 0.015143487f, 0.118619435f};

struct Transformerish {
  std::string dir;
  ir::Graph g;
  explicit Transformerish(const std::string& name) : dir(scratch(name)) {
    g.name = "transformerish";
    g.source = "memory";
    const int x = tensor(g, "x", {2, 3}, TensorRole::GraphInput), w = tensor(g, "w", {3, 4}, TensorRole::Weight);
    const int b = tensor(g, "b", {4}, TensorRole::Bias), h = tensor(g, "h", {2, 4}, TensorRole::Activation);
    const int ge = tensor(g, "g", {2, 4}, TensorRole::Activation), ga = tensor(g, "gamma", {4}, TensorRole::Weight);
    const int be = tensor(g, "beta", {4}, TensorRole::Bias), n = tensor(g, "n", {2, 4}, TensorRole::Activation);
    const int s = tensor(g, "s", {2, 4}, TensorRole::GraphOutput);
    op(g, "mm", OpKind::MatMul, {x, w, b}, {h},
       {{"input_activation1", "mm_in.npy"}, {"k", "w/mm_k.npy"}, {"b", "w/mm_b.npy"}, {"output_activation1", "mm_out.npy"}});
    op(g, "act", OpKind::Gelu, {h}, {ge}, {{"input_activation1", "act_in.npy"}, {"output_activation1", "act_out.npy"}});
    op(g, "ln", OpKind::LayerNorm, {ge, ga, be}, {n},
       {{"input_activation1", "ln_in.npy"}, {"k", "w/ln_k.npy"}, {"b", "w/ln_b.npy"}, {"output_activation1", "ln_out.npy"}});
    op(g, "sm", OpKind::Softmax, {n}, {s}, {{"input_activation1", "sm_in.npy"}, {"output_activation1", "sm_out.npy"}});
    ir::derive_edges(g);
    ir::validate(g);
    fs::create_directories(dir + "/w");
    npy(dir + "/mm_in.npy", {2, 3}, kX);
    npy(dir + "/w/mm_k.npy", {3, 4}, kW);
    npy(dir + "/w/mm_b.npy", {4}, kBias);
    npy(dir + "/mm_out.npy", {2, 4}, kH);
    npy(dir + "/act_in.npy", {2, 4}, kH);
    npy(dir + "/act_out.npy", {2, 4}, kGelu);
    npy(dir + "/ln_in.npy", {2, 4}, kGelu);
    npy(dir + "/w/ln_k.npy", {4}, kGamma);
    npy(dir + "/w/ln_b.npy", {4}, kBeta);
    npy(dir + "/ln_out.npy", {2, 4}, kLn);
    npy(dir + "/sm_in.npy", {2, 4}, kLn);
    npy(dir + "/sm_out.npy", {2, 4}, kSoftmax);
  }
  check::CheckReport run(bool chain = false, const std::string& dump = "") const {
    check::CheckOptions o;
    o.npy_dir = dir;
    o.chain = chain;
    o.dump_dir = dump;
    return check::check_graph(g, o);
  }
};

TEST(CheckExtensionOps, MatmulGeluLayerNormSoftmaxPass) {
  Transformerish t("ext_pass");
  const auto r = t.run();
  ASSERT_EQ(r.layers.size(), 4u);
  EXPECT_EQ(r.passed, 4) << check::format_check_table(r);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_TRUE(r.ok());
  for (const auto& l : r.layers) {
    EXPECT_EQ(l.status, check::LayerStatus::Pass) << l.name;
    EXPECT_LE(l.cmp.max_units, 1.0) << l.name;  // within 1 float32 ULP of the float64 reference
    EXPECT_EQ(l.cmp.count, 8) << l.name;
  }
  EXPECT_EQ(layer(r, "mm").cmp.mismatches, 0);  // exact
  EXPECT_EQ(layer(r, "ln").op, "layer_norm");
}

TEST(CheckExtensionOps, CorruptedOutputFailsExactlyThatLayer) {
  Transformerish t("ext_corrupt");
  std::vector<float> bad = kGelu;
  bad[5] = 2.49f;  // 2.4844759 -> 2.49: far beyond float32 tolerance
  npy(t.dir + "/act_out.npy", {2, 4}, bad);
  const auto r = t.run();
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.passed, 3);
  EXPECT_FALSE(r.ok());
  const auto& act = layer(r, "act");
  EXPECT_EQ(act.status, check::LayerStatus::Fail);
  EXPECT_EQ(act.cmp.out_of_tolerance, 1);
  EXPECT_NEAR(act.cmp.max_abs_error, 2.49 - 2.4844759, 1e-6);
  // ln reads its own golden input, so the error does not spread.
  EXPECT_EQ(layer(r, "ln").status, check::LayerStatus::Pass);
  EXPECT_NE(check::format_check_table(r).find("failed: act\n"), std::string::npos);
}

TEST(CheckExtensionOps, ChainedWithoutIntermediateFiles) {
  Transformerish t("ext_chain");
  for (const char* f : {"act_in.npy", "ln_in.npy", "sm_in.npy"}) fs::remove(t.dir + "/" + f);
  // Unchained, the golden inputs are needed: a missing one is an input error naming it.
  EXPECT_NE(input_error_of([&] { t.run(false); }).find("act_in.npy"), std::string::npos);
  const auto r = t.run(true);
  EXPECT_EQ(r.passed, 4) << check::format_check_table(r);
  EXPECT_TRUE(r.ok());
}

// x [2,4] = [[-1,2,-3,4],[5,-6,7,-8]] split along axis 1 into [2,1] and [2,3]; relu of part 2;
// an opaque op on part 1 (no reference: skipped).
struct SplitSet {
  std::string dir;
  ir::Graph g;
  explicit SplitSet(const std::string& name) : dir(scratch(name)) {
    g.name = "splitset";
    g.source = "memory";
    const int x = tensor(g, "x", {2, 4}, TensorRole::GraphInput);
    const int p0 = tensor(g, "p0", {2, 1}, TensorRole::Activation), p1 = tensor(g, "p1", {2, 3}, TensorRole::Activation);
    const int r = tensor(g, "r", {2, 3}, TensorRole::GraphOutput), o = tensor(g, "o", {2, 1}, TensorRole::GraphOutput);
    op(g, "sp", OpKind::Split, {x}, {p0, p1},
       {{"input_activation1", "sp_in.npy"}, {"output_activation1", "sp_out1.npy"}, {"output_activation2", "sp_out2.npy"}})
        .axes = {1};
    op(g, "relu", OpKind::Relu, {p1}, {r}, {{"input_activation1", "relu_in.npy"}, {"output_activation1", "relu_out.npy"}});
    ir::Layer& opq = op(g, "custom", OpKind::Opaque, {p0}, {o}, {{"input_activation1", "custom_in.npy"}, {"output_activation1", "custom_out.npy"}});
    opq.opaque_label = "CustomOp";
    opq.opaque_flops = 2;
    ir::derive_edges(g);
    ir::validate(g);
    npy(dir + "/sp_in.npy", {2, 4}, {-1, 2, -3, 4, 5, -6, 7, -8});
    npy(dir + "/sp_out1.npy", {2, 1}, {-1, 5});
    npy(dir + "/sp_out2.npy", {2, 3}, {2, -3, 4, -6, 7, -8});
    npy(dir + "/relu_in.npy", {2, 3}, {2, -3, 4, -6, 7, -8});
    npy(dir + "/relu_out.npy", {2, 3}, {2, 0, 4, 0, 7, 0});
  }
  check::CheckReport run(bool chain = false, const std::string& dump = "") const {
    check::CheckOptions o;
    o.npy_dir = dir;
    o.chain = chain;
    o.dump_dir = dump;
    return check::check_graph(g, o);
  }
};

TEST(CheckExtensionOps, SplitComparesEveryOutputAndOpaqueIsSkipped) {
  SplitSet s("ext_split");
  EXPECT_EQ(s.g.layers[1].previous, (std::vector<std::string>{"sp:1"}));
  const auto r = s.run();
  EXPECT_EQ(r.passed, 2);
  EXPECT_EQ(r.failed, 0);
  EXPECT_EQ(r.skipped, 1);
  EXPECT_EQ(r.no_reference, 1);
  EXPECT_TRUE(r.ok());  // a layer without reference does not fail the check
  EXPECT_EQ(layer(r, "sp").cmp.count, 8);  // both outputs compared
  const auto& c = layer(r, "custom");
  EXPECT_EQ(c.status, check::LayerStatus::Skipped);
  EXPECT_TRUE(c.no_reference);
  const std::string table = check::format_check_table(r);
  EXPECT_NE(table.find("skipped: no reference (opaque op 'CustomOp')"), std::string::npos) << table;
  EXPECT_NE(table.find("3 layers: 2 pass, 0 fail, 1 skipped (1 no reference) ("), std::string::npos) << table;
  // A wrong second output fails the split.
  npy(s.dir + "/sp_out2.npy", {2, 3}, {2, -3, 4, -6, 7, 8});
  const auto bad = s.run();
  EXPECT_EQ(layer(bad, "sp").status, check::LayerStatus::Fail);
  EXPECT_EQ(layer(bad, "sp").cmp.out_of_tolerance, 1);
  EXPECT_EQ(layer(bad, "relu").status, check::LayerStatus::Pass);
}

TEST(CheckExtensionOps, ChainPassesTheSplitsSecondOutputAndDumpWritesBoth) {
  SplitSet s("ext_split_chain");
  fs::remove(s.dir + "/relu_in.npy");
  const std::string d = s.dir + "/dump";
  const auto r = s.run(true, d);
  EXPECT_EQ(layer(r, "relu").status, check::LayerStatus::Pass) << check::format_check_table(r);
  EXPECT_EQ(functional::read_npy(d + "/sp_out1.npy").to_float(), (std::vector<float>{-1, 5}));
  EXPECT_EQ(functional::read_npy(d + "/sp_out2.npy").to_float(), (std::vector<float>{2, -3, 4, -6, 7, -8}));
  EXPECT_EQ(functional::read_npy(d + "/relu_out.npy").to_float(), (std::vector<float>{2, 0, 4, 0, 7, 0}));
}

}  // namespace
