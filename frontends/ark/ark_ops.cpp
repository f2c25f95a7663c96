// Tensors, buffers, ops and ranges of ARK model and plan files.
#include <algorithm>
#include <initializer_list>
#include <limits>

#include "frontends/ark/ark_parse.h"

namespace npusim::frontends::ark_detail {

namespace {

constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();

std::string tags_str(const std::vector<gpu::Tag>& tags) {
  std::string s = "[";
  for (size_t i = 0; i < tags.size(); ++i)
    s += (i ? "," : "") + std::string("[") + std::to_string(tags[i].remote_rank) + "," +
         std::to_string(tags[i].tag) + "]";
  return s + "]";
}

std::vector<gpu::Tag> parse_tags(const json::Cursor& c, int world_size) {
  std::vector<gpu::Tag> tags;
  for (const json::Cursor& e : c.elements()) {
    e.as_int_array(2);  // "expected 2 integers" for anything but a [remoteRank, tag] pair
    gpu::Tag t;
    t.remote_rank = static_cast<int>(e.at(size_t{0}).as_int_in(-1, world_size - 1));
    t.tag = e.at(size_t{1}).as_int_in(std::numeric_limits<int32_t>::min(),
                                      std::numeric_limits<int32_t>::max());
    tags.push_back(t);
  }
  return tags;
}

bool same_tags(const std::vector<gpu::Tag>& a, const std::vector<gpu::Tag>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const gpu::Tag& x, const gpu::Tag& y) {
    return x.remote_rank == y.remote_rank && x.tag == y.tag;
  });
}

const gpu::Buffer& parse_buffer(const json::Cursor& c, BufferTable& bufs) {
  c.expect_object();
  gpu::Buffer b;
  b.id = c.at("Id").as_int_in(0, kMaxId);
  b.rank = static_cast<int>(c.at("Rank").as_int_in(-1, bufs.world_size - 1));
  b.send_tags = parse_tags(c.at("SendTags"), bufs.world_size);
  b.recv_tags = parse_tags(c.at("RecvTags"), bufs.world_size);
  b.is_external = c.optional_bool_like("IsExternal").value_or(false);
  b.pointer = c.pointer();
  auto it = bufs.buffers.find(b.id);
  if (it == bufs.buffers.end()) {
    return bufs.buffers.emplace(b.id, b).first->second;
  }
  const gpu::Buffer& old = it->second;
  auto differs = [&](const std::string& field, const std::string& was, const std::string& now) {
    c.fail_at(field, "buffer " + std::to_string(b.id) + " has " + field + " " + now + " here but " +
                         was + " at " + old.pointer);
  };
  if (old.rank != b.rank) differs("Rank", std::to_string(old.rank), std::to_string(b.rank));
  if (!same_tags(old.send_tags, b.send_tags)) differs("SendTags", tags_str(old.send_tags), tags_str(b.send_tags));
  if (!same_tags(old.recv_tags, b.recv_tags)) differs("RecvTags", tags_str(old.recv_tags), tags_str(b.recv_tags));
  return old;
}

// An argument the op type needs, of one of the given types.
const gpu::ArgValue* typed_arg(const json::Cursor& op, const gpu::Op& o, const std::string& name,
                               std::initializer_list<gpu::ArgType> types, bool required) {
  const gpu::ArgValue* a = o.arg(name);
  std::string valid;
  for (gpu::ArgType t : types) valid += (valid.empty() ? "" : " or ") + std::string(gpu::arg_type_name(t));
  if (!a) {
    if (required)
      op.fail_at("Args", std::string(gpu::op_type_name(o.type)) + " needs argument '" + name +
                             "' of type " + valid);
    return nullptr;
  }
  if (std::find(types.begin(), types.end(), a->type) == types.end())
    op.at("Args").fail_at(name, "argument '" + name + "' must be " + valid + ", got " +
                                    gpu::arg_type_name(a->type));
  return a;
}

// M, N, K from A (ReadTensors[0]), B (ReadTensors[1]) and C (WriteTensors[0]), honouring the
// transpose flags; ShapeMNK/StridesACDB when given must agree / are taken as they are.
void derive_matmul(const json::Cursor& c, gpu::Op& op) {
  if (op.read_tensors.size() < 2)
    c.fail_at("ReadTensors", "Matmul needs 2 read tensors (input, other), got " +
                                 std::to_string(op.read_tensors.size()));
  if (op.write_tensors.empty()) c.fail_at("WriteTensors", "Matmul needs 1 write tensor (output), got 0");
  gpu::MatmulShape s;
  if (auto a = typed_arg(c, op, "TransposeInput", {gpu::ArgType::Bool}, false)) s.transpose_input = a->bool_value;
  if (auto a = typed_arg(c, op, "TransposeOther", {gpu::ArgType::Bool}, false)) s.transpose_other = a->bool_value;
  auto last2 = [](const gpu::Dims& d) -> std::pair<int64_t, int64_t> {
    return d.size() >= 2 ? std::make_pair(d[d.size() - 2], d.back()) : std::make_pair(int64_t{1}, d.back());
  };
  auto [ar, ac] = last2(op.read_tensors[0].shape);
  auto [br, bc] = last2(op.read_tensors[1].shape);
  auto [cr, cc] = last2(op.write_tensors[0].shape);
  s.m = s.transpose_input ? ac : ar;
  int64_t ka = s.transpose_input ? ar : ac;
  s.k = s.transpose_other ? bc : br;
  s.n = s.transpose_other ? br : bc;
  if (ka != s.k)
    c.at("ReadTensors").at(1).fail_at("Shape", "Matmul inner dimensions differ: input " +
        gpu::dims_str(op.read_tensors[0].shape) + " gives K=" + std::to_string(ka) + ", other " +
        gpu::dims_str(op.read_tensors[1].shape) + " gives K=" + std::to_string(s.k) +
        " (TransposeInput=" + (s.transpose_input ? "true" : "false") +
        ", TransposeOther=" + (s.transpose_other ? "true" : "false") + ")");
  if (cr != s.m || cc != s.n)
    c.at("WriteTensors").at(0).fail_at("Shape", "Matmul output " + gpu::dims_str(op.write_tensors[0].shape) +
        " does not end in [M,N] = [" + std::to_string(s.m) + "," + std::to_string(s.n) + "]");
  const gpu::Dims& out = op.write_tensors[0].shape;
  s.batch = out.size() > 2 ? gpu::product(gpu::Dims(out.begin(), out.end() - 2)) : 1;
  // Keeps 2*batch*M*N*K (the flop count) within int64.
  if (2.0 * static_cast<double>(s.batch) * static_cast<double>(s.m) * static_cast<double>(s.n) *
          static_cast<double>(s.k) > 4.0e18)
    c.fail("Matmul of batch " + std::to_string(s.batch) + ", [M,N,K] = [" + std::to_string(s.m) + "," +
           std::to_string(s.n) + "," + std::to_string(s.k) + "] is too large to simulate");
  if (auto a = typed_arg(c, op, "ShapeMNK", {gpu::ArgType::Dims}, false)) {
    if (a->dims != gpu::Dims{s.m, s.n, s.k})
      c.at("Args").at("ShapeMNK").fail("ShapeMNK " + gpu::dims_str(a->dims) + " disagrees with the tensors ([M,N,K] = [" +
          std::to_string(s.m) + "," + std::to_string(s.n) + "," + std::to_string(s.k) + "])");
    s.shape_from_args = true;
  }
  if (auto a = typed_arg(c, op, "StridesACDB", {gpu::ArgType::Dims}, false)) {
    if (a->dims.size() != 4)
      c.at("Args").at("StridesACDB").fail("StridesACDB has 4 integers, got " + std::to_string(a->dims.size()));
    std::copy(a->dims.begin(), a->dims.end(), s.strides_acdb.begin());
  } else {
    int64_t sc = op.write_tensors[0].strides.back();
    s.strides_acdb = {op.read_tensors[0].strides.back(), sc, sc, op.read_tensors[1].strides.back()};
  }
  op.matmul = s;
}

// ARK renamed some Args on 2024-05-17 (microsoft/ark cc0b2ed2 "fixes", ark/ops/ops_matmul.cpp and
// ops_reduce.cpp); files written before it (e.g. examples/tutorial/default_plan.json @cd15cc16)
// carry the old names, which ARK of that day read with the same meaning. Stored under the new
// name so that everything downstream sees one form.
void rename_legacy_arg(const json::Cursor& c, gpu::Op& op, const std::string& old_name, const std::string& name) {
  auto old_it = op.args.find(old_name);
  if (old_it == op.args.end()) return;
  // All three are BOOL; checked here so that an error names the key the file has.
  if (old_it->second.type != gpu::ArgType::Bool)
    c.at("Args").fail_at(old_name, "argument '" + old_name + "' must be BOOL, got " +
                                       gpu::arg_type_name(old_it->second.type));
  auto it = op.args.find(name);
  if (it != op.args.end()) {
    const gpu::ArgValue &a = it->second, &b = old_it->second;
    if (a.type != b.type || a.bool_value != b.bool_value)
      c.at("Args").at(old_name).fail("'" + old_name + "' (ARK's name before 2024-05-17) disagrees with '" + name +
                                     "' (its later name) in the same op");
  } else {
    op.args[name] = old_it->second;
  }
  op.args.erase(old_name);
}

void check_type_args(const json::Cursor& c, gpu::Op& op, int world_size) {
  using gpu::ArgType;
  using gpu::OpType;
  if (op.type == OpType::Matmul) {
    rename_legacy_arg(c, op, "IsInputColumnMajor", "TransposeInput");
    rename_legacy_arg(c, op, "IsOtherColumnMajor", "TransposeOther");
  } else if (op.type == OpType::ReduceSum || op.type == OpType::ReduceMax || op.type == OpType::ReduceMean) {
    rename_legacy_arg(c, op, "KeepDims", "KeepDim");
  }
  switch (op.type) {
    case OpType::Matmul: derive_matmul(c, op); break;
    case OpType::ScalarAdd:
    case OpType::ScalarMul: {
      // ARK's code writes Factor; its doc says Value. Accept either.
      bool has_factor = op.arg("Factor") != nullptr;
      const gpu::ArgValue* a = typed_arg(c, op, has_factor ? "Factor" : "Value", {ArgType::Float}, false);
      if (!a)
        c.fail_at("Args", std::string(gpu::op_type_name(op.type)) +
                              " needs argument 'Factor' (or 'Value') of type FLOAT");
      op.scalar = a->float_value;
      break;
    }
    case OpType::ScalarAssign:
      op.scalar = typed_arg(c, op, "Value", {ArgType::Float}, true)->float_value;
      break;
    case OpType::ReduceSum:
    case OpType::ReduceMax:
    case OpType::ReduceMean: {
      int64_t axis = typed_arg(c, op, "Axis", {ArgType::Int, ArgType::Int64}, true)->int_value;
      typed_arg(c, op, "KeepDim", {ArgType::Bool}, false);
      if (!op.read_tensors.empty()) {
        auto nd = static_cast<int64_t>(op.read_tensors[0].shape.size());
        if (axis < -nd || axis >= nd)
          c.at("Args").at("Axis").fail("Axis " + std::to_string(axis) + " is outside the " +
                                       std::to_string(nd) + " dimensions of the input");
      }
      break;
    }
    case OpType::Transpose: {
      gpu::Dims perm = typed_arg(c, op, "Permutation", {ArgType::Dims}, true)->dims;
      gpu::Dims sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); ++i)
        if (sorted[i] != static_cast<int64_t>(i))
          c.at("Args").at("Permutation").fail("Permutation " + gpu::dims_str(perm) +
                                              " is not a permutation of 0.." + std::to_string(perm.size() - 1));
      break;
    }
    case OpType::RecvReduceSend:
    case OpType::RecvReduceSendPacket:
      if (auto a = typed_arg(c, op, "NPeers", {ArgType::UInt32, ArgType::Int, ArgType::Int64}, false))
        if (a->int_value < 0 || a->int_value >= world_size)
          c.at("Args").at("NPeers").fail("NPeers " + std::to_string(a->int_value) + " must be between 0 and " +
                                         std::to_string(world_size - 1) + " (WorldSize - 1)");
      break;
    default: break;
  }
}

}  // namespace

std::vector<gpu::Buffer> BufferTable::sorted() const {
  std::vector<gpu::Buffer> r;
  for (const auto& [id, b] : buffers) r.push_back(b);
  return r;
}

gpu::Tensor parse_tensor(const json::Cursor& c, BufferTable& bufs) {
  c.expect_object();
  gpu::Tensor t;
  t.pointer = c.pointer();
  t.id = c.at("Id").as_int_in(0, kMaxId);
  std::string dt = c.get_string("DataType");
  auto dtype = gpu::parse_data_type(dt);
  if (!dtype) c.at("DataType").fail("unknown DataType '" + dt + "' (valid: " + gpu::data_type_list() + ")");
  t.dtype = *dtype;
  const gpu::Buffer& b = parse_buffer(c.at("Buffer"), bufs);
  t.buffer_id = b.id;
  t.buffer_rank = b.rank;
  t.shape = c.at("Shape").as_shape();
  if (t.shape.empty() || t.shape.size() > 4)
    c.at("Shape").fail("a tensor has 1 to 4 dimensions, got " + std::to_string(t.shape.size()));
  auto same_rank = [&](const char* key) {
    json::Cursor f = c.at(key);
    gpu::Dims d = std::string(key) == "Offsets" ? f.as_int_array() : f.as_shape();
    if (d.size() != t.shape.size())
      f.fail(std::string(key) + " has " + std::to_string(d.size()) + " dimensions but Shape has " +
             std::to_string(t.shape.size()));
    return d;
  };
  t.strides = same_rank("Strides");
  t.offsets = same_rank("Offsets");
  if (c.has("PaddedShape")) {
    t.padded_shape = same_rank("PaddedShape");
  } else if (!c.has("Pads")) {
    // Every ARK of 2024 refused a tensor with neither key (ModelTensor::deserialize).
    c.fail_at("PaddedShape",
              "missing required field 'PaddedShape' (or 'Pads', its name in ARK files before 2024-05-19)");
  } else {
    // ARK before 2024-05-19 (microsoft/ark 169c1272 "support padding" renamed it) wrote "Pads":
    // the multiple each dim's Strides was rounded up to, not a padded region. Its ModelTensor
    // (ark/model/model_tensor.cpp @2daa05cb) required Strides % Pads == 0 and nothing else, so
    // the padded shape is Shape.
    json::Cursor pc = c.at("Pads");
    gpu::Dims pads = pc.as_int_array();
    if (pads.size() != t.shape.size())
      pc.fail("Pads has " + std::to_string(pads.size()) + " dimensions but Shape has " +
              std::to_string(t.shape.size()));
    for (size_t i = 0; i < pads.size(); ++i) {
      if (pads[i] < 1) pc.at(i).fail("pad must be >= 1, got " + std::to_string(pads[i]));
      if (t.strides[i] % pads[i] != 0)
        c.at("Strides").at(i).fail("Strides " + gpu::dims_str(t.strides) + " is not a multiple of Pads " +
                                   gpu::dims_str(pads));
    }
    t.padded_shape = t.shape;
  }
  for (size_t i = 0; i < t.shape.size(); ++i) {
    // Spec: Shape <= PaddedShape and Offsets + PaddedShape <= Strides (the buffer's shape).
    if (t.offsets[i] < 0) c.at("Offsets").at(i).fail("offset must be >= 0, got " + std::to_string(t.offsets[i]));
    if (t.padded_shape[i] < t.shape[i])
      c.at("PaddedShape").at(i).fail("PaddedShape " + gpu::dims_str(t.padded_shape) + " is smaller than Shape " +
                                     gpu::dims_str(t.shape));
    if (t.offsets[i] + t.padded_shape[i] > t.strides[i])
      c.at("Strides").at(i).fail("Offsets " + gpu::dims_str(t.offsets) + " + PaddedShape " +
                                 gpu::dims_str(t.padded_shape) + " exceed Strides " + gpu::dims_str(t.strides));
  }
  return t;
}

gpu::Op parse_op(const json::Cursor& c, BufferTable& bufs, bool in_plan) {
  c.expect_object();
  gpu::Op op;
  op.pointer = c.pointer();
  std::string type = c.get_string("Type");
  auto t = gpu::parse_op_type(type);
  if (!t) c.at("Type").fail("unknown op type '" + type + "' (valid: " + gpu::op_type_list() + ")");
  op.type = *t;
  op.name = c.optional_string("Name").value_or("");
  op.is_virtual = c.optional_bool_like("IsVirtual").value_or(false);
  for (auto [key, list] : {std::make_pair("ReadTensors", &op.read_tensors),
                           std::make_pair("WriteTensors", &op.write_tensors),
                           std::make_pair("ResultTensors", &op.result_tensors)})
    for (const json::Cursor& e : c.at(key).elements()) list->push_back(parse_tensor(e, bufs));
  if (auto a = c.find("Args")) op.args = parse_args(*a, bufs);
  if (auto cfg = c.find("Config")) {
    op.config = parse_config(*cfg);
  } else if (in_plan && !op.is_virtual) {
    c.fail_at("Config", "missing required field 'Config' (every non-virtual op of a plan has one)");
  }
  check_type_args(c, op, bufs.world_size);
  return op;
}

gpu::Range parse_range(const json::Cursor& c, bool allow_empty) {
  if (!c.value().is_array() || c.size() < 2 || c.size() > 3)
    c.fail("expected a range [begin, end] or [begin, end, step], got " +
           (c.value().is_array() ? std::to_string(c.size()) + " elements" : std::string(json::type_name(c.value()))));
  std::vector<int64_t> v = c.as_int_array();
  gpu::Range r{v[0], v[1], v.size() == 3 ? v[2] : 1};
  constexpr int64_t kMaxRange = int64_t{1} << 40;  // keeps size() and last() exact
  for (int64_t x : v)
    if (x > kMaxRange) c.fail("range " + r.str() + " has a value above 2^40");
  if (r.begin < 0) c.fail("range " + r.str() + " begins below 0");
  if (r.step < 1) c.fail("range " + r.str() + " has step " + std::to_string(r.step) + ", must be >= 1");
  if (r.end < r.begin || (!allow_empty && r.end == r.begin))
    c.fail("range " + r.str() + (allow_empty ? " ends before it begins" : " is empty (end must be > begin)"));
  return r;
}

}  // namespace npusim::frontends::ark_detail
