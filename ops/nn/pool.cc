// (to be filled) Pool op family.
#include "ops/registry.h"

namespace aic {

void RegisterPoolOps(OpRegistry& r) {}

}  // namespace aic
