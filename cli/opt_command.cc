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
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/model_loading.h"
#include "cli/output_file.h"
#include "cli/version.h"
#include "exec/cpu/plan.h"
#include "onnx_io/save.h"
#include "rewrite/optimize.h"
#include "rewrite/rules/rule.h"
#include "session/compare.h"
#include "support/json.h"

// OpenBLAS (linked for the analyzer's SVDs) starts its worker threads when
// the library loads, and they spin in sched_yield for about 0.1 s: on a
// two-core machine that halves the CPU left to the optimizer, which never
// calls BLAS. Weak, so a BLAS without this entry point just keeps its threads;
// a later BLAS call would start them again.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace aic::cli {

namespace {

void StopIdleBlasThreads() {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

constexpr char kHelp[] = R"(usage: aic-onnx opt IN.onnx OUT.onnx [-O0..-O3] [--target onnx|aic]
                    [--fix-shape NAME=D,D,..]... [--fix-dim NAME=D]... [--fold-limit BYTES]
                    [--verify[=N]|--no-verify] [--stats FILE.json] [--explain RULE]
                    [--in-place] [--external-data]
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
  --explain RULE     print where RULE fired or declined, and why
  --in-place         allow OUT to be IN
  --no-shapes        do not write the inferred shapes as value_info (written by default)
Exit: 0 ok, 1 verification mismatch, 2 bad usage or bad input.
)";


// Lists every node output's inferred type as value_info (what onnxsim and
// onnxslim write, and what viewers and downstream compilers read), bodies
// included; graph outputs carry theirs already.
void RecordInferredShapes(Graph& g) {
  for (const auto& n : g.nodes()) {
    for (Value* v : n->outputs()) {
      if (v == nullptr || std::count(g.outputs().begin(), g.outputs().end(), v)) continue;
      if (v->type().known()) v->in_value_info = true;
    }
    for (Graph* body : n->Subgraphs()) RecordInferredShapes(*body);
  }
}

std::map<std::string, int64_t> OpTypeCounts(const Graph& g) {
  std::map<std::string, int64_t> counts;
  for (const auto& n : g.nodes()) ++counts[n->domain.empty() ? n->op_type : n->domain + "." + n->op_type];
  return counts;
}

// The per-op-type table onnxslim prints: every op type of the main graph,
// its count before and after, most frequent first.
void PrintOpTable(FILE* out, const std::map<std::string, int64_t>& before,
                  const std::map<std::string, int64_t>& after) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> rows;
  int64_t total_before = 0, total_after = 0;
  std::set<std::string> ops;
  for (const auto& [op, n] : before) ops.insert(op);
  for (const auto& [op, n] : after) ops.insert(op);
  for (const std::string& op : ops) {
    int64_t b = before.count(op) ? before.at(op) : 0, a = after.count(op) ? after.at(op) : 0;
    rows.push_back({op, {b, a}});
    total_before += b;
    total_after += a;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return std::max(x.second.first, x.second.second) > std::max(y.second.first, y.second.second);
  });
  std::fprintf(out, "  %-28s %8s %8s\n", "op type", "before", "after");
  for (const auto& [op, counts] : rows) {
    std::fprintf(out, "  %-28s %8lld %8lld%s\n", op.c_str(), static_cast<long long>(counts.first),
                 static_cast<long long>(counts.second), counts.first != counts.second ? "  *" : "");
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
                                          "--explain", "--format", "--rtol", "--atol", "--seed"},
                                         {"--help", "--in-place", "--external-data", "--list-rules", "--no-shapes", "--fold-dequantize"}});
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
  double rtol = 1e-3, atol = 1e-4;
  try {
    rtol = std::stod(args->GetOr("--rtol", "1e-3"));
    atol = std::stod(args->GetOr("--atol", "1e-4"));
  } catch (...) {
    return UsageError("--rtol/--atol need numbers");
  }

  // Before any work: it may re-execute the process (exec/cpu/threading.cc).
  if (verify && verify_runs > 0) cpu::ConfigureOpenMpWait();
  auto model = LoadVerifiedModel(in, LoadOptions{.infer_shapes = false});  // Optimize infers itself
  if (!model.ok()) return UsageError(std::string(model.status().message()));
  absl::StatusOr<std::map<std::string, TypeInfo>> fixed = rewrite::FixedShapes(**model, options);
  if (!fixed.ok()) return UsageError(in + ": " + std::string(fixed.status().message()));
  // Verification feeds: --shape, else the fixed inputs at their new shapes,
  // else a realistic size for every symbolic dim.
  std::vector<std::string> verify_shapes = args->GetAll("--shape");
  for (const std::string& spec : verify_shapes) {
    if (!ParseShapeSpec(spec).ok()) return UsageError("--shape: expected NAME=D,D,.., got '" + spec + "'");
  }
  std::set<std::string> shaped;
  for (const std::string& spec : verify_shapes) shaped.insert(spec.substr(0, spec.rfind('=')));
  for (const auto& [name, type] : *fixed) {
    if (!type.shape.IsStatic() || shaped.count(name)) continue;
    std::string spec = name + "=";
    for (int64_t d : type.shape.Values()) absl::StrAppend(&spec, spec.back() == '=' ? "" : ",", d);
    verify_shapes.push_back(spec);
  }
  for (const std::string& spec : RealisticShapes(**model, verify_shapes)) verify_shapes.push_back(spec);
  // The original is only read again when the optimized model is verified
  // against it: parsing a large model twice is a good part of a fast run.
  absl::StatusOr<std::unique_ptr<Model>> original = std::unique_ptr<Model>();
  if (verify && verify_runs > 0) {
    original = LoadVerifiedModel(in, LoadOptions{.infer_shapes = false});
    if (!original.ok()) return UsageError(std::string(original.status().message()));
  }

  // --inputs is read before any work: a bad folder fails at once.
  const std::string inputs_dir = args->GetOr("--inputs", "");
  std::optional<std::map<std::string, RuntimeValue>> dir_feeds;
  if (!inputs_dir.empty() && verify && verify_runs > 0) {
    auto f = FeedsFromDir(**original, inputs_dir);
    if (!f.ok()) return UsageError(std::string(f.status().message()));
    dir_feeds = std::move(*f);
    verify_asked = true;  // inputs given are a verification asked for
  }
  StopIdleBlasThreads();
  std::map<std::string, int64_t> ops_before = OpTypeCounts(*(*model)->graph);
  auto stats = rewrite::Optimize(**model, options);
  std::string unchanged_reason;
  if (!stats.ok()) {
    // The model stays as it was; say why.
    unchanged_reason = std::string(stats.status().message());
    auto reloaded = LoadVerifiedModel(in, LoadOptions{.infer_shapes = false});
    if (!reloaded.ok()) return UsageError(std::string(reloaded.status().message()));
    *model = std::move(*reloaded);
  }
  if (unchanged_reason.empty() && !args->Has("--no-shapes")) RecordInferredShapes(*(*model)->graph);
  SaveOptions save_options;
  if (args->Has("--external-data")) save_options.external_data = SaveOptions::ExternalData::kAlways;
  if (absl::Status s = WriteModel(**model, *output, save_options); !s.ok()) {
    return UsageError(std::string(s.message()));
  }
  if (!unchanged_reason.empty()) {
    std::fprintf(info, "%s: left unchanged: %s\n", in.c_str(), unchanged_reason.c_str());
    return 0;
  }
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
  std::map<std::string, int64_t> ops_after = OpTypeCounts(*(*model)->graph);
  PrintOpTable(info, ops_before, ops_after);
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
  // --stats: the same facts for scripts, in one JSON object.
  JsonWriter stats_json;
  stats_json.BeginObject();
  stats_json.Field("version", VersionString());
  stats_json.Field("input", in);
  stats_json.Field("output", out);
  stats_json.Field("nodes_before", stats->nodes_before);
  stats_json.Field("nodes_after", stats->nodes_after);
  stats_json.Field("initializer_bytes_before", stats->initializer_bytes_before);
  stats_json.Field("initializer_bytes_after", stats->initializer_bytes_after);
  stats_json.Field("iterations", stats->iterations);
  stats_json.Field("stop_reason", stats->stop_reason);
  stats_json.Field("enodes", stats->enodes);
  stats_json.Field("eclasses", stats->eclasses);
  stats_json.Field("seconds", stats->seconds);
  stats_json.Key("rules");
  stats_json.BeginObject();
  for (const auto& [name, count] : stats->rule_counts) stats_json.Field(name, count);
  stats_json.EndObject();
  stats_json.Key("phase_seconds");
  stats_json.BeginObject();
  for (const auto& [phase, sec] : stats->phase_seconds) stats_json.Field(phase, sec);
  stats_json.EndObject();
  stats_json.Key("rule_seconds");
  stats_json.BeginObject();
  for (const auto& [rule, sec] : stats->rule_seconds) stats_json.Field(rule, sec);
  stats_json.EndObject();
  stats_json.Key("op_types");  // op type -> [before, after]
  stats_json.BeginObject();
  std::set<std::string> all_ops;
  for (const auto& [op, n] : ops_before) all_ops.insert(op);
  for (const auto& [op, n] : ops_after) all_ops.insert(op);
  for (const std::string& op : all_ops) {
    stats_json.Key(op);
    stats_json.InlineInts({ops_before.count(op) ? ops_before.at(op) : 0, ops_after.count(op) ? ops_after.at(op) : 0});
  }
  stats_json.EndObject();
  stats_json.Key("verify");
  if (verify && verify_runs > 0) {
    std::vector<std::map<std::string, RuntimeValue>> feeds;
    std::string feed_error;
    if (dir_feeds.has_value()) feeds.push_back(std::move(*dir_feeds));
    for (int64_t k = 0; inputs_dir.empty() && k < verify_runs; ++k) {
      InputOptions io;
      io.random = true;
      io.seed = static_cast<uint64_t>(1000 + k * 7919);
      io.shapes = verify_shapes;
      auto f = BuildFeeds(**original, io);
      if (!f.ok()) {
        feed_error = std::string(f.status().message());
        break;
      }
      feeds.push_back(std::move(*f));
    }
    session::CompareOptions compare;
    compare.rtol = rtol;
    compare.atol = atol;
    absl::StatusOr<session::CompareReport> report =
        feed_error.empty() ? session::CompareModels(**original, **model, feeds, compare)
                           : absl::StatusOr<session::CompareReport>(absl::FailedPreconditionError(feed_error));
    stats_json.BeginObject();
    std::string shapes_text;
    if (inputs_dir.empty()) {
      for (const std::string& spec : verify_shapes) absl::StrAppend(&shapes_text, shapes_text.empty() ? "" : " ", spec);
    } else {
      shapes_text = inputs_dir;
    }
    stats_json.Field("shapes", shapes_text);
    if (!report.ok()) {
      // Said on stderr, where a pipeline's log keeps it; an explicit --verify that
      // could not run is a failed check, not a pass.
      std::fprintf(stderr, "warning: verify: skipped (%s)\n", std::string(report.status().message()).c_str());
      stats_json.Field("skipped", std::string(report.status().message()));
      if (verify_asked) exit_code = 1;
    } else {
      if (!report->fallback.empty()) {
        std::fprintf(stderr, "warning: verify runs on the reference interpreter (%s)\n", report->fallback.c_str());
      }
      std::fprintf(info, "verify: %d %sinput set(s)%s%s, rtol %g atol %g, on %s: %s\n", report->runs,
                   inputs_dir.empty() ? "random " : "",
                   shapes_text.empty() ? "" : inputs_dir.empty() ? " at " : " from ", shapes_text.c_str(), rtol,
                   atol, report->device.c_str(), report->ok() ? "ok" : "MISMATCH");
      stats_json.Field("ok", report->ok());
      stats_json.Field("runs", report->runs);
      stats_json.Field("device", report->device);
      stats_json.Key("outputs");
      stats_json.BeginArray();
      for (const auto& o : report->outputs) {
        std::fprintf(info, "  %-24s max abs %.3g  max rel %.3g%s%s\n", o.name.c_str(), o.max_abs, o.max_rel,
                    o.ok ? "" : "  MISMATCH ", o.problem.c_str());
        stats_json.BeginObject();
        stats_json.Field("name", o.name);
        stats_json.Field("max_abs", o.max_abs);
        stats_json.Field("max_rel", o.max_rel);
        stats_json.Field("ok", o.ok);
        stats_json.EndObject();
      }
      stats_json.EndArray();
      if (!report->ok()) exit_code = 1;
    }
    stats_json.EndObject();
  } else {
    stats_json.Null();
  }
  stats_json.EndObject();
  if (auto stats_file = args->Get("--stats")) {
    std::ofstream f(*stats_file);
    f << stats_json.str() << "\n";
    if (!f) return UsageError(*stats_file + ": cannot write");
  }
  return exit_code;
}

}  // namespace aic::cli
