#include "sim/run/workload_loader.h"

#include "frontends/frontend_ir/frontend_ir_reader.h"
#include "frontends/pipeline/pipeline_reader.h"
#include "frontends/registry/registry.h"
#include "frontends/zoo/zoo.h"
#include "sim/ir/error.h"

namespace npusim::run {

namespace {

ir::Graph zoo_graph(const WorkloadSpec& w) {
  frontends::zoo::ZooOptions z;
  z.model = w.zoo_model;
  z.batch = w.zoo_batch;
  z.dtype = w.zoo_dtype;
  if (frontends::zoo::is_transformer(z.model)) {
    ir::Graph g = frontends::zoo::make_transformer(z);
    g.name = w.name;
    return g;
  }
  return frontends::parse_frontend_ir(frontends::zoo::make_frontend_ir(z), w.name);
}

}  // namespace

Workload LoadedWorkload::view() const {
  Workload w;
  if (graph) w.graph = &*graph;
  if (system) w.system = &*system;
  if (serving) w.serving = &*serving;
  return w;
}

LoadedWorkload load_workload(const WorkloadSpec& spec, WorkloadKind kind) {
  LoadedWorkload r;
  if (!spec.llm_model.empty()) {
    r.serving = ServingWorkload{spec.llm_model, spec.llm_options};
    return r;
  }
  const bool pipeline = !spec.path.empty() && (spec.format == "pipeline" ||
                                                (spec.format.empty() && frontends::pipeline::sniff_pipeline_file(spec.path)));
  if (kind == WorkloadKind::System && !pipeline)
    throw InputError(spec.path.empty() ? "zoo" : spec.path, "",
                     "a system runs multi-device pipeline files (docs/system.md); give one device's config to run a "
                     "single-device workload");
  if (pipeline && kind != WorkloadKind::Device) {
    r.system = frontends::pipeline::read_pipeline(spec.path);
    return r;
  }
  r.graph = spec.zoo_model.empty() ? frontends::read_workload(spec.path, spec.format, spec.module) : zoo_graph(spec);
  return r;
}

}  // namespace npusim::run
