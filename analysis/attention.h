// Scaled dot-product attention as exporters write it, seen as one op:
//   P = Softmax(MatMul(Q, Kᵀ) [· s | / s] [+ mask ...]);  [P = Where(IsNaN(P), 0, P)];  Y = MatMul(P, V)
// (Kᵀ a Transpose of K, or K already transposed; masks and biases added with
// reshapes between, as a shifted window's). It mixes each query's values by
// weights that sum to one, the softmax its collapse.
// The rewriter's fuse_attention (rewrite/rules/attention_rules.cc) must prove
// far more before it rewrites a model (equal heads, a mask spanning the keys
// exactly, no float16 NaN guard) and so recognises fewer of these forms; when
// it covers them, the report takes attention from there as it takes the other
// idioms (analysis/idioms.h), and this matcher goes.
#pragma once

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/constants.h"
#include "graph/model.h"
#include "ops/traits.h"

namespace aic::analysis {

struct AttentionMatch {
  std::vector<const Node*> members;  // in execution order
  Traits traits;
};

// The attention whose softmax is `softmax`, if it is one. `readers`: every
// value's reading nodes (folded ones excluded).
std::optional<AttentionMatch> MatchAttention(
    const Model& model, const Node& softmax, const ConstantValues& constants,
    const absl::flat_hash_map<const Value*, std::vector<const Node*>>& readers,
    const absl::flat_hash_set<const Value*>& graph_outputs);

}  // namespace aic::analysis
