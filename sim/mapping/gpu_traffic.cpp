#include "sim/mapping/gpu_traffic.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "models/gpu/gpu_timing.h"
#include "sim/mapping/gpu_schedule.h"

namespace npusim::mapping {

models::ByteRegion tensor_region(const gpu::Tensor& t) {
  models::ByteRegion r;
  r.buffer = t.buffer_id;
  const int64_t eb = gpu::data_type_bytes(t.dtype);
  if (t.num_elements() <= 0) return r;
  r.begin = t.byte_offset();
  if (t.strides.size() != t.shape.size()) {
    r.end = r.begin + t.bytes();
    return r;
  }
  int64_t last = 0;
  for (size_t i = 0; i < t.strides.size(); ++i) {
    const int64_t off = i < t.offsets.size() ? t.offsets[i] : 0;
    last = last * t.strides[i] + off + t.shape[i] - 1;
  }
  r.end = (last + 1) * eb;
  return r;
}

namespace {

// Share of a region's hull the tensor really touches (strided views touch less).
double touched_share(const gpu::Tensor& t, const models::ByteRegion& r) {
  return r.size() > 0 ? std::min(1.0, static_cast<double>(t.bytes()) / static_cast<double>(r.size())) : 0;
}

int task_info_index(const gpu::Program& p, int64_t id) {
  for (size_t i = 0; i < p.task_infos.size(); ++i)
    if (p.task_infos[i].id == id) return static_cast<int>(i);
  return -1;
}

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

// Above this many tiles a Matmul's reads are played as whole tensors (bounded pass time).
constexpr int64_t kMaxWaveTiles = 1 << 16;

// Panel i of n of a tensor's region: equal byte slices stand for its row (A) or column (B)
// panels; the LRU needs only their identity and size, not where the strided bytes lie.
models::ByteRegion panel(const models::ByteRegion& r, int64_t i, int64_t n) {
  return {r.buffer, r.begin + r.size() * i / n, r.begin + r.size() * (i + 1) / n};
}


// K chunks per panel the reuse pass follows (fewer when K has fewer steps).
constexpr int64_t kChunksPerPanel = 8;

// One read of a K chunk of an A row panel or a B column panel, at a time in tile durations.
struct ChunkRead {
  double time = 0;
  int64_t order = 0;  // tile (or stream-K worker) in launch order: ties keep it
  int operand = 0;    // 0: A, 1: B
  int64_t chunk = 0;  // panel x chunks + chunk
  double share = 1;   // of the chunk's bytes (a stream-K piece reads part of a chunk)
};

// Distinct bytes read between two positions of the read stream, each chunk counted at its last
// read (a Fenwick tree over positions).
class ReuseDistance {
 public:
  explicit ReuseDistance(size_t n) : m_tree(n + 1, 0.0) {}
  void add(size_t pos, double bytes) {
    for (size_t i = pos + 1; i < m_tree.size(); i += i & (~i + 1)) m_tree[i] += bytes;
  }
  double before(size_t pos) const {  // over [0, pos)
    double s = 0;
    for (size_t i = pos; i > 0; i -= i & (~i + 1)) s += m_tree[i];
    return s;
  }

 private:
  std::vector<double> m_tree;
};

}  // namespace

bool play_matmul_tiles(models::L2Residency& l2, const gpu::Op& op, const TilePass& pass, int rank, OpTraffic& t) {
  // Attention tiles read Q once and K, V whole per query tile: they take the plain LRU path.
  if (op.type != gpu::OpType::Matmul || !op.matmul || op.read_tensors.size() < 2 || !op.config.tile_shape_mnk ||
      op.config.attention)
    return false;
  const gpu::MatmulShape& s = *op.matmul;
  const auto& tile = *op.config.tile_shape_mnk;
  const int64_t mt = ceil_div(s.m, tile[0]), nt = ceil_div(s.n, tile[1]);
  const int64_t batch = std::max<int64_t>(1, s.batch), tiles = batch * mt * nt;
  if (mt <= 0 || nt <= 0 || tiles > kMaxWaveTiles) return false;
  const gpu::Tensor& a = op.read_tensors[0];
  const gpu::Tensor& b = op.read_tensors[1];
  // Batched operands have a panel per (batch, tile row/column); broadcast ones one per row/column.
  const int64_t pa = a.num_elements() >= batch * s.m * s.k ? batch * mt : mt;
  const int64_t pb = b.num_elements() >= batch * s.k * s.n ? batch * nt : nt;
  const models::ByteRegion ra = tensor_region(a), rb = tensor_region(b);
  const int64_t k_steps = std::max<int64_t>(1, ceil_div(s.k, tile[2]));
  const int64_t chunks = std::min(kChunksPerPanel, k_steps);
  auto chunk_lo = [&](int64_t c) { return c * k_steps / chunks; };  // first K step of chunk c

  // The reads in time order. A tile reads chunk c of its two panels in the middle of the K
  // steps the chunk covers; a stream-K worker walks its pieces one after the other.
  std::vector<ChunkRead> reads;
  // Tiles, or stream-K pieces: at most one a worker more than the tiles.
  const int64_t pieces = op.config.stream_k ? tiles + std::max<int64_t>(1, op.config.num_tasks) : tiles;
  reads.reserve(static_cast<size_t>(2 * chunks * pieces));
  auto read_steps = [&](int64_t order, int64_t tile_id, int64_t k_begin, int64_t k_end, double start) {
    const auto [mi, ni] = models::matmul_tile_index(tile_id % (nt * mt), mt, nt, op.config.tile_group_m);
    const int64_t bi = tile_id / (nt * mt);
    const int64_t panels[2] = {(bi * mt + mi) % pa, (bi * nt + ni) % pb};
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t lo = std::max(k_begin, chunk_lo(c)), hi = std::min(k_end, chunk_lo(c + 1));
      if (lo >= hi) continue;
      const double time = start + (0.5 * static_cast<double>(lo + hi) - static_cast<double>(k_begin)) / k_steps;
      const double share = static_cast<double>(hi - lo) / static_cast<double>(chunk_lo(c + 1) - chunk_lo(c));
      for (int x = 0; x < 2; ++x) reads.push_back({time, order, x, panels[x] * chunks + c, share});
    }
  };
  if (op.config.stream_k) {
    const int64_t workers = std::max<int64_t>(1, op.config.num_tasks);
    for (int64_t w = 0; w < workers; ++w) {
      double at = 0;  // tile durations into the worker's walk
      for (const models::MatmulSegment& g : models::stream_k_segments(tiles, k_steps, workers, w)) {
        read_steps(w, g.tile, g.k_begin, g.k_end, at);
        at += static_cast<double>(g.k_end - g.k_begin) / static_cast<double>(k_steps);
      }
    }
  } else {
    for (int64_t n = 0; n < tiles; ++n)
      read_steps(n, n, 0, k_steps,
                 models::tile_start(n, pass.processors, pass.slots, pass.l2.drift_waves, pass.l2.jitter_per_wave));
  }
  std::stable_sort(reads.begin(), reads.end(), [](const ChunkRead& x, const ChunkRead& y) {
    return std::tie(x.time, x.order, x.operand) < std::tie(y.time, y.order, y.operand);
  });

  const gpu::Tensor* tensors[2] = {&a, &b};
  const models::ByteRegion regions[2] = {ra, rb};
  const double touched[2] = {touched_share(a, ra), touched_share(b, rb)};
  const int64_t panel_count[2] = {pa, pb};
  auto chunk_region = [&](int x, int64_t id) {
    const models::ByteRegion p = panel(regions[x], id / chunks, panel_count[x]);
    const int64_t c = id % chunks;
    return models::ByteRegion{p.buffer, p.begin + p.size() * chunk_lo(c) / k_steps,
                              p.begin + p.size() * chunk_lo(c + 1) / k_steps};
  };
  struct LastRead {
    int64_t pos = -1;
    double time = 0, miss = 0, bytes = 0;
  };
  std::vector<LastRead> last[2] = {std::vector<LastRead>(pa * chunks), std::vector<LastRead>(pb * chunks)};
  ReuseDistance distance(reads.size());
  const double capacity = static_cast<double>(pass.l2.bytes) / std::max(1, pass.l2.partitions);
  double wait = 0;
  for (size_t pos = 0; pos < reads.size(); ++pos) {
    const ChunkRead& r = reads[pos];
    if (tensors[r.operand]->is_remote(rank)) continue;
    LastRead& l = last[r.operand][r.chunk];
    double miss = 0, waits = 0;
    if (l.pos < 0) {
      // First read: whatever an earlier op left in the L2 hits; the rest is fetched whole (a
      // stream-K piece that reads part of the chunk fetches it for the piece that reads the rest).
      const models::L2Access acc = l2.read(chunk_region(r.operand, r.chunk));
      l.bytes = static_cast<double>(acc.hit_bytes + acc.miss_bytes);
      miss = static_cast<double>(acc.miss_bytes);
      waits = miss * r.share;
      t.hbm_write_bytes += static_cast<double>(acc.writeback_bytes);
      l.miss = l.bytes > 0 ? acc.miss_bytes / l.bytes : 0;
    } else if (l.time == r.time) {
      // Tiles that start together read the chunk at once: one fill, all of them wait on it.
      waits = l.miss * l.bytes * r.share;
    } else {
      const double d = distance.before(pos) - distance.before(static_cast<size_t>(l.pos) + 1);
      l.miss = 1 - models::l2_reuse_hit_share(d, capacity);
      miss = waits = l.miss * l.bytes * r.share;
    }
    if (l.pos >= 0) distance.add(static_cast<size_t>(l.pos), -l.bytes);
    distance.add(pos, l.bytes);
    l.pos = static_cast<int64_t>(pos), l.time = r.time;
    t.hbm_read_bytes += miss * touched[r.operand];
    wait += waits * touched[r.operand];
  }
  // The op leaves the chunks still resident in the L2 in the order it last read them.
  std::vector<std::pair<int64_t, std::pair<int, int64_t>>> by_last;
  for (int x = 0; x < 2; ++x)
    for (size_t id = 0; id < last[x].size(); ++id)
      if (last[x][id].pos >= 0) by_last.push_back({last[x][id].pos, {x, static_cast<int64_t>(id)}});
  std::sort(by_last.begin(), by_last.end());
  for (const auto& [pos, chunk] : by_last) l2.touch(chunk_region(chunk.first, chunk.second));
  for (size_t i = 2; i < op.read_tensors.size(); ++i) {  // anything else it reads, whole
    const gpu::Tensor& x = op.read_tensors[i];
    if (x.is_remote(rank)) continue;
    const models::ByteRegion r = tensor_region(x);
    const models::L2Access acc = l2.read(r);
    t.hbm_read_bytes += acc.miss_bytes * touched_share(x, r);
    wait += acc.miss_bytes * touched_share(x, r);
    t.hbm_write_bytes += acc.writeback_bytes;
  }
  t.wait_read_bytes = wait;
  return true;
}

std::vector<std::vector<OpTraffic>> plan_hbm_traffic(const gpu::Program& p, const L2Pass& l2_pass) {
  // The L2 tags written bytes with the writer's index in `writers` (TaskInfo, op).
  std::vector<std::pair<size_t, size_t>> writers;
  auto writer_id = [&](size_t ti, size_t oi) {
    if (writers.empty() || writers.back() != std::make_pair(ti, oi)) writers.emplace_back(ti, oi);
    return static_cast<int64_t>(writers.size() - 1);
  };
  std::vector<std::vector<OpTraffic>> out(p.task_infos.size());
  for (size_t i = 0; i < p.task_infos.size(); ++i) out[i].resize(p.task_infos[i].ops.size());
  models::L2Residency l2(l2_pass.bytes);
  std::set<int> played;
  for (const gpu::ProcessorGroup& pg : p.processor_groups)
    for (const gpu::ResourceGroup& rg : pg.resource_groups)
      for (const gpu::TaskGroup& tg : rg.task_groups) {
        const int ti = task_info_index(p, tg.task_id);
        if (ti < 0 || !played.insert(ti).second) continue;
        const gpu::TaskInfo& task = p.task_infos[ti];
        // Tiles of this task group running at once: its processors x slots.
        const TilePass pass{span_of(rg.processor_range).size(), gpu::num_slots(rg, task), l2_pass};
        for (size_t oi = 0; oi < task.ops.size(); ++oi) {
          const gpu::Op& op = task.ops[oi];
          if (op.is_virtual || gpu::op_class(op.type) == gpu::OpClass::Virtual) continue;
          OpTraffic& t = out[ti][oi];
          if (!play_matmul_tiles(l2, op, pass, p.rank, t)) {
            for (const gpu::Tensor& x : op.read_tensors) {
              if (x.is_remote(p.rank)) continue;
              const models::ByteRegion r = tensor_region(x);
              const models::L2Access a = l2.read(r);
              t.hbm_read_bytes += a.miss_bytes * touched_share(x, r);
              t.hbm_write_bytes += a.writeback_bytes;
            }
          }
          for (const gpu::Tensor& x : op.write_tensors) {
            if (x.is_remote(p.rank)) continue;
            const models::L2Access a = l2.write(tensor_region(x), writer_id(ti, oi));
            t.hbm_write_bytes += a.writeback_bytes;
          }
        }
      }
  // What is still dirty at the end reaches HBM too, charged to the op that wrote it.
  for (const auto& [writer, bytes] : l2.dirty_by_writer())
    if (writer >= 0) out[writers[writer].first][writers[writer].second].hbm_write_bytes += static_cast<double>(bytes);
  return out;
}

CommPlan::CommPlan(const std::vector<const gpu::Program*>& plans) : m_plans(plans) {
  // Descriptor -> owner's buffer, through the tags.
  for (size_t q = 0; q < plans.size(); ++q) {
    const int rank = static_cast<int>(q);
    for (const gpu::Buffer& b : plans[q]->buffers) {
      if (b.is_local(rank)) {
        m_resolved[{rank, b.id}] = {rank, b.id};
        continue;
      }
      const int owner = b.rank;
      if (owner < 0 || owner >= static_cast<int>(plans.size())) continue;
      auto match = [&](const std::vector<gpu::Tag>& mine, bool recv) -> bool {
        for (const gpu::Tag& t : mine) {
          if (t.remote_rank >= 0) continue;
          for (const gpu::Buffer& ob : plans[owner]->buffers) {
            if (!ob.is_local(owner)) continue;
            for (const gpu::Tag& o : recv ? ob.recv_tags : ob.send_tags)
              if (o.remote_rank == rank && o.tag == t.tag) {
                m_resolved[{rank, b.id}] = {owner, ob.id};
                return true;
              }
          }
        }
        return false;
      };
      if (!match(b.recv_tags, true)) match(b.send_tags, false);
    }
  }
  // Remote writes into each physical buffer.
  std::map<PhysicalBuffer, std::vector<RemoteWrite>> writes;
  for (size_t q = 0; q < plans.size(); ++q) {
    const int rank = static_cast<int>(q);
    for (size_t ti = 0; ti < plans[q]->task_infos.size(); ++ti) {
      const gpu::TaskInfo& task = plans[q]->task_infos[ti];
      for (size_t oi = 0; oi < task.ops.size(); ++oi)
        for (const gpu::Tensor& t : task.ops[oi].write_tensors) {
          if (!t.is_remote(rank)) continue;
          const auto phys = resolve(rank, t.buffer_id);
          if (!phys) continue;
          const models::ByteRegion r = tensor_region(t);
          writes[*phys].push_back({rank, static_cast<int>(ti), static_cast<int>(oi),
                                   std::max<int64_t>(1, task.num_tasks), r.begin, r.end});
        }
    }
  }
  // Packet readers: the local bytes they read, and who writes them.
  for (size_t q = 0; q < plans.size(); ++q) {
    const int rank = static_cast<int>(q);
    for (size_t ti = 0; ti < plans[q]->task_infos.size(); ++ti) {
      const gpu::TaskInfo& task = plans[q]->task_infos[ti];
      for (size_t oi = 0; oi < task.ops.size(); ++oi) {
        const gpu::Op& op = task.ops[oi];
        if (!spins_on_packets(op.type)) continue;
        auto& reads = m_reads[{rank, static_cast<int>(ti), static_cast<int>(oi)}];
        for (const gpu::Tensor& t : op.read_tensors) {
          if (t.is_remote(rank)) continue;
          const auto phys = resolve(rank, t.buffer_id);
          if (!phys) continue;
          const models::ByteRegion r = tensor_region(t);
          Read rd{std::max<int64_t>(1, task.num_tasks), r.begin, r.end, {}};
          for (const RemoteWrite& w : writes[*phys])
            if (w.begin < r.end && r.begin < w.end) {
              rd.writers.push_back(w);
              m_sources[{w.rank, w.ti, w.op}] = true;
            }
          if (!rd.writers.empty()) reads.push_back(rd);
        }
      }
    }
  }
}

std::optional<PhysicalBuffer> CommPlan::resolve(int rank, int64_t id) const {
  auto it = m_resolved.find({rank, id});
  if (it == m_resolved.end()) return std::nullopt;
  return it->second;
}

bool CommPlan::is_packet_source(int rank, int ti, int op) const { return m_sources.count({rank, ti, op}) > 0; }

std::vector<TaskKey> CommPlan::packet_source_tasks() const {
  std::vector<TaskKey> out;
  for (const auto& [k, on] : m_sources) {
    const auto& [rank, ti, op] = k;
    const int64_t n = std::max<int64_t>(1, m_plans[static_cast<size_t>(rank)]->task_infos[static_cast<size_t>(ti)].num_tasks);
    for (int64_t t = 0; t < n; ++t) out.emplace_back(rank, ti, op, t);
  }
  return out;
}

std::vector<TaskKey> CommPlan::packet_sources(int rank, int ti, int op, int64_t task) const {
  std::vector<TaskKey> out;
  auto it = m_reads.find({rank, ti, op});
  if (it == m_reads.end()) return out;
  for (const Read& rd : it->second) {
    const int64_t len = rd.end - rd.begin;
    if (len <= 0) continue;
    const int64_t lo = rd.begin + len * task / rd.num_tasks, hi = rd.begin + len * (task + 1) / rd.num_tasks;
    for (const RemoteWrite& w : rd.writers) {
      const int64_t a = std::max(lo, w.begin), b = std::min(hi, w.end), wl = w.end - w.begin;
      if (a >= b || wl <= 0) continue;
      const int64_t first = (a - w.begin) * w.num_tasks / wl;
      const int64_t last = std::min(w.num_tasks - 1, ((b - w.begin) * w.num_tasks + wl - 1) / wl - 1);
      for (int64_t i = first; i <= last; ++i) out.emplace_back(w.rank, w.ti, w.op, i);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace npusim::mapping
