// (to be filled) Softmax op family.
#include "ops/registry.h"

namespace aic {

void RegisterSoftmaxOps(OpRegistry& r) {}

}  // namespace aic
