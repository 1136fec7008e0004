// Registration entry points of the MatMul family's files other than
// matmul.cc; RegisterMatMulOps calls them.
#pragma once

#include "ops/registry.h"

namespace aic {

void RegisterEinsumOp(OpRegistry& r);

}  // namespace aic
