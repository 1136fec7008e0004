// OpenMP wait policy for the CPU executor. oneDNN here runs on libgomp, whose
// workers by default spin for ~3 ms at every barrier before sleeping. On a
// small shared machine (two cores, other processes busy) a spinning worker
// steals the core its peer needs and a run of ~200 primitives can slow down
// tenfold or more; sleeping at once (OMP_WAIT_POLICY=PASSIVE) degrades
// gracefully but costs ~40 µs of wake-up per primitive, which made 2 threads
// slower than 1 on an idle machine. A short bounded spin, GOMP_SPINCOUNT=1000
// (~10 µs; libgomp counts ~100k spins per ms), covers the gaps between
// back-to-back primitives and keeps the loss under contention bounded.
// Measured, 2 threads, medians (`aic-onnx bench M --threads 2 --json` with
// the variables set), idle machine / another process busy on one core:
//   PP-OCRv4 rec  passive 14.1 / 9.9-10.2 ms   spin 1000 4.4 / 17-21 ms
//                 spin 10000 4.2 / 12.6-117 ms (collapses when the neighbour
//                 is memory-heavy, e.g. xz)
//   encoder       passive 6.1 / 7.0 ms         spin 1000 3.4 / 9.4 ms
// Where the cores are shared, OMP_WAIT_POLICY=PASSIVE is the safer setting;
// libgomp reads these variables when it loads, so the only way to set them
// from inside is to re-execute the process once with them set.
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
  setenv("GOMP_SPINCOUNT", "1000", 1);
  ExecWithArguments("/proc/self/exe", std::move(args));
  // execv failed: carry on with the default policy.
}

}  // namespace aic::cpu
