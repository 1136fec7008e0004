// (to be filled) Conv op family.
#include "ops/registry.h"

namespace aic {

void RegisterConvOps(OpRegistry& r) {}

}  // namespace aic
