// Which bytes of a plan reach HBM: an LRU model of the GPU's L2 over buffer byte ranges, played
// once over the ops in program order (docs/gpu.md#l2-reuse-in-time). No SystemC.
// Contract: reads of resident bytes hit; missed bytes are fetched from HBM and become resident;
// writes allocate dirty lines without a fetch; evicting dirty bytes writes them back (charged
// to the access that evicts them); overwriting dirty bytes in place costs no write-back (why
// ARK's "overwrite" plans save traffic). Dirty bytes still resident at the end are written back
// too (every written byte reaches HBM once per dirty episode): dirty_by_writer() says whose.
#pragma once
#include <cstdint>
#include <list>
#include <map>
#include <utility>
#include <vector>

namespace npusim::models {

// Within one matmul (docs/gpu.md#l2-reuse-in-time): the share of a chunk read again that hits,
// when distance_bytes of distinct data were read since its last read: all of it within the
// capacity, (capacity / distance)^2 beyond (the L2 keeps part of a working set larger than
// itself, as the H100's DRAM bytes in configs/calibration/h100_l2_*_probe.json show).
double l2_reuse_hit_share(double distance_bytes, double capacity_bytes);

// Start of tile n (task order) in tile durations: processors tiles start at once (one per SM);
// wave w of processors x slots tiles starts at w, its slot s's tiles at w + s / slots once the
// SM's co-resident tiles have drifted apart, which takes drift_waves waves (0: never). With
// several slots the SMs' phases also wander apart: the p-th SM's tile of a slot starts a further
// min(1, jitter_per_wave x w) x (p / processors) / slots later (one tile per SM stays in step).
double tile_start(int64_t n, int64_t processors, int64_t slots, double drift_waves, double jitter_per_wave = 0);

// A byte range [begin, end) of one buffer (buffer: any id unique within one GPU).
struct ByteRegion {
  int64_t buffer = 0;
  int64_t begin = 0, end = 0;
  int64_t size() const { return end > begin ? end - begin : 0; }
};

struct L2Access {
  int64_t hit_bytes = 0;
  int64_t miss_bytes = 0;       // read from HBM
  int64_t writeback_bytes = 0;  // dirty bytes evicted to make room
};

class L2Residency {
 public:
  explicit L2Residency(int64_t capacity_bytes) : m_capacity(capacity_bytes) {}
  L2Access read(const ByteRegion& r);
  // Makes the resident bytes of r the most recent (missing ones stay missing; nothing moves to HBM).
  void touch(const ByteRegion& r);
  // writer: who wrote the bytes (any id of the caller's, e.g. an op index).
  L2Access write(const ByteRegion& r, int64_t writer = -1);
  int64_t resident_bytes() const { return m_used; }
  int64_t dirty_bytes() const;
  // Dirty bytes still resident, per writer (in writer order).
  std::vector<std::pair<int64_t, int64_t>> dirty_by_writer() const;

 private:
  struct Entry {
    ByteRegion region;
    bool dirty = false;
    int64_t writer = -1;  // of dirty bytes
  };
  // Cuts r out of every entry and returns the resident parts of r (with their dirty flags).
  std::vector<Entry> cut(const ByteRegion& r);
  // Inserts r as most recent (only its last `capacity` bytes when larger), then evicts;
  // returns the dirty bytes evicted.
  int64_t insert(ByteRegion r, bool dirty, int64_t writer);
  // Adds / drops an entry of the LRU list in the index.
  void index(std::list<Entry>::iterator it) { m_index[{it->region.buffer, it->region.begin}] = it; }
  void unindex(const Entry& e) { m_index.erase({e.region.buffer, e.region.begin}); }
  std::list<Entry> m_lru;  // front: most recently used
  // The entries by (buffer, first byte): they never overlap, so a region's entries are found
  // without walking the LRU list.
  std::map<std::pair<int64_t, int64_t>, std::list<Entry>::iterator> m_index;
  int64_t m_capacity;
  int64_t m_used = 0;
};

}  // namespace npusim::models
