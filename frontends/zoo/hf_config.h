// Decoder LLMs from Hugging Face config.json files (docs/llm_models.md): no
// weights, only the shape. `sim llm PATH/config.json`, `sim zoo hf PATH/config.json` and any
// zoo model name ending in .json read it.
#pragma once
#include <string>
#include <vector>

#include "frontends/zoo/model_def.h"

namespace npusim::frontends::zoo {

// The architectures read (config.json's architectures[0]).
const std::vector<std::string>& hf_architectures();

// True when a model name is a config file rather than a zoo entry (it ends in .json).
bool is_hf_config_path(const std::string& model);

// Reads config.json. InputError(path, "/key", why) for a missing or malformed field, an
// unknown architecture, or a field that would change the computation in a way the graph does not
// model (named, with its value).
ModelDef read_hf_config(const std::string& path);
// The same from a config's text; source names it in messages.
ModelDef parse_hf_config(const std::string& text, const std::string& source);

}  // namespace npusim::frontends::zoo
