// (to be filled) Reduce op family.
#include "ops/registry.h"

namespace aic {

void RegisterReduceOps(OpRegistry& r) {}

}  // namespace aic
