// `aic-onnx report IN.onnx`: the seed's analysis of a model, measured: per
// node semantics, shapes, parameters, MACs/FLOPs and bytes; graph totals,
// peak activation memory, collapse points, expansion/contraction chains,
// weight spectra and low-rank candidates, and (with --calib) activation
// ratios and dead units from calibration runs. This file only parses flags,
// loads calibration data and writes the rendered report; analysis/ does the work.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/calibration_sources.h"
#include "analysis/render.h"
#include "analysis/spectrum.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "cli/model_loading.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx report IN.onnx [--format text|json|md|html] [-o FILE]
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
                    docs/report-schema.md), md, or html: one self-contained
                    page (nothing fetched when viewed) with the graph drawn
                    top to bottom (Graphviz's dot layout), nodes coloured by
                    semantic class, share of MACs or bytes moved, a panel per
                    node (shapes, costs, properties, collapse, its weight
                    spectrum plotted with the ranks marked, activation ratio),
                    the findings linked to their nodes, search, pan and zoom;
                    open FILE.html#node=NAME to open a node's panel
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
  if (format != "text" && format != "json" && format != "md" && format != "html") {
    return UsageError("--format must be text, json, md or html, got '" + format + "'");
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
    absl::StatusOr<int64_t> n = analysis::RandomSampleCount(*calib);
    if (!n.ok()) return UsageError("--calib random:N " + std::string(n.status().message()));
    if (*n > 0) {
      options.calibration = analysis::RandomCalibration(model, *n, static_cast<uint64_t>(*seed));
    } else {
      auto data = analysis::CalibrationFromDir(model, *calib);
      if (!data.ok()) return UsageError(std::string(data.status().message()));
      options.calibration = *std::move(data);
    }
  }

  absl::StatusOr<analysis::Report> report;
  {
    ProgressLine progress("report");
    options.progress = [&progress](const std::string& m) { progress.Set(m); };
    report = analysis::Analyze(model, options);
  }
  if (!report.ok()) return UsageError(path + ": " + std::string(report.status().message()));
  std::string text;
  if (format == "html") {
    absl::StatusOr<std::string> page;
    {
      // Graphviz's layout takes seconds past a few thousand nodes.
      ProgressLine progress("report");
      progress.Set(absl::StrCat("laying out ", report->nodes.size(), " nodes (Graphviz dot)"));
      page = analysis::RenderHtml(*report);
    }
    if (!page.ok()) return UsageError(path + ": " + std::string(page.status().message()));
    text = *std::move(page);
  } else {
    text = format == "json" ? analysis::RenderJson(*report)
           : format == "md" ? analysis::RenderMarkdown(*report)
                            : analysis::RenderText(*report, names);
  }
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
