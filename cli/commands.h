// The aic-onnx subcommands. Each returns the process exit code: 0 success,
// 1 a check failed, 2 bad usage or bad input (after printing one line).
#pragma once

#include <string>
#include <vector>

namespace aic::cli {

int InfoCommand(const std::vector<std::string>& argv);
int RunCommand(const std::vector<std::string>& argv);
int BenchCommand(const std::vector<std::string>& argv);
int OptCommand(const std::vector<std::string>& argv);
int VerifyCommand(const std::vector<std::string>& argv);
int ReportCommand(const std::vector<std::string>& argv);

// Prints "aic-onnx: <message>" on stderr and returns 2.
int UsageError(const std::string& message);

}  // namespace aic::cli
