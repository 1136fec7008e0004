// `aic-onnx bench`: times a model through a session (the rewriter with the
// rules the backend runs, then the fast CPU executor, or the reference one)
// with random or given inputs: warmup runs, then per-run latencies
// summarized as median/p10/p90, throughput and the process's peak memory.
// --json prints one object for scripts (bench/run_bench.py reads it).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/cuda_device.h"
#include "cli/inputs.h"
#include "cli/model_loading.h"
#include "exec/cpu/plan.h"
#include "session/session.h"
#include "support/json.h"

namespace aic::cli {

namespace {

constexpr char kHelp[] = R"(usage: aic-onnx bench IN.onnx [--shape NAME=D,D,..] [--input NAME=FILE]...
                      [--iters N] [--warmup N] [--threads N] [--device cpu|cuda|reference]
                      [--seed N] [-O0..-O3|--no-opt] [--json] [--plan] [--profile]

Times the model: --warmup runs (default 5), then --iters timed runs (default
50), each on the same inputs (random unless --input gives them; symbolic dims
are 1 unless --shape fixes them). Prints median, p10, p90 latency, throughput
and the process's peak resident memory.
  --threads N   executor threads (default: the core count)
  -O0..-O3      the rewriter's level before compiling (default -O2 on cpu and
                cuda, -O0 on reference); --no-opt is -O0
  --device cuda the GPU executor: each run timed with CUDA events (input and
                output copies included), cycling 8 sets of random inputs
  --json        one JSON object: median_ms, p10_ms, p90_ms, mean_ms,
                throughput_per_s, peak_memory_bytes, baseline_memory_bytes,
                arena_bytes, threads (what the plan ran on: tiny models
                run on one), iters, warmup, compile_ms (rewriter and
                compile), optimize_ms, opt_level, nodes (of the graph that
                runs), steps, fallback_steps, slow_impl_steps (oneDNN
                primitives on a reference or naive loop), plan_digest (the plan's
                structure without names: equal for equal plans)
  --plan        print the compiled plan (one line per step) to stderr
  --profile     after the timing, time per step over the timed runs: a table
                by step kind and op type (share of the total, sorted) and the
                slowest steps (cpu device only; not with --json)
)";

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS"), or 0.
size_t ProcStatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return static_cast<size_t>(std::stoull(line.substr(field.size() + 1))) * 1024;
    }
  }
  return 0;
}

double Percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  double idx = p * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(idx);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - static_cast<double>(lo));
}

// A digest of the plan's structure: per step its kind, op type, post-ops and
// output dims, without value or node names (which a model and its `opt`
// output spell differently). Equal digests: the same compiled plan.
std::string PlanShapeDigest(const std::string& plan_text) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  };
  size_t pos = 0;
  while (pos < plan_text.size()) {
    size_t end = plan_text.find('\n', pos);
    if (end == std::string::npos) end = plan_text.size();
    std::string line = plan_text.substr(pos, end - pos);
    pos = end + 1;
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;  // the totals line
    std::string rest = line.substr(tab + 1);
    mix(line.substr(0, tab) + " " + rest.substr(0, rest.find(' ')));
    size_t post = rest.find(" + [");
    if (post != std::string::npos) {
      std::string ops = rest.substr(post, rest.find(']', post) - post);
      std::string unnamed;  // a fused node's name in quotes ("Transpose 'T_12'") is not structure
      bool quoted = false;
      for (char c : ops) {
        if (c == '\'') quoted = !quoted;
        else if (!quoted) unnamed += c;
      }
      mix(unnamed);
    }
    for (size_t arrow = rest.find(" -> "); arrow != std::string::npos; arrow = rest.find(" -> ", arrow + 4)) {
      size_t open = rest.find('[', arrow);
      if (open != std::string::npos) mix(rest.substr(open, rest.find(']', open) - open));
    }
    mix(";");
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

int BenchCommand(const std::vector<std::string>& argv_in) {
  cpu::ConfigureOpenMpWait();
  size_t baseline = ProcStatusBytes("VmRSS");
  std::vector<std::string> argv = argv_in;
  std::optional<int> opt_level = TakeOptLevel(argv);
  auto args = Args::Parse(argv, FlagSpec{{"--input", "--shape", "--seed", "--iters", "--warmup", "--threads",
                                          "--device"},
                                         {"--help", "--json", "--plan", "--profile"}});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->Has("--help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args->positional().size() != 1) return UsageError("bench takes one model file (see --help)");
  const std::string& path = args->positional()[0];
  auto iters = args->GetInt("--iters", 50);
  auto warmup = args->GetInt("--warmup", 5);
  auto threads = args->GetInt("--threads", 0);
  auto seed = args->GetInt("--seed", 0);
  if (!iters.ok() || !warmup.ok() || !threads.ok() || !seed.ok() || *iters < 1 || *warmup < 0 || *threads < 0) {
    return UsageError("--iters, --warmup, --threads and --seed take non-negative integers (--iters >= 1)");
  }
  std::string device = args->GetOr("--device", "cpu");
  if (device == "cuda") HandOffToCudaCompanion();
  if (session::FindBackend(device) == nullptr) return UsageError("--device must be cpu, cuda or reference");
  bool json = args->Has("--json");
  bool progress = !json && isatty(STDERR_FILENO);

  auto model = LoadVerifiedModel(path, LoadOptions{.infer_shapes = false});
  if (!model.ok()) return UsageError(std::string(model.status().message()));
  InputOptions input_options;
  input_options.random = true;
  input_options.seed = static_cast<uint64_t>(*seed);
  input_options.files = args->GetAll("--input");
  input_options.shapes = args->GetAll("--shape");
  auto feeds = BuildFeeds(**model, input_options);
  if (!feeds.ok()) return UsageError(path + ": " + std::string(feeds.status().message()));

  auto t0 = std::chrono::steady_clock::now();
  session::SessionOptions options;
  options.device = device;
  options.threads = static_cast<int>(*threads);
  options.opt_level = opt_level;
  auto created = OpenSession(path, std::move(*model), options);
  if (!created.ok()) return UsageError(std::string(created.status().message()));
  session::Session& session = **created;
  double optimize_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (device == "cuda") {
    return BenchOnCuda(path, session.model(), input_options, {*iters, *warmup, json, args->Has("--plan")});
  }
  auto summary = session.Prepare(*feeds);
  if (!summary.ok()) return UsageError(path + ": " + std::string(summary.status().message()));
  double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (args->Has("--plan")) std::fprintf(stderr, "graph: %s\n%s", session.Describe().c_str(), summary->text.c_str());
  exec::RunOptions run_options;  // profiling for the timed runs only
  auto run_once = [&]() -> absl::Status { return session.Run(*feeds, run_options).status(); };
  for (int64_t i = 0; i < *warmup; ++i) {
    if (absl::Status s = run_once(); !s.ok()) return UsageError(path + ": " + std::string(s.message()));
  }
  std::vector<double> ms;
  bool profiling = args->Has("--profile") && device == "cpu" && !json;
  run_options.profile = profiling;
  for (int64_t i = 0; i < *iters; ++i) {
    auto a = std::chrono::steady_clock::now();
    if (absl::Status s = run_once(); !s.ok()) return UsageError(path + ": " + std::string(s.message()));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
    if (progress) std::fprintf(stderr, "\r  run %lld/%lld", static_cast<long long>(i + 1), static_cast<long long>(*iters));
  }
  if (progress) std::fputs("\n", stderr);
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double median = Percentile(sorted, 0.5), p10 = Percentile(sorted, 0.1), p90 = Percentile(sorted, 0.9);
  double mean = 0;
  for (double v : ms) mean += v / static_cast<double>(ms.size());
  size_t peak = ProcStatusBytes("VmHWM");
  const exec::PlanSummary& plan = *summary;
  int64_t nodes = static_cast<int64_t>(session.model().graph->num_nodes());
  if (json) {
    JsonWriter j(/*one_line=*/true);
    j.BeginObject();
    j.Field("model", path);
    j.Field("device", device);
    j.Field("median_ms", median);
    j.Field("p10_ms", p10);
    j.Field("p90_ms", p90);
    j.Field("mean_ms", mean);
    j.Field("min_ms", sorted.front());
    j.Field("throughput_per_s", 1000.0 / median);
    j.Field("peak_memory_bytes", static_cast<int64_t>(peak));
    j.Field("baseline_memory_bytes", static_cast<int64_t>(baseline));
    j.Field("arena_bytes", static_cast<int64_t>(plan.arena_bytes));
    j.Field("threads", plan.threads);
    j.Field("iters", *iters);
    j.Field("warmup", *warmup);
    j.Field("compile_ms", compile_ms);
    j.Field("optimize_ms", optimize_ms);
    j.Field("opt_level", session.opt_level());
    j.Field("nodes", nodes);
    j.Field("steps", plan.steps);
    j.Field("fallback_steps", plan.fallback_steps);
    j.Field("slow_impl_steps", plan.slow_impl_steps);
    j.Field("plan_digest", PlanShapeDigest(plan.text));
    j.Field("activation_bytes", static_cast<int64_t>(plan.activation_bytes));
    j.Field("macs", plan.macs);
    j.EndObject();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("%s on %s, %d thread(s), %lld runs after %lld warmup\n", path.c_str(), device.c_str(), plan.threads,
              static_cast<long long>(*iters), static_cast<long long>(*warmup));
  std::printf("  latency  median %.4f ms   p10 %.4f ms   p90 %.4f ms   (min %.4f)\n", median, p10, p90,
              sorted.front());
  std::printf("  throughput %.1f runs/s\n", 1000.0 / median);
  std::printf("  peak memory %.1f MiB (process), arena %.1f MiB; compile %.1f ms (rewriter -O%d %.1f ms, %lld nodes), "
              "%d steps (%d reference, %d on slow oneDNN paths)\n",
              static_cast<double>(peak) / (1 << 20), static_cast<double>(plan.arena_bytes) / (1 << 20), compile_ms,
              session.opt_level(), optimize_ms, static_cast<long long>(nodes), plan.steps, plan.fallback_steps, plan.slow_impl_steps);
  if (profiling) std::fputs(session.ProfileReport(*feeds).c_str(), stdout);
  return 0;
}

}  // namespace aic::cli
