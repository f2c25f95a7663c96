// The one workload loader (docs/formats.md): a file of any format the registry reads (with an
// explicit format or TVM module), a zoo model, a multi-device pipeline, or a serving (`llm:`)
// entry, loaded into what run::run and llm::serve take. The CLI, sweeps and regress load
// workloads here; SystemC-free (sweeps load every workload before forking their workers).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/graph.h"
#include "sim/ir/system.h"
#include "sim/run/workload.h"

namespace npusim::run {

// What names a workload.
struct WorkloadSpec {
  std::string name;       // shown in results: the path as written, or "zoo:resnet50:b1"
  std::string path;       // a file to read; empty for zoo and llm entries
  std::string format;     // the file's format (`--format`); empty: found from the content
  std::string module;     // a TVM Model Library Format archive's module (`--module`)
  std::string zoo_model;  // zoo workload: generated in-process
  int zoo_batch = 1;
  std::string zoo_dtype = "int8";
  std::string where;      // its place in a sweep file ("workloads (line 4)") or the flag
  // A serving workload (`llm: model` with sim llm's options, docs/sweeps.md#serving).
  std::string llm_model;
  std::vector<std::pair<std::string, std::string>> llm_options;
};

// What a spec must load into: one device's graph, a multi-device pipeline, or whichever the
// file is.
enum class WorkloadKind { Device, System, Any };

struct LoadedWorkload {
  std::optional<ir::Graph> graph;
  std::optional<ir::System> system;
  std::optional<ServingWorkload> serving;
  // The run::Workload of what was loaded (pointers into this object).
  Workload view() const;
};

// InputError naming the file (or the zoo model) when it cannot be read, or when it is not of
// the kind asked for.
LoadedWorkload load_workload(const WorkloadSpec& spec, WorkloadKind kind = WorkloadKind::Any);

}  // namespace npusim::run
