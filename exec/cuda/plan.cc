// BuildPlan() (the host stage), Emulate(), descriptions and the
// per-signature plan cache. The device stage is device.cc.
#include "exec/cuda/plan.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "exec/cuda/internal.h"
#include "exec/cuda/lowering.h"
#include "exec/common/feeds.h"
#include "exec/common/specialize.h"
#include "ops/infer_shapes.h"

namespace aic::cuda {

absl::Status CheckFeeds(const Plan& plan, const std::map<std::string, RuntimeValue>& feeds) {
  AIC_RETURN_IF_ERROR(exec::CheckFeedNames(plan.feeds, feeds));
  for (const auto& [name, slot_id] : plan.feeds) {
    const Slot& s = plan.slots[slot_id];
    AIC_RETURN_IF_ERROR(exec::CheckCompiledShape(name, feeds.find(name)->second, s.dtype, s.dims));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Plan>> BuildPlan(const Model& model,
                                                const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                                const CudaOptions& options) {
  auto plan = std::make_unique<Plan>();
  plan->options = options;
  plan->model = exec::SpecializedClone(model, input_shapes);
  InferOptions io;
  io.best_effort = true;
  AIC_RETURN_IF_ERROR(InferShapes(*plan->model, io));
  Lowerer lowerer(*plan);
  AIC_RETURN_IF_ERROR(lowerer.LowerAll());
  AIC_RETURN_IF_ERROR(PlanArena(*plan));
  plan->stats.graph_blocker = GraphBlocker(*plan);
  return plan;
}

absl::StatusOr<std::unique_ptr<Plan>> Compile(const Model& model,
                                              const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                              const CudaOptions& options) {
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, BuildPlan(model, input_shapes, options));
  AIC_RETURN_IF_ERROR(Instantiate(*plan));
  return plan;
}

absl::StatusOr<std::vector<RuntimeValue>> Emulate(const Plan& plan, const std::map<std::string, RuntimeValue>& feeds) {
  AIC_RETURN_IF_ERROR(CheckFeeds(plan, feeds));
  // 64-byte aligned host arena; garbage-filled so a read of unwritten bytes shows.
  std::shared_ptr<Buffer> arena = Buffer::Allocate(std::max<size_t>(plan.arena_bytes, 64));
  std::memset(arena->mutable_data(), 0x7f, arena->size());
  std::shared_ptr<Buffer> weights = Buffer::Allocate(std::max<size_t>(plan.weights.size(), 64));
  if (!plan.weights.empty()) std::memcpy(weights->mutable_data(), plan.weights.data(), plan.weights.size());
  Memory mem{arena->mutable_data(), weights->mutable_data()};
  for (const auto& [name, slot] : plan.feeds) {
    const Tensor& t = feeds.at(name).tensor;
    if (t.byte_size() > 0) std::memcpy(plan.Ptr(slot, mem), t.raw_data(), t.byte_size());
  }
  for (const auto& step : plan.steps) AIC_RETURN_IF_ERROR(step->Emulate(plan, mem));
  std::vector<RuntimeValue> outs;
  for (int id : plan.outputs) {
    const Slot& s = plan.slots[id];
    Tensor t(s.dtype, s.dims);
    if (t.byte_size() > 0) std::memcpy(t.mutable_raw_data(), plan.Ptr(id, mem), t.byte_size());
    outs.emplace_back(std::move(t));
  }
  return outs;
}

const PlanStats& StatsOf(const Plan& plan) { return plan.stats; }

std::string DescribePlan(const Plan& plan) {
  std::string out;
  for (const auto& s : plan.steps) {
    absl::StrAppend(&out, s->kind, "\t", s->label);
    for (int w : s->writes) absl::StrAppend(&out, " -> ", plan.slots[w].name, DimsToString(plan.slots[w].dims));
    absl::StrAppend(&out, "\n");
  }
  const PlanStats& st = plan.stats;
  absl::StrAppend(&out, st.steps, " steps: ", st.gemm_steps, " cuBLASLt, ", st.conv_steps, " conv, ", st.kernel_steps,
                  " own kernels, ", st.fallback_steps, " host fallbacks; ", st.view_steps, " views, ", st.fused_nodes,
                  " nodes fused, ", st.folded_nodes, " folded; arena ", st.arena_bytes, " bytes, weights ",
                  st.weight_bytes,
                  " bytes; CUDA Graph: ", st.graph_blocker.empty() ? "yes" : "no (" + st.graph_blocker + ")", "\n");
  return out;
}

absl::StatusOr<std::string> DescribeBuild(const Model& model,
                                          const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                          const CudaOptions& options) {
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, BuildPlan(model, input_shapes, options));
  return DescribePlan(*plan);
}

CudaExecutor::CudaExecutor(const Model& model, CudaOptions options)
    : plans_([&model, options](const exec::PlanCache<Plan>::Shapes& shapes) { return Compile(model, shapes, options); }) {}
CudaExecutor::~CudaExecutor() = default;

absl::StatusOr<Plan*> CudaExecutor::PlanFor(const std::map<std::string, RuntimeValue>& feeds) {
  for (const auto& [name, v] : feeds) {
    if (!v.is_tensor()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a tensor"));
  }
  return plans_.For(feeds);
}

absl::StatusOr<std::vector<RuntimeValue>> CudaExecutor::Run(const std::map<std::string, RuntimeValue>& feeds) {
  AIC_ASSIGN_OR_RETURN(Plan * plan, PlanFor(feeds));
  return cuda::Run(*plan, feeds);
}

}  // namespace aic::cuda
