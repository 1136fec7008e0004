// Shared by the state-carrying sequence ops of recurrent LLM blocks (Mamba,
// Gated DeltaNet): causal_conv_with_state.cc and linear_attention.cc. Both
// take a past state and give the present one, so a decoder can run one token
// at a time; RegisterStateSpaceOps (linear_attention.cc) registers both.
#pragma once

#include "ops/registry.h"
#include "ops/util/dim_unify.h"

namespace aic {

void RegisterCausalConvWithStateOps(OpRegistry& r);  // causal_conv_with_state.cc

}  // namespace aic
