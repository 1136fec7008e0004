// Variadic elementwise ops (Sum, Mean, Min, Max): any number of inputs, all
// broadcast together. They fold pairwise through the binary driver, since
// broadcast(a, b, c) = broadcast(broadcast(a, b), c); Mean divides the sum at
// the end. fp16/bf16 inputs accumulate in float and round once.
#include <algorithm>

#include "ops/math/elementwise_common.h"
#include "ops/registry.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// NaN-propagating min/max, as numpy's minimum/maximum.
template <typename T>
T MinScalar(T a, T b) {
  if (IsNanValue(a)) return a;
  if (IsNanValue(b)) return b;
  return std::min(a, b);
}
template <typename T>
T MaxScalar(T a, T b) {
  if (IsNanValue(a)) return a;
  if (IsNanValue(b)) return b;
  return std::max(a, b);
}

template <TypeSet S, typename F>
KernelFn FoldKernel(F f, bool mean) {
  return [f, mean](KernelContext& ctx) -> absl::Status {
    AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 1));
    const DType dtype = ctx.input(0).dtype();
    Tensor acc = WidenToFloat(ctx.input(0));
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) continue;
      AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, i + 1));
      if (ctx.input(i).dtype() != dtype) {
        return ctx.Error("input dtypes differ: ", DTypeName(dtype), " and ",
                         DTypeName(ctx.input(i).dtype()));
      }
      Tensor next = WidenToFloat(ctx.input(i));
      absl::StatusOr<Tensor> z;
      absl::Status s = DispatchSet<S>(acc.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        z = MapBinary<T, T, T>(acc, next, acc.dtype(), f);
      });
      if (!s.ok()) return ctx.Unimplemented(s.message());
      if (!z.ok()) return ctx.Error(z.status().message());
      acc = *std::move(z);
    }
    if (ctx.num_inputs() == 1) acc = acc.Clone();  // never alias the input buffer
    if (mean) {
      const double n = static_cast<double>(ctx.num_inputs());
      absl::Status s = DispatchFloat(acc.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        acc = MapUnary<T, T>(acc, acc.dtype(), [n](T v) { return static_cast<T>(v / n); });
      });
      if (!s.ok()) return ctx.Unimplemented(s.message());
    }
    ctx.set_output(0, NarrowFromFloat(acc, dtype));
    return absl::OkStatus();
  };
}

// (n-1) pairwise operations per output element; Mean adds the division.
CostFn FoldCost(bool mean) {
  return [mean](const OpContext& ctx) {
    int64_t n = static_cast<int64_t>(ctx.num_inputs());
    return ElementwiseCost(ctx, std::max<int64_t>(n - 1, 0) + (mean ? 1 : 0));
  };
}

}  // namespace

void RegisterVariadicOps(OpRegistry& r) {
  r.Register(MakeOpDef("Sum", 1, BroadcastInfer(TypeSet::kFloat),
                       PointwiseTraitsFn(PointwiseInfo("Sum", "y = Σᵢ xᵢ")
                                             .Linear()
                                             .Irreversible()
                                             .Collapses(CollapseKind::kProjects,
                                                        "inputs summed into one")
                                             .RemovableWhen("a single input")),
                       FoldCost(false),
                       FoldKernel<TypeSet::kFloat>([](auto a, auto b) { return a + b; }, false)));
  r.Register(MakeOpDef("Mean", 1, BroadcastInfer(TypeSet::kFloat),
                       PointwiseTraitsFn(PointwiseInfo("Mean", "y = (1/n) Σᵢ xᵢ")
                                             .Linear()
                                             .Irreversible()
                                             .Collapses(CollapseKind::kProjects,
                                                        "inputs averaged into one")
                                             .RemovableWhen("a single input")),
                       FoldCost(true),
                       FoldKernel<TypeSet::kFloat>([](auto a, auto b) { return a + b; }, true)));
  r.Register(MakeOpDef("Min", 1, BroadcastInfer(TypeSet::kNumeric),
                       PointwiseTraitsFn(PointwiseInfo("Min", "y = minᵢ xᵢ")
                                             .Irreversible()
                                             .Collapses(CollapseKind::kSelects,
                                                        "the smallest input kept, others dropped")
                                             .RemovableWhen("a single input")),
                       FoldCost(false),
                       FoldKernel<TypeSet::kNumeric>([](auto a, auto b) { return MinScalar(a, b); },
                                                     false)));
  r.Register(MakeOpDef("Max", 1, BroadcastInfer(TypeSet::kNumeric),
                       PointwiseTraitsFn(PointwiseInfo("Max", "y = maxᵢ xᵢ")
                                             .Irreversible()
                                             .Collapses(CollapseKind::kSelects,
                                                        "the largest input kept, others dropped")
                                             .RemovableWhen("a single input")),
                       FoldCost(false),
                       FoldKernel<TypeSet::kNumeric>([](auto a, auto b) { return MaxScalar(a, b); },
                                                     false)));
}

}  // namespace aic
