// `aic-onnx run`: executes a model through a session (the rewriter with the
// rules its backend runs, then the backend) on given or random inputs and
// writes each output as .npy.
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cuda_device.h"
#include "cli/inputs.h"
#include "cli/model_loading.h"
#include "exec/cpu/plan.h"
#include "onnx_io/npy.h"
#include "session/session.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx run IN.onnx [--input NAME=FILE.npy|FILE.pb]... [--random]
                    [--shape NAME=D,D,..] [--seed N] [--out DIR] [-O0..-O3|--no-opt]
                    [--dump-intermediates DIR] [--device reference|cpu|cuda] [--threads N] [--plan]

Runs the model and writes each output to DIR/<output name>.npy (default DIR:
./out), characters other than A-Za-z0-9._- in names replaced by '_'.
  --input NAME=FILE   feed a graph input from a .npy or TensorProto .pb file
  --random            feed every input not given with random data (normal
                      for floats, small integers otherwise); symbolic dims
                      are 1 unless --shape fixes them
  --dump-intermediates DIR   also write every node output there (reference)
  --device            reference (default): the reference interpreter;
                      cpu: the fast executor (oneDNN kernels, planned memory);
                      cuda: the GPU executor (needs a CUDA device; docs/CUDA.md)
  -O0..-O3            the rewriter's level before the backend compiles (default:
                      -O2 on cpu and cuda, which run the fused graph the rules
                      make; -O0 on reference, the oracle, which runs the model as
                      written); --no-opt is -O0
  --threads N         threads for --device cpu (default: the core count)
  --plan              print what the rewriter did and the compiled plan (one
                      line per step) to stderr
)";

absl::Status WriteOutputs(const std::vector<std::string>& names,
                          const std::vector<RuntimeValue>& values, const std::string& dir,
                          bool print) {
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < names.size(); ++i) {
    const RuntimeValue& v = values[i];
    std::string file = absl::StrCat(dir, "/", SanitizeFileName(names[i]), ".npy");
    if (!v.is_tensor()) {
      if (print) std::printf("  %s: %s (not written)\n", names[i].c_str(),
                             v.is_sequence() ? "sequence" : "empty optional");
      continue;
    }
    AIC_RETURN_IF_ERROR(WriteNpy(v.tensor, file));
    if (print) std::printf("  %s: %s -> %s\n", names[i].c_str(), v.tensor.DebugString(6).c_str(), file.c_str());
  }
  return absl::OkStatus();
}

}  // namespace

int RunCommand(const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv = argv_in;
  std::optional<int> opt_level = TakeOptLevel(argv);
  auto args = Args::Parse(argv, FlagSpec{{"--input", "--shape", "--seed", "--out",
                                          "--dump-intermediates", "--device", "--threads"},
                                         {"--help", "--random", "--plan"}});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("--help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args->positional().size() != 1) return UsageError("run takes one model file (see --help)");
  const std::string& path = args->positional()[0];
  std::string device = args->GetOr("--device", "reference");
  if (device == "cuda") HandOffToCudaCompanion();
  if (session::FindBackend(device) == nullptr) {
    return UsageError("--device " + device + " is not available in this build (use reference, cpu or cuda)");
  }
  std::string dump_dir = args->GetOr("--dump-intermediates", "");
  if (!dump_dir.empty() && device != "reference") return UsageError("--dump-intermediates needs --device reference");
  auto threads = args->GetInt("--threads", 0);
  if (!threads.ok() || *threads < 0) return UsageError("--threads takes a non-negative integer");
  auto seed = args->GetInt("--seed", 0);
  if (!seed.ok()) return UsageError(std::string(seed.status().message()));
  if (device == "cpu") cpu::ConfigureOpenMpWait();  // before any work: it may re-execute
  auto model = LoadVerifiedModel(path, LoadOptions{.infer_shapes = false});
  if (!model.ok()) return UsageError(std::string(model.status().message()));
  InputOptions input_options;
  input_options.random = args->Has("--random");
  input_options.seed = static_cast<uint64_t>(*seed);
  input_options.files = args->GetAll("--input");
  input_options.shapes = args->GetAll("--shape");
  auto feeds = BuildFeeds(**model, input_options);
  if (!feeds.ok()) return UsageError(path + ": " + std::string(feeds.status().message()));

  session::SessionOptions options;
  options.device = device;
  options.threads = static_cast<int>(*threads);
  options.opt_level = opt_level;
  auto session = OpenSession(path, std::move(*model), options);
  if (!session.ok()) return UsageError(std::string(session.status().message()));
  if (args->Has("--plan")) {
    auto summary = (*session)->Prepare(*feeds);
    if (!summary.ok()) return UsageError(path + ": " + std::string(summary.status().message()));
    std::fprintf(stderr, "graph: %s\n%s", (*session)->Describe().c_str(), summary->text.c_str());
  }
  exec::RunOptions run_options;
  absl::Status dump_status;
  exec::NodeObserver dump = [&](const Node& node, const std::vector<RuntimeValue>& outs) {
    std::vector<std::string> names;
    std::vector<RuntimeValue> values;
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output(i) == nullptr) continue;
      names.push_back(node.output(i)->name());
      values.push_back(outs[i]);
    }
    absl::Status s = WriteOutputs(names, values, dump_dir, false);
    if (dump_status.ok()) dump_status = s;
  };
  if (!dump_dir.empty()) run_options.observer = &dump;
  auto outputs = (*session)->Run(*feeds, run_options);
  if (!outputs.ok()) return UsageError(path + ": " + std::string(outputs.status().message()));
  if (!dump_status.ok()) return UsageError(std::string(dump_status.message()));
  std::vector<std::string> names;
  for (const session::IoInfo& o : (*session)->outputs()) names.push_back(o.name);
  std::printf("outputs:\n");
  if (absl::Status s = WriteOutputs(names, *outputs, args->GetOr("--out", "out"), true); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  return 0;
}

}  // namespace aic::cli
