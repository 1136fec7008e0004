// Decision forests on f32 rows: the decoded Forest (ops/ml/tree_walk.h)
// repacked at compile time into one flat array of 16-byte nodes (split,
// feature, both children; leaves loop to themselves), so a walk is a fixed
// number of dependent loads with one compare each and no branch. Rows go in blocks of kTreeRowBlock walked through one tree in
// lockstep (their load chains overlap), blocks spread over threads. Each
// row's leaf weights are summed in tree order with the reference's own
// arithmetic (doubles, ScoreRow's MIN/MAX and single-target rules), so the
// per-row TargetScores are exactly ScoreRow's; the op's finishing (base
// values, transforms, labels) is ops/ml/tree_models.h's, run by the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ops/ml/tree_walk.h"

namespace aic::cpu::kernels {

inline constexpr int64_t kTreeRowBlock = 32;

// A leaf is a node whose children are itself (feature 0, any split), so a
// walk takes exactly its tree's depth in steps and never tests for leaves.
template <typename Split>
struct PackedTreeNode {
  Split split = 0;
  int32_t feature = 0;
  int32_t child[2] = {0, 0};  // [false, true]
};

struct PackedLeaf {
  int32_t first_weight = 0;
  int32_t count = 0;  // weights that count: 1 for a single-target forest
};

struct PackedForest {
  // Splits and dense leaf values as floats when every one is a float
  // (skl2onnx's, opset 1): an f32 x then compares the same as in double,
  // and a float weight adds the same double; else both as doubles.
  bool float_splits = true;
  std::vector<PackedTreeNode<float>> nodes_f;
  std::vector<PackedTreeNode<double>> nodes_d;
  std::vector<NodeMode> modes;     // per node (kLeaf for leaves)
  std::vector<uint8_t> missing_true;  // per node
  std::vector<int32_t> leaf_of;    // per node: its leaf, or -1
  std::vector<PackedLeaf> leaves;
  std::vector<int32_t> roots;   // node indices
  std::vector<int32_t> depths;  // per tree: the longest path, in steps
  std::vector<LeafWeight> weights;
  // Every leaf has one weight per target in target order (skl2onnx's
  // forests, every single-target forest): leaf l's weights are
  // dense_*[l·n_targets ...], read in order without indices.
  bool dense = false;
  std::vector<float> dense_f;
  std::vector<double> dense_d;
  int64_t n_targets = 0;
  int64_t max_feature = -1;
  // Every interior node has this mode and no missing-value tracking: the
  // walk compares without a switch.
  std::optional<NodeMode> uniform;
};

// Nullopt when the forest does not fit 32-bit indices, a tree has a cycle
// (the reference kernel then reports it) or a set-membership split.
std::optional<PackedForest> PackForest(const Forest& f);

// For rows [0, rows) of x [rows, features] (features > max_feature): sums
// each row's leaves like ScoreRow and calls finish(row, scores). finish is
// called from worker threads, each row once.
void ScoreForestRows(const PackedForest& f, Aggregate agg, const float* x, int64_t rows, int64_t features,
                     const std::function<void(int64_t row, TargetScores& scores)>& finish);

}  // namespace aic::cpu::kernels
