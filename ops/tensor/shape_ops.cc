// (to be filled) Shape op family.
#include "ops/registry.h"

namespace aic {

void RegisterShapeOps(OpRegistry& r) {}

}  // namespace aic
