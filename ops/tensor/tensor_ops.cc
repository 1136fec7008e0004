// (to be filled) Tensor op family.
#include "ops/registry.h"

namespace aic {

void RegisterTensorOps(OpRegistry& r) {}

}  // namespace aic
