// Reader of the intermediate pipeline format (../shared/specs/pipeline_format.en.md) and what
// furiosa-llm's 2025 producer writes beside it (../shared/notes/format_notes.md §4): a JSON
// object {name, devices, tensors, supertasks, metadata, blobs, param_files, device_constraints,
// version} describing supertasks placed on device slots. The result is an ir::System
// (sim/ir/system.h) that has passed finalize_system: every name resolved, every rule checked,
// a topological order. Compute supertasks carry their lowered graph (fx payloads,
// frontends/pipeline/fx_lower.h) or an estimate (dfg / edf, or an fx payload that cannot be
// read). Parameter files in safetensors format are read (header only,
// frontends/pipeline/safetensors.h) to check each constant's name and placements.
// docs/format_pipeline.md.
#pragma once
#include <string>
#include <string_view>

#include "frontends/json_util.h"
#include "sim/ir/system.h"

namespace npusim::frontends::pipeline {

struct PipelineReadOptions {
  // An fx payload that cannot be decoded or lowered is an InputError instead of an estimate.
  bool strict_payloads = false;
  // A parameter file that is absent is an InputError instead of a warning (System::warnings).
  bool require_param_files = false;
};

// Reads, checks and lowers a pipeline file. InputError(path, JSON pointer, ...) for anything
// wrong in it; a broken safetensors parameter file reports that file (byte offset or tensor).
ir::System read_pipeline(const std::string& path, const PipelineReadOptions& opt = {});
// The same from text (tests); `source` names it in errors, relative parameter file paths are
// resolved against `base_dir`.
ir::System read_pipeline_text(const std::string& text, const std::string& source, const std::string& base_dir,
                              const PipelineReadOptions& opt = {});
ir::System read_pipeline_json(const json::Json& doc, const std::string& source, const std::string& base_dir,
                              const PipelineReadOptions& opt = {});

// Content sniffing: a JSON object with "supertasks" and "tensors" objects and "devices".
bool sniff_pipeline(const json::Json& doc);
bool sniff_pipeline_text(std::string_view text);  // parses the text (false when it is not JSON)
bool sniff_pipeline_file(const std::string& path);

// A device string as the producer writes it ("npu:1:0-3"); InputError(source, pointer, ...) if
// malformed. Exposed for tests.
ir::SystemDevice parse_device_string(const std::string& id, const std::string& spec, const std::string& source,
                                     const std::string& pointer);

}  // namespace npusim::frontends::pipeline
