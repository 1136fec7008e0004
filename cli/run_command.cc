// `aic-onnx run`: executes a model through a session (the rewriter with the
// rules its backend runs, then the backend) on given or random inputs and
// writes each output as .npy.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cuda_device.h"
#include "cli/inputs.h"
#include "cli/model_loading.h"
#include "exec/cpu/plan.h"
#include "onnx_io/npy.h"
#include "onnx_io/save.h"
#include "ops/util/float_convert.h"
#include "session/session.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx run IN.onnx [--input NAME=FILE.npy|FILE.pb]... [--random]
                    [--shape NAME=D,D,..] [--seed N] [--out DIR] [-O0..-O3|--no-opt]
                    [--dump-intermediates DIR] [--device reference|cpu|cuda] [--threads N] [--plan]

Runs the model and writes each output to DIR/<output name>.npy (default DIR:
./out), characters other than A-Za-z0-9._- in names replaced by '_'. Strings
are numpy unicode arrays (<U); bfloat16, float8 and 4/2-bit outputs, which
numpy has no dtype for, are written exactly as <name>.pb (TensorProto) and,
widened to float32/int8/uint8, as <name>.npy. A sequence output is a folder
<name>/ of 0.npy, 1.npy, ...; a sequence of maps (ZipMap) is <name>.json,
a list of {key: value} objects; an empty optional writes nothing.
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

// numpy has no dtype for bfloat16, the float8 types and the 4- and 2-bit
// types: those outputs are written exactly as a TensorProto NAME.pb, and as
// NAME.npy holding the same values widened (float32 for the floating types,
// int8/uint8 for the small integers: every value representable).
bool HasNumpyDType(DType t) { return t != DType::kBFloat16 && !IsOpaqueStorageOnly(t); }

DType NumpyStandIn(DType t) {
  if (t == DType::kInt4 || t == DType::kInt2) return DType::kInt8;
  if (t == DType::kUint4 || t == DType::kUint2) return DType::kUint8;
  return DType::kFloat;
}

// Writes one tensor as BASE.npy (and BASE.pb where numpy lacks its dtype);
// returns the files written, for the summary line.
absl::StatusOr<std::string> WriteTensorFiles(const Tensor& t, const std::string& name, const std::string& base) {
  if (HasNumpyDType(t.dtype())) {
    AIC_RETURN_IF_ERROR(WriteNpy(t, base + ".npy"));
    return base + ".npy";
  }
  AIC_RETURN_IF_ERROR(SaveTensorProto(t, name, base + ".pb"));
  AIC_RETURN_IF_ERROR(WriteNpy(ConvertTensor(t, NumpyStandIn(t.dtype())), base + ".npy"));
  return absl::StrCat(base, ".pb (exact), ", base, ".npy (as ", DTypeName(NumpyStandIn(t.dtype())), ")");
}

// A sequence of maps as JSON: [{"key": value, ...}, ...]. Keys are strings
// in JSON (int64 keys written as numbers in quotes); non-finite values are
// written as NaN / Infinity, which Python's json reads.
absl::Status WriteMapSequenceJson(const RuntimeValue& v, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot write"));
  auto quoted = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) {
      if (ch == '"' || ch == '\\') out += '\\';
      if (static_cast<unsigned char>(ch) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", ch);
        out += buf;
        continue;
      }
      out += ch;
    }
    return out + "\"";
  };
  const Tensor& keys = v.map_keys;
  const int64_t columns = keys.num_elements();
  const int64_t rows = v.map_values.rank() == 2 ? v.map_values.dim(0) : 0;
  std::fputs("[", f);
  for (int64_t n = 0; n < rows; ++n) {
    std::fputs(n == 0 ? "{" : ",\n{", f);
    for (int64_t c = 0; c < columns; ++c) {
      const std::string key = keys.dtype() == DType::kString ? keys.strings()[static_cast<size_t>(c)]
                                                              : absl::StrCat(keys.data<int64_t>()[c]);
      const double x = v.map_values.ElementAsDouble(n * columns + c);
      const std::string value = std::isnan(x) ? "NaN" : std::isinf(x) ? (x > 0 ? "Infinity" : "-Infinity")
                                                                      : absl::StrFormat("%.9g", x);
      std::fprintf(f, "%s%s: %s", c == 0 ? "" : ", ", quoted(key).c_str(), value.c_str());
    }
    std::fputs("}", f);
  }
  std::fputs("]\n", f);
  return std::fclose(f) == 0 ? absl::OkStatus() : absl::DataLossError(absl::StrCat(path, ": write failed"));
}

// A tensor output is DIR/NAME.npy; a sequence is the folder DIR/NAME/ with
// one file per element (0.npy, 1.npy, ...; empty for an empty sequence); an
// empty optional writes nothing.
absl::Status WriteOutputs(const std::vector<std::string>& names,
                          const std::vector<RuntimeValue>& values, const std::string& dir,
                          bool print) {
  std::filesystem::create_directories(dir);
  for (size_t i = 0; i < names.size(); ++i) {
    const RuntimeValue& v = values[i];
    std::string base = absl::StrCat(dir, "/", SanitizeFileName(names[i]));
    if (v.is_none()) {
      if (print) std::printf("  %s: empty optional (nothing written)\n", names[i].c_str());
      continue;
    }
    if (v.is_map_sequence()) {
      AIC_RETURN_IF_ERROR(WriteMapSequenceJson(v, base + ".json"));
      if (print) {
        std::printf("  %s: sequence of %lld maps (%s keys) -> %s.json\n", names[i].c_str(),
                    static_cast<long long>(v.map_values.rank() > 0 ? v.map_values.dim(0) : 0),
                    DTypeName(v.map_keys.dtype()), base.c_str());
      }
      continue;
    }
    if (v.is_sequence()) {
      std::error_code ec;
      std::filesystem::remove_all(base, ec);  // a stale element past the new length would mislead
      std::filesystem::create_directories(base, ec);
      if (ec) return absl::PermissionDeniedError(absl::StrCat(base, ": cannot create folder"));
      for (size_t k = 0; k < v.sequence.size(); ++k) {
        AIC_RETURN_IF_ERROR(
            WriteTensorFiles(v.sequence[k], absl::StrCat(names[i], "_", k), absl::StrCat(base, "/", k)).status());
      }
      if (print) {
        std::printf("  %s: sequence of %zu %s tensors -> %s/\n", names[i].c_str(), v.sequence.size(),
                    DTypeName(v.sequence_dtype), base.c_str());
      }
      continue;
    }
    AIC_ASSIGN_OR_RETURN(std::string files, WriteTensorFiles(v.tensor, names[i], base));
    if (print) std::printf("  %s: %s -> %s\n", names[i].c_str(), v.tensor.DebugString(6).c_str(), files.c_str());
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
