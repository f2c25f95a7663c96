// The multi-device workload: device slots, the tensors that flow between them, and the
// supertasks (compute on one device, collectives over a group of devices) of a pipeline file
// (frontends/pipeline, docs/format_pipeline.md). A compute supertask carries an
// ir::Graph for that device's model; a communication supertask carries its collective. No
// SystemC and no JSON here: the reader fills a System with names and JSON pointers, then
// finalize_system resolves the names, checks every rule (InputError(source, pointer, ...)) and
// computes the topological order the system scheduler runs.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/ir/dtype.h"
#include "sim/ir/graph.h"

namespace npusim::ir {

// ---- devices ----

// One device slot (a key of Pipeline.devices). The producer writes a device string
// ("cpu", "cpu:0", "npu:0", "npu:1:*", "npu:1:0-3", "rngd:0:2"); the spec's older form is an
// object {kind, idx}, read as "<kind>:<idx>".
struct SystemDevice {
  std::string id;    // slot id, e.g. "0", "npu0"
  std::string spec;  // the device string as written (or "<kind>:<idx>")
  std::string kind;  // its first field: "cpu", "npu", "rngd", "gpu"...
  std::optional<int64_t> index;  // its second field: the device within the machine
  // Fused processing elements (third field): "A-B" or "A" gives [pe_first, pe_first + pe_count);
  // pe_count 0 means the whole device ("*" or no third field).
  int64_t pe_first = 0;
  int64_t pe_count = 0;
  // The physical device the slot belongs to, "<kind>:<index>" (just "<kind>" without an index):
  // slots with the same group share one chip (npu:1:0-3 and npu:1:4-7 are both "npu:1").
  std::string group;
  std::string pointer;  // "/devices/<id>"
  bool is_cpu() const { return kind == "cpu"; }
};

// ---- tensors ----

// A constant tensor's value (ParamValue): a slice of a tensor stored in a parameter file.
struct ParamRef {
  std::string param_file;     // id into Pipeline.param_files ("" in the spec's older form)
  std::string path;           // the file, resolved against the pipeline's folder
  std::string format;         // "safetensors", "torch.save", "torch.export"
  std::string name;           // name inside the file
  std::string name_in_graph;  // name in the FX graph / dfg
  std::vector<std::pair<int64_t, int64_t>> placements;  // [start, end) per stored dimension
  // What the file says about the stored tensor, when the reader could read it (safetensors
  // present): its shape and dtype; nullopt when the file is absent or not safetensors.
  std::optional<Shape> stored_shape;
  std::string stored_dtype;   // safetensors dtype ("BF16") when known
};

struct SystemTensor {
  std::string name;
  Shape shape;
  DType dtype = DType::Float32;
  std::string dtype_name;  // as written: "bf16", "f8", "u8"...
  int64_t bytes = 0;       // elements x dtype bytes (f8: 1 byte)
  bool constant = false;   // has a value (ParamInfo): loaded before the pipeline runs
  ParamRef param;          // constant only
  // Filled by finalize_system:
  int producer = -1;           // index into System::supertasks; -1 for constants
  std::vector<int> consumers;  // supertasks that read it, in file order
  std::string pointer;         // "/tensors/<name>"
};

// ---- supertasks ----

enum class SuperTaskKind { Input, Output, Compute, Communication };
const char* supertask_kind_name(SuperTaskKind k);  // "input", "output", "compute", "communication"

enum class ComputeKind { Fx, Dfg, Edf };

enum class CollectiveKind { Send, Recv, Reduce, AllReduce, Gather, AllGather, ReduceScatter, AllToAll, Broadcast };
const char* collective_name(CollectiveKind k);  // the file's spelling: "all_reduce", "send"...
std::optional<CollectiveKind> parse_collective(const std::string& s);
// The metadata keys a communication supertask must have, exactly (spec; gather: npusim's reading
// of the producer's addition, dim + dst).
const std::vector<std::string>& collective_metadata_keys(CollectiveKind k);

// A metadata value: the spec allows uint64 or string.
struct MetaValue {
  bool is_int = false;
  int64_t i = 0;
  std::string s;
  std::string str() const { return is_int ? std::to_string(i) : s; }
};

struct ComputeTask {
  ComputeKind kind = ComputeKind::Fx;
  std::string payload_pointer;  // "/supertasks/<id>/data" or "/blobs/<blob id>"
  std::string blob;             // data_blob id, "" for inline data
  // The work on the device. A readable fx payload lowers node by node; otherwise (dfg, edf, an
  // fx payload that cannot be decoded) the graph is one opaque op over the supertask's inputs
  // and outputs with FLOPs 0 and bytes = inputs + outputs, and `estimated` is set.
  Graph graph;
  bool estimated = false;
  std::string estimate_reason;  // why (for reports): "dfg payload", "fx payload: ..."
  // Summary: macs = sum of the graph's Layer::macs(); flops = 2 x macs + opaque FLOPs + one per
  // output element of the other non-data-movement ops (0 for estimates); bytes = the
  // supertask's input + output bytes.
  int64_t macs = 0;
  int64_t flops = 0;
  int64_t bytes = 0;
  int num_opaque = 0;  // opaque ops in the lowered graph (unknown aten targets...)
};

struct Collective {
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::string group;       // the group id shared by the matching supertasks
  int64_t device_idx = 0;  // this supertask's position in the group
  std::map<std::string, MetaValue> metadata;  // exactly the spec's keys for the kind
  std::string algorithm;   // hint from the file (npusim field "algorithm"), "" = the system's choice
  // Filled by finalize_system:
  std::vector<int> members;          // supertasks of the group, by device_idx (send, recv for a pair)
  std::vector<std::string> devices;  // their device ids, same order
  int peer = -1;                     // send <-> recv: the other supertask
  // Bytes this device contributes: its input bytes (recv, and broadcast members without
  // inputs: its output bytes). Collective sizes as the usual formulas use them: all_reduce,
  // reduce_scatter, reduce, all_to_all S = bytes; all_gather and gather S = n x bytes.
  int64_t bytes = 0;
  // Typed views of the metadata (nullopt / "" when the kind has no such key).
  std::string reduce_op;  // "sum", "avg", "max", "min"
  std::optional<int64_t> dim, src_dim, dst_dim;
  std::string src, dst;   // device ids (broadcast src; reduce / gather dst)
  int size() const { return static_cast<int>(members.size()); }
};

struct SuperTask {
  std::string id;
  SuperTaskKind kind = SuperTaskKind::Compute;
  std::string kind_name;   // as written: "fx", "all_reduce", "input"...
  std::string device;      // device slot id; "" for input / output
  std::vector<std::string> inputs, outputs;  // tensor names, in order
  std::optional<ComputeTask> compute;        // kind Compute
  std::optional<Collective> comm;            // kind Communication
  std::string pointer;     // "/supertasks/<id>"
  // Filled by finalize_system:
  int device_index = -1;                 // into System::devices; -1 for input / output
  std::vector<int> input_ids, output_ids;  // into System::tensors
  int64_t input_bytes = 0, output_bytes = 0;
};

// ---- the pipeline's own metadata (for the generator; the runner does not use it) ----

struct MetaTensor {  // an input / output of the model before parallelisation
  std::string name;
  Shape shape;
  std::string dtype;
  int64_t idx = 0;
  std::string pointer;
};
struct MetaTensorSlice {  // a pipeline input / output and where it sits in the original one
  std::string name;
  std::vector<std::pair<int64_t, int64_t>> placements;
  std::string origin;
  std::string dtype;
  std::string device;
  std::string pointer;
};
struct PipelineMetadata {
  bool present = false;
  std::vector<MetaTensor> inputs, outputs;
  std::vector<MetaTensorSlice> input_slices, output_slices;
};

struct DeviceConstraint {
  std::string kind;
  std::vector<std::string> devices;  // the nested device lists, flattened
};

// ---- the system ----

struct System {
  std::string source;  // the file it came from (for messages)
  std::string name;    // Pipeline.name
  std::string format = "pipeline";
  std::string version;  // Pipeline.version, "" if absent
  std::vector<SystemDevice> devices;     // file order
  std::vector<SystemTensor> tensors;     // file order
  std::vector<SuperTask> supertasks;     // file order
  PipelineMetadata metadata;
  std::vector<DeviceConstraint> device_constraints;
  std::vector<std::string> warnings;     // things read but not checked (absent param files...)
  // Filled by finalize_system: a topological order (indices into supertasks). The input
  // supertask comes first and the output supertask last; a recv comes after its send; the
  // members of a collective group are consecutive, by device_idx.
  std::vector<int> order;

  int find_device(const std::string& id) const;     // -1 if absent
  int find_tensor(const std::string& name) const;   // -1 if absent
  int find_supertask(const std::string& id) const;  // -1 if absent
  std::vector<int> supertasks_on(int device) const;  // in topological order
  std::vector<int> group_members(const std::string& group) const;  // communication supertasks of a group, file order
};

// The pipeline's dtype strings ("f32", "bf16", "u8", "f8"...; also the IR names); f8 reads as
// float8 E4M3 (the spec names no variant; E4M3 is what inference runtimes store).
std::optional<DType> parse_pipeline_dtype(const std::string& s);

// Resolves every name (devices, tensors, groups), fills the derived fields (producers,
// consumers, bytes, group members, typed metadata) and checks, each as InputError(s.source,
// JSON pointer, ...):
//  - supertasks: unique ids; one input and one output supertask, without a device; compute and
//    communication supertasks name an existing device; every tensor named exists;
//  - every tensor is produced exactly once (the input supertask produces the pipeline inputs)
//    or is a constant, which nobody produces; every input of a supertask is produced by some
//    supertask or is a constant; a tensor stays on its producer's device (data crosses devices
//    only through communication supertasks);
//  - communication metadata has exactly the keys of its kind, with valid values (reduce_op
//    sum/avg/max/min, dims within the tensor's rank, src/dst devices of the group);
//  - send/recv pair up per group (one send without outputs and one input, one recv without
//    inputs and one output, same shape and dtype, different devices); other groups have one
//    kind, the same metadata, one member per device;
//  - device_idx within its group (0 .. members - 1), unique for collectives;
//  - placements: one [start, end) per stored dimension, within the stored tensor's shape
//    (when the parameter file was read) and of the constant's own shape; metadata slices
//    within their origin's shape;
//  - no cycles (a collective group counts as one step: all members wait for each other),
//    reported with the supertasks on the cycle.
// Sets s.order.
void finalize_system(System& s);

// Topological order of a finalized system's supertasks (what finalize_system stores in order).
std::vector<int> topological_order(const System& s);

}  // namespace npusim::ir
