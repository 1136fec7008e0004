// (to be filled) ControlFlow op family.
#include "ops/registry.h"

namespace aic {

void RegisterControlFlowOps(OpRegistry& r) {}

}  // namespace aic
