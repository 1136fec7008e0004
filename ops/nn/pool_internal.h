// Registration entry points of the pooling family's files other than
// pool.cc; RegisterPoolOps calls them.
#pragma once

#include "ops/registry.h"

namespace aic {

void RegisterMaxUnpoolOp(OpRegistry& r);
void RegisterRoiPoolOps(OpRegistry& r);

}  // namespace aic
