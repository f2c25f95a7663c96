// Workload zoo: generates Frontend IR documents (specs/frontend_ir.md) for well-known CNNs in
// the style of the real Gemini compiler outputs (int8 ResNet-34/50, examples/frontend_ir/),
// so that any batch, input size and dtype can be simulated without the compiler.
//
// The result is an ordered_json: layer order and key order inside a layer follow the real
// files (a plain nlohmann::json would sort keys). Quantization values are synthetic but
// deterministic (hashed from layer names) and obey the files' relations between layers.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::frontends::zoo {

struct ZooOptions {
  std::string model;
  int batch = 1;
  std::string dtype = "int8";  // "int8" (src_quantize + int8 layers) or "fp16"
  int height = 224;
  int width = 224;
};

// resnet18, resnet34, resnet50, resnet101, resnet152, vgg16, vgg19, mobilenetv2.
std::vector<std::string> model_names();

// Throws npusim::InputError("zoo", "model"|"batch"|"dtype"|"input", why) on bad options.
nlohmann::ordered_json make_frontend_ir(const ZooOptions& options);

}  // namespace npusim::frontends::zoo
