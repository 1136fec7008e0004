// `aic-onnx report IN.onnx`: the seed's analysis of a model, measured: per
// node semantics, shapes, parameters, MACs/FLOPs and bytes; graph totals,
// peak activation memory, collapse points, expansion/contraction chains,
// weight spectra and low-rank candidates, and (with --calib) activation
// ratios and dead units from calibration runs. This file only parses flags,
// loads calibration data and writes the rendered report; analysis/ does the work.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/input_kinds.h"
#include "analysis/render.h"
#include "analysis/spectrum.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/model_loading.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx report IN.onnx [--format text|json|md] [-o FILE]
                       [--calib DIR|random:N] [--shape NAME=D,D,..]... [--energy E]
                       [--seed N] [--rare F] [--max-svd-dim N] [--no-spectra] [--names|--no-names]

Analyzes a model: per node its semantic name, input and output shapes
(symbolic dims by name), parameters, MACs and FLOPs, bytes read/written and
properties; graph totals (shared weights counted once), peak activation memory,
collapse points, expansion/contraction chains, expand-then-collapse patterns,
consecutive linear layers; the singular values of every Linear/Conv weight
(effective, stable and numerical rank, low-rank candidates); and, with
calibration data, the activation ratio and dead units of collapse-producing ops.

  --format F        text (default: the seed's format), json (schema in
                    docs/report-schema.md) or md
  -o FILE           write the report to FILE instead of stdout
  --calib DIR       run the reference executor on the samples in DIR: files
                    named after the graph inputs (NAME.npy / NAME.pb, or
                    input_K.pb / input_K.npy for the K-th input), either in
                    DIR itself (one sample) or in each subdirectory of DIR
                    (one sample per subdirectory, in name order)
  --calib random:N  N samples of random data (the report says so): floats
                    normal, token ids uniform over their embedding table,
                    other integer and boolean inputs (masks) ones
  --shape NAME=D,D  sizes to analyse a graph input with symbolic dims at (each
                    symbol takes its size on every input); the rest take a
                    default: a leading dim 1, an image's sides 224, a
                    waveform's samples 16000, other dims 16. Totals and per-node costs are also given as
                    expressions in the symbols; repeatable
  --energy E        spectral energy a low-rank candidate keeps (default 0.99)
  --rare F          a unit active on at most this share of positions is
                    "rarely active" (default 0.01)
  --seed N          seed of --calib random (default 0)
  --max-svd-dim N   skip weights whose shorter side exceeds N (default 4096)
  --no-spectra      skip the SVDs
  --names           text: name each node's ONNX nodes (ONNX: 'fc1' (Gemm));
                    the default for graphs of more than 12 nodes (smaller
                    ones print the seed's format exactly); --no-names: never
A model the reference executor cannot run is still analysed statically; the
report says why calibration did not run.
)";

// One status line on a terminal: the current step and the seconds it has
// taken, refreshed every second so that a long SVD visibly makes progress.
class ProgressLine {
 public:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) != 0) {
    if (enabled_) ticker_ = std::thread([this] { Tick(); });
  }
  ~ProgressLine() {
    if (!enabled_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    ticker_.join();
    std::fputs("\r\033[K", stderr);
  }
  void Set(const std::string& message) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    message_ = message;
    since_ = std::chrono::steady_clock::now();
    Draw();
  }

 private:
  void Tick() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!done_) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      if (!done_) Draw();
    }
  }
  void Draw() {  // mu_ held
    auto secs =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since_)
            .count();
    std::fprintf(stderr, "\r\033[K[aic-onnx report] %s%s", message_.c_str(),
                 secs >= 1 ? absl::StrCat(" ... ", secs, " s").c_str() : "");
    std::fflush(stderr);
  }
  bool enabled_;
  std::thread ticker_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string message_;
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

bool HasSuffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The file holding graph input k (named `name`) in sample directory `dir`.
std::optional<std::string> FindInputFile(const std::filesystem::path& dir, const std::string& name,
                                         size_t k) {
  for (const std::string& base : {name, SanitizeFileName(name), absl::StrCat("input_", k)}) {
    for (const char* ext : {".npy", ".pb"}) {
      std::filesystem::path p = dir / (base + ext);
      std::error_code ec;
      if (std::filesystem::is_regular_file(p, ec)) return p.string();
    }
  }
  return std::nullopt;
}

absl::StatusOr<analysis::CalibrationData> CalibrationFromDir(const Model& model,
                                                             const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--calib ", dir, ": not a directory"));
  }
  std::vector<const Value*> inputs;
  for (const Value* v : model.graph->inputs()) {
    if (!v->is_initializer()) inputs.push_back(v);
  }
  // One sample in DIR itself, or one per subdirectory.
  std::vector<std::filesystem::path> samples;
  bool flat = !inputs.empty() && FindInputFile(dir, inputs[0]->name(), 0).has_value();
  if (flat) {
    samples.push_back(dir);
  } else {
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.is_directory()) samples.push_back(entry.path());
    }
    std::sort(samples.begin(), samples.end());
  }
  if (samples.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--calib ", dir, ": no sample found (expected ",
                     inputs.empty() ? "input" : inputs[0]->name(),
                     ".npy/.pb or input_0.pb, in DIR or in its subdirectories)"));
  }
  analysis::CalibrationData data;
  data.source = dir;
  data.samples = static_cast<int64_t>(samples.size());
  data.feed = [inputs, samples](int64_t i) -> absl::StatusOr<analysis::Feeds> {
    analysis::Feeds feeds;
    for (size_t k = 0; k < inputs.size(); ++k) {
      auto file = FindInputFile(samples[static_cast<size_t>(i)], inputs[k]->name(), k);
      if (!file) {
        return absl::InvalidArgumentError(absl::StrCat(samples[static_cast<size_t>(i)].string(),
                                                       ": no file for input '", inputs[k]->name(),
                                                       "'"));
      }
      if (HasSuffix(*file, ".npy")) {
        AIC_ASSIGN_OR_RETURN(Tensor t, ReadNpy(*file));
        feeds[inputs[k]->name()] = RuntimeValue(std::move(t));
      } else {
        AIC_ASSIGN_OR_RETURN(RuntimeValue v, LoadValueProtoFile(*file, inputs[k]->type()));
        feeds[inputs[k]->name()] = std::move(v);
      }
    }
    return feeds;
  };
  return data;
}

analysis::CalibrationData RandomCalibration(const Model& model, int64_t n, uint64_t seed) {
  analysis::CalibrationData data;
  data.random = true;
  data.source = absl::StrCat("random:", n);
  data.samples = n;
  // Floats are normal; integers what the graph does with them (ids within
  // their embedding table, masks of ones).
  std::map<std::string, analysis::IntegerInputKind> kinds = analysis::IntegerInputKinds(model);
  data.feed = [&model, seed, kinds](int64_t i) -> absl::StatusOr<analysis::Feeds> {
    analysis::Feeds feeds;
    uint64_t s = seed + static_cast<uint64_t>(i) * 7919;
    for (const Value* v : model.graph->inputs()) {
      if (v->is_initializer()) continue;
      uint64_t input_seed = s++;
      auto t = RandomTensorFor(v->type(), nullptr, input_seed);
      if (!t.ok()) {
        return absl::Status(t.status().code(),
                            absl::StrCat("input '", v->name(), "': ", t.status().message()));
      }
      if (auto kind = kinds.find(v->name()); kind != kinds.end()) {
        analysis::FillIntegerInput(kind->second, input_seed, *t);
      }
      feeds[v->name()] = RuntimeValue(*std::move(t));
    }
    return feeds;
  };
  return data;
}

// Writes atomically: a reader never sees half a report.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
    f << text;
    if (!f.flush()) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

int ReportCommand(const std::vector<std::string>& argv) {
  auto args = Args::Parse(argv, FlagSpec{{"--format", "-o", "--calib", "--shape", "--energy",
                                          "--seed", "--rare", "--max-svd-dim"},
                                         {"--help", "--no-spectra", "--names", "--no-names"}});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("--help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args->positional().size() != 1) return UsageError("report takes one model file (see --help)");
  const std::string& path = args->positional()[0];
  std::string format = args->GetOr("--format", "text");
  if (format != "text" && format != "json" && format != "md") {
    return UsageError("--format must be text, json or md, got '" + format + "'");
  }
  if (args->Has("--names") && args->Has("--no-names")) {
    return UsageError("--names and --no-names exclude each other");
  }
  analysis::NodeNames names = args->Has("--names")      ? analysis::NodeNames::kAlways
                              : args->Has("--no-names") ? analysis::NodeNames::kNever
                                                        : analysis::NodeNames::kAuto;
  analysis::AnalysisOptions options;
  options.model_path = path;
  options.spectra = !args->Has("--no-spectra");
  if (options.spectra) analysis::UseOpenBlasKernelsForThisCpu();  // before any work: it may re-execute
  auto read_double = [&](const std::string& flag, double fallback, double lo, double hi,
                         double* out) -> bool {
    std::string v = args->GetOr(flag, "");
    if (v.empty()) {
      *out = fallback;
      return true;
    }
    return absl::SimpleAtod(v, out) && *out >= lo && *out <= hi;
  };
  if (!read_double("--energy", 0.99, 1e-9, 1.0, &options.energy)) {
    return UsageError("--energy expects a number in (0, 1]");
  }
  if (!read_double("--rare", 0.01, 0.0, 1.0, &options.rare_threshold)) {
    return UsageError("--rare expects a number in [0, 1]");
  }
  auto max_dim = args->GetInt("--max-svd-dim", 4096);
  auto seed = args->GetInt("--seed", 0);
  if (!max_dim.ok()) return UsageError(std::string(max_dim.status().message()));
  if (!seed.ok()) return UsageError(std::string(seed.status().message()));
  options.max_svd_dim = *max_dim;

  // Analyze infers shapes itself, after --shape fixes the inputs.
  auto loaded = LoadVerifiedModel(path, LoadOptions{.infer_shapes = false});
  if (!loaded.ok()) return UsageError(std::string(loaded.status().message()));
  Model& model = **loaded;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& spec : args->GetAll("--shape")) {
    auto parsed = ParseShapeSpec(spec);
    if (!parsed.ok()) return UsageError(std::string(parsed.status().message()));
    shapes[parsed->first] = parsed->second;
  }
  options.input_shapes = shapes;
  if (auto calib = args->Get("--calib")) {
    if (calib->rfind("random:", 0) == 0) {
      int64_t n = 0;
      if (!absl::SimpleAtoi(calib->substr(7), &n) || n < 1) {
        return UsageError("--calib random:N expects a positive N, got '" + *calib + "'");
      }
      options.calibration = RandomCalibration(model, n, static_cast<uint64_t>(*seed));
    } else {
      auto data = CalibrationFromDir(model, *calib);
      if (!data.ok()) return UsageError(std::string(data.status().message()));
      options.calibration = *std::move(data);
    }
  }

  absl::StatusOr<analysis::Report> report;
  {
    ProgressLine progress;
    options.progress = [&progress](const std::string& m) { progress.Set(m); };
    report = analysis::Analyze(model, options);
  }
  if (!report.ok()) return UsageError(path + ": " + std::string(report.status().message()));
  std::string text = format == "json" ? analysis::RenderJson(*report)
                     : format == "md" ? analysis::RenderMarkdown(*report)
                                      : analysis::RenderText(*report, names);
  if (auto out = args->Get("-o")) {
    if (absl::Status s = WriteFileAtomically(*out, text); !s.ok()) {
      return UsageError(std::string(s.message()));
    }
    return 0;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace aic::cli
