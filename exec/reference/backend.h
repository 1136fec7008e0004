// The reference interpreter as a backend (exec/common/executor.h): the
// oracle, and the one backend that can show every intermediate value.
#pragma once

#include "exec/common/executor.h"

namespace aic {

exec::Backend ReferenceBackend();

}  // namespace aic
