// TVM Model Library Format reader (tvm_mlf_reader.h): metadata.json, module choice, the
// .params check against the graph, and the sniffers.
#include "frontends/tvm_mlf/tvm_mlf_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "frontends/tvm_mlf/mlf_archive.h"
#include "frontends/tvm_mlf/tvm_graph.h"
#include "frontends/tvm_mlf/tvm_lower.h"
#include "frontends/tvm_mlf/tvm_params.h"
#include "sim/ir/error.h"

namespace npusim::frontends {

namespace {

namespace fs = std::filesystem;
using json::Cursor;

struct ModuleInfo {
  std::string key;         // v7: the key in "modules"; v5/v6: model_name
  std::string model_name;
};

struct Metadata {
  int version = 0;
  std::vector<ModuleInfo> modules;
  std::string names() const {
    std::string s;
    for (const ModuleInfo& m : modules) s += (s.empty() ? "" : ", ") + m.key;
    return s;
  }
};

// Parses text that came from `member`; syntax errors name the member and the line.
json::Json parse_member(const std::string& text, const std::string& path, const std::string& member) {
  try {
    return json::parse_text(text, path);
  } catch (const InputError& e) {
    throw InputError(path, member + ": " + e.where(), e.detail());
  }
}

void check_module(const Cursor& m, int version) {
  m.expect_object();
  m.get_string("model_name");
  const Cursor ex = m.at("executors");
  const std::vector<std::string> executors = ex.as_string_array();
  if (std::find(executors.begin(), executors.end(), "graph") == executors.end())
    ex.fail("lists no \"graph\" executor; npusim reads GraphExecutor configurations (an AOT build has no graph)");
  if (auto style = m.optional_string("style"); style && *style != "full-model")
    m.at("style").fail("style \"" + *style + "\" holds no model graph; npusim reads full-model exports");
  if (auto t = m.find("target")) {
    if (version == 5 && !t->value().is_object())
      t->fail(std::string("metadata version 5 gives target as an object {device_type: target}, got ") + json::type_name(t->value()));
    if (version >= 6 && !t->value().is_array())
      t->fail("metadata version " + std::to_string(version) + " gives target as a list of target strings, got " +
              json::type_name(t->value()));
  }
}

Metadata parse_metadata(const std::string& text, const std::string& path) {
  const json::Json doc = parse_member(text, path, "metadata.json");
  if (!doc.is_object())
    throw InputError(path, "metadata.json", std::string("expected a JSON object, got ") + json::type_name(doc));
  const Cursor root(doc, path, "metadata.json: ");
  Metadata md;
  const Cursor v = root.at("version");
  const int64_t version = v.as_int();
  if (version < 5 || version > 7)
    v.fail("unsupported Model Library Format version " + std::to_string(version) + "; npusim reads versions 5, 6 and 7");
  md.version = static_cast<int>(version);
  if (md.version < 7) {
    check_module(root, md.version);
    const std::string name = root.get_string("model_name");
    md.modules.push_back({name, name});
    return md;
  }
  const Cursor mods = root.at("modules");
  mods.expect_object();
  if (mods.size() == 0) mods.fail("no modules");
  for (const auto& [key, m] : mods.members()) {
    if (key.empty() || key.find_first_of("/\\") != std::string::npos || key == "." || key == "..")
      m.fail("module name '" + key + "' cannot name a file");
    check_module(m, md.version);
    md.modules.push_back({key, m.get_string("model_name")});
  }
  return md;
}

const ModuleInfo& choose_module(const Metadata& md, const std::string& module, const std::string& path) {
  const std::string where = md.version >= 7 ? "metadata.json: /modules" : "metadata.json: /model_name";
  if (module.empty()) {
    if (md.modules.size() == 1) return md.modules[0];
    throw InputError(path, where, "holds " + std::to_string(md.modules.size()) + " modules (" + md.names() +
                                      "); choose one with --module NAME");
  }
  for (const ModuleInfo& m : md.modules)
    if (m.key == module) return m;
  if (md.version >= 7) throw InputError(path, where, "has no module '" + module + "'; modules: " + md.names());
  throw InputError(path, where, "the archive holds one model, '" + md.modules[0].key + "'; --module '" + module + "' names none");
}

// Every parameter must be a "null" node of the graph with its shape and dtype.
std::set<std::string> check_params(const std::vector<tvm::ParamInfo>& params, const tvm::ExecutorGraph& eg,
                                   const std::string& path, const std::string& params_member,
                                   const std::string& graph_member) {
  std::map<std::string, size_t> nulls;
  for (size_t i = 0; i < eg.nodes.size(); ++i)
    if (!eg.nodes[i].is_op) nulls.emplace(eg.nodes[i].name, i);
  std::set<std::string> names;
  for (const tvm::ParamInfo& p : params) {
    const std::string where = params_member + ": byte " + std::to_string(p.offset);
    const std::string what = "array " + std::to_string(p.index) + " ('" + p.name + "')";
    if (!names.insert(p.name).second) throw InputError(path, where, what + ": the name appears twice");
    auto it = nulls.find(p.name);
    if (it == nulls.end())
      throw InputError(path, where, what + ": " + graph_member + " has no input node called '" + p.name + "'");
    const tvm::GraphNode& n = eg.nodes[it->second];
    const tvm::GraphEntry& e = eg.entries[static_cast<size_t>(eg.node_row_ptr[it->second])];
    if (p.shape != e.shape)
      throw InputError(path, where, what + ": shape " + ir::shape_str(p.shape) + " differs from " + ir::shape_str(e.shape) +
                                        " of its graph node (" + n.pointer + ")");
    if (p.dltype != e.dltype)
      throw InputError(path, where, what + ": dtype " + p.dltype + " differs from " + e.dltype + " of its graph node (" +
                                        n.pointer + ")");
  }
  return names;
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) throw InputError(path, "", "cannot read: " + ec.message());
  if (size > tvm::kMaxJsonMemberBytes) throw InputError(path, "", "is " + std::to_string(size) + " bytes; npusim reads JSON files up to 512 MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open");
  std::string s(static_cast<size_t>(size), '\0');
  in.read(s.data(), static_cast<std::streamsize>(size));
  s.resize(static_cast<size_t>(in.gcount()));
  return s;
}

void finish(TvmMlfResult& r, const tvm::ExecutorGraph& eg, tvm::Lowered&& lowered) {
  r.graph = std::move(lowered.graph);
  r.num_opaque_ops = lowered.num_opaque;
  const tvm::StorageUse use = tvm::storage_use(eg);
  r.memory_footprint_bytes = use.footprint_bytes;
  r.entry_bytes = use.entry_bytes;
  r.num_storage_ids = use.num_storage_ids;
}

std::string bare_name(const std::string& path) {
  std::string n = fs::path(path).filename().string();
  for (const char* ext : {".json", ".graph"})
    if (n.size() > std::strlen(ext) && n.compare(n.size() - std::strlen(ext), std::string::npos, ext) == 0)
      n.resize(n.size() - std::strlen(ext));
  return n;
}

TvmMlfResult read_archive(const std::string& path, const std::string& module) {
  const tvm::MlfContents c = tvm::read_mlf_contents(path);
  auto meta = c.texts.find("metadata.json");
  if (meta == c.texts.end())
    throw InputError(path, "metadata.json", "missing: a Model Library Format archive has metadata.json at its root");
  const Metadata md = parse_metadata(meta->second, path);
  const ModuleInfo& mod = choose_module(md, module, path);
  TvmMlfResult r;
  r.metadata_version = md.version;
  r.module = mod.key;
  r.graph_member = md.version >= 7 ? "executor-config/graph/" + mod.key + ".graph" : "executor-config/graph/graph.json";
  auto text = c.texts.find(r.graph_member);
  if (text == c.texts.end())
    throw InputError(path, r.graph_member, "missing: metadata.json (version " + std::to_string(md.version) +
                                               ") puts the graph of " + (md.version >= 7 ? "module '" : "model '") +
                                               mod.key + "' there");
  const json::Json doc = parse_member(text->second, path, r.graph_member);
  const tvm::ExecutorGraph eg = tvm::parse_executor_graph(doc, path, r.graph_member + ": ");

  // parameters/<model or module>.params; a lone .params file of a one-model archive too.
  std::string pm = "parameters/" + (md.version >= 7 ? mod.key : mod.model_name) + ".params";
  if (!c.params.count(pm) && md.version < 7 && c.params.size() == 1) pm = c.params.begin()->first;
  tvm::LowerOptions opt;
  opt.source = path;
  opt.name = mod.key;
  if (auto it = c.params.find(pm); it != c.params.end()) {
    if (it->second.error) throw *it->second.error;
    opt.param_names = check_params(it->second.params, eg, path, pm, r.graph_member);
    r.params_member = pm;
    r.num_params = static_cast<int>(it->second.params.size());
  }
  finish(r, eg, tvm::lower_executor_graph(eg, opt));
  return r;
}

}  // namespace

bool looks_like_tvm_graph_json(const json::Json& doc) {
  return doc.is_object() && doc.contains("nodes") && doc.contains("arg_nodes") && doc.contains("heads");
}

TvmMlfResult read_tvm_graph_json(const json::Json& doc, const std::string& source) {
  const tvm::ExecutorGraph eg = tvm::parse_executor_graph(doc, source, "");
  tvm::LowerOptions opt;
  opt.source = source;
  opt.name = bare_name(source);
  TvmMlfResult r;
  finish(r, eg, tvm::lower_executor_graph(eg, opt));
  return r;
}

TvmMlfResult read_tvm_mlf_detailed(const std::string& path, const std::string& module) {
  switch (tvm::classify_path(path)) {
    case tvm::InputKind::Missing: throw InputError(path, "", "cannot open: no such file or directory");
    case tvm::InputKind::Directory:
    case tvm::InputKind::Archive: return read_archive(path, module);
    case tvm::InputKind::Json: {
      if (!module.empty())
        throw InputError(path, "", "--module '" + module + "' applies to Model Library Format archives, not to a bare graph.json");
      const json::Json doc = json::parse_text(read_text_file(path), path);
      if (!looks_like_tvm_graph_json(doc))
        throw InputError(path, "", "not a TVM GraphExecutor graph: a JSON object with \"nodes\", \"arg_nodes\" and \"heads\" expected");
      return read_tvm_graph_json(doc, path);
    }
    case tvm::InputKind::Other: break;
  }
  throw InputError(path, "", "not a TVM Model Library Format directory or archive (.tar, .tar.gz) nor a GraphExecutor graph.json");
}

ir::Graph read_tvm_mlf(const std::string& path, const std::string& module) {
  return read_tvm_mlf_detailed(path, module).graph;
}

int64_t tvm_memory_footprint_bytes(const std::string& path, const std::string& module) {
  return read_tvm_mlf_detailed(path, module).memory_footprint_bytes;
}

std::vector<std::string> tvm_mlf_modules(const std::string& path) {
  const tvm::InputKind kind = tvm::classify_path(path);
  if (kind == tvm::InputKind::Json) return {};
  if (kind != tvm::InputKind::Directory && kind != tvm::InputKind::Archive) {
    if (kind == tvm::InputKind::Missing) throw InputError(path, "", "cannot open: no such file or directory");
    throw InputError(path, "", "not a TVM Model Library Format directory or archive (.tar, .tar.gz)");
  }
  const tvm::MlfContents c = tvm::read_mlf_contents(path, /*metadata_only=*/true);
  auto meta = c.texts.find("metadata.json");
  if (meta == c.texts.end())
    throw InputError(path, "metadata.json", "missing: a Model Library Format archive has metadata.json at its root");
  std::vector<std::string> r;
  for (const ModuleInfo& m : parse_metadata(meta->second, path).modules) r.push_back(m.key);
  return r;
}

bool sniff_tvm_mlf(const std::string& path) {
  try {
    switch (tvm::classify_path(path)) {
      case tvm::InputKind::Directory: {
        std::error_code ec;
        return fs::is_regular_file(fs::path(path) / "metadata.json", ec);
      }
      case tvm::InputKind::Archive: return tvm::archive_has_member(path, "metadata.json");
      case tvm::InputKind::Json: {
        // The checked parse: its depth and size limits hold for a sniff too.
        return looks_like_tvm_graph_json(json::parse_text(read_text_file(path), path));
      }
      default: return false;
    }
  } catch (const std::exception&) {
    return false;
  }
}

bool sniff_tvm_mlf_bytes(std::string_view bytes, const json::Json* doc) {
  try {
    switch (tvm::classify_bytes(bytes.substr(0, 4096))) {
      case tvm::InputKind::Archive: return tvm::archive_bytes_have_member(bytes, "metadata.json");
      case tvm::InputKind::Json: {
        if (doc) return looks_like_tvm_graph_json(*doc);
        return looks_like_tvm_graph_json(json::parse_text(std::string(bytes), "sniff"));
      }
      default: return false;
    }
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace npusim::frontends
