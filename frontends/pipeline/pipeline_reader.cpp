// Pipeline files -> ir::System (rules in pipeline_reader.h and sim/ir/system.h).
#include "frontends/pipeline/pipeline_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "frontends/pipeline/fx_lower.h"
#include "frontends/pipeline/safetensors.h"
#include "sim/ir/error.h"
#include "sim/ir/input_file.h"

namespace npusim::frontends::pipeline {

namespace {

namespace fs = std::filesystem;
using json::Cursor;
using json::Json;

std::string list(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : ", ") + s;
  return r;
}

// Every member of `c` must be one of `known`.
void only_fields(const Cursor& c, const std::vector<std::string>& known, const std::string& what) {
  for (const auto& [k, v] : c.members())
    if (std::find(known.begin(), known.end(), k) == known.end())
      c.fail_at(k, "unknown field '" + k + "' in " + what + " (its fields: " + list(known) + ")");
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); });
}

std::vector<std::pair<int64_t, int64_t>> read_placements(const Cursor& c) {
  std::vector<std::pair<int64_t, int64_t>> r;
  for (const Cursor& e : c.elements()) {
    const auto v = e.as_int_array(2);
    r.emplace_back(v[0], v[1]);
  }
  return r;
}

const char* kDtypes = "f64, f32, f16, bf16, f8, bool, i64, i32, i16, i8, u8";

ir::DType read_dtype(const Cursor& c, std::string* name) {
  *name = c.as_string();
  const auto t = ir::parse_pipeline_dtype(*name);
  if (!t) c.fail("unknown dtype '" + *name + "' (" + kDtypes + ")");
  return *t;
}

struct Payload {
  std::shared_ptr<Json> doc;  // decoded, or null with the error
  std::optional<InputError> error;
};

class Reader {
 public:
  Reader(const Json& doc, std::string source, std::string base_dir, const PipelineReadOptions& opt)
      : m_root(doc, source), m_source(std::move(source)), m_base(std::move(base_dir)), m_opt(opt) {}

  ir::System run() {
    m_root.expect_object();
    only_fields(m_root, {"name", "devices", "tensors", "supertasks", "metadata", "blobs", "param_files",
                         "device_constraints", "version"},
                "a pipeline");
    m_s.source = m_source;
    m_s.name = m_root.get_string("name");
    if (auto v = m_root.find("version")) m_s.version = v->as_string();
    if (auto b = m_root.find("blobs"))
      for (const auto& [id, c] : b->members()) m_blobs.emplace(id, c);
    if (auto p = m_root.find("param_files")) param_files(*p);
    devices(m_root.at("devices"));
    tensors(m_root.at("tensors"));
    param_file_warnings();
    supertasks(m_root.at("supertasks"));
    if (auto md = m_root.find("metadata")) metadata(*md);
    if (auto dc = m_root.find("device_constraints")) device_constraints(*dc);
    ir::finalize_system(m_s);
    for (ir::SuperTask& t : m_s.supertasks)
      if (t.compute) lower(t);
    return std::move(m_s);
  }

 private:
  // ---- param files ----

  struct ParamFile {
    std::string path, format;
    std::string pointer;
    bool checked = false;      // read (safetensors present)
    std::optional<SafetensorsFile> st;
    int uses = 0;
  };

  void param_files(const Cursor& c) {
    for (const auto& [id, pf] : c.members()) {
      only_fields(pf, {"path", "format"}, "a param file");
      ParamFile f;
      f.pointer = pf.pointer();
      f.path = resolve(pf.get_string("path"));
      f.format = pf.get_string("format");
      static const std::set<std::string> formats{"safetensors", "torch.save", "torch.export"};
      if (!formats.count(f.format))
        pf.at("format").fail("unknown param file format '" + f.format + "' (safetensors, torch.save, torch.export)");
      m_param_files.emplace(id, std::move(f));
    }
  }

  std::string resolve(const std::string& p) const {
    if (p.empty() || fs::path(p).is_absolute() || m_base.empty()) return p;
    return (fs::path(m_base) / p).lexically_normal().string();
  }

  // The parameter file `id` (or the spec's older inline {path, format}), read on first use.
  ParamFile& param_file(const std::string& key, const std::string& path, const std::string& format,
                        const std::string& pointer) {
    auto it = m_param_files.find(key);
    if (it == m_param_files.end()) {
      ParamFile f;
      f.path = path;
      f.format = format;
      f.pointer = pointer;
      it = m_param_files.emplace(key, std::move(f)).first;
    }
    ParamFile& f = it->second;
    if (f.uses++ == 0 && f.format == "safetensors") {
      std::error_code ec;
      if (fs::exists(f.path, ec)) {
        f.st = read_safetensors(f.path);
        f.checked = true;
      } else if (m_opt.require_param_files) {
        throw InputError(m_source, f.pointer + "/path", "param file '" + f.path + "' does not exist");
      }
    }
    return f;
  }

  // ---- devices, tensors ----

  void devices(const Cursor& c) {
    for (const auto& [id, d] : c.members()) {
      ir::SystemDevice dev;
      if (d.value().is_string()) {
        dev = parse_device_string(id, d.as_string(), m_source, d.pointer());
      } else {
        d.expect_object();
        only_fields(d, {"kind", "idx"}, "a device");
        const std::string kind = d.get_string("kind");
        std::string spec = kind;
        if (auto idx = d.find("idx")) {
          const int64_t i = idx->as_int();
          if (i < 0) idx->fail("idx must be >= 0, got " + std::to_string(i));
          spec += ":" + std::to_string(i);
        }
        dev = parse_device_string(id, spec, m_source, d.pointer());
      }
      dev.pointer = d.pointer();
      m_s.devices.push_back(std::move(dev));
    }
  }

  void tensors(const Cursor& c) {
    for (const auto& [name, t] : c.members()) {
      only_fields(t, {"shape", "dtype", "value"}, "a tensor");
      ir::SystemTensor x;
      x.name = name;
      x.pointer = t.pointer();
      x.shape = t.at("shape").as_shape();
      x.dtype = read_dtype(t.at("dtype"), &x.dtype_name);
      if (auto v = t.find("value")) {
        x.constant = true;
        param_value(*v, x);
      }
      m_s.tensors.push_back(std::move(x));
    }
  }

  void param_value(const Cursor& v, ir::SystemTensor& x) {
    v.expect_object();
    ir::ParamRef& p = x.param;
    ParamFile* f = nullptr;
    if (v.has("param_file")) {  // 2025: {param_file, name, name_in_graph, placements}
      only_fields(v, {"param_file", "name", "name_in_graph", "placements"}, "a param value");
      p.param_file = v.get_string("param_file");
      auto it = m_param_files.find(p.param_file);
      if (it == m_param_files.end()) v.at("param_file").fail("param file '" + p.param_file + "' is not in /param_files");
      f = &param_file(p.param_file, "", "", "");
    } else {  // the spec: {path, format, name, name_in_graph, placements}
      only_fields(v, {"path", "format", "name", "name_in_graph", "placements"}, "a param value");
      const std::string format = v.get_string("format");
      static const std::set<std::string> formats{"safetensors", "torch.save", "torch.export"};
      if (!formats.count(format))
        v.at("format").fail("unknown param file format '" + format + "' (safetensors, torch.save, torch.export)");
      const std::string path = resolve(v.get_string("path"));
      f = &param_file("path:" + path, path, format, v.pointer());
    }
    p.path = f->path;
    p.format = f->format;
    p.name = v.get_string("name");
    p.name_in_graph = v.get_string("name_in_graph");
    p.placements = read_placements(v.at("placements"));
    if (f->st) {
      const SafetensorsTensor* st = f->st->find(p.name);
      if (!st) v.at("name").fail("tensor '" + p.name + "' is not stored in " + f->path);
      p.stored_shape = st->shape;
      p.stored_dtype = st->dtype;
    }
  }

  // ---- supertasks ----

  void supertasks(const Cursor& c) {
    for (const auto& [id, t] : c.members()) {
      t.expect_object();
      ir::SuperTask s;
      s.id = id;
      s.pointer = t.pointer();
      s.kind_name = t.get_string("kind");
      s.inputs = t.get_string_array("inputs");
      s.outputs = t.get_string_array("outputs");
      const std::string& k = s.kind_name;
      if (k == "input" || k == "output") {
        s.kind = k == "input" ? ir::SuperTaskKind::Input : ir::SuperTaskKind::Output;
        if (t.find("device")) t.at("device").fail("an " + k + " supertask has no device (the field must be absent)");
        only_fields(t, {"kind", "inputs", "outputs", "device"}, "an " + k + " supertask");
      } else if (k == "fx" || k == "FX" || k == "dfg" || k == "edf") {
        s.kind = ir::SuperTaskKind::Compute;
        only_fields(t, {"kind", "inputs", "outputs", "device", "data", "data_blob"}, "a compute supertask");
        s.device = t.get_string("device");
        ir::ComputeTask ct;
        ct.kind = k == "dfg" ? ir::ComputeKind::Dfg : k == "edf" ? ir::ComputeKind::Edf : ir::ComputeKind::Fx;
        const auto data = t.find("data");
        const auto blob = t.find("data_blob");
        if (data) {
          data->as_string();
          ct.payload_pointer = data->pointer();
        } else if (blob) {
          ct.blob = blob->as_string();
          if (!m_blobs.count(ct.blob)) blob->fail("blob '" + ct.blob + "' is not in /blobs");
          m_blobs.at(ct.blob).as_string();
          ct.payload_pointer = m_blobs.at(ct.blob).pointer();
        } else {
          t.fail("a compute supertask needs 'data' or 'data_blob' (its serialized graph)");
        }
        s.compute = std::move(ct);
      } else if (const auto ck = ir::parse_collective(k)) {
        s.kind = ir::SuperTaskKind::Communication;
        only_fields(t, {"kind", "inputs", "outputs", "device", "group", "device_idx", "metadata", "algorithm"},
                    "a communication supertask");
        s.device = t.get_string("device");
        ir::Collective col;
        col.kind = *ck;
        if (auto g = t.find("group")) col.group = g->as_string();
        col.device_idx = t.get_int("device_idx");
        if (auto a = t.find("algorithm")) col.algorithm = a->as_string();
        const Cursor md = t.at("metadata");
        for (const auto& [key, v] : md.members()) {
          ir::MetaValue mv;
          if (v.value().is_string()) {
            mv.s = v.as_string();
          } else if (v.value().is_number_integer() || v.value().is_number_unsigned()) {
            mv.is_int = true;
            mv.i = v.as_int();
          } else {
            v.fail("a metadata value is an integer or a string, got " + v.value().dump());
          }
          col.metadata.emplace(key, std::move(mv));
        }
        s.comm = std::move(col);
      } else {
        t.at("kind").fail("unknown supertask kind '" + k +
                          "' (input, output, fx, dfg, edf, send, recv, reduce, all_reduce, gather, all_gather, "
                          "reduce_scatter, all_to_all, broadcast)");
      }
      m_s.supertasks.push_back(std::move(s));
    }
  }

  // ---- metadata ----

  void metadata(const Cursor& c) {
    only_fields(c, {"tensors", "tensor_slices"}, "the metadata");
    ir::PipelineMetadata& md = m_s.metadata;
    md.present = true;
    const Cursor ts = c.at("tensors");
    only_fields(ts, {"inputs", "outputs"}, "metadata tensors");
    for (int side = 0; side < 2; ++side)
      for (const auto& [name, m] : ts.at(side == 0 ? "inputs" : "outputs").members()) {
        only_fields(m, {"shape", "dtype", "idx"}, "a metadata tensor");
        ir::MetaTensor t;
        t.name = name;
        t.pointer = m.pointer();
        t.shape = m.at("shape").as_shape();
        read_dtype(m.at("dtype"), &t.dtype);
        t.idx = m.get_int("idx");
        (side == 0 ? md.inputs : md.outputs).push_back(std::move(t));
      }
    const Cursor sl = c.at("tensor_slices");
    only_fields(sl, {"inputs", "outputs"}, "metadata tensor_slices");
    for (int side = 0; side < 2; ++side)
      for (const auto& [name, m] : sl.at(side == 0 ? "inputs" : "outputs").members()) {
        only_fields(m, {"placements", "origin", "dtype", "device"}, "a tensor slice");
        ir::MetaTensorSlice s;
        s.name = name;
        s.pointer = m.pointer();
        s.placements = read_placements(m.at("placements"));
        s.origin = m.get_string("origin");
        read_dtype(m.at("dtype"), &s.dtype);
        s.device = m.get_string("device");
        (side == 0 ? md.input_slices : md.output_slices).push_back(std::move(s));
      }
  }

  void device_constraints(const Cursor& c) {
    for (const Cursor& e : c.elements()) {
      only_fields(e, {"kind", "devices"}, "a device constraint");
      ir::DeviceConstraint dc;
      dc.kind = e.get_string("kind");
      std::function<void(const Cursor&)> flatten = [&](const Cursor& x) {
        if (x.value().is_array()) {
          for (const Cursor& y : x.elements()) flatten(y);
          return;
        }
        const std::string id = x.as_string();
        const bool known = std::any_of(m_s.devices.begin(), m_s.devices.end(), [&](const ir::SystemDevice& d) { return d.id == id; });
        if (!known) x.fail("device '" + id + "' is not in /devices");
        dc.devices.push_back(id);
      };
      flatten(e.at("devices"));
      m_s.device_constraints.push_back(std::move(dc));
    }
  }

  // ---- compute payloads ----

  const Payload& payload(const ir::SuperTask& t) {
    const ir::ComputeTask& ct = *t.compute;
    const std::string key = ct.blob.empty() ? "data:" + t.id : "blob:" + ct.blob;
    auto it = m_payloads.find(key);
    if (it != m_payloads.end()) return it->second;
    Payload p;
    const Cursor text = ct.blob.empty() ? m_root.at("supertasks").at(t.id).at("data") : m_blobs.at(ct.blob);
    try {
      p.doc = std::make_shared<Json>(decode_fx_payload(text.as_string(), m_source, ct.payload_pointer));
    } catch (const InputError& e) {
      p.error = e;
    }
    return m_payloads.emplace(key, std::move(p)).first->second;
  }

  std::vector<FxBinding> bindings(const std::vector<int>& ids) const {
    std::vector<FxBinding> r;
    for (int id : ids) {
      const ir::SystemTensor& x = m_s.tensors[id];
      r.push_back({x.name, x.shape, x.dtype, x.constant});
    }
    return r;
  }

  void lower(ir::SuperTask& t) {
    ir::ComputeTask& ct = *t.compute;
    const std::string gname = m_s.name + "/" + t.id;
    if (ct.kind == ir::ComputeKind::Fx) {
      const Payload& p = payload(t);
      try {
        if (p.error) throw *p.error;
        FxLowerOptions o;
        o.source = m_source;
        o.pointer = ct.payload_pointer;
        o.name = gname;
        o.inputs = bindings(t.input_ids);
        o.outputs = bindings(t.output_ids);
        FxLowered low = lower_fx_graph(*p.doc, o);
        ct.graph = std::move(low.graph);
        ct.num_opaque = low.num_opaque;
        ct.estimated = false;
        summarize(ct);
        return;
      } catch (const InputError& e) {
        if (m_opt.strict_payloads) throw;
        ct.estimate_reason = "fx payload: " + (e.where().empty() ? "" : e.where() + ": ") + e.detail();
        m_s.warnings.push_back("supertask '" + t.id + "': " + ct.estimate_reason +
                               "; costed as an estimate from its inputs and outputs");
      }
    } else {
      ct.estimate_reason = std::string(ct.kind == ir::ComputeKind::Dfg ? "dfg" : "edf") +
                           " payload (compiler IR npusim does not read)";
    }
    estimate(t, gname);
  }

  // One opaque op over the supertask's inputs and outputs: FLOPs unknown (0), bytes = in + out.
  void estimate(ir::SuperTask& t, const std::string& gname) {
    ir::ComputeTask& ct = *t.compute;
    ct.estimated = true;
    ir::Graph g;
    g.source = m_source;
    g.name = gname;
    g.format = "pipeline";
    ir::Layer l;
    l.name = t.id;
    l.op = ir::OpKind::Opaque;
    l.pointer = t.pointer;
    l.opaque_flops = 0;
    l.opaque_bytes = t.input_bytes + t.output_bytes;
    l.opaque_label = t.kind_name + " supertask (estimate: " + ct.estimate_reason + ")";
    std::map<int, int> ids;
    auto add = [&](int sid, ir::TensorRole role) {
      auto it = ids.find(sid);
      if (it != ids.end()) return it->second;
      const ir::SystemTensor& x = m_s.tensors[sid];
      ir::Tensor tt;
      tt.name = x.name;
      tt.shape = x.shape;
      tt.dtype = x.dtype;
      tt.role = role;
      const int id = g.add_tensor(std::move(tt));
      ids.emplace(sid, id);
      return id;
    };
    for (int sid : t.input_ids)
      l.inputs.push_back(add(sid, m_s.tensors[sid].constant ? ir::TensorRole::Constant : ir::TensorRole::GraphInput));
    for (int sid : t.output_ids) l.outputs.push_back(add(sid, ir::TensorRole::GraphOutput));
    if (!l.outputs.empty()) g.layers.push_back(std::move(l));
    ir::derive_edges(g);
    if (!g.layers.empty()) ir::validate(g);
    ct.graph = std::move(g);
    ct.num_opaque = 0;
    ct.macs = 0;
    ct.flops = 0;
  }

  static void summarize(ir::ComputeTask& ct) {
    ct.macs = 0;
    ct.flops = 0;
    for (const ir::Layer& l : ct.graph.layers) {
      const int64_t m = l.macs();
      ct.macs += m;
      switch (ir::op_class(l.op)) {
        case ir::OpClass::Gemm:
        case ir::OpClass::Window: ct.flops += 2 * m; break;
        case ir::OpClass::Opaque: ct.flops += l.opaque_flops; break;
        case ir::OpClass::DataMovement: break;
        default:
          for (const auto& s : l.output_shapes) ct.flops += ir::num_elements(s);
      }
    }
  }

  Cursor m_root;
  std::string m_source, m_base;
  PipelineReadOptions m_opt;
  ir::System m_s;
  std::map<std::string, Cursor> m_blobs;
  std::map<std::string, ParamFile> m_param_files;
  std::map<std::string, Payload> m_payloads;

  void param_file_warnings() {
    for (const auto& [id, f] : m_param_files) {
      if (f.uses == 0 || f.checked) continue;
      if (f.format != "safetensors")
        m_s.warnings.push_back("param file '" + f.path + "' (" + f.format + ") is not read; the placements of its " +
                               std::to_string(f.uses) + " constant tensors are checked against their own shapes only");
      else
        m_s.warnings.push_back("param file '" + f.path + "' does not exist; the placements of its " + std::to_string(f.uses) +
                               " constant tensors are checked against their own shapes only");
    }
  }
};

}  // namespace

ir::SystemDevice parse_device_string(const std::string& id, const std::string& spec, const std::string& source,
                                     const std::string& pointer) {
  ir::SystemDevice d;
  d.id = id;
  d.spec = spec;
  d.pointer = pointer;
  std::vector<std::string> f;
  std::stringstream ss(spec);
  std::string part;
  while (std::getline(ss, part, ':')) f.push_back(part);
  if (!spec.empty() && spec.back() == ':') f.push_back("");
  auto bad = [&](const std::string& why) -> InputError {
    return InputError(source, pointer, "device '" + spec + "': " + why +
                                           " (expected kind[:index[:PEs]] such as cpu, npu:0, npu:1:*, npu:1:0-3, rngd:0:2)");
  };
  if (f.empty() || f.size() > 3) throw bad("has " + std::to_string(f.size()) + " fields");
  d.kind = f[0];
  if (d.kind.empty() || !std::all_of(d.kind.begin(), d.kind.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; }))
    throw bad("kind '" + d.kind + "' is not a name");
  d.group = d.kind;
  if (f.size() >= 2) {
    if (!all_digits(f[1]) || f[1].size() > 9) throw bad("index '" + f[1] + "' is not a non-negative integer");
    d.index = std::stoll(f[1]);
    d.group += ":" + f[1];
  }
  if (f.size() == 3) {
    const std::string& pe = f[2];
    if (pe != "*") {
      const size_t dash = pe.find('-');
      const std::string a = pe.substr(0, dash), b = dash == std::string::npos ? a : pe.substr(dash + 1);
      if (!all_digits(a) || !all_digits(b) || a.size() > 6 || b.size() > 6)
        throw bad("processing elements '" + pe + "' are not '*', 'N' or 'A-B'");
      const int64_t lo = std::stoll(a), hi = std::stoll(b);
      if (hi < lo) throw bad("processing elements '" + pe + "' are reversed");
      const int64_t n = hi - lo + 1;
      if (n != 1 && n != 2 && n != 4 && n != 8)
        throw bad("fuses " + std::to_string(n) + " processing elements; fused groups have 1, 2, 4 or 8");
      d.pe_first = lo;
      d.pe_count = n;
    }
  }
  return d;
}

ir::System read_pipeline_json(const json::Json& doc, const std::string& source, const std::string& base_dir,
                              const PipelineReadOptions& opt) {
  Reader r(doc, source, base_dir, opt);
  ir::System s = r.run();
  return s;
}

ir::System read_pipeline_text(const std::string& text, const std::string& source, const std::string& base_dir,
                              const PipelineReadOptions& opt) {
  const Json doc = json::parse_text(text, source);
  return read_pipeline_json(doc, source, base_dir, opt);
}

ir::System read_pipeline(const std::string& path, const PipelineReadOptions& opt) {
  const Json doc = json::read_json_file(path);
  return read_pipeline_json(doc, path, fs::path(path).parent_path().string(), opt);
}

bool sniff_pipeline(const json::Json& doc) {
  return doc.is_object() && doc.contains("supertasks") && doc["supertasks"].is_object() && doc.contains("tensors") &&
         doc["tensors"].is_object() && doc.contains("devices");
}

bool sniff_pipeline_text(std::string_view text) {
  if (text.find("\"supertasks\"") == std::string_view::npos) return false;
  try {  // the checked parse: its depth and size limits hold for a sniff too
    return sniff_pipeline(json::parse_text(std::string(text), "sniff"));
  } catch (const InputError&) {
    return false;
  }
}

bool sniff_pipeline_file(const std::string& path) {
  // Only a regular file within the JSON limit is looked at (a device or FIFO would never end);
  // whatever else the path is, the workload registry reports it.
  try {
    return sniff_pipeline_text(read_input_file(path, "a workload file", json::kMaxJsonBytes));
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace npusim::frontends::pipeline
