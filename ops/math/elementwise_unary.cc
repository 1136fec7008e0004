// (to be filled) ElementwiseUnary op family.
#include "ops/registry.h"

namespace aic {

void RegisterElementwiseUnaryOps(OpRegistry& r) {}

}  // namespace aic
