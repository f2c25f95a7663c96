// sim/check: the per-layer functional check against golden .npy files (tiny_set.h holds the
// hand-computed set).
#include <gtest/gtest.h>

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "models/functional/npy.h"
#include "sim/check/check.h"
#include "sim/check/golden_io.h"
#include "tests/unit/check/tiny_set.h"

using namespace npusim;
using namespace check_test;

namespace {

struct Tiny {
  std::string dir, ir;
  ir::Graph graph;
  explicit Tiny(const std::string& name) : dir(scratch(name)), ir(write_tiny_set(dir)), graph(frontends::read_frontend_ir(ir)) {}
  check::CheckReport run(bool chain = false, const std::string& dump = "") const {
    check::CheckOptions o;
    o.npy_dir = dir;
    o.chain = chain;
    o.dump_dir = dump;
    return check::check_graph(graph, o);
  }
};

const check::LayerCheck& layer(const check::CheckReport& r, const std::string& name) {
  for (const auto& l : r.layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

}  // namespace

TEST(Check, HandComputedGoldenPassesEveryLayer) {
  Tiny t("pass");
  const auto r = t.run();
  ASSERT_EQ(r.layers.size(), 3u);
  EXPECT_EQ(r.passed, 3);
  EXPECT_EQ(r.failed, 0);
  EXPECT_TRUE(r.ok());
  // Bit-exact: nothing differs (q0 exercises ties away from zero, c1 int8 k * k_scale + b).
  for (const auto& l : r.layers) EXPECT_EQ(l.cmp.mismatches, 0) << l.name;
  EXPECT_EQ(layer(r, "r2").device, "cpu");  // host layers are checked too
  const std::string table = check::format_check_table(r);
  EXPECT_NE(table.find("3 layers: 3 pass, 0 fail, 0 skipped"), std::string::npos) << table;
}

TEST(Check, CorruptedOutputFailsThatLayerOnly) {
  Tiny t("corrupt");
  // c1's golden output [6, -3, -3, 7] with 7 -> 1: 6 LSB off, beyond the 2 LSB limit.
  write_npy(t.dir + "/c1_out.npy", make_npy(NpyType::I8, {1, 2, 1, 2}, {6, -3, -3, 1}));
  const auto r = t.run();
  EXPECT_EQ(r.failed, 1);
  EXPECT_FALSE(r.ok());
  const auto& c1 = layer(r, "c1");
  EXPECT_EQ(c1.status, check::LayerStatus::Fail);
  EXPECT_EQ(c1.cmp.mismatches, 1);
  EXPECT_DOUBLE_EQ(c1.cmp.max_abs_error, 6.0);
  // r2 reads its own golden input, so the error does not spread.
  EXPECT_EQ(layer(r, "r2").status, check::LayerStatus::Pass);
  EXPECT_EQ(layer(r, "q0").status, check::LayerStatus::Pass);
  const std::string table = check::format_check_table(r);
  EXPECT_NE(table.find("failed: c1\n"), std::string::npos) << table;
}

TEST(Check, OneLsbOffPassesTwoLsbOnAllFails) {
  Tiny t("lsb");
  // Every element 1 LSB off: within tolerance ("within 1 LSB on >= 99.9%").
  write_npy(t.dir + "/c1_out.npy", make_npy(NpyType::I8, {1, 2, 1, 2}, {7, -2, -2, 8}));
  EXPECT_EQ(layer(t.run(), "c1").status, check::LayerStatus::Pass);
  // Every element 2 LSB off: all within the 2 LSB limit, but none within 1 LSB.
  write_npy(t.dir + "/c1_out.npy", make_npy(NpyType::I8, {1, 2, 1, 2}, {8, -1, -1, 9}));
  EXPECT_EQ(layer(t.run(), "c1").status, check::LayerStatus::Fail);
}

TEST(Check, ChainFeedsTheProducersComputedOutputs) {
  Tiny t("chain");
  // A wrong golden input for r2: without --chain r2 reshapes it and differs from its golden
  // output; chained, r2 reads c1's computed output instead and passes.
  write_npy(t.dir + "/r2_in.npy", make_npy(NpyType::I8, {1, 2, 1, 2}, {0, 0, 0, 0}));
  EXPECT_EQ(layer(t.run(false), "r2").status, check::LayerStatus::Fail);
  const auto r = t.run(true);
  EXPECT_EQ(layer(r, "r2").status, check::LayerStatus::Pass);
  EXPECT_TRUE(r.chain);
  // Chained, a missing intermediate input file is not needed at all.
  fs::remove(t.dir + "/c1_in.npy");
  EXPECT_TRUE(t.run(true).ok());
}

TEST(Check, MissingFileIsAnInputErrorNamingIt) {
  Tiny t("missing");
  fs::remove(t.dir + "/w/c1_b.npy");
  const std::string e = input_error_of([&] { t.run(); });
  EXPECT_NE(e.find("c1_b.npy"), std::string::npos) << e;
  EXPECT_NE(e.find("missing"), std::string::npos) << e;
}

TEST(Check, WrongDtypeOrShapeIsAnInputError) {
  Tiny t("dtype");
  write_npy(t.dir + "/q0_out.npy", make_npy(NpyType::F32, {1, 1, 1, 2}, {10, -4}));
  std::string e = input_error_of([&] { t.run(); });
  EXPECT_NE(e.find("q0_out.npy"), std::string::npos) << e;
  EXPECT_NE(e.find("IR says int8"), std::string::npos) << e;
  write_npy(t.dir + "/q0_out.npy", make_npy(NpyType::I8, {1, 2}, {10, -4}));
  e = input_error_of([&] { t.run(); });
  EXPECT_NE(e.find("[1,2]"), std::string::npos) << e;
  EXPECT_NE(e.find("[1,1,1,2]"), std::string::npos) << e;
  // Truncated: the npy reader's own error, naming the file.
  write_text(t.dir + "/q0_out.npy", "\x93NUMPY");
  e = input_error_of([&] { t.run(); });
  EXPECT_NE(e.find("q0_out.npy"), std::string::npos) << e;
}

// Weights of the wrong shape: the weight file is named, not the layer's input activation.
TEST(Check, WrongWeightShapeNamesTheWeightFile) {
  Tiny t("weight_shape");
  write_npy(t.dir + "/w/c1_k.npy", make_npy(NpyType::I8, {2, 1, 1, 2}, {3, -1, 3, -1}));
  const std::string e = input_error_of([&] { t.run(); });
  EXPECT_NE(e.find("w/c1_k.npy: header: shape"), std::string::npos) << e;
  EXPECT_NE(e.find("[2,1,1,2]"), std::string::npos) << e;
  EXPECT_NE(e.find("c1 expects [2,1,1,1]"), std::string::npos) << e;
  EXPECT_EQ(e.find("c1_in.npy"), std::string::npos) << e;
}

TEST(Check, Fp8LayersAreRefusedNamingTheLayer) {
  Tiny t("fp8");
  ir::Graph g = t.graph;
  g.layers[1].output_dtypes[0] = ir::DType::Float8E4M3;
  check::CheckOptions o;
  o.npy_dir = t.dir;
  const std::string e = input_error_of([&] { check::check_graph(g, o); });
  EXPECT_NE(e.find(g.layers[1].name), std::string::npos) << e;
  EXPECT_NE(e.find("float8_e4m3fn"), std::string::npos) << e;
  EXPECT_NE(e.find("no fp8 reference"), std::string::npos) << e;
}

TEST(Check, LayerWithoutGoldenOutputIsSkipped) {
  Tiny t("skip");
  std::string ir = kTinyIr;
  const std::string role = "\"output_activation1\": \"r2_out.npy\"";
  ir.replace(ir.find(role), role.size(), "\"output_activation9\": \"x.npy\"");
  write_text(t.ir, ir);
  check::CheckOptions o;
  o.npy_dir = t.dir;
  const auto r = check::check_graph(frontends::read_frontend_ir(t.ir), o);
  EXPECT_EQ(r.skipped, 1);
  EXPECT_EQ(r.passed, 2);
  EXPECT_TRUE(r.ok());
  EXPECT_NE(layer(r, "r2").note.find("output_activation1"), std::string::npos);
}

TEST(Check, DumpWritesTheComputedOutputsUnderTheirFileListNames) {
  Tiny t("dump");
  const std::string d = t.dir + "/dump";
  ASSERT_TRUE(t.run(false, d).ok());
  const auto q0 = functional::read_npy(d + "/q0_out.npy");
  EXPECT_EQ(q0.type, NpyType::I8);
  EXPECT_EQ(q0.to_float(), kQ0Out);
  const auto r2 = functional::read_npy(d + "/r2_out.npy");
  EXPECT_EQ(r2.shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(r2.to_float(), kC1Out);
}

TEST(GoldenIo, PathsAreRelativeToTheNpyFolder) {
  EXPECT_EQ(check::npy_path("a/b", "x.npy"), "a/b/x.npy");
  EXPECT_EQ(check::npy_path("a/b", "../w/k.npy"), "a/w/k.npy");
  EXPECT_EQ(check::npy_path("a/b", "/abs/k.npy"), "/abs/k.npy");
  EXPECT_EQ(check::npy_path("", "x.npy"), "x.npy");
}

TEST(GoldenIo, SaveAndLoadKeepDtypeAndValues) {
  const std::string d = scratch("io");
  // fp16 1/3 rounds to 0.333251953125 (0x3555); bf16 1/3 to 0.333984375 (0x3eab).
  for (auto [t, v] : {std::pair{ir::DType::Float16, 0.333251953125f}, std::pair{ir::DType::BFloat16, 0.333984375f},
                      std::pair{ir::DType::Int8, -7.0f}, std::pair{ir::DType::Float32, 0.1f}}) {
    functional::Tensor x({2}, {v, -v}, t);
    check::save_tensor(d + "/sub/x.npy", x);
    const auto y = check::load_activation(d + "/sub/x.npy", t, {2}, "x");
    EXPECT_EQ(y.dtype, t);
    EXPECT_EQ(y.data, x.data) << ir::dtype_name(t);
  }
  const auto k = check::load_constant(d + "/sub/x.npy");  // the last one: float32
  EXPECT_EQ(k.dtype, ir::DType::Float32);
  write_npy(d + "/b.npy", make_npy(NpyType::Bool, {1}, {1}));
  EXPECT_NE(input_error_of([&] { check::load_constant(d + "/b.npy"); }).find("b.npy"), std::string::npos);
}
