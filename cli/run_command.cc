// `aic-onnx run`: executes a model with the reference executor on given or
// random inputs and writes each output as .npy.
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cuda_device.h"
#include "cli/inputs.h"
#include "exec/cpu/plan.h"
#include "exec/reference/executor.h"
#include "graph/verify.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx run IN.onnx [--input NAME=FILE.npy|FILE.pb]... [--random]
                    [--shape NAME=D,D,..] [--seed N] [--out DIR]
                    [--dump-intermediates DIR] [--device reference|cpu|cuda] [--threads N]

Runs the model and writes each output to DIR/<output name>.npy (default DIR:
./out), characters other than A-Za-z0-9._- in names replaced by '_'.
  --input NAME=FILE   feed a graph input from a .npy or TensorProto .pb file
  --random            feed every input not given with random data (normal
                      for floats, small integers otherwise); symbolic dims
                      are 1 unless --shape fixes them
  --dump-intermediates DIR   also write every node output there
  --device            reference (default): the reference interpreter;
                      cpu: the fast executor (oneDNN kernels, planned memory);
                      cuda: the GPU executor (needs a CUDA device; docs/CUDA.md)
  --threads N         threads for --device cpu (default: the core count)
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

int RunCommand(const std::vector<std::string>& argv) {
  auto args = Args::Parse(argv, FlagSpec{{"--input", "--shape", "--seed", "--out",
                                          "--dump-intermediates", "--device", "--threads"},
                                         {"--help", "--random"}});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("--help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args->positional().size() != 1) return UsageError("run takes one model file (see --help)");
  const std::string& path = args->positional()[0];
  std::string device = args->GetOr("--device", "reference");
  if (device == "cuda") HandOffToCudaCompanion();
  if (device != "reference" && device != "cpu" && device != "cuda") {
    return UsageError("--device " + device + " is not available in this build (use reference, cpu or cuda)");
  }
  auto threads = args->GetInt("--threads", 0);
  if (!threads.ok() || *threads < 0) return UsageError("--threads takes a non-negative integer");
  auto model = LoadModel(path);
  if (!model.ok()) return UsageError(std::string(model.status().message()));
  if (absl::Status s = Verify(*(*model)->graph); !s.ok()) {
    return UsageError(path + ": " + std::string(s.message()));
  }
  auto seed = args->GetInt("--seed", 0);
  if (!seed.ok()) return UsageError(std::string(seed.status().message()));
  InputOptions input_options;
  input_options.random = args->Has("--random");
  input_options.seed = static_cast<uint64_t>(*seed);
  input_options.files = args->GetAll("--input");
  input_options.shapes = args->GetAll("--shape");
  auto feeds = BuildFeeds(**model, input_options);
  if (!feeds.ok()) return UsageError(path + ": " + std::string(feeds.status().message()));

  std::vector<std::string> names;
  for (const Value* v : (*model)->graph->outputs()) names.push_back(v->name());
  std::string out_dir = args->GetOr("--out", "out");
  if (device == "cuda") {
    if (args->Has("--dump-intermediates")) return UsageError("--dump-intermediates needs --device reference");
    auto outputs = RunOnCuda(**model, *feeds);
    if (!outputs.ok()) return UsageError(path + ": " + std::string(outputs.status().message()));
    std::printf("outputs:\n");
    if (absl::Status s = WriteOutputs(names, *outputs, out_dir, true); !s.ok()) return UsageError(std::string(s.message()));
    return 0;
  }
  if (device == "cpu") {
    cpu::ConfigureOpenMpWait();
    if (args->Has("--dump-intermediates")) return UsageError("--dump-intermediates needs --device reference");
    cpu::CpuOptions cpu_options;
    cpu_options.threads = static_cast<int>(*threads);
    cpu::CpuExecutor cpu_executor(**model, cpu_options);
    auto outputs = cpu_executor.Run(*feeds);
    if (!outputs.ok()) return UsageError(path + ": " + std::string(outputs.status().message()));
    std::printf("outputs:\n");
    if (absl::Status s = WriteOutputs(names, *outputs, out_dir, true); !s.ok()) {
      return UsageError(std::string(s.message()));
    }
    return 0;
  }

  ReferenceExecutor executor(**model);
  ReferenceRunOptions run_options;
  std::string dump_dir = args->GetOr("--dump-intermediates", "");
  absl::Status dump_status;
  if (!dump_dir.empty()) {
    run_options.on_node_done = [&](const Node& node, const std::vector<RuntimeValue>& outs) {
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
  }
  auto outputs = executor.Run(*feeds, run_options);
  if (!outputs.ok()) return UsageError(path + ": " + std::string(outputs.status().message()));
  if (!dump_status.ok()) return UsageError(std::string(dump_status.message()));
  std::printf("outputs:\n");
  if (absl::Status s = WriteOutputs(names, *outputs, out_dir, true); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  return 0;
}

}  // namespace aic::cli
