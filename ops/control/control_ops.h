// Registration of the control-flow ops, one file each (if_op.cc, loop_op.cc,
// scan_op.cc), called from RegisterControlFlowOps in control_flow.cc.
#pragma once

#include "ops/registry.h"

namespace aic {

void RegisterIfOp(OpRegistry& r);
void RegisterLoopOp(OpRegistry& r);
void RegisterScanOp(OpRegistry& r);

}  // namespace aic
