// `aic-onnx info IN.onnx`: what a model is made of, at a glance.
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "graph/printer.h"
#include "cli/model_loading.h"

namespace aic::cli {

namespace {
constexpr char kHelp[] = R"(usage: aic-onnx info IN.onnx

Prints the model's inputs and outputs with their shapes (symbolic dims by
name), the op histogram, the initializer count and bytes, and the node list.
)";
}  // namespace

int UsageError(const std::string& message) {
  std::fprintf(stderr, "aic-onnx: %s\n", message.c_str());
  return 2;
}

int InfoCommand(const std::vector<std::string>& argv) {
  auto args = Args::Parse(argv, FlagSpec{{}, {"--help"}});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("--help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args->positional().size() != 1) return UsageError("info takes one model file (see --help)");
  const std::string& path = args->positional()[0];
  auto model = LoadVerifiedModel(path);  // shapes best effort: unknown ones print as '?'
  if (!model.ok()) return UsageError(std::string(model.status().message()));
  std::fputs(PrintModelSummary(**model, path).c_str(), stdout);
  return 0;
}

}  // namespace aic::cli
