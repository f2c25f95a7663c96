#include "sim/mapping/gpu_default_plan.h"

#include <algorithm>
#include <cmath>

#include "models/gpu/gpu_timing.h"
#include "sim/ir/error.h"

namespace npusim::mapping {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

const gpu::Tensor* result_of(const gpu::Op& op) {
  if (!op.result_tensors.empty()) return &op.result_tensors[0];
  if (!op.write_tensors.empty()) return &op.write_tensors[0];
  return nullptr;
}

// Output tiles over the last two dims: N*C*ceil(H/tx)*ceil(W/ty).
int64_t tiled_tasks(const std::array<int64_t, 4>& s, int64_t tx, int64_t ty) {
  return s[0] * s[1] * ceil_div(s[2], tx) * ceil_div(s[3], ty);
}

bool is_rocm(const std::string& arch) { return arch.rfind("ROCM", 0) == 0; }

}  // namespace

std::array<int64_t, 4> dims4(const gpu::Dims& d) {
  std::array<int64_t, 4> r{1, 1, 1, 1};
  const size_t n = std::min<size_t>(4, d.size());
  for (size_t i = 0; i < n; ++i) r[4 - n + i] = d[d.size() - n + i];
  return r;
}

gpu::OpConfig default_op_config(const gpu::Op& op, const std::string& arch) {
  gpu::OpConfig c;
  c.present = true;
  c.num_warps = 1;
  c.sram_bytes = 0;
  const gpu::Tensor* res = result_of(op);
  const std::array<int64_t, 4> s = res ? dims4(res->shape) : std::array<int64_t, 4>{1, 1, 1, 1};
  switch (op.type) {
    case gpu::OpType::Matmul: {
      const gpu::DataType dt = res ? res->dtype : gpu::DataType::FP16;
      const int64_t m = op.matmul ? op.matmul->m : 1, n = op.matmul ? op.matmul->n : 1;
      const int64_t tm = m > n ? 256 : 128, tn = m > n ? 128 : 256;
      int64_t tk;
      if (is_rocm(arch)) {
        c.num_warps = 4;
        c.sram_bytes = dt == gpu::DataType::BF16 ? 24624 : 24672;
        tk = dt == gpu::DataType::FP32 ? 16 : 32;
      } else {
        c.num_warps = 8;
        c.sram_bytes = 147456;
        tk = dt == gpu::DataType::FP32 ? 32 : 64;
      }
      c.tile_shape_mnk = std::array<int64_t, 3>{tm, tn, tk};
      c.num_tasks = s[0] * s[1] * ceil_div(m, tm) * ceil_div(n, tn);
      break;
    }
    case gpu::OpType::ReduceSum: case gpu::OpType::ReduceMax: case gpu::OpType::ReduceMean: {
      const int64_t rank = op.read_tensors.empty() ? 1 : static_cast<int64_t>(op.read_tensors[0].shape.size());
      const int64_t axis = op.arg_int("Axis").value_or(rank - 1);
      const bool last = axis == rank - 1 || axis == -1;
      c.impl_type = last ? "WarpWise" : "ElementWise";
      c.sram_bytes = last ? 256 : 0;
      c.num_tasks = res ? res->num_elements() : 1;
      break;
    }
    case gpu::OpType::Transpose:
      c.tile = {8, 8};
      c.num_tasks = tiled_tasks(s, 8, 8);
      break;
    case gpu::OpType::Embedding:
      c.num_tasks = s[0] * s[1] * s[2];
      break;
    case gpu::OpType::Send:
      c.channel_type = "Proxy";
      c.signal = true;
      c.num_tasks = 1;
      break;
    case gpu::OpType::Recv:
      c.channel_type = "Proxy";
      c.wait = true;
      c.num_tasks = 1;
      break;
    case gpu::OpType::SendDone: case gpu::OpType::DeviceSync:
      c.channel_type = "Proxy";
      c.num_tasks = 1;
      break;
    case gpu::OpType::Noop:
      c.num_tasks = 0;
      break;
    case gpu::OpType::SendPacket: case gpu::OpType::RecvPacket: case gpu::OpType::RecvReduceSendPacket:
      c.packet_type = is_rocm(arch) ? "mscclpp::LL8Packet" : "mscclpp::LL16Packet";
      c.tile = {1, 512};
      c.num_tasks = tiled_tasks(s, 1, 512);
      break;
    case gpu::OpType::RecvReduceSend:
      c.tile = {1, 128};
      c.num_tasks = tiled_tasks(s, 1, 128);
      break;
    default: {  // element-wise broadcast ops, Cast, Copy, Scalar*
      const int64_t tx = s[2] > s[3] ? 64 : 1, ty = s[2] > s[3] ? 1 : 64;
      c.tile = {tx, ty};
      c.num_tasks = tiled_tasks(s, tx, ty);
      break;
    }
  }
  return c;
}

gpu::Program default_plan(const gpu::Model& m, int num_sms, const std::string& arch) {
  if (num_sms <= 0) throw InternalError("default_plan: num_sms must be > 0");
  gpu::Program p;
  p.source = m.source + " (default plan)";
  p.rank = m.rank;
  p.world_size = m.world_size;
  p.architecture = arch;
  p.buffers = m.buffers;
  int64_t max_proc = 1;
  int max_warps = 1;
  for (const gpu::Node& node : m.nodes)
    for (const gpu::Op& model_op : node.ops) {
      if (model_op.is_virtual || gpu::op_class(model_op.type) == gpu::OpClass::Virtual) continue;
      gpu::Op op = model_op;
      op.config = default_op_config(op, arch);
      const int64_t id = static_cast<int64_t>(p.task_infos.size());
      op.pointer = "/TaskInfos/" + std::to_string(id) + "/Ops/0";
      gpu::TaskInfo t;
      t.id = id;
      t.num_warps = op.config.num_warps;
      t.sram_bytes = op.config.sram_bytes;
      t.num_tasks = op.config.num_tasks;
      t.pointer = "/TaskInfos/" + std::to_string(id);
      t.ops.push_back(std::move(op));
      max_warps = std::max(max_warps, t.num_warps);
      if (t.num_tasks > 0) {
        const int64_t procs = std::min<int64_t>(num_sms, t.num_tasks);
        max_proc = std::max(max_proc, procs);
        const std::string pg_ptr = "/ProcessorGroups/" + std::to_string(p.processor_groups.size());
        gpu::ResourceGroup rg;
        rg.pointer = pg_ptr + "/ResourceGroups/0";
        rg.processor_range = {0, procs, 1};
        rg.warp_range = {0, t.num_warps, 1};
        rg.sram_range = {0, t.sram_bytes, 1};
        rg.task_groups.push_back({id, {0, t.num_tasks, 1}, 1, rg.pointer + "/TaskGroups/0"});
        gpu::ProcessorGroup pg;
        pg.pointer = pg_ptr;
        pg.processor_range = {0, procs, 1};
        pg.resource_groups.push_back(std::move(rg));
        p.processor_groups.push_back(std::move(pg));
      }
      p.task_infos.push_back(std::move(t));
    }
  p.num_processors = static_cast<int>(max_proc);
  p.num_warps_per_processor = max_warps;
  gpu::derive_costs(p);
  return p;
}

namespace {

// A fresh rows x cols tensor in a buffer of its own (ids in order of creation).
gpu::Tensor fresh_tensor(gpu::Program& p, int64_t rows, int64_t cols, gpu::DataType dt) {
  const int64_t id = static_cast<int64_t>(p.buffers.size());
  p.buffers.push_back({id, -1, false, {}, {}, ""});
  gpu::Tensor t;
  t.id = t.buffer_id = id;
  t.dtype = dt;
  t.shape = t.strides = t.padded_shape = {rows, cols};
  t.offsets = {0, 0};
  return t;
}

// Appends `op` as the plan's next TaskInfo and processor group: its config.num_tasks tasks over
// [0, min(num_sms, tasks)) processors, `slots` slots of the op's warps and SRAM on each;
// NumWarpsPerProcessor at least `wpp`. A group after the first waits at the barrier ARK puts
// between overlapping groups.
void place_single_op(gpu::Program& p, gpu::Op op, int num_sms, int64_t slots, int wpp) {
  const gpu::OpConfig& c = op.config;
  const std::string ti = std::to_string(p.task_infos.size()), pi = std::to_string(p.processor_groups.size());
  op.pointer = "/TaskInfos/" + ti + "/Ops/0";
  gpu::TaskInfo t;
  t.id = static_cast<int64_t>(p.task_infos.size());
  t.num_warps = c.num_warps;
  t.sram_bytes = c.sram_bytes;
  t.num_tasks = c.num_tasks;
  t.pointer = "/TaskInfos/" + ti;
  t.ops.push_back(op);
  p.task_infos.push_back(t);
  const int64_t procs = std::min<int64_t>(num_sms, t.num_tasks);
  gpu::ResourceGroup rg;
  rg.pointer = "/ProcessorGroups/" + pi + "/ResourceGroups/0";
  rg.processor_range = {0, procs, 1};
  rg.warp_range = {0, slots * t.num_warps, 1};
  rg.sram_range = {0, slots * t.sram_bytes, 1};
  rg.task_groups.push_back({t.id, {0, t.num_tasks, 1}, 1, rg.pointer + "/TaskGroups/0"});
  gpu::ProcessorGroup pg;
  pg.pointer = "/ProcessorGroups/" + pi;
  pg.processor_range = rg.processor_range;
  pg.resource_groups.push_back(rg);
  p.processor_groups.push_back(pg);
  p.num_processors = std::max(p.num_processors, static_cast<int>(procs));
  p.num_warps_per_processor = std::max(p.num_warps_per_processor, wpp);
  gpu::derive_costs(p);
}

}  // namespace

gpu::Program single_matmul_plan(const MatmulPlanSpec& s, int num_sms, int64_t sm_smem_bytes) {
  if (num_sms <= 0 || s.warps <= 0 || s.m <= 0 || s.n <= 0 || s.k <= 0)
    throw InternalError("single_matmul_plan: bad spec");
  gpu::Program p;
  p.source = "matmul " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  gpu::Op op;
  op.type = gpu::OpType::Matmul;
  op.name = "matmul";
  const int64_t split = std::max<int64_t>(1, s.split_k), k_part = s.k / split;
  const int64_t batch = std::max<int64_t>(1, s.batch);
  if (split > 1 && (s.k % split != 0 || s.a_rows > 0 || batch > 1)) throw InternalError("single_matmul_plan: bad split-K spec");
  if (s.stream_k && batch > 1) throw InternalError("single_matmul_plan: stream-K of a batched matmul");
  const gpu::DataType out_dt = s.out_dtype.value_or(s.dtype);
  if (s.attention) {  // Q [batch x m, d], K and V [batch x k, d] read (one tensor when shared); O [batch x m, d] written
    op.read_tensors = {fresh_tensor(p, batch * s.m, s.n, s.dtype), fresh_tensor(p, batch * s.k, s.n, s.dtype)};
    if (!s.shared_kv) op.read_tensors.push_back(fresh_tensor(p, batch * s.k, s.n, s.dtype));
  } else {
    op.read_tensors = {fresh_tensor(p, s.a_rows > 0 ? std::min(s.a_rows, s.m) : batch * s.m, s.k, s.dtype),
                       fresh_tensor(p, s.b_shared ? s.k : batch * s.k, s.n, s.dtype)};
  }
  // Split-K: `split` partial products (fp32, as cuBLAS's workspace) of K / split each.
  op.write_tensors = {split > 1 ? fresh_tensor(p, split * s.m, s.n, gpu::DataType::FP32) : fresh_tensor(p, batch * s.m, s.n, out_dt)};
  op.result_tensors = op.write_tensors;
  for (const char* a : {"TransposeInput", "TransposeOther"}) {
    gpu::ArgValue v;
    v.type = gpu::ArgType::Bool;
    op.args[a] = v;
  }
  gpu::MatmulShape ms;
  ms.m = s.m;
  ms.n = s.n;
  ms.k = k_part;
  ms.batch = split > 1 ? split : batch;
  op.matmul = ms;
  op.config.present = true;
  op.config.num_warps = s.warps;
  op.config.sram_bytes = s.sram_bytes;
  op.config.tile_shape_mnk = std::array<int64_t, 3>{s.tm, s.tn, s.tk};
  op.config.tile_group_m = s.group_m;
  op.config.warp_mma = s.warp_mma;
  op.config.cluster_m = s.cluster_m, op.config.cluster_n = s.cluster_n;
  op.config.simt = s.simt;
  op.config.epilogue_read_bytes = s.epilogue_read_bytes;
  op.config.attention = s.attention, op.config.causal = s.causal, op.config.softmax_overlap = s.softmax_overlap;
  op.config.shared_kv = s.shared_kv;
  op.config.num_tasks = ceil_div(s.m, s.tm) * ceil_div(s.n, s.tn) * split * batch;
  const int wpp = s.slots > 0 ? static_cast<int>(s.slots) * s.warps : std::max(s.warps, s.warps_per_processor);
  int64_t slots = wpp / s.warps;
  if (s.sram_bytes > 0) slots = std::min<int64_t>(slots, models::blocks_by_smem(sm_smem_bytes, s.sram_bytes));
  if (s.stream_k) {
    if (split > 1) throw InternalError("single_matmul_plan: stream-K with split-K");
    // One worker per slot of every SM (fewer when there are fewer K steps than that).
    op.config.stream_k = true;
    op.config.num_tasks = std::min(op.config.num_tasks * ceil_div(s.k, s.tk), num_sms * std::max<int64_t>(1, slots));
  }
  place_single_op(p, op, num_sms, std::max<int64_t>(1, slots), wpp);
  if (s.attention) {  // two matmuls per score: 4 m n k flops a head, half of them under a causal mask
    gpu::Op& o = p.task_infos[0].ops[0];
    const double whole = 4.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
                         static_cast<double>(batch);
    const double seen = s.causal ? (static_cast<double>(s.k) - static_cast<double>(s.m) / 2) / static_cast<double>(s.k) : 1.0;
    o.cost.flops = static_cast<int64_t>(std::llround(whole * seen));
    o.task_cost.flops = ceil_div(o.cost.flops, o.config.num_tasks);
    p.task_infos[0].task_cost.flops = o.task_cost.flops;
  }
  if (split > 1) {
    // Then the partials are summed into C: one program of 4 warps per row of C reads its `split`
    // fp32 rows and writes one (split - 1 adds per element).
    gpu::Op sum;
    sum.type = gpu::OpType::Mul;  // element-wise: each task reads and writes its share once
    sum.name = "split_k_sum";
    sum.read_tensors = {p.task_infos[0].ops[0].write_tensors[0]};
    sum.write_tensors = {fresh_tensor(p, s.m, s.n, out_dt)};
    sum.result_tensors = sum.write_tensors;
    sum.config.present = true;
    sum.config.num_warps = 4;
    sum.config.num_tasks = s.m;
    place_single_op(p, sum, num_sms, std::max<int64_t>(1, s.sum_programs_per_sm), static_cast<int>(4 * s.sum_programs_per_sm));
    gpu::Op& o = p.task_infos[1].ops[0];
    o.cost.flops = (split - 1) * s.m * s.n;
    o.task_cost.flops = (split - 1) * s.n;
    p.task_infos[1].task_cost.flops = o.task_cost.flops;
  }
  return p;
}

gpu::Program single_rowwise_plan(const RowKernelSpec& s, int num_sms) {
  if (num_sms <= 0 || s.warps <= 0 || s.rows <= 0 || s.cols <= 0 || s.row_inputs < 0 || s.row_outputs < 0 ||
      s.row_outputs + s.row_stats < 1 || s.col_vectors < 0 || s.row_stats < 0 || s.programs_per_sm <= 0 || s.loop_passes < 0 ||
      s.reduce_exchanges < 0)
    throw InternalError("single_rowwise_plan: bad spec");
  gpu::Program p;
  p.source = s.name + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols);
  gpu::Op op;
  op.type = gpu::OpType::Mul;  // an element-wise op: its task reads and writes its share of every tensor once
  op.name = s.name;
  for (int i = 0; i < s.row_inputs; ++i) op.read_tensors.push_back(fresh_tensor(p, s.rows, s.cols, s.dtype));
  for (int i = 0; i < s.col_vectors; ++i) op.read_tensors.push_back(fresh_tensor(p, 1, s.cols, s.dtype));
  for (int i = 0; i < s.row_outputs; ++i) op.write_tensors.push_back(fresh_tensor(p, s.rows, s.cols, s.dtype));
  for (int i = 0; i < s.row_stats; ++i) op.write_tensors.push_back(fresh_tensor(p, s.rows, 1, gpu::DataType::FP32));
  op.result_tensors = {op.write_tensors[0]};
  op.config.present = true;
  op.config.num_warps = s.warps;
  op.config.sram_bytes = 0;
  op.config.num_tasks = s.rows;
  if (s.loop_passes > 0) {
    op.config.row_loop_passes = s.loop_passes;
    op.config.row_loop_iters = std::max<int64_t>(1, s.loop_iters);
    op.config.row_reduce_steps = s.reduce_steps;
    op.config.row_reduce_exchanges = s.reduce_exchanges;
    op.config.row_reread_bytes = static_cast<double>(s.loop_passes - 1) * s.row_inputs * static_cast<double>(s.cols) *
                                 gpu::data_type_bytes(s.dtype);
    // Between a row's first pass and its re-read, the other rows in flight read and write theirs.
    const double resident_rows = static_cast<double>(std::min<int64_t>(s.rows, int64_t{num_sms} * s.programs_per_sm));
    op.config.row_resident_bytes = resident_rows * (s.row_inputs + s.row_outputs) * static_cast<double>(s.cols) *
                                   gpu::data_type_bytes(s.dtype);
  }
  place_single_op(p, op, num_sms, s.programs_per_sm, static_cast<int>(s.programs_per_sm * s.warps));
  // The kernel's own arithmetic replaces ARK's one flop per output element.
  gpu::Op& o = p.task_infos[0].ops[0];
  o.cost.flops = static_cast<int64_t>(std::llround(s.flops_per_element * static_cast<double>(s.rows * s.cols)));
  o.task_cost.flops = static_cast<int64_t>(std::llround(s.flops_per_element * static_cast<double>(s.cols)));
  p.task_infos[0].task_cost.flops = o.task_cost.flops;
  return p;
}

}  // namespace npusim::mapping
