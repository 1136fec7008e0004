// aic-onnx: ONNX graph optimizer, model analyzer and runtime.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/version.h"
#ifdef AIC_HAVE_CUDA
#include "exec/cuda/backend.h"
#include "session/session.h"
#endif

namespace {

constexpr char kUsage[] = R"(aic-onnx: ONNX graph optimizer, model analyzer and runtime

usage: aic-onnx COMMAND [options]

commands:
  info   IN.onnx          inputs/outputs with shapes, op histogram, node list
  run    IN.onnx ...      run the model on the CPU (--device reference|cpu)
  bench  IN.onnx ...      time the model on the fast CPU executor
  opt    IN.onnx OUT.onnx optimize (e-graph rewriter), write standard ONNX, verify
  verify A.onnx B.onnx    compare two models' outputs on the same inputs
  report IN.onnx ...      the seed's analysis: per-node semantics and cost, collapse
                          points, weight spectra, activation ratios (--calib)

Run 'aic-onnx COMMAND --help' for a command's options; 'aic-onnx --version'.
Exit codes: 0 success, 1 a check failed, 2 bad usage or bad input.
)";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("aic-onnx %s\n", aic::cli::VersionString().c_str());
    return 0;
  }
#ifdef AIC_HAVE_CUDA
  // The companion binary (cli/cuda_device.h): its sessions may pick "cuda".
  aic::session::RegisterBackend(aic::cuda::CudaBackend());
#endif
  std::string command = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (command == "info") return aic::cli::InfoCommand(rest);
  if (command == "run") return aic::cli::RunCommand(rest);
  if (command == "bench") return aic::cli::BenchCommand(rest);
  if (command == "opt") return aic::cli::OptCommand(rest);
  if (command == "verify") return aic::cli::VerifyCommand(rest);
  if (command == "report") return aic::cli::ReportCommand(rest);
  return aic::cli::UsageError("unknown command '" + command + "' (see aic-onnx --help)");
}
