// (to be filled) Sequence op family.
#include "ops/registry.h"

namespace aic {

void RegisterSequenceOps(OpRegistry& r) {}

}  // namespace aic
