// (to be filled) Activation op family.
#include "ops/registry.h"

namespace aic {

void RegisterActivationOps(OpRegistry& r) {}

}  // namespace aic
