// The values a report can know before running anything: initializers (unless
// a graph input may override them) and the outputs of nodes whose inputs are
// all known (Constant nodes, a weight's Transpose or Cast), folded once
// through ops/evaluate.h, the mechanism the rewriter and the backends use. Folded nodes are weight plumbing, not compute: the
// report does not list them, and a MatMul fed by one sees a constant weight.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "graph/model.h"
#include "ops/evaluate.h"

namespace aic::analysis {

class ConstantValues {
 public:
  // Folds the main graph in topological order. A node with inputs folds only
  // when they hold at most `max_input_elements` in total (the reference
  // kernels are simple, not fast); nodes without inputs (Constant) always do.
  // `order`: the main graph's topological order.
  static ConstantValues Fold(const Model& model, const std::vector<Node*>& order,
                             int64_t max_input_elements = int64_t{1} << 22);

  // The value of `v` when it is known statically, else nullptr.
  const Tensor* Find(const Value* v) const;
  // Whether every output of `n` is known statically (the node is not listed).
  bool IsFolded(const Node* n) const { return folded_.contains(n); }
  // The stored tensors a known value is computed from: itself for an
  // initializer, the initializers (and Constant node outputs) behind a folded
  // value: a weight's Transpose or Cast, a position table's Slice. Learned
  // parameters are counted by these, so a table sliced to the sequence
  // counts whole and once, however many nodes read a copy of it. A value
  // computed into more elements than its sources hold has none (Fold).
  std::vector<const Value*> Origins(const Value* v) const;

 private:
  absl::flat_hash_map<const Value*, Tensor> values_;
  absl::flat_hash_map<const Value*, std::vector<const Value*>> origins_;
  absl::flat_hash_set<const Node*> folded_;
};

}  // namespace aic::analysis
