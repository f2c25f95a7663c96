// Helpers shared by the zoo tests: reading the real Frontend IR files and an independent
// shape checker (written from the spec's formulas, not from the generator's code).
#pragma once
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace zoo_test {

using nlohmann::ordered_json;

inline ordered_json read_real(const std::string& file) {
  std::ifstream in(std::string(NPUSIM_SOURCE_DIR) + "/../shared/examples/frontend_ir/" + file);
  EXPECT_TRUE(in.good()) << file;
  return ordered_json::parse(in);
}

inline std::vector<std::string> layer_names(const ordered_json& doc) {
  std::vector<std::string> names;
  for (auto it = doc.begin(); it != doc.end(); ++it) names.push_back(it.key());
  return names;
}

// floor((in + pad_begin + pad_end - window) / stride) + 1, or ceil with ceil_mode.
inline int64_t window_out(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t s, bool ceil) {
  int64_t span = in + pb + pe - k;
  return (ceil ? (span + s - 1) / s : span / s) + 1;
}

inline int64_t elements(const ordered_json& shape) {
  int64_t n = 1;
  for (const auto& d : shape) n *= d.get<int64_t>();
  return n;
}

// Checks every layer's own shape arithmetic and every edge; returns the number of problems
// (each also reported through ADD_FAILURE with the layer name).
inline int check_shapes(const ordered_json& doc, int64_t batch) {
  int bad = 0;
  auto fail = [&](const std::string& layer, const std::string& what) {
    ADD_FAILURE() << layer << ": " << what;
    ++bad;
  };
  int index = 0;
  for (auto it = doc.begin(); it != doc.end(); ++it, ++index) {
    const std::string& name = it.key();
    const ordered_json& l = *it;
    const std::string op = l["operation"];
    const ordered_json& in = l["input_shape"];
    const ordered_json& out = l["output_shape"][0];
    if (l["layer_index"] != index) fail(name, "layer_index out of sequence");
    if (in[0][0] != batch || out[0] != batch) fail(name, "batch is not dim 0");
    if (op == "conv2d" || op == "max_pool2d" || op == "avg_pool2d") {
      const bool conv = op == "conv2d";
      const ordered_json& k = conv ? l["kernel_size"] : l["pool_size"];
      const ordered_json& p = l["padding"];  // top, bottom, left, right
      const ordered_json& s = l["stride"];
      const bool ceil = !conv && (l["ceil_mode"].is_boolean() ? l["ceil_mode"].get<bool>()
                                                              : l["ceil_mode"].get<int>() != 0);
      if (out[2] != window_out(in[0][2], p[0], p[1], k[0], s[0], ceil) ||
          out[3] != window_out(in[0][3], p[2], p[3], k[1], s[1], ceil))
        fail(name, "spatial output does not follow the window formula");
      if (conv) {
        const ordered_json& w = in[1];
        const int64_t groups = l.value("groups", 1);
        if (w[0] != out[1] || w[1].get<int64_t>() * groups != in[0][1].get<int64_t>() ||
            w[2] != k[0] || w[3] != k[1])
          fail(name, "weight shape does not match channels / kernel");
      } else if (out[1] != in[0][1]) {
        fail(name, "pooling changed the channel count");
      }
      if (op == "avg_pool2d" && (k[0] != in[0][2] || k[1] != in[0][3]))
        fail(name, "global pool window is not the feature map");
    } else if (op == "dense") {
      const ordered_json& w = in[1];
      if (w[0] != out[1] || elements(in[0]) / batch != elements(w) / w[0].get<int64_t>())
        fail(name, "dense weight does not match input / output");
    } else if (op == "element_wise_add") {
      if (in[0] != out || in[1] != out) fail(name, "add operands differ from output");
    } else if (op == "reshape" || op == "quantize") {
      if (elements(in[0]) != elements(out)) fail(name, "element count changed");
    } else {
      fail(name, "unknown operation " + op);
    }
    // Edges: every producer named in previous_layer is earlier, lists us, and its output is
    // exactly our input at that position.
    const ordered_json& prev = l["previous_layer"];
    for (size_t i = 0; i < prev.size(); ++i) {
      const std::string p = prev[i];
      if (!doc.contains(p)) continue;  // input1, constants
      const ordered_json& src = doc[p];
      if (src["layer_index"].get<int>() >= index) fail(name, "producer " + p + " comes later");
      if (src["output_shape"][0] != in[i]) fail(name, "input " + std::to_string(i) + " != " + p);
      const ordered_json& nx = src["next_layer"];
      if (std::find(nx.begin(), nx.end(), name) == nx.end()) fail(name, p + " does not list us");
    }
    for (const auto& n : l["next_layer"]) {
      const std::string c = n;
      if (c == "output1") continue;
      if (!doc.contains(c)) {
        fail(name, "next layer " + c + " missing");
        continue;
      }
      const ordered_json& pv = doc[c]["previous_layer"];
      if (std::find(pv.begin(), pv.end(), name) == pv.end()) fail(name, c + " does not list us");
    }
  }
  return bad;
}

// MACs of conv2d and dense layers: output elements x weight elements per output channel.
inline int64_t count_macs(const ordered_json& doc) {
  int64_t macs = 0;
  for (const auto& l : doc) {
    if (l["operation"] != "conv2d" && l["operation"] != "dense") continue;
    const ordered_json& w = l["input_shape"][1];
    macs += elements(l["output_shape"][0]) * (elements(w) / w[0].get<int64_t>());
  }
  return macs;
}

}  // namespace zoo_test
