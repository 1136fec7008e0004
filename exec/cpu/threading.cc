// OpenMP wait policy for the CPU executor. oneDNN here runs on libgomp, whose
// workers spin at every barrier by default; on a small shared machine (two
// cores, other processes busy) a spinning worker steals the core its peer
// needs and a run of ~170 primitives can slow down tenfold. Passive waiting
// costs a few microseconds per primitive and degrades gracefully. libgomp
// reads OMP_WAIT_POLICY when it loads, so the only way to set it from inside
// is to re-execute the process once with the variable set.
#include <cstdlib>

#include "exec/cpu/plan.h"
#include "support/reexec.h"

namespace aic::cpu {

void EnsurePassiveOpenMpWait() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice stands
  std::vector<std::string> args = OwnArguments();
  if (args.empty()) return;
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  ExecWithArguments("/proc/self/exe", std::move(args));
  // execv failed: carry on with the default policy.
}

}  // namespace aic::cpu
