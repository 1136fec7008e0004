// RotaryEmbedding's geometry, read once for every user: the reference kernel
// (rotary_embedding.cc) and the CPU backend's lowering
// (exec/cpu/ops_native_rotary.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace aic {

struct RotaryDims {
  bool four_d = true;  // X is [B, heads, S, head]; else [B, S, heads·head] (num_heads)
  int64_t batch = 0, seq = 0, heads = 0, head = 0;
  int64_t rot = 0;           // rotated features per head: even, at most head
  bool interleaved = false;  // pairs (2k, 2k+1) rather than (k, k + rot/2)
};

// X's dims and the node's attributes; an error for a rank other than 3 or 4,
// a 3-D X without num_heads dividing its hidden size, or a bad
// rotary_embedding_dim.
absl::StatusOr<RotaryDims> ResolveRotaryDims(const std::vector<int64_t>& x_dims, const Node& n);

}  // namespace aic
