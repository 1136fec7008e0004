// The fast CPU executor as a backend (exec/common/executor.h).
#pragma once

#include "exec/common/executor.h"
#include "exec/cpu/plan.h"

namespace aic::cpu {

// `options` are the CPU-specific knobs (post-op fusion, blocked layouts); the
// thread count comes from the session's BackendOptions.
exec::Backend CpuBackend(const CpuOptions& options = {});

}  // namespace aic::cpu
