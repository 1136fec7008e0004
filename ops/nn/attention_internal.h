// Shared by the attention family's files (attention.cc, rotary_embedding.cc,
// flex_attention.cc): rounding to an intermediate tensor's dtype, and the
// registration entry points RegisterAttentionOps calls.
#pragma once

#include "graph/dtype.h"
#include "ops/registry.h"

namespace aic {

// x rounded to the precision of `t` (float, float16, bfloat16; double and
// other types: unchanged). The reference kernels of this family compute in
// double but round every intermediate tensor to the type the op's function
// body gives it, so float16/bfloat16 results match numpy's step-by-step
// arithmetic instead of being one rounding more accurate than the oracle.
double RoundToDType(DType t, double x);

void RegisterRotaryEmbeddingOps(OpRegistry& r);  // rotary_embedding.cc
void RegisterFlexAttentionOps(OpRegistry& r);     // flex_attention.cc

}  // namespace aic
