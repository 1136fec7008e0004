// `aic-onnx opt`: the rewriter (rewrite::Optimize) as a command: load, optimize,
// save, print what changed, and verify the result against the original on
// random inputs, both through sessions on the fast CPU executor (the
// reference interpreter where it cannot run the original).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/numbers.h"
#include "analysis/approximate.h"
#include "analysis/calibration_sources.h"
#include "analysis/render_opt_html.h"
#include "analysis/spectrum.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/model_loading.h"
#include "cli/output_file.h"
#include "cli/progress_line.h"
#include "cli/version.h"
#include "exec/cpu/plan.h"
#include "onnx_io/save.h"
#include "rewrite/optimize.h"
#include "rewrite/rules/rule.h"
#include "session/optimize_and_verify.h"
#include "support/json.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx opt IN.onnx OUT.onnx [-O0..-O3] [--target onnx|aic]
                    [--fix-shape NAME=D,D,..]... [--fix-dim NAME=D]... [--fold-limit BYTES]
                    [--verify[=N]|--no-verify] [--stats FILE.json] [--html FILE.html]
                    [--explain RULE] [--in-place] [--external-data]
                    [--apply low-rank[=E|R]|prune-dead|merge-linear]... [--max-error E]
                    [--calib DIR|random:N] [--min-activation S]
       aic-onnx opt --list-rules [--format text|md]

Rewrites the model with the e-graph optimizer and writes standard ONNX.
  -O0 .. -O3         0: nothing, 1: exact rules, 2 (default): + rules equal up to
                     rounding (Conv+BN, ...), 3: + more of those
  --target aic       also allow aic-onnx's own fused ops (domain ai.aic)
  --fix-shape        give a graph input concrete dims (? or -1 keeps a dim as the
                     model has it); checked against the input's rank and fixed dims
  --fix-dim NAME=D   make the symbolic dim NAME D in every input that has it
  --shape NAME=D,..  the shape verification feeds that input (the output keeps
                     its symbolic dims); without it, fixed shapes, else a
                     realistic size per symbolic dim (printed)
  --inputs DIR       verify on these inputs instead (<name>.npy or input_<i>.pb)
OUT may be - (standard output; the summary then goes to standard error), a
device, or a symlink (its target is written; the link stays).
  --fold-limit B     constant folding may grow the weights by B bytes (default 0)
  --fold-dequantize  fold DequantizeLinear of constant weights into float (off:
                     a QDQ model stays quantized for runtimes that run it as int8)
  --verify[=N]       compare with the original on N random inputs (default on, N=2),
                     both run as written on the fast CPU executor; given
                     explicitly, a verification that cannot run exits 1
  --rtol/--atol      verification tolerance (default 1e-3 / 1e-4)
  --stats FILE       write the statistics as JSON
  --html FILE        write one self-contained page of the changes: the original
                     and optimized graphs side by side, each optimized node
                     linked to the original nodes it replaced and the rule that
                     made it, the op table and the rule counts (main graph only;
                     the rewriter's changes, before --apply's)
  --explain RULE     print where RULE fired or declined, and why
  --in-place         allow OUT to be IN
  --no-shapes        do not write the inferred shapes as value_info (written by default)
Approximate transformations (never on by default; each candidate is measured
on the calibration samples and refused when an output's error passes the budget):
  --apply low-rank[=E|R]  factor linear layers (MatMul, Gemm, Conv) by their SVD,
                     only where parameters and MACs fall: at the rank keeping
                     share E of the spectral energy, or rank R; without a value,
                     each layer's rank for 80/90/95/99% energy is measured alone
                     and the budget goes to the layers that save most for it
  --apply prune-dead remove units a ReLU never lets through on the samples,
                     from the layer producing them and the layers reading them
  --apply merge-linear  merge two linear layers with only a bias between them
                     where the merged one is smaller
  --max-error E      per-output relative L2 error budget (default 1e-2)
  --calib DIR        samples to measure on (as `report --calib`); default
                     random:8, generated data that the output says is not real
  --min-activation S prune-dead also removes units active on <= share S of positions
  --no-latency       do not time each kept step against the model before it
                     (a step measured over 3% slower is refused otherwise)
  --keep-slower      keep steps within the budget even when measured slower
Exit: 0 ok, 1 verification mismatch, 2 bad usage or bad input.
)";


// The per-op-type table onnxslim prints: every op type of the main graph,
// its count before and after, most frequent first.
void PrintOpTable(FILE* out, const std::map<std::string, int64_t>& before,
                  const std::map<std::string, int64_t>& after) {
  int64_t total_before = 0, total_after = 0;
  std::fprintf(out, "  %-28s %8s %8s\n", "op type", "before", "after");
  for (const session::OpTableRow& row : session::OpTableRows(before, after)) {
    std::fprintf(out, "  %-28s %8lld %8lld%s\n", row.op.c_str(), static_cast<long long>(row.before),
                 static_cast<long long>(row.after), row.before != row.after ? "  *" : "");
    total_before += row.before;
    total_after += row.after;
  }
  std::fprintf(out, "  %-28s %8lld %8lld\n", "total", static_cast<long long>(total_before),
               static_cast<long long>(total_after));
}

int ListRules(const std::string& format) {
  std::set<std::string> seen;
  bool md = format == "md";
  if (md) {
    std::printf("# Rewrite rules\n\n");
    std::printf("Generated by `aic-onnx opt --list-rules --format md` from the rule table in\n");
    std::printf("rewrite/rules/; do not edit by hand. Classes: `exact` (bitwise equal),\n");
    std::printf("`reassociating` (equal up to rounding, on from -O2), `approximate` (never by\n");
    std::printf("default). Min opset: the lowest model opset for which the rule runs.\n\n");
    std::printf("| rule | lhs -> rhs | class | min opset | from | roots |\n|---|---|---|---|---|---|\n");
  }
  for (const rewrite::Rule& r : rewrite::AllRules()) {
    if (!seen.insert(r.name).second) continue;
    std::string roots;
    for (const rewrite::Rule& o : rewrite::AllRules()) {
      if (std::string(o.name) == r.name) absl::StrAppend(&roots, roots.empty() ? "" : ", ", o.root);
    }
    std::string pattern = r.rewrite;
    if (md) {
      std::string escaped;
      for (char c : pattern) {
        if (c == '|') escaped += "\\";
        escaped += c;
      }
      int level = std::max(r.level, r.exactness == rewrite::Exactness::kReassociating ? 2 : 1);
      std::printf("| `%s` | `%s` | %s | %d | -O%d | %s%s |\n", r.name, escaped.c_str(),
                  rewrite::ExactnessName(r.exactness), r.min_opset, level, roots.c_str(),
                  r.aic_only ? " (--target aic)"
                  : r.aic_op != nullptr ? " (below its opset: ai.aic alias, --target aic and backends)"
                                        : "");
    } else {
      std::printf("%-28s %-14s opset>=%-3d %s\n", r.name, rewrite::ExactnessName(r.exactness),
                  r.min_opset, r.rewrite);
    }
  }
  return 0;
}

}  // namespace

int OptCommand(const std::vector<std::string>& argv_in) {
  // -O<n> and --verify[=N] don't fit the generic flag parser: take them first.
  std::vector<std::string> argv_rest = argv_in;
  int level = TakeOptLevel(argv_rest).value_or(2);
  bool verify = true;
  bool verify_asked = false;  // --verify given: a verification that cannot run is a failure
  int64_t verify_runs = 2;
  std::vector<std::string> argv;
  for (const std::string& a : argv_rest) {
    if (a == "--verify") {
      verify = verify_asked = true;
    } else if (a.rfind("--verify=", 0) == 0) {
      verify = verify_asked = true;
      try {
        verify_runs = std::stoll(a.substr(9));
      } catch (...) {
        return UsageError("--verify=N needs a number");
      }
    } else if (a == "--no-verify") {
      verify = false;
    } else {
      argv.push_back(a);
    }
  }
  auto args = Args::Parse(argv, FlagSpec{{"--target", "--fix-shape", "--fix-dim", "--shape", "--inputs", "--fold-limit", "--stats",
                                          "--explain", "--format", "--rtol", "--atol", "--seed", "--html",
                                          "--apply", "--max-error", "--calib", "--min-activation"},
                                         {"--help", "--in-place", "--external-data", "--list-rules", "--no-shapes", "--fold-dequantize",
                                          "--no-latency", "--keep-slower"}});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("--help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args->Has("--list-rules")) return ListRules(args->GetOr("--format", "text"));
  if (args->positional().size() != 2) return UsageError("opt takes IN.onnx and OUT.onnx (see --help)");
  const std::string in = args->positional()[0];
  const std::string out = args->positional()[1];
  // Where the model goes is settled before any work.
  absl::StatusOr<OutputTarget> output = ResolveOutput(out);
  if (!output.ok()) return UsageError(std::string(output.status().message()));
  std::error_code ec;
  bool same = in == out || (!output->to_stdout() && std::filesystem::equivalent(in, output->path, ec));
  if (same && !args->Has("--in-place")) {
    return UsageError(out + ": refusing to overwrite the input (give --in-place)");
  }
  std::optional<OutputTarget> html_output;
  if (auto html = args->Get("--html")) {
    absl::StatusOr<OutputTarget> target = ResolveOutput(*html);
    if (!target.ok()) return UsageError(std::string(target.status().message()));
    if (target->to_stdout() && output->to_stdout()) return UsageError("--html -: the model goes to standard output");
    html_output = *std::move(target);
  }
  // With the model on standard output, what would be printed goes to stderr.
  FILE* info = output->to_stdout() ? stderr : stdout;
  rewrite::OptimizeOptions options;
  options.level = level;
  std::string target = args->GetOr("--target", "onnx");
  if (target != "onnx" && target != "aic") return UsageError("--target must be onnx or aic");
  if (target == "aic") options.aic_ops = rewrite::AllAicOps();
  auto fold = args->GetInt("--fold-limit", 0);
  if (!fold.ok()) return UsageError(std::string(fold.status().message()));
  options.fold_limit = *fold;
  options.fold_dequantize = args->Has("--fold-dequantize");
  for (const std::string& spec : args->GetAll("--fix-shape")) {
    auto parsed = ParseShapeSpec(spec, /*allow_keep=*/true);
    if (!parsed.ok()) return UsageError("--fix-shape: " + std::string(parsed.status().message()));
    options.fix_shapes[parsed->first] = parsed->second;
  }
  for (const std::string& spec : args->GetAll("--fix-dim")) {
    auto parsed = ParseShapeSpec(spec);
    if (!parsed.ok() || parsed->second.size() != 1) return UsageError("--fix-dim expects NAME=D, got '" + spec + "'");
    options.fix_dims[parsed->first] = parsed->second[0];
  }
  options.explain_rule = args->GetOr("--explain", "");
  options.record_provenance = html_output.has_value();
  double rtol = 1e-3, atol = 1e-4;
  try {
    rtol = std::stod(args->GetOr("--rtol", "1e-3"));
    atol = std::stod(args->GetOr("--atol", "1e-4"));
  } catch (...) {
    return UsageError("--rtol/--atol need numbers");
  }

  analysis::ApproximateOptions approximate;
  for (const std::string& spec : args->GetAll("--apply")) {
    if (absl::Status s = analysis::AddApplySpec(spec, approximate); !s.ok()) {
      return UsageError("--apply " + std::string(s.message()));
    }
  }
  const bool approximating = approximate.low_rank || approximate.prune_dead || approximate.merge_linear;
  if (!approximating && (args->Has("--max-error") || args->Has("--calib") || args->Has("--min-activation"))) {
    return UsageError("--max-error, --calib and --min-activation go with --apply");
  }
  if (auto e = args->Get("--max-error")) {
    if (!absl::SimpleAtod(*e, &approximate.max_error) || !(approximate.max_error >= 0)) {
      return UsageError("--max-error expects a number >= 0, got '" + *e + "'");
    }
  }
  if (auto a = args->Get("--min-activation")) {
    if (!absl::SimpleAtod(*a, &approximate.min_activation) || !(approximate.min_activation >= 0) ||
        approximate.min_activation >= 1) {
      return UsageError("--min-activation expects a share in [0, 1), got '" + *a + "'");
    }
  }
  approximate.measure_latency = !args->Has("--no-latency");
  approximate.keep_slower = args->Has("--keep-slower");
  auto seed = args->GetInt("--seed", 0);
  if (!seed.ok()) return UsageError(std::string(seed.status().message()));
  const std::string calib = args->GetOr("--calib", "random:8");
  absl::StatusOr<int64_t> random_count = analysis::RandomSampleCount(calib);
  if (!random_count.ok()) return UsageError("--calib random:N " + std::string(random_count.status().message()));
  const int64_t random_samples = *random_count;

  // Before any work: it may re-execute the process (exec/cpu/threading.cc,
  // and OpenBLAS's kernels for the SVDs of low-rank).
  if (approximate.low_rank) analysis::UseOpenBlasKernelsForThisCpu();
  if ((verify && verify_runs > 0) || approximating) cpu::ConfigureOpenMpWait();
  absl::StatusOr<std::unique_ptr<Model>> model;
  {
    ProgressLine progress("opt");
    progress.Set("loading " + in);
    model = LoadVerifiedModel(in, LoadOptions{.infer_shapes = false});  // Optimize infers itself
  }
  if (!model.ok()) return UsageError(std::string(model.status().message()));
  session::OptimizeJob job;
  job.optimize = options;
  job.write_shapes = !args->Has("--no-shapes");
  job.verify_runs = verify ? static_cast<int>(verify_runs) : 0;
  job.rtol = rtol;
  job.atol = atol;
  job.tolerance_given = args->Has("--rtol") || args->Has("--atol");
  for (const std::string& spec : args->GetAll("--shape")) {
    auto parsed = ParseShapeSpec(spec);
    if (!parsed.ok()) return UsageError("--shape: expected NAME=D,D,.., got '" + spec + "'");
    job.verify_shapes[parsed->first] = parsed->second;
  }
  // --inputs is read before any work: a bad folder fails at once.
  const std::string inputs_dir = args->GetOr("--inputs", "");
  if (!inputs_dir.empty() && job.verify_runs > 0) {
    auto f = FeedsFromDir(**model, inputs_dir);
    if (!f.ok()) return UsageError(std::string(f.status().message()));
    job.verify_feeds.push_back(*std::move(f));
    job.verify_feeds_source = inputs_dir;
    verify_asked = true;  // inputs given are a verification asked for
  }
  auto reload = [&in]() { return LoadVerifiedModel(in, LoadOptions{.infer_shapes = false}); };
  absl::StatusOr<session::OptimizeOutcome> outcome;
  {
    ProgressLine progress("opt");
    job.progress = [&progress](const std::string& m) { progress.Set(m); };
    outcome = session::OptimizeAndVerify(*model, reload, job);
  }
  if (!outcome.ok()) {
    // Shapes to fix that contradict the model come without the file's name.
    std::string message(outcome.status().message());
    return UsageError(message.rfind(in, 0) == 0 ? message : in + ": " + message);
  }
  // The page of what the rewriter changed, laid out before --apply replaces
  // the graph it traced (the approximate steps are printed and in --stats);
  // written after the model.
  std::optional<std::string> html;
  if (html_output) {
    analysis::OptPage page;
    page.input_path = in;
    page.output_path = out;
    page.optimized = (*model)->graph.get();
    page.provenance = outcome->stats.provenance.get();
    page.stats = &outcome->stats;
    page.op_table = session::OpTableRows(outcome->ops_before, outcome->ops_after);
    page.unchanged_reason = outcome->unchanged_reason;
    absl::StatusOr<std::string> rendered;
    {
      ProgressLine progress("opt");
      progress.Set(absl::StrCat("laying out ", page.optimized->num_nodes(), " optimized and the original nodes (Graphviz dot)"));
      rendered = analysis::RenderOptHtml(page);
    }
    if (!rendered.ok()) return UsageError(in + ": " + std::string(rendered.status().message()));
    html = *std::move(rendered);
  }
  std::optional<analysis::ApproximateResult> approximated;
  if (approximating) {
    absl::StatusOr<std::unique_ptr<Model>> original = reload();
    if (!original.ok()) return UsageError(std::string(original.status().message()));
    if (random_samples > 0) {
      // At the shapes verification runs at: --shape, else the fixed dims and
      // a realistic size per symbolic one (not 1: a 1×1 image says nothing).
      // Where verification had to move to a nearby size (dims the model ties by
      // arithmetic), that size.
      approximate.calibration = analysis::RandomCalibrationAtTestShapes(
          **original, random_samples, static_cast<uint64_t>(*seed),
          outcome->verify_shapes.empty() ? job.verify_shapes : outcome->verify_shapes);
    } else {
      auto data = analysis::CalibrationFromDir(**original, calib);
      if (!data.ok()) return UsageError(std::string(data.status().message()));
      approximate.calibration = *std::move(data);
    }
    absl::StatusOr<analysis::ApproximateResult> result;
    {
      ProgressLine progress("opt");
      approximate.progress = [&progress](const std::string& m) { progress.Set(m); };
      result = analysis::ApplyApproximations(**original, *model, approximate);
    }
    if (!result.ok()) return UsageError(in + ": --apply: " + std::string(result.status().message()));
    approximated = *std::move(result);
  }
  SaveOptions save_options;
  if (args->Has("--external-data")) save_options.external_data = SaveOptions::ExternalData::kAlways;
  if (absl::Status s = WriteModel(**model, *output, save_options); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  if (html) {
    if (absl::Status s = WriteText(*html, *html_output); !s.ok()) return UsageError(std::string(s.message()));
  }
  if (!outcome->unchanged_reason.empty()) {
    std::fprintf(info, "%s: left unchanged: %s\n", in.c_str(), outcome->unchanged_reason.c_str());
    if (approximated) std::fputs(analysis::FormatApproximations(*approximated).c_str(), info);
    return 0;
  }
  const rewrite::OptimizeStats* stats = &outcome->stats;
  std::fprintf(info, "%s -> %s\n", in.c_str(), out.c_str());
  std::fprintf(info, "nodes: %lld -> %lld\n", static_cast<long long>(stats->nodes_before),
              static_cast<long long>(stats->nodes_after));
  std::fprintf(info, "weights: %lld -> %lld bytes\n", static_cast<long long>(stats->initializer_bytes_before),
              static_cast<long long>(stats->initializer_bytes_after));
  std::fprintf(info, "e-graph: %lld e-nodes, %lld e-classes, %d iterations (%s), %lld opaque nodes\n",
              static_cast<long long>(stats->enodes), static_cast<long long>(stats->eclasses),
              stats->iterations, stats->stop_reason.c_str(), static_cast<long long>(stats->opaque_nodes));
  std::fprintf(info, "rules fired:%s\n", stats->rule_counts.empty() ? " none" : "");
  for (const auto& [name, count] : stats->rule_counts) {
    std::fprintf(info, "  %-28s %lld\n", name.c_str(), static_cast<long long>(count));
  }
  PrintOpTable(info, outcome->ops_before, outcome->ops_after);
  std::string phases;
  for (const char* p : {"infer", "import", "rewrite", "extract"}) {
    auto it = stats->phase_seconds.find(p);
    if (it != stats->phase_seconds.end()) absl::StrAppend(&phases, phases.empty() ? "" : ", ", p, " ", absl::StrFormat("%.3f", it->second));
  }
  std::fprintf(info, "time: %.3f s (%s)\n", stats->seconds, phases.c_str());
  // The three rules whose matchers took longest: where a slow opt is slow.
  std::vector<std::pair<double, std::string>> slow;
  for (const auto& [rule, sec] : stats->rule_seconds) slow.push_back({sec, rule});
  std::sort(slow.rbegin(), slow.rend());
  if (!slow.empty()) {
    std::string line;
    for (size_t i = 0; i < slow.size() && i < 3; ++i) absl::StrAppend(&line, i ? ", " : "", slow[i].second, " ", absl::StrFormat("%.3f", slow[i].first));
    std::fprintf(info, "slowest rule matchers: %s s\n", line.c_str());
  }
  if (!options.explain_rule.empty()) {
    std::fprintf(info, "explain %s:%s\n", options.explain_rule.c_str(), stats->explain.empty() ? " no matches" : "");
    for (const std::string& line : stats->explain) std::fprintf(info, "  %s\n", line.c_str());
  }

  int exit_code = 0;
  if (outcome->verify_wanted) {
    const std::string& shapes_text = outcome->verify_inputs;
    if (!outcome->verify_skipped.empty()) {
      // Said on stderr, where a pipeline's log keeps it; an explicit --verify that
      // could not run is a failed check, not a pass.
      std::fprintf(stderr, "warning: verify: skipped (%s)\n", outcome->verify_skipped.c_str());
      if (verify_asked) exit_code = 1;
    } else {
      const session::CompareReport& report = outcome->verify;
      if (!report.fallback.empty()) {
        std::fprintf(stderr, "warning: verify runs on the reference interpreter (%s)\n", report.fallback.c_str());
      }
      std::fprintf(info, "verify: %d %sinput set(s)%s%s, rtol %g atol %g, on %s: %s\n", report.runs,
                   inputs_dir.empty() ? "random " : "",
                   shapes_text.empty() ? "" : inputs_dir.empty() ? " at " : " from ", shapes_text.c_str(),
                   outcome->verify_rtol, outcome->verify_atol, report.device.c_str(), report.ok() ? "ok" : "MISMATCH");
      for (const auto& o : report.outputs) {
        std::fprintf(info, "  %-24s max abs %.3g  max rel %.3g%s%s\n", o.name.c_str(), o.max_abs, o.max_rel,
                    o.ok ? "" : "  MISMATCH ", o.problem.c_str());
      }
      if (!report.ok()) exit_code = 1;
    }
  }
  if (approximated) std::fputs(analysis::FormatApproximations(*approximated).c_str(), info);
  if (auto stats_file = args->Get("--stats")) {
    std::string approximations;
    if (approximated) {
      JsonWriter json(/*one_line=*/true);
      analysis::WriteApproximationsJson(json, *approximated);
      approximations = json.str();
    }
    std::ofstream f(*stats_file);
    f << session::OptimizeOutcomeJson(*outcome, VersionString(), in, out, approximations) << "\n";
    if (!f) return UsageError(*stats_file + ": cannot write");
  }
  return exit_code;
}

}  // namespace aic::cli
