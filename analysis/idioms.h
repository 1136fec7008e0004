// Exporter idioms seen as the one op they spell: a GELU written as
// x·0.5·(1 + erf(x/√2)), a LayerNorm as its means and square root, a
// HardSwish or SiLU as their products. The recognising is the rewriter's:
// its fusion rules run on a copy of the model (nothing else: no folding of
// weights, no other fusions), and each fused node they leave stands for the
// original nodes between its inputs and its output. The report groups those
// nodes into one logical node with the fused op's traits; costs stay the
// sum of what the original nodes do.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "graph/model.h"
#include "ops/traits.h"

namespace aic::analysis {

struct Idiom {
  std::string op_type;               // the fused op: "Gelu", "LayerNormalization"...
  Traits traits;                     // that op's, on the fused node
  std::vector<const Node*> members;  // original nodes, in execution order; the last is the root
};

// By root (the original node whose output the fused op computes). Best
// effort: a model the rewriter cannot take has no idioms. `order`: the main
// graph's topological order.
absl::flat_hash_map<const Node*, Idiom> FindIdioms(const Model& model,
                                                   const std::vector<Node*>& order);

}  // namespace aic::analysis
