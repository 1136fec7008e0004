// OpenMP wait policy for the CPU executor. oneDNN and our kernels run on
// libgomp, whose workers spin at every barrier before they sleep: by default
// ~3 ms (with OMP_WAIT_POLICY unset), forever with ACTIVE. A worker that
// sleeps costs the next parallel region its wake-up, which on a virtual
// machine whose idle vCPU the host has halted can take far longer than the
// region (a 0.4 ms MatMul ran 0.37 or 0.85 ms a run, at random). Spin
// lengths between those extremes are the worst choice when another process
// shares the cores: the worker burns its share spinning and still sleeps.
// So: OMP_WAIT_POLICY=PASSIVE (sleep, not a yield loop, once the spin is
// over) with GOMP_SPINCOUNT=3000000, about 30 ms by libgomp's estimate of
// 100k spins a ms: longer than any gap inside a run, so workers stay awake
// from the first primitive to the last, and asleep soon after the last run.
// Measured on a 2-vCPU Zen 3 (`aic-onnx bench M --threads 2`, medians of 3
// alternating rounds, ms; ORT 1.32 in the same sitting):
//                        spin 1000   spin 10000   spin 3M   ACTIVE   ORT
//   idle   bert_small        6.84       5.94        5.89*     6.04     -
//          PP-OCRv4 rec     10.9          -          8.9      8.9     13.9
//   xz     bert_small       16.6       43.4        13.9     13.9     16.2
//   beside PP-OCRv4 rec     22.7          -         17.4     18.4     41.8
//          mobilenet_v3_l   12.5          -          9.3      9.2      9.2
//   1 busy bert_small       17.2          -         15.1       -        -
//   (* spin 100000). The user's OMP_WAIT_POLICY or GOMP_SPINCOUNT stands;
// libgomp reads them when it loads, so the only way to set them from inside
// is to re-execute the process once with them set.
#include <cstdlib>

#include "exec/cpu/plan.h"
#include "support/reexec.h"

namespace aic::cpu {

void ConfigureOpenMpWait() {
  // The user's choice stands.
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  std::vector<std::string> args = OwnArguments();
  if (args.empty()) return;
  // PASSIVE: sleep (not yield-loop) once the bounded spin is over.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  setenv("GOMP_SPINCOUNT", "3000000", 1);
  ExecWithArguments("/proc/self/exe", std::move(args));
  // execv failed: carry on with the default policy.
}

}  // namespace aic::cpu
