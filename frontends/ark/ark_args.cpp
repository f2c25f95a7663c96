// Typed Args ({name: {TYPE: value}}) and plan Config of ARK ops.
#include <limits>

#include "frontends/ark/ark_parse.h"

namespace npusim::frontends::ark_detail {

namespace {

std::string arg_type_list() {
  std::string s;
  for (int i = 0; i <= static_cast<int>(gpu::ArgType::Offset); ++i)
    s += (s.empty() ? "" : ", ") + std::string(gpu::arg_type_name(static_cast<gpu::ArgType>(i)));
  return s;
}

gpu::ArgValue parse_arg_value(gpu::ArgType type, const json::Cursor& v, BufferTable& bufs) {
  gpu::ArgValue a;
  a.type = type;
  switch (type) {
    case gpu::ArgType::Int:
      a.int_value = v.as_int_in(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
      break;
    case gpu::ArgType::Int64: a.int_value = v.as_int(); break;
    case gpu::ArgType::UInt32: a.int_value = v.as_int_in(0, std::numeric_limits<uint32_t>::max()); break;
    case gpu::ArgType::UInt64:
      if (v.value().is_number_unsigned()) {
        a.uint_value = v.value().get<uint64_t>();
        a.int_value = a.uint_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                          ? std::numeric_limits<int64_t>::max()
                          : static_cast<int64_t>(a.uint_value);
        return a;
      }
      a.int_value = v.as_int_in(0, std::numeric_limits<int64_t>::max());
      break;
    case gpu::ArgType::Bool: a.bool_value = v.as_bool(); break;
    case gpu::ArgType::Float: a.float_value = v.as_double(); break;
    case gpu::ArgType::Dims:
      a.dims = v.as_int_array();
      if (a.dims.size() > 4) v.fail("DIMS has at most 4 integers, got " + std::to_string(a.dims.size()));
      break;
    case gpu::ArgType::Tensor: a.tensor = parse_tensor(v, bufs); break;
    case gpu::ArgType::Offset:
      a.offset_buffer_id = v.at("BufferId").as_int_in(0, std::numeric_limits<int64_t>::max());
      a.offset_value = v.get_int("Value");
      break;
  }
  if (a.int_value >= 0) a.uint_value = static_cast<uint64_t>(a.int_value);
  return a;
}

std::array<int64_t, 3> mnk(const json::Cursor& c) {
  std::vector<int64_t> v = c.as_int_array(3);
  for (size_t i = 0; i < 3; ++i)
    if (v[i] < 1) c.at(i).fail("tile dimension must be >= 1, got " + std::to_string(v[i]));
  return {v[0], v[1], v[2]};
}

}  // namespace

std::map<std::string, gpu::ArgValue> parse_args(const json::Cursor& c, BufferTable& bufs) {
  std::map<std::string, gpu::ArgValue> args;
  for (const auto& [name, v] : c.members()) {
    v.expect_object();
    if (v.size() != 1)
      v.fail("expected one {TYPE: value} member, got " + std::to_string(v.size()));
    auto typed = v.members();  // keep the vector alive for the bindings
    const auto& [type_name, value] = typed.front();
    auto type = gpu::parse_arg_type(type_name);
    if (!type)
      value.fail("unknown argument type '" + type_name + "' (valid: " + arg_type_list() + ")");
    args.emplace(name, parse_arg_value(*type, value, bufs));
  }
  return args;
}

gpu::OpConfig parse_config(const json::Cursor& c) {
  constexpr int64_t kMaxCount = int64_t{1} << 40;
  c.expect_object();
  gpu::OpConfig cfg;
  cfg.present = true;
  cfg.num_warps = static_cast<int>(c.at("NumWarps").as_int_in(1, 1024));
  cfg.sram_bytes = c.at("SramBytes").as_int_in(0, kMaxCount);
  cfg.num_tasks = c.at("NumTasks").as_int_in(0, kMaxCount);
  for (const auto& [key, v] : c.members()) {
    if (key == "NumWarps" || key == "SramBytes" || key == "NumTasks") continue;
    if (key == "Tile") {
      cfg.tile = v.as_int_array();
      if (cfg.tile.empty() || cfg.tile.size() > 4)
        v.fail("Tile has 1 to 4 integers, got " + std::to_string(cfg.tile.size()));
      for (size_t i = 0; i < cfg.tile.size(); ++i)
        if (cfg.tile[i] < 1) v.at(i).fail("tile dimension must be >= 1, got " + std::to_string(cfg.tile[i]));
    } else if (key == "TileShapeMNK") {
      cfg.tile_shape_mnk = mnk(v);
    } else if (key == "TilePadMNK") {
      cfg.tile_pad_mnk = mnk(v);
    } else if (key == "ImplType") {
      cfg.impl_type = v.as_string();
      if (cfg.impl_type != "WarpWise" && cfg.impl_type != "ElementWise")
        v.fail("unknown ImplType '" + cfg.impl_type + "' (valid: WarpWise, ElementWise)");
    } else if (key == "ChannelType") {
      cfg.channel_type = v.as_string();
    } else if (key == "PacketType") {
      cfg.packet_type = v.as_string();
    } else if (key == "Signal") {
      cfg.signal = v.as_bool_like();
    } else if (key == "Wait") {
      cfg.wait = v.as_bool_like();
    } else {
      cfg.other.emplace(key, v.value().dump());
    }
  }
  return cfg;
}

}  // namespace npusim::frontends::ark_detail
