// The control-flow family: If, Loop and Scan, ops that run subgraph bodies
// through the executor's SubgraphRunner. One file per op; this one only
// registers them.
#include "ops/control/control_ops.h"
#include "ops/registry.h"

namespace aic {

void RegisterControlFlowOps(OpRegistry& r) {
  RegisterIfOp(r);
  RegisterLoopOp(r);
  RegisterScanOp(r);
}

}  // namespace aic
