// The torchvision models that scripts/make_onnx_models.py exports (build/onnx_models; `cmake
// --build build --target onnx_models`): each reads without opaque ops and its MACs equal the
// count derived here from the architecture (and the published number within 1%). Skipped with
// a message when the models were not generated (unless NPUSIM_ONNX_MODELS_REQUIRED=1).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "frontends/onnx/onnx_reader.h"
#include "frontends/registry/registry.h"

#ifndef NPUSIM_ONNX_MODELS_DIR
#define NPUSIM_ONNX_MODELS_DIR "build/onnx_models"
#endif

namespace npusim::frontends {
namespace {

std::string model_path(const std::string& name) {
  const char* env = std::getenv("NPUSIM_ONNX_MODELS_DIR");
  return (std::filesystem::path(env && *env ? env : NPUSIM_ONNX_MODELS_DIR) / (name + ".onnx")).string();
}

#define NEED_MODEL(path)                                                                                   \
  do {                                                                                                     \
    if (!std::filesystem::exists(path)) {                                                                  \
      const char* req = std::getenv("NPUSIM_ONNX_MODELS_REQUIRED");                                        \
      if (req && std::string(req) == "1") FAIL() << path << " is missing";                                 \
      GTEST_SKIP() << path << " not generated: cmake --build build --target onnx_models (needs python3-torch)"; \
    }                                                                                                      \
  } while (0)

struct Read {
  ir::Graph g;
  OnnxReadInfo info;
  int64_t macs = 0;
  std::map<std::string, int> ops;
};

Read read(const std::string& path) {
  Read r;
  r.g = read_onnx(path, &r.info);
  for (const auto& l : r.g.layers) {
    r.macs += l.macs();
    ++r.ops[ir::op_name(l.op)];
  }
  return r;
}

// MACs of a conv over an output of ho x wo.
int64_t conv(int64_t ho, int64_t wo, int64_t cin, int64_t cout, int64_t k, int64_t groups = 1) {
  return ho * wo * cout * (cin / groups) * k * k;
}

// torchvision ResNet (v1.5: the stride sits on the 3x3 conv of a bottleneck) at 224x224.
int64_t resnet_macs(const std::vector<int>& blocks, bool bottleneck) {
  const int64_t exp = bottleneck ? 4 : 1;
  int64_t macs = conv(112, 112, 3, 64, 7);
  int64_t res = 56, in = 64;
  for (size_t s = 0; s < blocks.size(); ++s) {
    const int64_t planes = 64 << s;
    for (int b = 0; b < blocks[s]; ++b) {
      const int64_t stride = (s > 0 && b == 0) ? 2 : 1, out_res = res / stride;
      if (bottleneck) {
        macs += conv(res, res, in, planes, 1) + conv(out_res, out_res, planes, planes, 3) +
                conv(out_res, out_res, planes, planes * exp, 1);
      } else {
        macs += conv(out_res, out_res, in, planes, 3) + conv(out_res, out_res, planes, planes, 3);
      }
      if (stride != 1 || in != planes * exp) macs += conv(out_res, out_res, in, planes * exp, 1);
      in = planes * exp;
      res = out_res;
    }
  }
  return macs + in * 1000;  // fc
}

int64_t mobilenet_v2_macs() {
  struct S { int64_t t, c, n, s; };
  const S settings[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                        {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t res = 112, in = 32;
  int64_t macs = conv(112, 112, 3, 32, 3);
  for (const S& st : settings)
    for (int64_t i = 0; i < st.n; ++i) {
      const int64_t stride = i == 0 ? st.s : 1, hidden = in * st.t, out_res = res / stride;
      if (st.t != 1) macs += conv(res, res, in, hidden, 1);
      macs += conv(out_res, out_res, hidden, hidden, 3, hidden) + conv(out_res, out_res, hidden, st.c, 1);
      in = st.c;
      res = out_res;
    }
  return macs + conv(7, 7, 320, 1280, 1) + 1280 * 1000;
}

// Transformer encoder layers: QKV projection, QK^T, AV, output projection, MLP.
int64_t encoder_macs(int64_t layers, int64_t seq, int64_t d, int64_t heads, int64_t ff) {
  const int64_t per = seq * d * 3 * d + 2 * seq * seq * d + seq * d * d + 2 * seq * d * ff;
  (void)heads;  // QK^T and AV: heads x seq x seq x (d / heads) each
  return layers * per;
}

void expect_near_published(int64_t macs, double published, const char* what) {
  EXPECT_NEAR(static_cast<double>(macs) / published, 1.0, 0.01) << what << ": " << macs << " MACs vs published " << published;
}

TEST(OnnxModels, ResNet18) {
  const std::string p = model_path("resnet18");
  NEED_MODEL(p);
  Read r = read(p);
  EXPECT_EQ(r.g.format, "onnx");
  EXPECT_EQ(r.macs, resnet_macs({2, 2, 2, 2}, false));
  expect_near_published(r.macs, 1.81e9, "resnet18");
  EXPECT_EQ(r.ops["conv2d"], 20);
  EXPECT_EQ(r.ops["dense"], 1);
  EXPECT_EQ(r.ops["max_pool2d"], 1);
  EXPECT_EQ(r.ops["global_avg_pool2d"], 1);
  EXPECT_EQ(r.info.opaque_summary(), "");
}

TEST(OnnxModels, ResNet50) {
  const std::string p = model_path("resnet50");
  NEED_MODEL(p);
  Read r = read(p);
  EXPECT_EQ(r.macs, resnet_macs({3, 4, 6, 3}, true));
  expect_near_published(r.macs, 4.09e9, "resnet50");
  EXPECT_EQ(r.ops["conv2d"], 53);
  EXPECT_EQ(r.ops["element_wise_add"], 16);
  EXPECT_EQ(r.ops["relu"], 49);
  EXPECT_EQ(r.info.opaque_summary(), "");
  // The graph input and output are the image and the logits.
  EXPECT_EQ(r.g.tensor(r.g.layers.front().inputs[0]).shape, (ir::Shape{1, 3, 224, 224}));
  EXPECT_EQ(r.g.tensor(r.g.layers.back().outputs[0]).role, ir::TensorRole::GraphOutput);
  EXPECT_EQ(r.g.tensor(r.g.layers.back().outputs[0]).shape, (ir::Shape{1, 1000}));
  // The weights are read as parameters: 25.5 M float32 of them.
  int64_t params = 0;
  for (const auto& t : r.g.tensors)
    if (t.is_parameter()) params += ir::num_elements(t.shape);
  EXPECT_NEAR(static_cast<double>(params), 25.5e6, 0.1e6);
}

TEST(OnnxModels, MobileNetV2) {
  const std::string p = model_path("mobilenet_v2");
  NEED_MODEL(p);
  Read r = read(p);
  EXPECT_EQ(r.macs, mobilenet_v2_macs());
  expect_near_published(r.macs, 0.3e9, "mobilenet_v2");
  EXPECT_EQ(r.ops["relu6"], 35);
  EXPECT_EQ(r.info.opaque_summary(), "");
}

TEST(OnnxModels, VitB16) {
  const std::string p = model_path("vit_b_16");
  NEED_MODEL(p);
  Read r = read(p);
  // Patch embedding (a 16x16 stride-16 conv), 12 encoder layers over 197 tokens, the head.
  const int64_t expect = conv(14, 14, 3, 768, 16) + encoder_macs(12, 197, 768, 12, 3072) + 768 * 1000;
  EXPECT_EQ(r.macs, expect);
  expect_near_published(r.macs, 17.56e9, "vit_b_16");
  EXPECT_EQ(r.ops["layer_norm"], 25);
  EXPECT_EQ(r.ops["gelu"], 12);
  EXPECT_EQ(r.ops["softmax"], 12);
  EXPECT_EQ(r.ops["batch_matmul"], 24);
  EXPECT_EQ(r.info.opaque_summary(), "");
}

TEST(OnnxModels, TransformerEncoderDecomposedLayerNorm) {
  const std::string p = model_path("transformer_encoder");
  NEED_MODEL(p);
  Read r = read(p);
  EXPECT_EQ(r.info.opset, 13);
  EXPECT_EQ(r.macs, encoder_macs(2, 64, 256, 4, 1024));
  // Opset 13 has no LayerNormalization: the ReduceMean/Sub/Pow/... form is read as one op.
  EXPECT_EQ(r.ops["layer_norm"], 4);
  EXPECT_EQ(r.ops["gelu"], 2);
  EXPECT_EQ(r.ops["reduce_mean"], 0);
  EXPECT_EQ(r.info.opaque_summary(), "");
}

TEST(OnnxModels, RegistryFindsOnnxFromTheContent) {
  const std::string p = model_path("resnet18");
  NEED_MODEL(p);
  const ir::Graph g = read_workload(p);
  EXPECT_EQ(g.format, "onnx");
  EXPECT_EQ(g.name, "resnet18");
}

}  // namespace
}  // namespace npusim::frontends
