// Serving as a library call (docs/llm.md): what `sim llm`, serving sweeps and Python run. A zoo
// decoder model (or a runtime's prefill and decode pipeline files) served on a GPU or NPU config,
// or on a system as a tp x pp pipeline: a static batch, or continuous batching of Poisson arrivals
// or a trace. Each pass (prefill, decode step at a few KV lengths) is simulated through run::run
// in a forked worker; the rest is sim/llm's arithmetic (serving.h, scheduler).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "sim/llm/serving.h"

namespace npusim::llm {

// A serving run's record: the report (`sim llm --report`'s JSON: workload, hardware, totals,
// latency_ms, memory, steps, ...) and the table `sim llm` prints.
struct ServingRecord {
  nlohmann::ordered_json report;
  std::string summary;
  // A serving sweep's row (llm::serving_sweep_fields(), docs/sweeps.md#serving), with an empty
  // "layers".
  nlohmann::ordered_json sweep_metrics() const;
};

// Serves `model` (a zoo decoder LLM; empty with o.prefill_pipeline and o.decode_pipeline) on the
// hardware description or system file `hw` (o.sets override its keys). Every option is checked
// against serving_options() first; bad input is an InputError naming the option or file.
ServingRecord serve(const std::string& model, const std::string& hw, const ServingOptions& o);

// A sweep's serving point: the workload's options, then the point's overrides
// (serving.<option>=value, or hardware key=value).
ServingRecord serve_point(const std::string& model, const std::vector<std::pair<std::string, std::string>>& options,
                          const std::string& hw, const std::vector<std::string>& overrides);

}  // namespace npusim::llm
