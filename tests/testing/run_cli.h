// Runs the built aic-onnx with arguments, as the CLI tests do: its exit code
// and what it printed (stdout and stderr together). One place, so every CLI
// test reads the binary alike.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace aic::testing {

struct CliResult {
  int code;
  std::string out;  // stdout and stderr
};

inline CliResult RunAicOnnx(const std::string& args) {
  std::string cmd = std::string(AIC_BINARY_DIR) + "/aic-onnx " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

}  // namespace aic::testing
