#include "ops/nn/rotary_params.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace aic {

absl::StatusOr<RotaryDims> ResolveRotaryDims(const std::vector<int64_t>& x_dims, const Node& n) {
  if (x_dims.size() != 3 && x_dims.size() != 4) return absl::InvalidArgumentError("input must be 3-D or 4-D");
  RotaryDims d;
  d.four_d = x_dims.size() == 4;
  d.batch = x_dims[0];
  d.seq = d.four_d ? x_dims[2] : x_dims[1];
  d.heads = d.four_d ? x_dims[1] : n.GetInt("num_heads", 0);
  if (d.heads <= 0 || (!d.four_d && x_dims[2] % d.heads != 0)) {
    return absl::InvalidArgumentError("a 3-D input needs num_heads dividing its hidden size");
  }
  d.head = d.four_d ? x_dims[3] : x_dims[2] / d.heads;
  d.rot = n.GetInt("rotary_embedding_dim", 0);
  if (d.rot == 0) d.rot = d.head;
  if (d.rot < 0 || d.rot > d.head || d.rot % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("rotary_embedding_dim ", d.rot, " must be even and at most head size ", d.head));
  }
  d.interleaved = n.GetInt("interleaved", 0) != 0;
  return d;
}

}  // namespace aic
