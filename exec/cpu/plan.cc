// Compile(), Run() and the per-signature plan cache.
#include "exec/cpu/plan.h"

#include <dlfcn.h>

#include <chrono>
#include <cstring>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "exec/cpu/internal.h"
#include "exec/common/feeds.h"
#include "exec/common/specialize.h"
#include "exec/cpu/lowering.h"
#include "exec/cpu/widen_half.h"
#include "ops/infer_shapes.h"
#include "ops/ml/ml_ops.h"
#include "ops/op_context.h"
#include "ops/registry.h"

namespace aic::cpu {

namespace {

// Threads pay off when the steps have enough arithmetic each: forking and
// joining a team costs microseconds per primitive, so a model of many small
// ops (PP-OCR cls: ~0.1 M MACs a node) runs faster on one thread, while a
// single large GEMM or a ResNet wants them all.
constexpr int64_t kParallelMinMacs = int64_t{10} << 20;       // whole model
constexpr int64_t kParallelMinMacsPerNode = int64_t{1} << 19;  // on average
// Or enough bytes read and written per node (activations of any dtype,
// weights aside) that the memory-bound kernels (elementwise, normalizations,
// copies, arg-reductions: no MACs) split across cores. Counting only f32
// outputs sent ArgMax over 3.2 MB and bool NonZero inputs to one thread
// beside ORT's two. At 4 MiB a node, ops of 20-200 µs still ran on one: at
// 2 threads (bench/ops/run_ops.py, aic/ORT) MaxPool 3x3s2 [1, 64, 112, 112]
// 2.35 -> 1.19, LayerNormalization [1, 128, 768] 1.58 -> 0.82, Softmax
// [128, 1000] 1.62 -> 0.84, Tanh [1, 128, 768] 1.41 -> 0.65 at 256 KiB; no
// model of bench/zoo changed its thread count, and PP-OCR cls (0.1 M MACs and
// under 128 KiB a node) stays on one thread.
constexpr size_t kParallelMinBytesPerNode = size_t{256} << 10;
// Or enough weights per node that streaming them bounds the time: a decoder
// step at batch 1 (gpt2_small_past: 30 MB of weights over 154 nodes, each
// MatMul a matrix-vector product) ran 0.57 ms on one thread, 0.40 on two,
// though its MACs (7.5 M) call it small.
constexpr size_t kParallelMinWeightBytes = size_t{4} << 20;
constexpr size_t kParallelMinWeightBytesPerNode = size_t{128} << 10;

// The ai.onnx.ml models' arithmetic is scalar and branchy (a tree node
// visit, an SVM kernel's exp): one of their flops takes about as long as 16
// MACs of a vectorized GEMM (sk_gradient_boosting, 256 rows: 0.8 M flops by
// its cost hook, 0.15 ms on one thread), so they count that much towards
// the threads decision. Without it a 256-row forest or SVM ran on one
// thread beside ORT's two (1.4x its time).
constexpr int64_t kMlFlopWeight = 16;

// Multiply-accumulates of the (shape-specialized) graph from the OpDefs' cost
// hooks (ops whose cost is not known count zero), and the work the threads
// decision weighs: the same, with the ml ops' flops in MAC equivalents.
struct GraphWork {
  int64_t macs = 0;
  int64_t work = 0;
};

GraphWork WorkOf(const Model& model) {
  GraphWork total;
  for (const auto& n : model.graph->nodes()) {
    int64_t opset = model.OpsetFor(n->domain);
    const OpDef* def = OpRegistry::Global().Find(n->domain, n->op_type, opset);
    if (def == nullptr || !def->cost) continue;
    std::vector<TypeInfo> types;
    std::vector<const Tensor*> constants;
    for (const Value* v : n->inputs()) {
      types.push_back(v != nullptr ? v->type() : TypeInfo());
      constants.push_back(v != nullptr ? v->initializer() : nullptr);
    }
    OpContext ctx(*n, opset, std::move(types), std::move(constants), nullptr);
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      if (n->output(i) != nullptr) ctx.set_output_type(i, n->output(i)->type());
    }
    Cost cost = def->cost(ctx);
    if (!cost.known) continue;
    const int64_t macs = std::max<int64_t>(0, cost.macs);
    total.macs += macs;
    total.work += n->domain == kMlDomain ? std::max(macs, std::max<int64_t>(0, cost.flops)) * kMlFlopWeight : macs;
  }
  return total;
}


// Whether t's bytes are a graph input's (an Identity-like fallback kernel
// returns its input's storage): the caller gets its own copy then.
bool SharesAFeed(const Plan& plan, const Tensor& t) {
  if (t.buffer() == nullptr) return false;
  for (const Slot& s : plan.slots) {
    if (s.storage == Slot::Storage::kFeed && s.tensor.buffer() == t.buffer()) return true;
  }
  return false;
}

// `held` as a tensor of dtype and dims to write this run's output into: the
// last run's when its caller has let it go (only `held` owns the buffer: its
// pages are already mapped, where a fresh allocation faults them in again
// while the output is written), else a fresh one. Not zeroed: the writer
// writes every element.
void RenewUnlessReleased(Tensor& held, DType dtype, const std::vector<int64_t>& dims) {
  if (held.buffer() != nullptr && held.buffer().use_count() == 1 && held.dtype() == dtype && held.dims() == dims) {
    return;
  }
  held = Tensor();  // not alive beside its successor
  held = Tensor(dtype, dims, Buffer::AllocateUninitialized(ByteSizeOf(dtype, NumElements(dims))));
}

}  // namespace

int SetCpuThreads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // oneDNN here runs on OpenMP; its runtime is loaded with libdnnl, so look
  // the setter up rather than link OpenMP ourselves.
  using SetFn = void (*)(int);
  static SetFn set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set != nullptr) set(threads);
  return threads;
}

absl::StatusOr<std::unique_ptr<Plan>> Compile(const Model& model,
                                              const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                              const CpuOptions& options) {
  auto plan = std::make_unique<Plan>();
  plan->threads = SetCpuThreads(options.threads);
  plan->model = exec::SpecializedClone(model, input_shapes);
  InferOptions io;
  io.best_effort = true;
  if (options.compute_half_in_float && DeclaresHalfPrecision(*plan->model)) {
    // Widening reads every value's dtype: infer them first.
    AIC_RETURN_IF_ERROR(InferShapes(*plan->model, io));
    WidenedHalf widened;
    WidenHalfToFloat(*plan->model, &widened);
    plan->stored_half = std::move(widened.stored);
    plan->declared_half = std::move(widened.declared);
    plan->half_originals = std::move(widened.originals);
  }
  AIC_RETURN_IF_ERROR(InferShapes(*plan->model, io));
  size_t activation_bytes = 0;
  for (const auto& v : plan->model->graph->values()) {
    if (v->producer() != nullptr && v->type().is_tensor() && v->dtype() == DType::kFloat &&
        v->shape().has_rank() && v->shape().IsStatic()) {
      activation_bytes += static_cast<size_t>(*v->shape().NumElements()) * 4;
    }
  }
  plan->stats.activation_bytes = activation_bytes;
  const GraphWork work = WorkOf(*plan->model);
  plan->stats.macs = work.macs;
  int64_t nodes = std::max<int64_t>(1, static_cast<int64_t>(plan->model->graph->nodes().size()));
  bool compute_bound = work.work >= kParallelMinMacs && work.work / nodes >= kParallelMinMacsPerNode;
  size_t moved_bytes = 0;
  auto bytes_of = [](const Value* v) -> size_t {
    if (v == nullptr || v->initializer() != nullptr || !v->type().is_tensor() || !v->shape().has_rank() ||
        !v->shape().IsStatic() || v->dtype() == DType::kString || v->dtype() == DType::kUndefined) {
      return 0;
    }
    return ByteSizeOf(v->dtype(), *v->shape().NumElements());
  };
  // A selecting op reads about what it writes, not its whole data input: a
  // Gather of one position of [8, 512, 768] (a pooler's first token) counted
  // 12 MB and ran on two threads, whose wake-up took 70x its 0.8 µs.
  static const std::set<std::string> kSelecting = {"Gather", "GatherElements", "GatherND", "Slice"};
  for (const auto& n : plan->model->graph->nodes()) {
    const bool selecting = n->domain.empty() && kSelecting.count(n->op_type) > 0;
    for (size_t i = 0; i < n->num_inputs(); ++i) moved_bytes += selecting && i == 0 ? 0 : bytes_of(n->input(i));
    for (const Value* v : n->outputs()) moved_bytes += (selecting ? 2 : 1) * bytes_of(v);
  }
  bool bandwidth_bound = moved_bytes / static_cast<size_t>(nodes) >= kParallelMinBytesPerNode;
  size_t weight_bytes = 0;
  for (const auto& v : plan->model->graph->values()) {
    if (v->initializer() != nullptr) weight_bytes += v->initializer()->byte_size();
  }
  bool weight_bound = weight_bytes >= kParallelMinWeightBytes &&
                      weight_bytes / static_cast<size_t>(nodes) >= kParallelMinWeightBytesPerNode;
  if (plan->threads > 1 && !compute_bound && !bandwidth_bound && !weight_bound) {
    plan->threads = SetCpuThreads(1);
  }
  try {
    Lowerer lowerer(*plan, options);
    AIC_RETURN_IF_ERROR(lowerer.LowerAll());
    AIC_RETURN_IF_ERROR(PlaceArena(*plan));
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
  return plan;
}

absl::StatusOr<std::vector<RuntimeValue>> Run(Plan& plan, const std::map<std::string, RuntimeValue>& feeds,
                                              RunProfile* profile) {
  SetCpuThreads(plan.threads);
  AIC_RETURN_IF_ERROR(exec::CheckFeedNames(plan.feeds, feeds));
  for (const auto& [name, slot_id] : plan.feeds) {
    const RuntimeValue& given = feeds.find(name)->second;
    Slot& s = plan.slots[slot_id];
    if (!s.static_shape) {  // a sequence or optional input: whatever was fed
      s.Set(given);
      continue;
    }
    AIC_RETURN_IF_ERROR(exec::CheckCompiledShape(name, given, s.dtype, s.dims));
    const Tensor& t = given.tensor;
    s.tensor = t;
    s.ptr = const_cast<void*>(t.raw_data());
  }
  for (int id : plan.outputs) {
    Slot& s = plan.slots[id];
    if (s.storage != Slot::Storage::kOutput || s.ptr != nullptr) continue;  // listed twice
    // The last run's tensor comes back when its caller has let it go (the
    // common loop), written in place by its producer as it would be in the
    // arena (a control-flow body's output, held by the enclosing plan until
    // the next run, was a fresh zeroed 12 MB each run).
    RenewUnlessReleased(s.tensor, s.dtype, s.dims);
    s.ptr = s.tensor.mutable_raw_data();
  }
  if (profile == nullptr) {
    for (auto& step : plan.steps) AIC_RETURN_IF_ERROR(step->Execute(plan));
  } else {
    // CPU-engine primitives return when done, so a step's wall time is its cost.
    profile->step_seconds.resize(plan.steps.size(), 0.0);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      auto start = std::chrono::steady_clock::now();
      AIC_RETURN_IF_ERROR(plan.steps[i]->Execute(plan));
      profile->step_seconds[i] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    ++profile->runs;
  }
  plan.stream.wait();
  std::vector<RuntimeValue> outs;
  outs.reserve(plan.outputs.size());
  for (int id : plan.outputs) {
    Slot& s = plan.slots[id];
    if (s.holds_other || (s.storage == Slot::Storage::kFeed && !s.static_shape)) {
      // A sequence or optional (possibly holding a tensor this run).
      RuntimeValue v = s.Get();
      if (v.is_tensor()) v.tensor = v.tensor.Clone();
      for (Tensor& t : v.sequence) t = t.Clone();
      outs.push_back(std::move(v));
      continue;
    }
    if (s.storage == Slot::Storage::kOutput) {
      // Handed over; a second listing of the same output gets a copy.
      if (s.ptr != nullptr) {
        outs.emplace_back(s.tensor);  // shared: the slot may reuse it once the caller drops it
        s.ptr = nullptr;
      } else {
        size_t first = 0;
        while (plan.outputs[first] != id) ++first;
        outs.emplace_back(outs[first].tensor.Clone());
      }
      continue;
    }
    if (s.storage == Slot::Storage::kDynamic && s.dtype != DType::kString && !SharesAFeed(plan, s.tensor)) {
      // A fallback's result: the step replaces the slot's tensor next run and
      // nothing writes into it (a body plan reuses its output buffer only once
      // the caller has let it go), so it is handed over, not copied: an If
      // returning a 12 MB branch result copied it.
      outs.emplace_back(s.tensor);
      continue;
    }
    if (s.dtype == DType::kString) {
      outs.emplace_back(s.tensor.Clone());
      continue;
    }
    // Copied out of the arena or a feed (a view, an in-place output) into the
    // last run's copy once its caller has let it go, as an output slot's
    // tensor above (a fresh 12 MB copy faulted its pages in: a view Reshape
    // of [8, 512, 768] took 7-9 ms a run for its first ten runs, 0.6 after).
    const bool dynamic = s.storage == Slot::Storage::kDynamic;  // a feed's view: this run's dims
    RenewUnlessReleased(s.copied_out, dynamic ? s.tensor.dtype() : s.dtype, dynamic ? s.tensor.dims() : s.dims);
    const size_t bytes = s.copied_out.byte_size();
    if (bytes > 0) std::memcpy(s.copied_out.mutable_raw_data(), dynamic ? s.tensor.raw_data() : s.ptr, bytes);
    outs.emplace_back(s.copied_out);
  }
  return outs;
}

const PlanStats& StatsOf(const Plan& plan) { return plan.stats; }
int ThreadsOf(const Plan& plan) { return plan.threads; }

std::string DescribePlan(const Plan& plan) {
  std::string out;
  for (const auto& s : plan.steps) {
    absl::StrAppend(&out, s->kind, "\t", s->label);
    for (int w : s->writes) {
      const Slot& slot = plan.slots[w];
      absl::StrAppend(&out, " -> ", slot.name, DimsToString(slot.dims), slot.plain ? "" : " (blocked)");
    }
    if (!s->impl.empty()) absl::StrAppend(&out, " impl=", s->impl);
    absl::StrAppend(&out, "\n");
  }
  const PlanStats& st = plan.stats;
  absl::StrAppend(&out, st.steps, " steps: ", st.dnnl_steps, " oneDNN, ", st.native_steps, " own kernels, ", st.reorder_steps, " reorders, ",
                  st.fallback_steps, " reference, ", st.view_steps, " views, ", st.slow_impl_steps,
                  " on slow oneDNN paths; ", st.fused_nodes, " nodes fused, ",
                  st.folded_nodes, " folded; arena ", st.arena_bytes, " bytes, packed weights ", st.weight_bytes,
                  " bytes (their plain copies released: ", st.released_weight_bytes, " bytes)\n");
  return out;
}

CpuExecutor::CpuExecutor(const Model& model, CpuOptions options)
    : plans_([&model, options](const exec::PlanCache<Plan>::Shapes& shapes) { return Compile(model, shapes, options); }) {}
CpuExecutor::~CpuExecutor() = default;

absl::StatusOr<Plan*> CpuExecutor::PlanFor(const std::map<std::string, RuntimeValue>& feeds) { return plans_.For(feeds); }

absl::StatusOr<std::vector<RuntimeValue>> CpuExecutor::Run(const std::map<std::string, RuntimeValue>& feeds) {
  AIC_ASSIGN_OR_RETURN(Plan* plan, PlanFor(feeds));
  return cpu::Run(*plan, feeds);
}

}  // namespace aic::cpu
