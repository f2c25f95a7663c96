// Steps and closed forms of the collectives (docs/system.md#collectives).
#include <algorithm>
#include <cmath>

#include "models/interconnect/collectives.h"
#include "sim/ir/error.h"

namespace npusim::models {

namespace {

int ceil_log2(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

// Every member sends `part` bytes to the member `shift` places further, `count` times.
void ring_steps(std::vector<Step>& out, int n, double part, int count, int shift = 1) {
  for (int s = 0; s < count; ++s) {
    Step st;
    for (int i = 0; i < n; ++i) st.push_back({i, (i + shift) % n, part});
    out.push_back(std::move(st));
  }
}

// Binomial tree rooted at `root`: level l pairs members 2^l apart (relative to the root).
void tree_steps(std::vector<Step>& out, int n, double bytes, int root, bool towards_root) {
  const int levels = ceil_log2(n);
  for (int k = 0; k < levels; ++k) {
    const int l = towards_root ? k : levels - 1 - k;
    const int d = 1 << l;
    Step st;
    for (int r = 0; r + d < n; r += 2 * d) {
      const int a = (r + root) % n, b = (r + d + root) % n;
      st.push_back(towards_root ? Transfer{b, a, bytes} : Transfer{a, b, bytes});
    }
    out.push_back(std::move(st));
  }
}

void direct_step(std::vector<Step>& out, int n, double part) {
  Step st;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) st.push_back({i, j, part});
  out.push_back(std::move(st));
}

}  // namespace

std::vector<Step> collective_steps(const std::string& kind, CollectiveAlgo algo, int n, double size, int root) {
  std::vector<Step> r;
  if (n < 2 && kind != "send") return r;
  if (kind == "send") {
    r.push_back({{0, 1, size}});
  } else if (kind == "all_reduce") {
    if (algo == CollectiveAlgo::Ring) ring_steps(r, n, size / n, 2 * (n - 1));
    else if (algo == CollectiveAlgo::Tree) tree_steps(r, n, size, 0, true), tree_steps(r, n, size, 0, false);
    else direct_step(r, n, size / n), direct_step(r, n, size / n);  // reduce-scatter, then all-gather
  } else if (kind == "all_gather" || kind == "reduce_scatter") {
    if (algo == CollectiveAlgo::Direct) direct_step(r, n, size / n);
    else ring_steps(r, n, size / n, n - 1);
  } else if (kind == "all_to_all") {
    if (algo == CollectiveAlgo::Direct) direct_step(r, n, size / n);
    else
      for (int k = 1; k < n; ++k) ring_steps(r, n, size / n, 1, k);  // pairwise exchange
  } else if (kind == "broadcast") {
    if (algo == CollectiveAlgo::Tree) tree_steps(r, n, size, root, false);
    else {
      Step st;
      for (int i = 0; i < n; ++i)
        if (i != root) st.push_back({root, i, size});
      r.push_back(std::move(st));
    }
  } else if (kind == "reduce" || kind == "gather") {
    if (algo == CollectiveAlgo::Tree && kind == "reduce") tree_steps(r, n, size, root, true);
    else {
      Step st;
      for (int i = 0; i < n; ++i)
        if (i != root) st.push_back({i, root, kind == "gather" ? size / n : size});
      r.push_back(std::move(st));
    }
  } else {
    throw InternalError("no steps for collective " + kind);
  }
  return r;
}

double play_step(Network& net, const Step& step, const std::vector<int>& dev, double t0_ns) {
  double end = t0_ns;
  for (const Transfer& x : step)
    end = std::max(end, net.transfer(dev[static_cast<size_t>(x.src)], dev[static_cast<size_t>(x.dst)], t0_ns, x.bytes));
  return end;
}

double collective_time_ns(const std::string& kind, CollectiveAlgo algo, int n, double size, double b, double alpha) {
  const double steps_ring = n - 1;
  if (kind == "send") return size / b + alpha;
  if (n < 2) return 0;
  if (kind == "all_reduce") {
    if (algo == CollectiveAlgo::Ring) return 2 * steps_ring / n * size / b + 2 * steps_ring * alpha;
    if (algo == CollectiveAlgo::Tree) return 2 * ceil_log2(n) * (size / b + alpha);
    return 2 * steps_ring / n * size / b + 2 * alpha;
  }
  if (kind == "all_gather" || kind == "reduce_scatter") {
    if (algo == CollectiveAlgo::Direct) return steps_ring / n * size / b + alpha;
    return steps_ring / n * size / b + steps_ring * alpha;
  }
  if (kind == "all_to_all") {
    if (algo == CollectiveAlgo::Direct) return steps_ring / n * size / b + alpha;
    return steps_ring / n * size / b + steps_ring * alpha;
  }
  throw InternalError("no closed form for collective " + kind);
}

}  // namespace npusim::models
