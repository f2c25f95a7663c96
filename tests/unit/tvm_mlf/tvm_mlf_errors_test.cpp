// Malformed Model Library Format input: each case is an InputError naming the archive, the
// member and the place in it (JSON pointer or byte offset).
#include <gtest/gtest.h>

#include "frontends/tvm_mlf/tvm_mlf_reader.h"
#include "tests/unit/tvm_mlf/mlf_test_util.h"

namespace npusim::frontends {
namespace {

using test::edit_json;
using test::expect_input_error;
using test::Scratch;
using test::TarMember;

const char* kGraph = "executor-config/graph/graph.json";
const char* kParams = "parameters/default.params";

// The v5 archive with one extra member (written as given).
std::string tar_with(const Scratch& s, const TarMember& extra, bool gzip = false) {
  std::vector<TarMember> ms = test::dir_members(test::mlf_data("v5"));
  ms.push_back(extra);
  const std::string p = s.path(gzip ? "bad.tar.gz" : "bad.tar");
  test::write_tar(p, ms, gzip);
  return p;
}

// Overwrites 8 little-endian bytes of a file at `offset`.
void poke_u64(const std::string& path, size_t offset, uint64_t v) {
  std::string b = test::slurp(path);
  ASSERT_LE(offset + 8, b.size());
  for (int i = 0; i < 8; ++i) b[offset + i] = static_cast<char>((v >> (8 * i)) & 0xff);
  test::spit(path, b);
}

TEST(TvmMlfErrors, MembersOutsideTheArchiveOrLinksAreRefused) {
  Scratch s;
  for (bool gzip : {false, true}) {
    std::string p = tar_with(s, {"../evil.txt", "x"}, gzip);
    std::string msg = expect_input_error([&] { read_tvm_mlf(p); }, "../evil.txt", "has a '..' component");
    EXPECT_EQ(msg.rfind(p + ": ../evil.txt: ", 0), 0u) << msg;
    EXPECT_TRUE(sniff_tvm_mlf(p));  // recognised, so that the reader's error is what the user sees
    p = tar_with(s, {"./parameters/../../up.params", "x"}, gzip);
    expect_input_error([&] { read_tvm_mlf(p); }, "./parameters/../../up.params", "'..'");
    p = tar_with(s, {"/etc/npusim.txt", "x"}, gzip);
    expect_input_error([&] { read_tvm_mlf(p); }, "/etc/npusim.txt", "is an absolute path");
    p = tar_with(s, {"./codegen/link.c", "", TarMember::Symlink, "/etc/passwd"}, gzip);
    expect_input_error([&] { read_tvm_mlf(p); }, "./codegen/link.c", "is a symbolic link to '/etc/passwd'; links are refused");
    p = tar_with(s, {"./hard.json", "", TarMember::Hardlink, "./metadata.json"}, gzip);
    expect_input_error([&] { read_tvm_mlf(p); }, "./hard.json", "is a hard link");
    p = tar_with(s, {"./metadata.json", "{}"}, gzip);
    expect_input_error([&] { read_tvm_mlf(p); }, "metadata.json", "appears twice");
  }
  // A symbolic link in a directory.
  const std::string dir = s.copy_data_dir("v5", "linked");
  std::filesystem::create_symlink("/etc/passwd", dir + "/src/passwd");
  expect_input_error([&] { read_tvm_mlf(dir); }, "src/passwd", "is a symbolic link");
  EXPECT_TRUE(sniff_tvm_mlf(dir));  // the sniffer only looks for metadata.json
}

TEST(TvmMlfErrors, TruncatedArchive) {
  Scratch s;
  test::pack_dir(test::mlf_data("v5"), s.path("v5.tar"), false);
  for (const std::string& src : {test::mlf_data("v5.tar.gz"), s.path("v5.tar")}) {
    SCOPED_TRACE(src);
    const std::string full = test::slurp(src);
    for (size_t keep : {full.size() / 2, full.size() * 3 / 4}) {
      test::spit(s.path("cut"), full.substr(0, keep));
      try {
        read_tvm_mlf(s.path("cut"));
        ADD_FAILURE() << "no error when " << keep << " of " << full.size() << " bytes are kept";
      } catch (const InputError& e) {
        EXPECT_EQ(e.file(), s.path("cut"));
        const std::string msg = e.what();
        EXPECT_TRUE(msg.find("cannot read") != std::string::npos || msg.find("cannot open the archive") != std::string::npos ||
                    msg.find("truncated") != std::string::npos) << msg;
      }
    }
  }
}

TEST(TvmMlfErrors, BrokenParams) {
  Scratch s;
  // Truncated: the file ends inside p2's data (offset 712, 2560 bytes).
  std::string dir = s.copy_data_dir("v5", "truncated");
  std::string params = dir + "/" + kParams;
  test::spit(params, test::slurp(params).substr(0, 1000));
  std::string msg = expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 712",
                                       "array 2 ('p2') data needs 2560 bytes but only 288 remain (the file has 1000 bytes)");
  EXPECT_EQ(msg.rfind(dir + ": " + kParams + ": byte 712: ", 0), 0u) << msg;
  // The same inside a .tar.gz.
  test::pack_dir(dir, s.path("truncated.tar.gz"), true);
  expect_input_error([&] { read_tvm_mlf(s.path("truncated.tar.gz")); }, std::string(kParams) + ": byte 712", "only 288 remain");

  // Sizes larger than the file, refused before anything is allocated: a name count, and a
  // tensor of 2^30 x 64 floats.
  dir = s.copy_data_dir("v5", "names");
  poke_u64(dir + "/" + kParams, 16, uint64_t{1} << 40);
  expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 16", "1099511627776 names need at least");
  dir = s.copy_data_dir("v5", "huge");
  poke_u64(dir + "/" + kParams, 688, uint64_t{1} << 30);
  poke_u64(dir + "/" + kParams, 704, (uint64_t{1} << 30) * 64 * 4);
  expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 712",
                     "array 2 ('p2') data needs 274877906944 bytes but only 2648 remain");

  // Wrong magic numbers: the file's and an array's.
  dir = s.copy_data_dir("v5", "magic");
  poke_u64(dir + "/" + kParams, 0, 0x1234);
  expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 0", "wrong magic 0x0000000000001234");
  dir = s.copy_data_dir("v5", "array_magic");
  poke_u64(dir + "/" + kParams, 72, 0);
  expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 72", "array 0 ('p0'): wrong magic");

  // A parameter that does not match its graph node.
  dir = s.copy_data_dir("v5", "shape");
  edit_json(dir + "/" + kGraph, [](json::Json& g) {
    g["attrs"]["shape"][1][1] = json::Json::array({4, 3, 5, 5});
    g["attrs"]["shape"][1][3] = json::Json::array({1, 4, 6, 6});
  });
  expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 72",
                     "array 0 ('p0'): shape [4,3,3,3] differs from [4,3,5,5] of its graph node (executor-config/graph/graph.json: /nodes/1)");
  dir = s.copy_data_dir("v5", "dtype");
  edit_json(dir + "/" + kGraph, [](json::Json& g) { g["attrs"]["dltype"][1][2] = "float16"; });
  expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 576", "dtype float32 differs from float16");
  dir = s.copy_data_dir("v5", "renamed");
  edit_json(dir + "/" + kGraph, [](json::Json& g) { g["nodes"][1]["name"] = "weight"; });
  expect_input_error([&] { read_tvm_mlf(dir); }, std::string(kParams) + ": byte 72", "has no input node called 'p0'");
}

TEST(TvmMlfErrors, BrokenGraph) {
  Scratch s;
  const std::string g = std::string(kGraph) + ": ";
  struct Case {
    const char* name;
    std::function<void(json::Json&)> edit;
    std::string pointer, fragment;
  };
  const std::vector<Case> cases = {
      {"missing_node", [](json::Json& j) { j["nodes"][3]["inputs"][0][0] = 42; }, "/nodes/3/inputs/0/0",
       "node 42 does not exist (the graph has 10 nodes)"},
      {"later_node", [](json::Json& j) { j["nodes"][3]["inputs"][0][0] = 5; }, "/nodes/3/inputs/0/0",
       "does not come before this node"},
      {"bad_output_index", [](json::Json& j) { j["nodes"][4]["inputs"][0][1] = 1; }, "/nodes/4/inputs/0/1",
       "output 1 of node 3"},
      {"shape_length", [](json::Json& j) { j["attrs"]["shape"][1].erase(9); }, "/attrs/shape/1",
       "has 9 entries but node_row_ptr gives 10"},
      {"storage_length", [](json::Json& j) { j["attrs"]["storage_id"][1].push_back(3); }, "/attrs/storage_id/1",
       "has 11 entries"},
      {"unknown_dltype", [](json::Json& j) { j["attrs"]["dltype"][1][4] = "float7"; }, "/attrs/dltype/1/4",
       "unknown dltype \"float7\""},
      {"list_tag", [](json::Json& j) { j["attrs"]["shape"][0] = "list_int"; }, "/attrs/shape/0",
       "expected the type tag \"list_shape\""},
      {"num_inputs", [](json::Json& j) { j["nodes"][3]["attrs"]["num_inputs"] = "2"; }, "/nodes/3/attrs/num_inputs",
       "says 2 but the node has 3 inputs"},
      {"num_outputs", [](json::Json& j) { j["nodes"][3]["attrs"]["num_outputs"] = "x"; }, "/nodes/3/attrs/num_outputs",
       "expected a decimal integer string"},
      {"row_ptr", [](json::Json& j) { j["node_row_ptr"][4] = 5; }, "/node_row_ptr/4", "has 1 output(s)"},
      {"op", [](json::Json& j) { j["nodes"][4]["op"] = "relu"; }, "/nodes/4/op", "unknown node op \"relu\""},
      {"func_name", [](json::Json& j) { j["nodes"][4]["attrs"].erase("func_name"); }, "/nodes/4/attrs/func_name",
       "missing"},
      {"arg_node", [](json::Json& j) { j["arg_nodes"][0] = 3; }, "/arg_nodes/0", "is a tvm_op, not an input"},
      {"unknown_key", [](json::Json& j) { j["extra"] = 1; }, "/extra", "unknown key 'extra'"},
      {"no_heads", [](json::Json& j) { j["heads"] = json::Json::array(); }, "/heads", "no outputs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string dir = s.copy_data_dir("v5", c.name);
    edit_json(dir + "/" + kGraph, c.edit);
    const std::string msg = expect_input_error([&] { read_tvm_mlf(dir); }, g + c.pointer, c.fragment);
    EXPECT_EQ(msg.rfind(dir + ": " + g + c.pointer, 0), 0u) << msg;
  }
  // A JSON syntax error names the member and the line.
  const std::string dir = s.copy_data_dir("v5", "syntax");
  test::spit(dir + "/" + kGraph, "{\n  \"nodes\": [,\n");
  expect_input_error([&] { read_tvm_mlf(dir); }, g + "line 2, column 13", "");
}

TEST(TvmMlfErrors, BrokenMetadata) {
  Scratch s;
  struct Case {
    const char* name;
    std::function<void(json::Json&)> edit;
    std::string pointer, fragment;
  };
  const std::vector<Case> cases = {
      {"version", [](json::Json& m) { m["version"] = 4; }, "metadata.json: /version",
       "unsupported Model Library Format version 4; npusim reads versions 5, 6 and 7"},
      {"aot", [](json::Json& m) { m["executors"] = json::Json::array({"aot"}); }, "metadata.json: /executors",
       "lists no \"graph\" executor"},
      {"style", [](json::Json& m) { m["style"] = "operator"; }, "metadata.json: /style", "holds no model graph"},
      {"target", [](json::Json& m) { m["target"] = json::Json::array({"c"}); }, "metadata.json: /target",
       "metadata version 5 gives target as an object"},
      {"model_name", [](json::Json& m) { m.erase("model_name"); }, "metadata.json: /model_name", "missing"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string dir = s.copy_data_dir("v5", c.name);
    edit_json(dir + "/metadata.json", c.edit);
    expect_input_error([&] { read_tvm_mlf(dir); }, c.pointer, c.fragment);
  }
  // v7: a module without its graph file; modules that is not an object.
  std::string dir = s.copy_data_dir("v7", "no_graph");
  std::filesystem::remove(dir + "/executor-config/graph/tiny.graph");
  expect_input_error([&] { read_tvm_mlf(dir, "tiny"); }, "executor-config/graph/tiny.graph",
                     "missing: metadata.json (version 7) puts the graph of module 'tiny' there");
  EXPECT_EQ(read_tvm_mlf(dir, "cnn").layers.size(), 5u);  // the other module still reads
  dir = s.copy_data_dir("v7", "modules");
  edit_json(dir + "/metadata.json", [](json::Json& m) { m["modules"] = json::Json::array(); });
  expect_input_error([&] { read_tvm_mlf(dir); }, "metadata.json: /modules", "expected an object");
  // A broken .params file of one module does not stop the other.
  dir = s.copy_data_dir("v7", "params");
  poke_u64(dir + "/parameters/tiny.params", 0, 7);
  expect_input_error([&] { read_tvm_mlf(dir, "tiny"); }, "parameters/tiny.params: byte 0", "wrong magic");
  EXPECT_EQ(read_tvm_mlf(dir, "cnn").layers.size(), 5u);
  // No metadata.json at all.
  dir = s.copy_data_dir("v5", "no_metadata");
  std::filesystem::remove(dir + "/metadata.json");
  EXPECT_FALSE(sniff_tvm_mlf(dir));
  expect_input_error([&] { read_tvm_mlf(dir); }, "metadata.json", "missing");
}

}  // namespace
}  // namespace npusim::frontends
