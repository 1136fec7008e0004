// Dropout's registration entry point (ops/nn/dropout.cc), called from
// RegisterNormalizationOps.
#pragma once

#include "ops/registry.h"

namespace aic {

void RegisterDropoutOp(OpRegistry& r);

}  // namespace aic
