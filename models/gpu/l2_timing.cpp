#include "models/gpu/l2_timing.h"

#include <algorithm>
#include <map>

namespace npusim::models {

int64_t L2Residency::dirty_bytes() const {
  int64_t d = 0;
  for (const Entry& e : m_lru)
    if (e.dirty) d += e.region.size();
  return d;
}

std::vector<std::pair<int64_t, int64_t>> L2Residency::dirty_by_writer() const {
  std::map<int64_t, int64_t> by;
  for (const Entry& e : m_lru)
    if (e.dirty) by[e.writer] += e.region.size();
  return {by.begin(), by.end()};
}

std::vector<L2Residency::Entry> L2Residency::cut(const ByteRegion& r) {
  std::vector<Entry> parts;
  // The entries of r's buffer that overlap it: from the last one starting at or before r.begin.
  std::vector<std::list<Entry>::iterator> hits;
  auto at = m_index.upper_bound({r.buffer, r.begin});
  if (at != m_index.begin()) --at;
  for (; at != m_index.end() && at->first.first <= r.buffer; ++at) {
    if (at->first.first < r.buffer) continue;
    if (at->first.second >= r.end) break;
    if (at->second->region.end > r.begin) hits.push_back(at->second);
  }
  for (auto it : hits) {
    ByteRegion& e = it->region;
    const int64_t lo = std::max(e.begin, r.begin), hi = std::min(e.end, r.end);
    parts.push_back({{r.buffer, lo, hi}, it->dirty, it->writer});
    m_used -= hi - lo;
    // Keep the parts of the entry on either side of r, at the entry's place in the LRU order.
    if (e.begin < lo && e.end > hi) {
      Entry right{{e.buffer, hi, e.end}, it->dirty, it->writer};
      e.end = lo;
      index(m_lru.insert(std::next(it), right));
    } else if (e.begin < lo) {
      e.end = lo;
    } else if (e.end > hi) {
      unindex(*it);
      e.begin = hi;
      index(it);
    } else {
      unindex(*it);
      m_lru.erase(it);
    }
  }
  std::sort(parts.begin(), parts.end(), [](const Entry& a, const Entry& b) { return a.region.begin < b.region.begin; });
  return parts;
}

int64_t L2Residency::insert(ByteRegion r, bool dirty, int64_t writer) {
  if (m_capacity <= 0 || r.size() <= 0) return 0;
  // A region larger than the cache streams through it: only its tail stays.
  if (r.size() > m_capacity) r.begin = r.end - m_capacity;
  m_lru.push_front({r, dirty, writer});
  index(m_lru.begin());
  m_used += r.size();
  int64_t written_back = 0;
  while (m_used > m_capacity && !m_lru.empty()) {
    Entry& last = m_lru.back();
    const int64_t excess = m_used - m_capacity;
    const int64_t take = std::min(excess, last.region.size());
    if (last.dirty) written_back += take;
    m_used -= take;
    unindex(last);
    last.region.begin += take;  // evict the lowest addresses of the oldest entry first
    if (last.region.size() <= 0) m_lru.pop_back();
    else index(std::prev(m_lru.end()));
  }
  return written_back;
}

L2Access L2Residency::read(const ByteRegion& r) {
  L2Access a;
  const std::vector<Entry> parts = cut(r);
  for (const Entry& e : parts) a.hit_bytes += e.region.size();
  a.miss_bytes = r.size() - a.hit_bytes;
  if (r.size() > m_capacity) {
    // Streams through: the tail stays, clean; dirty bytes pushed out are written back.
    for (const Entry& e : parts)
      if (e.dirty) a.writeback_bytes += e.region.size();
    a.writeback_bytes += insert(r, false, -1);
    return a;
  }
  // Missed gaps come in clean; resident parts keep their dirty flag; all become most recent.
  int64_t pos = r.begin;
  for (const Entry& e : parts) {
    if (e.region.begin > pos) a.writeback_bytes += insert({r.buffer, pos, e.region.begin}, false, -1);
    a.writeback_bytes += insert(e.region, e.dirty, e.writer);
    pos = e.region.end;
  }
  if (pos < r.end) a.writeback_bytes += insert({r.buffer, pos, r.end}, false, -1);
  return a;
}

void L2Residency::touch(const ByteRegion& r) {
  for (const Entry& e : cut(r)) {
    m_lru.push_front(e);
    index(m_lru.begin());
    m_used += e.region.size();
  }
}

L2Access L2Residency::write(const ByteRegion& r, int64_t writer) {
  L2Access a;
  for (const Entry& e : cut(r)) a.hit_bytes += e.region.size();
  // Bytes of a region larger than the cache go straight through to HBM.
  a.writeback_bytes = std::max<int64_t>(0, r.size() - m_capacity) + insert(r, true, writer);
  return a;
}

double l2_reuse_hit_share(double distance_bytes, double capacity_bytes) {
  if (distance_bytes <= capacity_bytes) return 1;
  const double r = capacity_bytes / distance_bytes;
  return r * r;
}

double tile_start(int64_t n, int64_t processors, int64_t slots, double drift_waves, double jitter_per_wave) {
  const int64_t p = std::max<int64_t>(1, processors), s = std::max<int64_t>(1, slots);
  const int64_t sub = n / p, wave = sub / s, slot = sub % s;
  const double drift = drift_waves > 0 ? std::min(1.0, static_cast<double>(wave) / drift_waves) : 0;
  const double jitter = s > 1 ? std::min(1.0, std::max(0.0, jitter_per_wave) * static_cast<double>(wave)) : 0;
  const double phase = static_cast<double>(slot) + jitter * static_cast<double>(n % p) / static_cast<double>(p);
  return static_cast<double>(wave) + phase / static_cast<double>(s) * drift;
}

}  // namespace npusim::models
