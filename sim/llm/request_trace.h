// Request traces for continuous batching (docs/llm.md#traces): npusim's own CSV
// (arrival_s,input_tokens,output_tokens), the Azure LLM inference traces of 2023 and 2024
// (TIMESTAMP,ContextTokens,GeneratedTokens; the timestamp a date and time) and BurstGPT's CSV
// (Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type; the timestamp in
// seconds). The format is found from the header. SystemC-free.
#pragma once

#include <string>
#include <vector>

#include "sim/llm/serving.h"

namespace npusim::llm {

struct RequestTrace {
  std::string format;             // "npusim", "azure" or "burstgpt"
  std::vector<Request> requests;  // in arrival order; the first of an Azure/BurstGPT trace at 0
  int skipped = 0;                // rows without output tokens (failed requests in BurstGPT), left out
};

// Arrivals are divided by `scale` (2: twice as fast). InputError naming `source` and the line
// for an unknown header, a malformed row, times that go back, tokens out of range (each at
// least 1, together at most 2^20), more than 10^6 requests, or no request at all.
RequestTrace parse_request_trace(const std::string& text, const std::string& source, double scale = 1);
// The same for a file (a regular file of at most 256 MiB).
RequestTrace read_request_trace(const std::string& path, double scale = 1);

}  // namespace npusim::llm
