// Slices (or constant-index Gathers) of one tensor along one axis that
// together cover all of it: q, k and v cut from one projection, the two
// halves of a rotary embedding's rotate_half, a shifted window's roll, the
// even and odd rows of a patch merge. Each piece alone discards the rest;
// together they discard nothing, so the report lists them as one Split.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/constants.h"
#include "graph/model.h"
#include "ops/traits.h"

namespace aic::analysis {

// Each partition's pieces in execution order, keyed by the first.
absl::flat_hash_map<const Node*, std::vector<const Node*>> Partitions(
    const Model& model, const std::vector<Node*>& order, const ConstantValues& constants);

// What a partition is, as one op (the facts of ONNX's Split, which its
// pieces compute together).
Traits PartitionTraits(size_t pieces);

}  // namespace aic::analysis
