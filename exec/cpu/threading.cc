// OpenMP wait policy for the CPU executor. oneDNN here runs on libgomp, whose
// workers spin at every barrier by default; on a small shared machine (two
// cores, other processes busy) a spinning worker steals the core its peer
// needs and a run of ~170 primitives can slow down tenfold. Passive waiting
// costs a few microseconds per primitive and degrades gracefully. libgomp
// reads OMP_WAIT_POLICY when it loads, so the only way to set it from inside
// is to re-execute the process once with the variable set.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "exec/cpu/plan.h"

namespace aic::cpu {

void EnsurePassiveOpenMpWait() {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;  // the user's choice stands
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (raw.empty()) return;
  std::vector<std::string> args;
  size_t start = 0;
  while (start < raw.size()) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    args.push_back(raw.substr(start, end - start));
    start = end + 1;
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv.data());
  // execv failed: carry on with the default policy.
}

}  // namespace aic::cpu
