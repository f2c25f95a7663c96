// Pipeline rules (sim/ir/system.h: finalize_system) and the reader's field checks: each case
// breaks one rule of a small valid pipeline and expects the InputError at its JSON pointer.
#include <gtest/gtest.h>

#include "tests/unit/pipeline/pipeline_test_util.h"

namespace npusim::frontends::pipeline {
namespace {

using test::expect_input_error;
using test::read_json;
using test::small_pipeline;
using json::Json;

TEST(PipelineValidation, TheSmallPipelineIsValid) {
  const ir::System s = read_json(small_pipeline());
  EXPECT_EQ(s.supertasks.size(), 8u);
  // dfg payloads are estimates: FLOPs unknown, bytes = inputs + outputs.
  const ir::SuperTask& ca = s.supertasks[static_cast<size_t>(s.find_supertask("ca"))];
  ASSERT_TRUE(ca.compute);
  EXPECT_TRUE(ca.compute->estimated);
  EXPECT_EQ(ca.compute->kind, ir::ComputeKind::Dfg);
  EXPECT_EQ(ca.compute->flops, 0);
  EXPECT_EQ(ca.compute->bytes, (32 + 64 + 32) * 4);
  ASSERT_EQ(ca.compute->graph.layers.size(), 1u);
  EXPECT_EQ(ca.compute->graph.layers[0].op, ir::OpKind::Opaque);
  EXPECT_EQ(ca.compute->graph.layers[0].opaque_bytes, (32 + 64 + 32) * 4);
  // The absent parameter file is a warning, not an error.
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("absent.safetensors' does not exist"), std::string::npos) << s.warnings[0];
  // The order: in, ca, cb, the all_reduce group, s, r, out.
  std::vector<std::string> ids;
  for (int i : s.order) ids.push_back(s.supertasks[static_cast<size_t>(i)].id);
  EXPECT_EQ(ids, (std::vector<std::string>{"in", "ca", "cb", "ar_a", "ar_b", "s", "r", "out"}));
  // ... and with require_param_files the absent file is an error.
  expect_input_error([] { PipelineReadOptions o; o.require_param_files = true; read_json(small_pipeline(), "", o); },
                     "/param_files/p/path", "does not exist");
}

// ---- every tensor produced exactly once, or a constant ----

TEST(PipelineValidation, TensorProducedTwice) {
  Json p = small_pipeline();
  p["supertasks"]["cb"]["outputs"] = {"h_b", "h_a"};
  expect_input_error([&] { read_json(p); }, "/supertasks/cb/outputs/1", "tensor 'h_a' is produced twice (also by supertask 'ca')");
}

TEST(PipelineValidation, ConstantWritten) {
  Json p = small_pipeline();
  p["supertasks"]["cb"]["outputs"] = {"h_b", "w_a"};
  expect_input_error([&] { read_json(p); }, "/supertasks/cb/outputs/1", "writes tensor 'w_a', a constant");
}

TEST(PipelineValidation, TensorNeitherProducedNorConstant) {
  Json p = small_pipeline();
  p["tensors"]["ghost"] = {{"shape", {1}}, {"dtype", "f32"}};
  expect_input_error([&] { read_json(p); }, "/tensors/ghost", "neither a constant (no value) nor produced by any supertask");
}

// ---- every input produced by someone ----

TEST(PipelineValidation, InputNobodyProduces) {
  Json p = small_pipeline();
  p["tensors"]["ghost"] = {{"shape", {1}}, {"dtype", "f32"}};
  p["supertasks"]["cb"]["inputs"] = {"x_b", "ghost"};
  expect_input_error([&] { read_json(p); }, "/supertasks/cb/inputs/1", "tensor 'ghost' is read but no supertask produces it");
  p["supertasks"]["cb"]["inputs"] = {"x_b", "nowhere"};
  expect_input_error([&] { read_json(p); }, "/supertasks/cb/inputs/1", "tensor 'nowhere' is not in /tensors");
}

TEST(PipelineValidation, TensorsStayOnTheirDevice) {
  Json p = small_pipeline();
  p["supertasks"]["cb"]["inputs"] = {"x_b", "h_a"};
  expect_input_error([&] { read_json(p); }, "/supertasks/cb/inputs/1",
                     "tensor 'h_a' lives on device 'a' (made by supertask 'ca') but supertask 'cb' runs on device 'b'");
}

// ---- communication metadata: exactly the spec's keys ----

TEST(PipelineValidation, CollectiveMetadataKeys) {
  Json p = small_pipeline();
  p["supertasks"]["ar_a"]["metadata"] = Json::object();
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/reduce_op",
                     "missing metadata key 'reduce_op': all_reduce takes exactly reduce_op");
  p = small_pipeline();
  p["supertasks"]["ar_a"]["metadata"]["dim"] = 0;
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/dim", "unexpected metadata key 'dim'");
  p = small_pipeline();
  p["supertasks"]["s"]["metadata"]["peer"] = 1;
  expect_input_error([&] { read_json(p); }, "/supertasks/s/metadata/peer", "send takes no metadata keys");
  p = small_pipeline();
  p["supertasks"]["ar_a"]["metadata"]["reduce_op"] = "prod";
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/reduce_op", "reduce_op must be one of sum, avg, max, min");
  p = small_pipeline();
  p["supertasks"]["ar_b"]["metadata"]["reduce_op"] = "max";
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_b/metadata/reduce_op", "differs from sum of supertask 'ar_a'");
  // Every kind's keys.
  for (const auto& [kind, keys] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"reduce", {"dst", "reduce_op"}}, {"all_gather", {"dim"}}, {"reduce_scatter", {"dim", "reduce_op"}},
           {"all_to_all", {"dst_dim", "src_dim"}}, {"broadcast", {"src"}}, {"gather", {"dim", "dst"}}}) {
    const auto k = ir::parse_collective(kind);
    ASSERT_TRUE(k) << kind;
    EXPECT_EQ(ir::collective_metadata_keys(*k), keys) << kind;
    p = small_pipeline();
    p["supertasks"]["ar_a"]["kind"] = kind;
    p["supertasks"]["ar_b"]["kind"] = kind;
    p["supertasks"]["ar_a"]["metadata"] = Json::object();
    expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/" + keys[0], "missing metadata key '" + keys[0] + "'");
  }
  // Values: dims within the tensor's rank, devices of the group.
  p = small_pipeline();
  p["supertasks"]["ar_a"]["kind"] = p["supertasks"]["ar_b"]["kind"] = "all_gather";
  p["supertasks"]["ar_a"]["metadata"] = p["supertasks"]["ar_b"]["metadata"] = {{"dim", 2}};
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/dim", "dim 2 is outside the rank of tensor 'h_a' [4,8]");
  p["supertasks"]["ar_a"]["metadata"] = p["supertasks"]["ar_b"]["metadata"] = {{"dim", 0}};
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/outputs/0", "all_gather output 'r_a' [4,8] f32 should be [8,8]");
  p = small_pipeline();
  p["supertasks"]["ar_a"]["kind"] = p["supertasks"]["ar_b"]["kind"] = "broadcast";
  p["supertasks"]["ar_a"]["metadata"] = p["supertasks"]["ar_b"]["metadata"] = {{"src", "c"}};
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/src", "device 'c' is not in /devices");
  p["devices"]["c"] = "npu:2";
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/src", "device 'c' is not in group 'g' (a, b)");
}

// ---- send / recv pair up per group ----

TEST(PipelineValidation, SendWithoutRecv) {
  Json p = small_pipeline();
  p["supertasks"]["r"]["group"] = "elsewhere";
  expect_input_error([&] { read_json(p); }, "/supertasks/s/group", "send 's' has no recv in group 'p2p'");
}

TEST(PipelineValidation, SendRecvGroupWithACollective) {
  Json p = small_pipeline();
  p["supertasks"]["ar_b"]["group"] = "p2p";
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_b/kind", "all_reduce supertask 'ar_b' cannot join it");
}

TEST(PipelineValidation, SendRecvShapesAndDevices) {
  Json p = small_pipeline();
  p["tensors"]["t_b"]["shape"] = {4, 4};
  expect_input_error([&] { read_json(p); }, "/supertasks/r/outputs/0", "recv tensor 't_b' [4,4] f32 differs from the sent tensor 'r_a' [4,8] f32");
  p = small_pipeline();
  p["supertasks"]["r"]["device"] = "a";
  expect_input_error([&] { read_json(p); }, "/supertasks/r/device", "the same as its send 's'");
  p = small_pipeline();
  p["supertasks"]["s"]["outputs"] = {"t_b"};
  p["supertasks"]["r"]["outputs"] = Json::array();
  p["supertasks"]["out"]["inputs"] = {"r_b"};
  expect_input_error([&] { read_json(p); }, "/supertasks/s/outputs", "a send has no outputs");
}

// ---- device_idx within its group ----

TEST(PipelineValidation, DeviceIdxWithinItsGroup) {
  Json p = small_pipeline();
  p["supertasks"]["ar_b"]["device_idx"] = 2;
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_b/device_idx", "device_idx 2 is outside group 'g' of 2 supertasks (0..1)");
  p["supertasks"]["ar_b"]["device_idx"] = 0;
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_b/device_idx", "device_idx 0 is taken by supertask 'ar_a'");
  p = small_pipeline();
  p["supertasks"]["s"]["device_idx"] = 5;
  expect_input_error([&] { read_json(p); }, "/supertasks/s/device_idx", "outside group 'p2p' of 2 supertasks");
  p = small_pipeline();
  p["supertasks"]["ar_b"]["device"] = "a";
  p["supertasks"]["cb"]["device"] = "a";
  p["supertasks"]["out"]["inputs"] = {"t_b"};
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_b/device", "group 'g' already has supertask 'ar_a' on device 'a'");
}

// ---- placements within the stored tensor's shape ----

TEST(PipelineValidation, PlacementsWithinTheStoredTensor) {
  test::Scratch s;
  test::spit(s.path("params.safetensors"), test::safetensors_of({{"w", "F32", {8, 12}, 0, 384}}, 384));
  Json p = small_pipeline();
  p["param_files"]["p"]["path"] = "params.safetensors";
  // Reads: [0,8) x [0,8) of the stored [8,12].
  const ir::System ok = read_json(p, s.dir());
  EXPECT_TRUE(ok.warnings.empty());
  EXPECT_EQ(*ok.tensors[static_cast<size_t>(ok.find_tensor("w_a"))].param.stored_shape, (ir::Shape{8, 12}));
  p["tensors"]["w_a"]["value"]["placements"] = {{0, 8}, {6, 14}};
  expect_input_error([&] { read_json(p, s.dir()); }, "/tensors/w_a/value/placements/1",
                     "range [6, 14) exceeds dimension 1 (12) of stored tensor 'w'");
  p["tensors"]["w_a"]["value"]["placements"] = {{0, 8}};
  expect_input_error([&] { read_json(p, s.dir()); }, "/tensors/w_a/value/placements", "has 1 ranges but stored tensor 'w'");
  p["tensors"]["w_a"]["value"]["placements"] = {{0, 8}, {0, 4}};
  expect_input_error([&] { read_json(p, s.dir()); }, "/tensors/w_a/value/placements/1",
                     "range [0, 4) has 4 elements but dimension 1 of the tensor's shape [8,8] is 8");
  p["tensors"]["w_a"]["value"]["placements"] = {{0, 8}, {5, 3}};
  expect_input_error([&] { read_json(p, s.dir()); }, "/tensors/w_a/value/placements/1", "range [5, 3) is reversed");
  p["tensors"]["w_a"]["value"]["placements"] = {{0, 8}, {0, 8}};
  p["tensors"]["w_a"]["value"]["name"] = "v";
  expect_input_error([&] { read_json(p, s.dir()); }, "/tensors/w_a/value/name", "tensor 'v' is not stored in");
  // A broken parameter file reports that file.
  test::spit(s.path("params.safetensors"), test::safetensors_of({{"w", "F32", {8, 12}, 0, 384}}, 100));
  try {
    read_json(small_pipeline(), s.dir());
    p["tensors"]["w_a"]["value"]["name"] = "w";
    read_json(p, s.dir());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), s.path("params.safetensors"));
    EXPECT_EQ(e.where(), "/w/data_offsets");
  }
}

TEST(PipelineValidation, MetadataSlicePlacements) {
  Json p = small_pipeline();
  p["metadata"] = {{"tensors", {{"inputs", {{"x", {{"shape", {4, 16}}, {"dtype", "f32"}, {"idx", 0}}}}}, {"outputs", Json::object()}}},
                   {"tensor_slices",
                    {{"inputs",
                      {{"x_a", {{"placements", {{0, 4}, {0, 8}}}, {"origin", "x"}, {"dtype", "f32"}, {"device", "a"}}},
                       {"x_b", {{"placements", {{0, 4}, {12, 20}}}, {"origin", "x"}, {"dtype", "f32"}, {"device", "b"}}}}},
                     {"outputs", Json::object()}}}};
  expect_input_error([&] { read_json(p); }, "/metadata/tensor_slices/inputs/x_b/placements/1",
                     "range [12, 20) exceeds dimension 1 (16) of origin 'x' [4,16]");
  p["metadata"]["tensor_slices"]["inputs"]["x_b"]["placements"] = {{0, 4}, {8, 16}};
  EXPECT_TRUE(read_json(p).metadata.present);
  p["metadata"]["tensor_slices"]["inputs"]["x_b"]["origin"] = "z";
  expect_input_error([&] { read_json(p); }, "/metadata/tensor_slices/inputs/x_b/origin", "origin 'z' is not in /metadata/tensors/inputs");
}

// ---- no cycles ----

TEST(PipelineValidation, Cycle) {
  Json p = small_pipeline();
  p["tensors"]["u_a"] = {{"shape", {4, 8}}, {"dtype", "f32"}};
  p["supertasks"]["ca"]["inputs"] = {"x_a", "w_a", "u_a"};
  p["supertasks"]["cu"] = {{"kind", "dfg"}, {"inputs", {"h_a"}}, {"outputs", {"u_a"}}, {"device", "a"}, {"data", "ZGZn"}};
  expect_input_error([&] { read_json(p); }, "/supertasks/ca", "supertasks form a cycle: ca -> cu -> ca");
}

TEST(PipelineValidation, CycleThroughACollectiveGroup) {
  // cb waits for what the recv delivers, which the send takes from the all_reduce, whose
  // member on b waits for cb: a deadlock only visible when the group is one step.
  Json p = small_pipeline();
  p["supertasks"]["cb"]["inputs"] = {"x_b", "t_b"};
  p["supertasks"]["out"]["inputs"] = {"r_b"};
  std::string msg = expect_input_error([&] { read_json(p); }, "/supertasks/cb", "supertasks form a cycle: cb -> ar_a -> s -> r -> cb");
  EXPECT_NE(msg.find("the members of a collective group wait for each other"), std::string::npos) << msg;
}

// ---- fields ----

TEST(PipelineValidation, Fields) {
  Json p = small_pipeline();
  p["extra"] = 1;
  expect_input_error([&] { read_json(p); }, "/extra", "unknown field 'extra' in a pipeline");
  p = small_pipeline();
  p["supertasks"]["ca"]["group"] = "g";
  expect_input_error([&] { read_json(p); }, "/supertasks/ca/group", "unknown field 'group' in a compute supertask");
  p = small_pipeline();
  p["supertasks"]["ca"]["kind"] = "matmul";
  expect_input_error([&] { read_json(p); }, "/supertasks/ca/kind", "unknown supertask kind 'matmul'");
  p = small_pipeline();
  p["supertasks"]["in"]["device"] = "a";
  expect_input_error([&] { read_json(p); }, "/supertasks/in/device", "an input supertask has no device");
  p = small_pipeline();
  p["supertasks"]["ca"]["device"] = "z";
  expect_input_error([&] { read_json(p); }, "/supertasks/ca/device", "device 'z' is not in /devices");
  p = small_pipeline();
  p["supertasks"]["ca"].erase("data");
  expect_input_error([&] { read_json(p); }, "/supertasks/ca", "needs 'data' or 'data_blob'");
  p["supertasks"]["ca"]["data_blob"] = "b0";
  expect_input_error([&] { read_json(p); }, "/supertasks/ca/data_blob", "blob 'b0' is not in /blobs");
  p = small_pipeline();
  p["tensors"]["x_a"]["dtype"] = "f128";
  expect_input_error([&] { read_json(p); }, "/tensors/x_a/dtype", "unknown dtype 'f128'");
  p = small_pipeline();
  p["tensors"]["w_a"]["value"]["param_file"] = "q";
  expect_input_error([&] { read_json(p); }, "/tensors/w_a/value/param_file", "param file 'q' is not in /param_files");
  p = small_pipeline();
  p["supertasks"]["ar_a"]["metadata"]["reduce_op"] = 1.5;
  expect_input_error([&] { read_json(p); }, "/supertasks/ar_a/metadata/reduce_op", "an integer or a string");
  p = small_pipeline();
  p["supertasks"].erase("out");
  p["tensors"].erase("t_b");
  p["supertasks"]["r"]["outputs"] = Json::array();
  expect_input_error([&] { read_json(p); }, "/supertasks", "no output supertask");
  expect_input_error([] { read_pipeline_text("{\"name\": 1", "bad.json", ""); }, "line 1, column 11", "malformed JSON");
}

TEST(PipelineValidation, DeviceStrings) {
  const auto d = parse_device_string("x", "npu:1:4-7", "f", "/devices/x");
  EXPECT_EQ(d.kind, "npu");
  EXPECT_EQ(d.index, 1);
  EXPECT_EQ(d.pe_first, 4);
  EXPECT_EQ(d.pe_count, 4);
  EXPECT_EQ(d.group, "npu:1");
  EXPECT_EQ(parse_device_string("x", "cpu", "f", "").group, "cpu");
  EXPECT_TRUE(parse_device_string("x", "cpu", "f", "").is_cpu());
  EXPECT_EQ(parse_device_string("x", "rngd:0:2", "f", "").pe_count, 1);
  EXPECT_EQ(parse_device_string("x", "npu:0:*", "f", "").pe_count, 0);
  Json p = small_pipeline();
  p["devices"]["a"] = "npu:0:0-2";
  expect_input_error([&] { read_json(p); }, "/devices/a", "fuses 3 processing elements; fused groups have 1, 2, 4 or 8");
  p["devices"]["a"] = "npu:x";
  expect_input_error([&] { read_json(p); }, "/devices/a", "index 'x' is not a non-negative integer");
  p["devices"]["a"] = "npu:0:1:2";
  expect_input_error([&] { read_json(p); }, "/devices/a", "has 4 fields");
  p["devices"]["a"] = {{"kind", "npu"}, {"idx", 3}};
  EXPECT_EQ(read_json(p).devices[0].spec, "npu:3");
}

}  // namespace
}  // namespace npusim::frontends::pipeline
