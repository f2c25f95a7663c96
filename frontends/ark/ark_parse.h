// Internal to frontends/ark: parsers of the pieces that model and plan files share
// (tensors, buffers, typed Args, Config, ops, ranges).
#pragma once
#include <map>
#include <string>

#include "frontends/json_util.h"
#include "sim/ir/gpu_program.h"

namespace npusim::frontends::ark_detail {

// Buffers seen so far in one file. A buffer id appears in every tensor that uses it; all its
// appearances must agree (ARK writes them from one object).
struct BufferTable {
  int own_rank = 0;
  int world_size = 1;
  std::map<int64_t, gpu::Buffer> buffers;

  std::vector<gpu::Buffer> sorted() const;
};

gpu::Tensor parse_tensor(const json::Cursor& c, BufferTable& bufs);
// in_plan: Config is required for non-virtual ops.
gpu::Op parse_op(const json::Cursor& c, BufferTable& bufs, bool in_plan);
// [b,e] or [b,e,s], 0 <= b <= e, s >= 1; allow_empty false requires b < e.
gpu::Range parse_range(const json::Cursor& c, bool allow_empty);

// Args and Config (ark_args.cpp).
std::map<std::string, gpu::ArgValue> parse_args(const json::Cursor& c, BufferTable& bufs);
gpu::OpConfig parse_config(const json::Cursor& c);

}  // namespace npusim::frontends::ark_detail
