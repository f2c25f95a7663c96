// The mapper's explicit buffer state (docs/mapping.md): where each mapped tensor lives while
// commands are emitted — in L2 (and on which cores), in DRAM, or both — which commands make it
// complete, and how many consumers still read it. The planning decisions of sim/mapping/mapper.cpp
// (keep an output on chip, spill, stream from DRAM) read and update it; it emits nothing.
// SystemC-free and header-only.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace npusim::mapping {

// How a layer's work is spread over a multi-core chip's cores (docs/multicore.md#mapping): one
// core (`home`), contiguous blocks of output rows (tile t on core t x cores / tiles), or
// output-channel chunks (chunk k on core k mod cores).
enum class SplitKind { One, Rows, Channels };
struct Split {
  SplitKind kind = SplitKind::One;
  int cores = 1;
  int home = 0;
};

struct TensorState {
  bool in_l2 = false;
  bool in_dram = false;
  int64_t bytes = 0;
  int remaining_consumers = 0;
  int last_cmd = -1;   // command after which the tensor is complete (in L2 or in DRAM)
  int store_cmd = -1;  // last store to DRAM, if any
  Split where;         // multi-core: which cores' L2 hold it
};

class BufferState {
 public:
  // The tensor's state, or nullptr for one never mapped (a graph input: in DRAM from the start).
  TensorState* find(const std::string& name) {
    auto it = m_tensors.find(name);
    return it == m_tensors.end() ? nullptr : &it->second;
  }
  TensorState& at(const std::string& name) { return m_tensors.at(name); }

  // Records a tensor's state; on-chip ones are indexed so that the L2 scans below visit only
  // tensors that may still be live (linear, not quadratic, in the number of layers x batch groups).
  void put(const std::string& name, const TensorState& t) {
    m_tensors[name] = t;
    if (t.in_l2) m_l2_resident.insert(name);
  }

  // One consumer of `name` is done (when the mapper knows it).
  void consumed(const std::string& name) {
    if (TensorState* t = find(name); t && t->remaining_consumers > 0) t->remaining_consumers--;
  }

  // Bytes of the tensors live in L2, but for `except`.
  int64_t live_bytes(const std::set<std::string>& except) {
    int64_t b = 0;
    for_each_live([&](const std::string& name, TensorState& t) {
      if (!except.count(name)) b += t.bytes;
    });
    return b;
  }

  // The live on-chip tensor that has been in L2 longest (the earliest last command), but for
  // `except`: its name and state, or {"", nullptr}.
  std::pair<std::string, TensorState*> oldest_live(const std::set<std::string>& except) {
    TensorState* victim = nullptr;
    std::string name;
    for_each_live([&](const std::string& n, TensorState& t) {
      if (!except.count(n) && (!victim || t.last_cmd < victim->last_cmd)) victim = &t, name = n;
    });
    return {name, victim};
  }

 private:
  // Calls f(name, state) for each tensor live in L2, in name order; forgets the dead ones (a
  // tensor never comes back once stored or consumed: a new state goes through put).
  template <typename F>
  void for_each_live(F&& f) {
    for (auto it = m_l2_resident.begin(); it != m_l2_resident.end();) {
      TensorState& t = m_tensors.at(*it);
      if (!t.in_l2 || t.remaining_consumers <= 0) {
        it = m_l2_resident.erase(it);
        continue;
      }
      f(*it, t);
      ++it;
    }
  }

  std::map<std::string, TensorState> m_tensors;
  std::set<std::string> m_l2_resident;  // names of m_tensors that may be live in L2
};

}  // namespace npusim::mapping
