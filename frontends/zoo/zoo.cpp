// The zoo's networks, written as the torchvision modules they come from (layer order, strides,
// parameter names), and the option checks.
#include "frontends/zoo/zoo.h"

#include <functional>
#include <map>

#include "frontends/zoo/zoo_builder.h"
#include "sim/ir/error.h"

namespace npusim::frontends::zoo {

using nlohmann::ordered_json;

namespace {

// ResNet-18/34 follow the real ResNet-34 file (unfused BN export, numbering from 1), deeper
// ResNets the ResNet-50 file (folded BN, numbering from 0); VGG and MobileNetV2 use the latter.
const ExportStyle kUnfused{false, 1};
const ExportStyle kFused{true, 0};

int resnet_stem(NetBuilder& b) {
  int x = b.input();
  x = b.conv(x, 64, 7, 2, 3, Act::kRelu, "conv1.weight");
  return b.max_pool(x, 3, 2, 1);
}

// torchvision BasicBlock: out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut).
int basic_block(NetBuilder& b, int x, int cin, int planes, int stride, const std::string& p) {
  int y = b.conv(x, planes, 3, stride, 1, Act::kRelu, p + ".conv1.weight");
  y = b.conv(y, planes, 3, 1, 1, Act::kNone, p + ".conv2.weight");
  int shortcut = x;
  if (stride != 1 || cin != planes)
    shortcut = b.conv(x, planes, 1, stride, 0, Act::kNone, p + ".downsample.0.weight");
  return b.add(y, shortcut, Act::kRelu);
}

// torchvision Bottleneck (v1.5: the stride sits on the 3x3 conv), expansion 4.
int bottleneck(NetBuilder& b, int x, int cin, int planes, int stride, const std::string& p) {
  int y = b.conv(x, planes, 1, 1, 0, Act::kRelu, p + ".conv1.weight");
  y = b.conv(y, planes, 3, stride, 1, Act::kRelu, p + ".conv2.weight");
  y = b.conv(y, planes * 4, 1, 1, 0, Act::kNone, p + ".conv3.weight");
  int shortcut = x;
  if (stride != 1 || cin != planes * 4)
    shortcut = b.conv(x, planes * 4, 1, stride, 0, Act::kNone, p + ".downsample.0.weight");
  return b.add(y, shortcut, Act::kRelu);
}

ordered_json resnet(NetBuilder& b, bool bottlenecks, std::vector<int> blocks) {
  int x = resnet_stem(b);
  int cin = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int planes = 64 << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const int stride = stage > 0 && i == 0 ? 2 : 1;
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      x = bottlenecks ? bottleneck(b, x, cin, planes, stride, p)
                      : basic_block(b, x, cin, planes, stride, p);
      cin = bottlenecks ? planes * 4 : planes;
    }
  }
  x = b.global_avg_pool(x);
  b.skip_node();  // Flatten
  return b.finish(b.dense(x, 1000, Act::kNone, "fc.weight"));
}

// VGG (configurations D and E, no BN). Deviation from torchvision: no AdaptiveAvgPool2d(7, 7).
// At 224x224 it is the identity; at other sizes fc6 reads the whole 512 x H/32 x W/32 map (as
// the original VGG did) instead of a resampled 7x7 one. A Flatten layer (see
// NetBuilder::flatten) turns the map into fc6's [N, 512*H*W, 1, 1] input.
ordered_json vgg(NetBuilder& b, const std::vector<int>& cfg) {
  int x = b.input();
  int index = 0;  // position in torchvision's features Sequential, for parameter names
  for (int v : cfg) {
    if (v == 0) {
      x = b.max_pool(x, 2, 2, 0);
      index += 1;
    } else {
      x = b.conv(x, v, 3, 1, 1, Act::kRelu, "features." + std::to_string(index) + ".weight",
                 false);
      index += 2;
    }
  }
  x = b.flatten(x);
  x = b.dense(x, 4096, Act::kRelu, "classifier.0.weight");  // dropout is gone in eval export
  x = b.dense(x, 4096, Act::kRelu, "classifier.3.weight");
  return b.finish(b.dense(x, 1000, Act::kNone, "classifier.6.weight"));
}

// torchvision MobileNetV2 (width 1.0): ReLU6 exports as Clip; residual is x + conv(x) with no
// activation after the add.
ordered_json mobilenet_v2(NetBuilder& b) {
  struct Stage { int expand, channels, repeats, stride; };
  const Stage stages[] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
  int x = b.conv(b.input(), 32, 3, 2, 1, Act::kRelu6, "features.0.0.weight");
  int cin = 32, feature = 1;
  for (const Stage& s : stages) {
    for (int i = 0; i < s.repeats; ++i, ++feature) {
      const int stride = i == 0 ? s.stride : 1;
      const int hidden = cin * s.expand;
      const std::string p = "features." + std::to_string(feature) + ".conv.";
      int y = x, k = 0;
      if (s.expand != 1)
        y = b.conv(y, hidden, 1, 1, 0, Act::kRelu6, p + std::to_string(k++) + ".0.weight");
      y = b.conv(y, hidden, 3, stride, 1, Act::kRelu6, p + std::to_string(k++) + ".0.weight",
                 true, hidden);
      y = b.conv(y, s.channels, 1, 1, 0, Act::kNone, p + std::to_string(k) + ".weight");
      x = stride == 1 && cin == s.channels ? b.add(x, y, Act::kNone) : y;
      cin = s.channels;
    }
  }
  x = b.conv(x, 1280, 1, 1, 0, Act::kRelu6, "features.18.0.weight");
  x = b.global_avg_pool(x);
  b.skip_node();  // Flatten
  return b.finish(b.dense(x, 1000, Act::kNone, "classifier.1.weight"));
}

struct ModelDef {
  ExportStyle style;
  std::function<ordered_json(NetBuilder&)> build;
};

const std::map<std::string, ModelDef>& models() {
  const int M = 0;  // max pool in a VGG configuration
  static const std::map<std::string, ModelDef> table = {
      {"resnet18", {kUnfused, [](NetBuilder& b) { return resnet(b, false, {2, 2, 2, 2}); }}},
      {"resnet34", {kUnfused, [](NetBuilder& b) { return resnet(b, false, {3, 4, 6, 3}); }}},
      {"resnet50", {kFused, [](NetBuilder& b) { return resnet(b, true, {3, 4, 6, 3}); }}},
      {"resnet101", {kFused, [](NetBuilder& b) { return resnet(b, true, {3, 4, 23, 3}); }}},
      {"resnet152", {kFused, [](NetBuilder& b) { return resnet(b, true, {3, 8, 36, 3}); }}},
      {"vgg16", {kFused, [M](NetBuilder& b) {
                   return vgg(b, {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M,
                                  512, 512, 512, M});
                 }}},
      {"vgg19", {kFused, [M](NetBuilder& b) {
                   return vgg(b, {64, 64, M, 128, 128, M, 256, 256, 256, 256, M, 512, 512, 512,
                                  512, M, 512, 512, 512, 512, M});
                 }}},
      {"mobilenetv2", {kFused, [](NetBuilder& b) { return mobilenet_v2(b); }}},
  };
  return table;
}

constexpr int kMaxBatch = 65536;
constexpr int kMaxSide = 8192;

}  // namespace

std::vector<std::string> model_names() {
  return {"resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
          "vgg16",    "vgg19",    "mobilenetv2"};
}

ir::DType zoo_dtype(const std::string& s, ir::DType fallback, const std::string& file, bool bf16) {
  if (s.empty()) return fallback;
  const auto t = ir::parse_dtype(s);
  const bool ok = t && (*t == ir::DType::Int8 || *t == ir::DType::Float16 || *t == ir::DType::Float32 ||
                        (bf16 && (*t == ir::DType::BFloat16 || ir::is_fp8(*t))));
  if (!ok)
    throw InputError(file, "dtype", std::string("dtype must be int8, fp16") + (bf16 ? ", bf16, fp8, fp8_e5m2" : "") +
                                        " or fp32, got '" + s + "'");
  return *t;
}

ordered_json make_frontend_ir(const ZooOptions& o) {
  auto it = models().find(o.model);
  if (it == models().end()) {
    std::string valid;
    for (const std::string& n : model_names()) valid += (valid.empty() ? "" : ", ") + n;
    if (is_transformer(o.model))
      throw InputError("zoo", "model", o.model + " is a transformer, built as a graph (make_transformer); "
                                                 "Frontend IR CNNs: " + valid);
    for (const std::string& n : transformer_names()) valid += ", " + n;
    throw InputError("zoo", "model", "unknown model '" + o.model + "'; valid models: " + valid +
                                         " (or op OP key=value ... for one operation)");
  }
  if (o.batch < 1 || o.batch > kMaxBatch)
    throw InputError("zoo", "batch",
                     "batch must be in 1.." + std::to_string(kMaxBatch) + ", got " +
                         std::to_string(o.batch));
  const ir::DType dt = zoo_dtype(o.dtype, ir::DType::Int8, "zoo");
  if (o.height < 1 || o.width < 1 || o.height > kMaxSide || o.width > kMaxSide)
    throw InputError("zoo", "input",
                     "input must be HxW with 1 <= H, W <= " + std::to_string(kMaxSide) +
                         ", got " + std::to_string(o.height) + "x" + std::to_string(o.width));
  if (o.seq != 0 || o.kv_len != 0 || o.layers != 0)
    throw InputError("zoo", o.seq != 0 ? "seq" : o.kv_len != 0 ? "kv-len" : "layers",
                     "--seq, --kv-len and --layers apply to transformer models, not to " + o.model);
  NetBuilder b(o.model, it->second.style, dt == ir::DType::Int8, o.batch, o.height, o.width,
               dt == ir::DType::Float32);
  return it->second.build(b);
}

}  // namespace npusim::frontends::zoo
