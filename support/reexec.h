// Re-executing the running command: the process's own argument vector, and
// execv of it under another (or the same) executable. Used where a setting
// can only take effect at process start (libgomp's wait policy) and to hand
// `--device cuda` to the companion binary that carries the CUDA libraries.
#pragma once

#include <string>
#include <vector>

namespace aic {

// The argv this process was started with (from /proc/self/cmdline); empty
// when it cannot be read.
std::vector<std::string> OwnArguments();

// The folder of the running executable (from /proc/self/exe), "" if unknown.
std::string OwnExecutableDir();

// Replaces the process with `executable` run on `args` (args[0] included).
// Returns only when execv fails.
void ExecWithArguments(const std::string& executable, std::vector<std::string> args);

}  // namespace aic
