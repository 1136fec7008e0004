// (to be filled) Misc op family.
#include "ops/registry.h"

namespace aic {

void RegisterMiscOps(OpRegistry& r) {}

}  // namespace aic
