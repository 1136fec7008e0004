// (to be filled) Indexing op family.
#include "ops/registry.h"

namespace aic {

void RegisterIndexingOps(OpRegistry& r) {}

}  // namespace aic
