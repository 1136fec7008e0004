// `aic-onnx verify A.onnx B.onnx`: runs both models, each exactly as given
// (-O0), on one backend with the same inputs and reports the largest absolute
// and relative error per output (exit 1 on a mismatch).
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/model_loading.h"
#include "exec/cpu/plan.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "session/compare.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx verify A.onnx B.onnx [--inputs DIR|random:N] [--rtol R] [--atol A]
                       [--shape NAME=D,D,..] [--device cpu|reference] [--threads N] [--bisect]

Runs A and B, each graph exactly as given, on the same inputs and compares
every output: |a - b| <= atol + rtol * max(|a|, peak/100) (defaults 1e-3 and
1e-4; peak: the output's largest finite |a|, so rounding near zero in a
large-valued output is not a mismatch).
  --inputs DIR       input_<i>.pb (graph input order) or <name>.npy files
  --inputs random:N  N sets of random inputs (default random:2)
  --device           cpu (default): the fast executor, or the reference
                     interpreter where it cannot run A; reference: the oracle
  --bisect           find where they part: run both on the reference
                     interpreter (first input set) observing every value, and
                     name A's first node whose output differs from B's value
                     of the same name, with which of its inputs still agree
Exit: 0 equal, 1 mismatch, 2 bad usage or input (or A cannot run).
)";

int Bisect(const Model& a, const Model& b, const std::vector<std::map<std::string, RuntimeValue>>& feeds,
           const session::CompareOptions& compare, const std::vector<std::string>& paths) {
  if (feeds.empty()) return UsageError("--bisect needs at least one input set");
  auto r = session::BisectModels(a, b, feeds[0], compare);
  if (!r.ok()) return UsageError(paths[0] + ": " + std::string(r.status().message()));
  std::printf("bisect on the reference interpreter, first input set, rtol %g atol %g: %d values in common\n",
              compare.rtol, compare.atol, r->compared);
  if (!r->diverged) {
    std::printf("no value in common differs\n");
    return 0;
  }
  std::printf("first divergence: %s -> '%s': max abs %.3g  max rel %.3g%s%s\n", r->node.c_str(),
              r->value.name.c_str(), r->value.max_abs, r->value.max_rel, r->value.problem.empty() ? "" : "  ",
              r->value.problem.c_str());
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + ("'" + x + "'");
    return s.empty() ? std::string("none") : s;
  };
  std::printf("  its inputs that agree: %s\n", join(r->agreeing_inputs).c_str());
  if (!r->differing_inputs.empty()) {
    std::printf("  its inputs that differ already (constants or graph inputs): %s\n", join(r->differing_inputs).c_str());
  }
  if (!r->unmatched_inputs.empty()) {
    std::printf("  its inputs B does not compute under those names: %s\n", join(r->unmatched_inputs).c_str());
  }
  return 1;
}

}  // namespace

int VerifyCommand(const std::vector<std::string>& argv) {
  auto args = Args::Parse(argv, FlagSpec{{"--inputs", "--rtol", "--atol", "--shape", "--device", "--threads"}, {"--help", "--bisect"}});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("--help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args->positional().size() != 2) return UsageError("verify takes A.onnx and B.onnx (see --help)");
  double rtol = 1e-3, atol = 1e-4;
  try {
    rtol = std::stod(args->GetOr("--rtol", "1e-3"));
    atol = std::stod(args->GetOr("--atol", "1e-4"));
  } catch (...) {
    return UsageError("--rtol/--atol need numbers");
  }
  session::CompareOptions compare;
  compare.rtol = rtol;
  compare.atol = atol;
  compare.device = args->GetOr("--device", "cpu");
  if (compare.device != "cpu" && compare.device != "reference") return UsageError("--device must be cpu or reference");
  auto threads = args->GetInt("--threads", 0);
  if (!threads.ok() || *threads < 0) return UsageError("--threads takes a non-negative integer");
  compare.threads = static_cast<int>(*threads);
  // Before any work: it may re-execute the process (exec/cpu/threading.cc).
  if (compare.device == "cpu") cpu::ConfigureOpenMpWait();
  std::vector<std::unique_ptr<Model>> models;
  for (const std::string& path : args->positional()) {
    auto m = LoadVerifiedModel(path, LoadOptions{.infer_shapes = false});
    if (!m.ok()) return UsageError(std::string(m.status().message()));
    models.push_back(std::move(*m));
  }
  std::string inputs = args->GetOr("--inputs", "random:2");
  std::vector<std::map<std::string, RuntimeValue>> feeds;
  if (inputs.rfind("random:", 0) == 0) {
    int64_t n = 0;
    try {
      n = std::stoll(inputs.substr(7));
    } catch (...) {
      return UsageError("--inputs random:N needs a number");
    }
    session::InputShapes shapes;
    for (const std::string& spec : args->GetAll("--shape")) {
      auto parsed = ParseShapeSpec(spec);
      if (!parsed.ok()) return UsageError(args->positional()[0] + ": " + std::string(parsed.status().message()));
      shapes[parsed->first] = parsed->second;
    }
    auto sets = session::RandomFeedSets(*models[0], shapes, static_cast<int>(std::max<int64_t>(n, 0)));
    if (!sets.ok()) return UsageError(args->positional()[0] + ": " + std::string(sets.status().message()));
    feeds = *std::move(sets);
  } else {
    auto f = FeedsFromDir(*models[0], inputs);
    if (!f.ok()) return UsageError(std::string(f.status().message()));
    feeds.push_back(std::move(*f));
  }
  if (args->Has("--bisect")) return Bisect(*models[0], *models[1], feeds, compare, args->positional());
  auto report = session::CompareModels(*models[0], *models[1], feeds, compare);
  if (!report.ok()) return UsageError(args->positional()[0] + ": " + std::string(report.status().message()));
  if (!report->fallback.empty()) {
    std::fprintf(stderr, "warning: verify runs on the reference interpreter (%s)\n", report->fallback.c_str());
  }
  std::printf("%d input set(s), rtol %g atol %g, on %s: %s\n", report->runs, rtol, atol, report->device.c_str(),
              report->ok() ? "equal" : "MISMATCH");
  for (const auto& o : report->outputs) {
    std::printf("  %-24s max abs %.3g  max rel %.3g%s%s\n", o.name.c_str(), o.max_abs, o.max_rel,
                o.ok ? "" : "  MISMATCH ", o.problem.c_str());
  }
  return report->ok() ? 0 : 1;
}

}  // namespace aic::cli
