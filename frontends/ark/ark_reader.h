// Readers of ARK (microsoft/ark) model and plan files (specs/model_file.md, specs/plan_file.md,
// docs/format_ark.md). Both the May-2024 layout (Node "Ops" arrays,
// Matmul ShapeMNK/StridesACDB args) and the later one (a single Node "Op", 5 more op types,
// Matmul shape derived from the tensors) are accepted, and so are the forms ARK wrote before
// 2024-05-19 (tensor "Pads", plan "WorldSize": 0, old Arg names; docs/format_ark.md#format-history).
// Every problem is an InputError naming
// the file and the JSON pointer, e.g. "plan.json: /ProcessorGroups/0/ResourceGroups/0/TaskGroups/0/TaskRange: ...".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "frontends/json_util.h"
#include "sim/ir/gpu_program.h"

namespace npusim::frontends {

// Model file: Rank, WorldSize, Nodes. Checks node ids, producer/consumer links (existing,
// symmetric, acyclic), ops, tensors and buffers.
gpu::Model read_ark_model(const std::string& path);
gpu::Model parse_ark_model(const json::Json& doc, const std::string& source);

// Plan file: a plan holds its ops and tensors, so it is enough on its own. Checks everything
// that needs no device description: unique TaskInfo ids, ops of a task sharing NumTasks and
// fitting its NumWarps/SramBytes, ranges well formed, processor ranges within NumProcessors
// (and a resource group's within its processor group's), warp ranges within
// NumWarpsPerProcessor, SRAM ranges with step 1, known TaskIds, TaskRange within
// [0, NumTasks), Granularity >= 1, and at least one slot per task group.
gpu::Program read_ark_plan(const std::string& path);
gpu::Program parse_ark_plan(const json::Json& doc, const std::string& source);

// Model and plan of the same rank agree: Rank/WorldSize equal; tensors with the same id have
// the same DataType and Shape; every tensor a non-virtual model op writes is written by a plan
// op of the same type; the buffer of every model input (a tensor read but never written) is
// used by the plan. Plans may re-buffer, split or fuse ops (ARK's hand-tuned plans do), so
// nothing stricter is required. Errors name the plan file.
void cross_check(const gpu::Model& model, const gpu::Program& plan);

// The plan fits a device: NumProcessors <= num_processors, NumWarpsPerProcessor <=
// warps_per_processor, and every SRAM range and TaskInfo SramBytes fits smem_bytes less the
// 128 bytes ARK reserves for its sync state.
void validate_against_device(const gpu::Program& plan, int num_processors, int warps_per_processor,
                             int64_t smem_bytes);
constexpr int64_t kArkSmemReservedBytes = 128;

// The plans of all ranks of one run (one per rank 0..WorldSize-1, any order): every transfer
// one rank declares in its buffers' SendTags/RecvTags is declared by its peer too. Rank r
// declares "r sends to q with tag t" by SendTags [q,t] on a local buffer or RecvTags [-1,t] on
// a descriptor of q's buffer, and "r receives from q with tag t" by RecvTags [q,t] on a local
// buffer or SendTags [-1,t] on a descriptor of q's buffer. Each send of r to q needs a receive
// on q from r with the same tag, and each receive a send.
void check_send_recv_pairs(const std::vector<gpu::Program>& plans);

}  // namespace npusim::frontends
