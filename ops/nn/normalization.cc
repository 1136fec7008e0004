// (to be filled) Normalization op family.
#include "ops/registry.h"

namespace aic {

void RegisterNormalizationOps(OpRegistry& r) {}

}  // namespace aic
