// (to be filled) Rnn op family.
#include "ops/registry.h"

namespace aic {

void RegisterRnnOps(OpRegistry& r) {}

}  // namespace aic
