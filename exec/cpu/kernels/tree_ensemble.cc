// No AIC_KERNEL_CLONES here: the walk is a chain of dependent loads that
// wider vectors do not speed up, and the weight sums must round as the
// reference's plain double additions do.
#include "exec/cpu/kernels/tree_ensemble.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// The longest path from `root` in steps; nullopt on a cycle. Depth-first
// with an explicit stack: 0 unseen, 1 on the path, 2 done.
std::optional<int32_t> Depth(const PackedForest& p, int32_t root, std::vector<uint8_t>& state,
                             std::vector<int32_t>& depth) {
  std::vector<std::pair<int32_t, int>> stack = {{root, 0}};
  if (state[static_cast<size_t>(root)] == 2) return depth[static_cast<size_t>(root)];
  state[static_cast<size_t>(root)] = 1;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const size_t at = static_cast<size_t>(node);
    if (p.leaf_of[at] >= 0 || next == 2) {
      int32_t d = 0;
      if (p.leaf_of[at] < 0) {
        for (int b = 0; b < 2; ++b) d = std::max(d, 1 + depth[static_cast<size_t>(p.nodes_d[at].child[b])]);
      }
      depth[at] = d;
      state[at] = 2;
      stack.pop_back();
      continue;
    }
    const int32_t child = p.nodes_d[at].child[next++];
    if (state[static_cast<size_t>(child)] == 1) return std::nullopt;
    if (state[static_cast<size_t>(child)] == 0) {
      state[static_cast<size_t>(child)] = 1;
      stack.push_back({child, 0});
    }
  }
  return depth[static_cast<size_t>(root)];
}

}  // namespace

std::optional<PackedForest> PackForest(const Forest& f) {
  constexpr size_t kMaxIndex = static_cast<size_t>(std::numeric_limits<int32_t>::max());
  if (f.nodes.size() >= kMaxIndex || f.weights.size() >= kMaxIndex) return std::nullopt;
  PackedForest p;
  p.n_targets = f.n_targets;
  p.max_feature = f.max_feature;
  p.weights = f.weights;
  const size_t n = f.nodes.size();
  p.nodes_d.resize(n);
  p.modes.resize(n);
  p.missing_true.resize(n);
  p.leaf_of.assign(n, -1);
  std::optional<NodeMode> mode;
  bool uniform = true;
  for (size_t i = 0; i < n; ++i) {
    const TreeNode& t = f.nodes[i];
    PackedTreeNode<double>& node = p.nodes_d[i];
    p.modes[i] = t.mode;
    p.missing_true[i] = t.missing_true ? 1 : 0;
    if (t.mode == NodeMode::kLeaf) {
      p.leaf_of[i] = static_cast<int32_t>(p.leaves.size());
      // ScoreRow counts only a leaf's first weight when there is one target.
      p.leaves.push_back({static_cast<int32_t>(t.first_weight),
                          static_cast<int32_t>(f.n_targets == 1 ? 1 : t.weight_count)});
      node.child[0] = node.child[1] = static_cast<int32_t>(i);
      continue;
    }
    if (t.mode == NodeMode::kMember || t.feature > std::numeric_limits<int32_t>::max()) return std::nullopt;
    node.split = t.split;
    node.feature = static_cast<int32_t>(t.feature);
    node.child[0] = static_cast<int32_t>(t.false_child);
    node.child[1] = static_cast<int32_t>(t.true_child);
    p.float_splits = p.float_splits && (std::isnan(t.split) || static_cast<double>(static_cast<float>(t.split)) == t.split);
    if (!mode) mode = t.mode;
    uniform = uniform && !t.missing_true && t.mode == *mode;
  }
  if (uniform && mode) p.uniform = mode;
  std::vector<uint8_t> state(n, 0);
  std::vector<int32_t> depth(n, 0);
  for (int64_t root : f.roots) {
    p.roots.push_back(static_cast<int32_t>(root));
    std::optional<int32_t> d = Depth(p, static_cast<int32_t>(root), state, depth);
    if (!d) return std::nullopt;
    p.depths.push_back(*d);
  }
  // Dense leaves: one weight per target, in target order.
  p.dense = true;
  for (const PackedLeaf& l : p.leaves) {
    if (l.count != f.n_targets) {
      p.dense = false;
      break;
    }
    for (int32_t k = 0; k < l.count && p.dense; ++k) {
      p.dense = f.weights[static_cast<size_t>(l.first_weight + k)].target == k;
    }
  }
  if (p.dense) {
    for (const PackedLeaf& l : p.leaves) {
      for (int32_t k = 0; k < l.count; ++k) {
        const double w = f.weights[static_cast<size_t>(l.first_weight + k)].value;
        p.float_splits = p.float_splits && static_cast<double>(static_cast<float>(w)) == w;
        p.dense_d.push_back(w);
      }
    }
    if (p.float_splits) {
      p.dense_f.assign(p.dense_d.begin(), p.dense_d.end());
      p.dense_d.clear();
    }
  }
  if (p.float_splits) {
    p.nodes_f.resize(n);
    for (size_t i = 0; i < n; ++i) {
      p.nodes_f[i] = {static_cast<float>(p.nodes_d[i].split), p.nodes_d[i].feature,
                      {p.nodes_d[i].child[0], p.nodes_d[i].child[1]}};
    }
    p.nodes_d.clear();
  }
  return p;
}

namespace {

// TakesTrue of tree_walk.cc, for one fixed mode without missing tracking.
// A leaf's compare is harmless: both its children are itself.
template <NodeMode M>
struct FixedMode {
  template <typename S>
  bool operator()(const PackedForest&, int32_t, S x, S split) const {
    if constexpr (M == NodeMode::kLeq) return x <= split;
    if constexpr (M == NodeMode::kLt) return x < split;
    if constexpr (M == NodeMode::kGte) return x >= split;
    if constexpr (M == NodeMode::kGt) return x > split;
    if constexpr (M == NodeMode::kEq) return x == split;
    if constexpr (M == NodeMode::kNeq) return x != split;
    return false;
  }
};

struct AnyMode {
  template <typename S>
  bool operator()(const PackedForest& f, int32_t node, S x, S split) const {
    const size_t at = static_cast<size_t>(node);
    if (f.missing_true[at] && std::isnan(x)) return true;
    switch (f.modes[at]) {
      case NodeMode::kLeq: return x <= split;
      case NodeMode::kLt: return x < split;
      case NodeMode::kGte: return x >= split;
      case NodeMode::kGt: return x > split;
      case NodeMode::kEq: return x == split;
      case NodeMode::kNeq: return x != split;
      default: return false;
    }
  }
};

template <Aggregate A>
void AddLeaf(const PackedForest& f, int32_t leaf, TargetScores& s) {
  const PackedLeaf& l = f.leaves[static_cast<size_t>(leaf)];
  for (int32_t k = 0; k < l.count; ++k) {
    const LeafWeight& w = f.weights[static_cast<size_t>(l.first_weight + k)];
    double& v = s.value[static_cast<size_t>(w.target)];
    char& has = s.has[static_cast<size_t>(w.target)];
    if constexpr (A == Aggregate::kMin) {
      v = has ? std::min(v, w.value) : w.value;
    } else if constexpr (A == Aggregate::kMax) {
      v = has ? std::max(v, w.value) : w.value;
    } else {
      v += w.value;
    }
    has = 1;
  }
}

// v = aggregate(v, w) for one target; `first` when no weight has reached v yet.
template <Aggregate A>
double Combine(double v, double w, bool first) {
  if constexpr (A == Aggregate::kMin) return first ? w : std::min(v, w);
  if constexpr (A == Aggregate::kMax) return first ? w : std::max(v, w);
  return v + w;
}

// kG rows (consecutive in `rows`) from `root` down `depth` steps; the
// fixed count lets their indices stay in registers, so kG independent load
// chains overlap.
constexpr int64_t kWalkGroup = 16;

template <int64_t kG, typename S, typename Take>
inline void Walk(const PackedForest& f, const PackedTreeNode<S>* nodes, const float* rows, int64_t features,
                 int32_t root, int32_t depth, int32_t* out, Take take) {
  int32_t at[kG];
#pragma GCC unroll 16
  for (int64_t i = 0; i < kG; ++i) at[i] = root;
  for (int32_t d = 0; d < depth; ++d) {
#pragma GCC unroll 16
    for (int64_t i = 0; i < kG; ++i) {
      const PackedTreeNode<S>& n = nodes[at[i]];
      at[i] = n.child[take(f, at[i], static_cast<S>(rows[i * features + n.feature]), n.split) ? 1 : 0];
    }
  }
#pragma GCC unroll 16
  for (int64_t i = 0; i < kG; ++i) out[i] = at[i];
}

// Rows [begin, begin + count), count ≤ kTreeRowBlock, through every tree:
// the rows step through one tree together, so their loads overlap.
template <Aggregate A, typename S, typename Take>
void ScoreBlock(const PackedForest& f, const PackedTreeNode<S>* nodes, const S* dense, const float* x,
                int64_t features, int64_t begin, int64_t count, TargetScores* scores, double* acc, Take take) {
  const int64_t nt = f.n_targets;
  for (int64_t i = 0; i < count; ++i) {
    scores[i].value.assign(static_cast<size_t>(nt), 0.0);
    scores[i].has.assign(static_cast<size_t>(nt), 0);
  }
  std::fill(acc, acc + count * nt, 0.0);
  const float* rows = x + begin * features;
  int32_t at[kTreeRowBlock];
  for (size_t t = 0; t < f.roots.size(); ++t) {
    const int32_t root = f.roots[t];
    const int32_t depth = f.depths[t];
    for (int64_t g = 0; g < count; g += kWalkGroup) {
      if (count - g >= kWalkGroup) {
        Walk<kWalkGroup>(f, nodes, rows + g * features, features, root, depth, at + g, take);
      } else {
        for (int64_t i = g; i < count; ++i) Walk<1>(f, nodes, rows + i * features, features, root, depth, at + i, take);
      }
    }
    if (dense == nullptr) {
      for (int64_t i = 0; i < count; ++i) AddLeaf<A>(f, f.leaf_of[static_cast<size_t>(at[i])], scores[i]);
      continue;
    }
    // Every leaf has all targets, so after the first tree every target has a value.
    const bool first = t == 0;
    for (int64_t i = 0; i < count; ++i) {
      const S* w = dense + static_cast<int64_t>(f.leaf_of[static_cast<size_t>(at[i])]) * nt;
      double* v = acc + i * nt;
      for (int64_t k = 0; k < nt; ++k) v[k] = Combine<A>(v[k], static_cast<double>(w[k]), first);
    }
  }
  if (dense == nullptr) return;
  for (int64_t i = 0; i < count; ++i) {
    std::copy(acc + i * nt, acc + (i + 1) * nt, scores[i].value.begin());
    std::fill(scores[i].has.begin(), scores[i].has.end(), 1);
  }
}

template <Aggregate A, typename S, typename Take>
void ScoreAll(const PackedForest& f, const PackedTreeNode<S>* nodes, const float* x, int64_t rows, int64_t features,
              const std::function<void(int64_t, TargetScores&)>& finish, Take take) {
  const int64_t blocks = (rows + kTreeRowBlock - 1) / kTreeRowBlock;
  int64_t steps = 0;
  for (int32_t d : f.depths) steps += d + 1;
  const S* dense = nullptr;
  if constexpr (std::is_same_v<S, float>) {
    if (f.dense) dense = f.dense_f.data();
  } else {
    if (f.dense) dense = f.dense_d.data();
  }
  ParallelFor(blocks, kTreeRowBlock * steps, [&](int64_t b) {
    // Per thread and kept between runs: two vectors a row, allocated anew
    // for every block, were a third of a single depth-12 tree's run over 256
    // rows (malloc and free; 1.9x ORT's time).
    thread_local TargetScores scores[kTreeRowBlock];
    thread_local std::vector<double> acc;
    acc.resize(static_cast<size_t>(kTreeRowBlock * f.n_targets));
    const int64_t begin = b * kTreeRowBlock;
    const int64_t count = std::min(kTreeRowBlock, rows - begin);
    ScoreBlock<A>(f, nodes, dense, x, features, begin, count, scores, acc.data(), take);
    for (int64_t i = 0; i < count; ++i) finish(begin + i, scores[i]);
  });
}

template <Aggregate A, typename Take>
void ScoreWith(const PackedForest& f, const float* x, int64_t rows, int64_t features,
               const std::function<void(int64_t, TargetScores&)>& finish, Take take) {
  if (f.float_splits) return ScoreAll<A>(f, f.nodes_f.data(), x, rows, features, finish, take);
  ScoreAll<A>(f, f.nodes_d.data(), x, rows, features, finish, take);
}

template <Aggregate A>
void ScoreAgg(const PackedForest& f, const float* x, int64_t rows, int64_t features,
              const std::function<void(int64_t, TargetScores&)>& finish) {
  switch (f.uniform.value_or(NodeMode::kMember)) {
    case NodeMode::kLeq: return ScoreWith<A>(f, x, rows, features, finish, FixedMode<NodeMode::kLeq>());
    case NodeMode::kLt: return ScoreWith<A>(f, x, rows, features, finish, FixedMode<NodeMode::kLt>());
    case NodeMode::kGte: return ScoreWith<A>(f, x, rows, features, finish, FixedMode<NodeMode::kGte>());
    case NodeMode::kGt: return ScoreWith<A>(f, x, rows, features, finish, FixedMode<NodeMode::kGt>());
    default: return ScoreWith<A>(f, x, rows, features, finish, AnyMode());
  }
}

}  // namespace

void ScoreForestRows(const PackedForest& f, Aggregate agg, const float* x, int64_t rows, int64_t features,
                     const std::function<void(int64_t row, TargetScores& scores)>& finish) {
  switch (agg) {
    case Aggregate::kMin: return ScoreAgg<Aggregate::kMin>(f, x, rows, features, finish);
    case Aggregate::kMax: return ScoreAgg<Aggregate::kMax>(f, x, rows, features, finish);
    default: return ScoreAgg<Aggregate::kSum>(f, x, rows, features, finish);
  }
}

}  // namespace aic::cpu::kernels
