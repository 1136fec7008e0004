// (to be filled) MatMul op family.
#include "ops/registry.h"

namespace aic {

void RegisterMatMulOps(OpRegistry& r) {}

}  // namespace aic
