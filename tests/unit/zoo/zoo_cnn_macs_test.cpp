// The CNN zoo read as a graph: MACs equal the closed form from each network's dimensions, the
// graphs survive the Frontend IR writer, and fp32 works like fp16 with float32 tensors.
#include <string>

#include "frontends/zoo/zoo.h"
#include "tests/unit/zoo/roundtrip_util.h"
#include "tests/unit/zoo/zoo_test_util.h"

namespace {

using npusim::frontends::parse_frontend_ir;
using npusim::frontends::zoo::make_frontend_ir;
using npusim::frontends::zoo::model_names;
using npusim::frontends::zoo::ZooOptions;
namespace ir = npusim::ir;

ir::Graph cnn(const std::string& model, int batch = 1, const std::string& dtype = "int8", int side = 224) {
  ZooOptions o;
  o.model = model;
  o.batch = batch;
  o.dtype = dtype;
  o.height = o.width = side;
  return parse_frontend_ir(make_frontend_ir(o), model + ".json");
}

int64_t out(int64_t in, int64_t k, int64_t s, int64_t p) { return (in + 2 * p - k) / s + 1; }

// A conv's MACs: output pixels x output channels x (input channels / groups) x k x k.
int64_t conv(int64_t h, int64_t cin, int64_t cout, int64_t k, int64_t s, int64_t p, int64_t& ho, int64_t groups = 1) {
  ho = out(h, k, s, p);
  return ho * ho * cout * (cin / groups) * k * k;
}

// torchvision ResNet: 7x7/2 stem, 3x3/2 max pool, four stages (stride on the first block of
// stages 2-4, on the 3x3 conv), 1x1 downsample where shape changes, fc to 1000.
int64_t resnet_macs(int64_t side, bool bottleneck, std::vector<int> blocks) {
  int64_t h = side, ho = 0, macs = conv(h, 3, 64, 7, 2, 3, ho);
  h = out(ho, 3, 2, 1);
  int64_t cin = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t planes = 64 << stage, cout = bottleneck ? planes * 4 : planes;
    for (int b = 0; b < blocks[stage]; ++b) {
      const int64_t s = stage > 0 && b == 0 ? 2 : 1;
      int64_t h1 = h, h2 = 0, dummy = 0;
      if (bottleneck) {
        macs += conv(h, cin, planes, 1, 1, 0, h1);
        macs += conv(h1, planes, planes, 3, s, 1, h2);
        macs += conv(h2, planes, cout, 1, 1, 0, dummy);
      } else {
        macs += conv(h, cin, planes, 3, s, 1, h1);
        macs += conv(h1, planes, planes, 3, 1, 1, h2);
      }
      if (s != 1 || cin != cout) macs += conv(h, cin, cout, 1, s, 0, dummy);
      h = h2;
      cin = cout;
    }
  }
  return macs + cin * 1000;
}

int64_t vgg_macs(int64_t side, const std::vector<int>& cfg) {
  int64_t h = side, cin = 3, macs = 0, ho = 0;
  for (int v : cfg) {
    if (v == 0) {
      h /= 2;
      continue;
    }
    macs += conv(h, cin, v, 3, 1, 1, ho);
    cin = v;
  }
  return macs + cin * h * h * 4096 + 4096 * 4096 + 4096 * 1000;
}

int64_t mobilenet_v2_macs(int64_t side) {
  struct Stage { int t, c, n, s; };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t h = side, ho = 0, macs = conv(h, 3, 32, 3, 2, 1, ho), cin = 32;
  h = ho;
  for (const Stage& st : stages)
    for (int i = 0; i < st.n; ++i) {
      const int64_t hidden = cin * st.t, s = i == 0 ? st.s : 1;
      int64_t dummy = 0;
      if (st.t != 1) macs += conv(h, cin, hidden, 1, 1, 0, dummy);
      macs += conv(h, hidden, hidden, 3, s, 1, ho, hidden);  // depthwise
      macs += conv(ho, hidden, st.c, 1, 1, 0, dummy);
      h = ho;
      cin = st.c;
    }
  int64_t dummy = 0;
  return macs + conv(h, 320, 1280, 1, 1, 0, dummy) + 1280 * 1000;
}

int64_t closed_form(const std::string& m, int64_t side) {
  const int M = 0;
  if (m == "resnet18") return resnet_macs(side, false, {2, 2, 2, 2});
  if (m == "resnet34") return resnet_macs(side, false, {3, 4, 6, 3});
  if (m == "resnet50") return resnet_macs(side, true, {3, 4, 6, 3});
  if (m == "resnet101") return resnet_macs(side, true, {3, 4, 23, 3});
  if (m == "resnet152") return resnet_macs(side, true, {3, 8, 36, 3});
  if (m == "vgg16")
    return vgg_macs(side, {64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M});
  if (m == "vgg19")
    return vgg_macs(side, {64, 64, M, 128, 128, M, 256, 256, 256, 256, M, 512, 512, 512, 512, M, 512, 512, 512, 512, M});
  return mobilenet_v2_macs(side);
}

TEST(ZooCnnMacs, EveryModelEqualsTheClosedForm) {
  for (const std::string& m : model_names()) {
    EXPECT_EQ(zoo_test::total_macs(cnn(m)), closed_form(m, 224)) << m;
    EXPECT_EQ(zoo_test::total_macs(cnn(m, 2, "fp16", 160)), 2 * closed_form(m, 160)) << m;
  }
  // ResNet-50 at 224x224: the well-known 4.09 GMAC per image.
  EXPECT_NEAR(zoo_test::total_macs(cnn("resnet50")) / 4.09e9, 1.0, 0.005);
}

TEST(ZooCnnMacs, EveryModelRoundTripsThroughTheWriter) {
  for (const std::string& m : model_names()) {
    SCOPED_TRACE(m);
    const ir::Graph g = cnn(m, 2);
    const ir::Graph back = zoo_test::round_trip(g);
    EXPECT_EQ(zoo_test::compare_graphs(g, back), 0);
    // The compiler's extras travel too.
    for (size_t i = 0; i < g.layers.size(); ++i) {
      EXPECT_EQ(g.layers[i].gemini.modules.size(), back.layers[i].gemini.modules.size()) << g.layers[i].name;
      EXPECT_EQ(g.layers[i].gemini.quant.output_scale, back.layers[i].gemini.quant.output_scale) << g.layers[i].name;
      EXPECT_EQ(g.layers[i].gemini.ori_name, back.layers[i].gemini.ori_name) << g.layers[i].name;
    }
  }
}

TEST(ZooCnnMacs, RealFilesRoundTripThroughTheWriter) {
  for (const char* f : {"int8_resnet34.sim_quantized_b4.json", "int8_resnet50.sim_quantized_b1.json"}) {
    const ir::Graph g = parse_frontend_ir(zoo_test::read_real(f), f);
    const ir::Graph back = zoo_test::round_trip(g);
    EXPECT_EQ(zoo_test::compare_graphs(g, back), 0) << f;
    EXPECT_EQ(back.graph_inputs, g.graph_inputs) << f;
    EXPECT_EQ(back.graph_outputs, g.graph_outputs) << f;
    for (size_t i = 0; i < g.layers.size(); ++i) {
      EXPECT_EQ(g.layers[i].previous, back.layers[i].previous) << f << " " << g.layers[i].name;
      EXPECT_EQ(g.layers[i].next, back.layers[i].next) << f << " " << g.layers[i].name;
      EXPECT_EQ(g.layers[i].input_batchdim, back.layers[i].input_batchdim) << f << " " << g.layers[i].name;
    }
  }
}

TEST(ZooCnnMacs, Fp32IsFp16WithFloat32Tensors) {
  for (const std::string& m : {std::string("resnet34"), std::string("mobilenetv2")}) {
    ZooOptions o;
    o.model = m;
    o.dtype = "fp16";
    const std::string fp16 = make_frontend_ir(o).dump();
    o.dtype = "fp32";
    const zoo_test::ordered_json d32 = make_frontend_ir(o);
    EXPECT_EQ(zoo_test::check_shapes(d32, 1), 0);
    std::string expect = fp16;
    for (size_t p = expect.find("float16"); p != std::string::npos; p = expect.find("float16", p))
      expect.replace(p, 7, "float32");
    EXPECT_EQ(d32.dump(), expect) << m;
    parse_frontend_ir(d32, m + ".json");
  }
  // Empty dtype is the CNN default, int8.
  ZooOptions o;
  o.model = "resnet18";
  EXPECT_EQ(make_frontend_ir(o).begin().key(), "src_quantize_1_1");
}

}  // namespace
