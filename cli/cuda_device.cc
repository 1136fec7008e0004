#include "cli/cuda_device.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "support/json.h"
#include "support/reexec.h"
#ifdef AIC_HAVE_CUDA
#include "exec/cuda/plan.h"
#endif

namespace aic::cli {

void HandOffToCudaCompanion() {
#if !defined(AIC_HAVE_CUDA) && defined(AIC_CUDA_COMPANION)
  std::string dir = OwnExecutableDir();
  if (dir.empty()) return;
  std::string companion = dir + "/" + AIC_CUDA_COMPANION;
  if (access(companion.c_str(), X_OK) != 0) return;
  ExecWithArguments(companion, OwnArguments());
#endif
}

#ifdef AIC_HAVE_CUDA

int BenchOnCuda(const std::string& path, const Model& model, const InputOptions& inputs,
                const CudaBenchOptions& options) {
  std::vector<std::map<std::string, RuntimeValue>> sets;
  for (int i = 0; i < std::max(1, options.input_sets); ++i) {
    InputOptions o = inputs;
    o.seed = inputs.seed + static_cast<uint64_t>(i);
    auto feeds = BuildFeeds(model, o);
    if (!feeds.ok()) return UsageError(path + ": " + std::string(feeds.status().message()));
    sets.push_back(std::move(*feeds));
  }
  if (options.show_plan) {
    // The host stage needs no GPU: show the plan even when no device is there.
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto& [name, v] : sets[0]) {
      if (v.is_tensor()) shapes[name] = v.tensor.dims();
    }
    auto text = cuda::DescribeBuild(model, shapes);
    if (!text.ok()) return UsageError(path + ": " + std::string(text.status().message()));
    std::fputs(text->c_str(), stderr);
  }
  cuda::CudaExecutor executor(model);
  auto t0 = std::chrono::steady_clock::now();
  auto plan = executor.PlanFor(sets[0]);
  if (!plan.ok()) return UsageError(path + ": " + std::string(plan.status().message()));
  double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto ms = cuda::TimeRuns(**plan, sets, static_cast<int>(options.warmup), static_cast<int>(options.iters));
  if (!ms.ok()) return UsageError(path + ": " + std::string(ms.status().message()));
  std::vector<double> sorted = *ms;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double p) { return sorted[static_cast<size_t>(p * static_cast<double>(sorted.size() - 1))]; };
  double mean = 0;
  for (double v : sorted) mean += v / static_cast<double>(sorted.size());
  const cuda::PlanStats& st = cuda::StatsOf(**plan);
  bool graph = cuda::UsesCudaGraph(**plan);
  if (options.json) {
    JsonWriter j(/*one_line=*/true);
    j.BeginObject();
    j.Field("model", path);
    j.Field("device", "cuda");
    j.Field("timing", "cuda_events");
    j.Field("median_ms", pct(0.5));
    j.Field("p10_ms", pct(0.1));
    j.Field("p90_ms", pct(0.9));
    j.Field("mean_ms", mean);
    j.Field("min_ms", sorted.front());
    j.Field("throughput_per_s", 1000.0 / pct(0.5));
    j.Field("arena_bytes", static_cast<int64_t>(st.arena_bytes));
    j.Field("weight_bytes", static_cast<int64_t>(st.weight_bytes));
    j.Field("iters", options.iters);
    j.Field("warmup", options.warmup);
    j.Field("compile_ms", compile_ms);
    j.Field("steps", st.steps);
    j.Field("gemm_steps", st.gemm_steps);
    j.Field("fallback_steps", st.fallback_steps);
    j.Field("cuda_graph", graph);
    j.EndObject();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("%s on cuda (%s), %lld runs after %lld warmup, CUDA-event timing incl. input/output copies\n",
              path.c_str(), graph ? "CUDA Graph replay" : ("eager: " + st.graph_blocker).c_str(),
              static_cast<long long>(options.iters), static_cast<long long>(options.warmup));
  std::printf("  latency  median %.4f ms   p10 %.4f ms   p90 %.4f ms   (min %.4f)\n", pct(0.5), pct(0.1), pct(0.9),
              sorted.front());
  std::printf("  throughput %.1f runs/s\n", 1000.0 / pct(0.5));
  std::printf("  device arena %.1f MiB, weights %.1f MiB; compile %.1f ms, %d steps (%d cuBLASLt, %d host fallback)\n",
              static_cast<double>(st.arena_bytes) / (1 << 20), static_cast<double>(st.weight_bytes) / (1 << 20),
              compile_ms, st.steps, st.gemm_steps, st.fallback_steps);
  return 0;
}

#else

int BenchOnCuda(const std::string& path, const Model&, const InputOptions&, const CudaBenchOptions&) {
  return UsageError("--device cuda is not available in this build (no nvcc at configure time)");
}

#endif

}  // namespace aic::cli
