// The Reduce* family (ReduceSum, ReduceMean, ReduceMax, ..., ReduceLogSumExp).
// Each op is one row of a table: an accumulator seed, a step, and a finishing
// function on long double, run by one shared reference driver. long double
// holds every int64/uint64 exactly and gives floats extra headroom, so one
// accumulator type serves every dtype. Axes resolution lives in reduce_axes.cc.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/math/reduce_axes.h"
#include "ops/registry.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"
#include "ops/util/dispatch.h"
#include "ops/util/float_convert.h"

namespace aic {

namespace {

using Acc = long double;

struct ReduceMath {
  Acc init;                          // identity element: the result over an empty set
  Acc (*step)(Acc acc, Acc x);
  Acc (*finish)(Acc acc, int64_t count);
  bool shift_by_max = false;         // LogSumExp: accumulate exp(x - max) so exp cannot overflow
};

struct ReduceOpInfo {
  const char* op_type;
  const char* semantic;
  const char* formula;               // what one output element is, over the reduced set
  Linearity linearity;
  bool noop_is_identity;             // reducing one element returns it unchanged
  bool allows_bool;                  // ReduceMax/Min accept bool (opset 20)
  int64_t flops_per_element;
  ReduceMath math;
};

constexpr Acc kInf = std::numeric_limits<Acc>::infinity();

Acc StepAdd(Acc a, Acc x) { return a + x; }
Acc StepAbsAdd(Acc a, Acc x) { return a + std::fabs(x); }
Acc StepSquareAdd(Acc a, Acc x) { return a + x * x; }
Acc StepMul(Acc a, Acc x) { return a * x; }
Acc StepExpAdd(Acc a, Acc x) { return a + std::exp(x); }
// NaN wins, as in numpy's max/min.
Acc StepMax(Acc a, Acc x) { return (std::isnan(x) || x > a) ? x : a; }
Acc StepMin(Acc a, Acc x) { return (std::isnan(x) || x < a) ? x : a; }

Acc FinishSame(Acc a, int64_t) { return a; }
Acc FinishMean(Acc a, int64_t n) {
  return n == 0 ? std::numeric_limits<Acc>::quiet_NaN() : a / static_cast<Acc>(n);
}
Acc FinishSqrt(Acc a, int64_t) { return std::sqrt(a); }
Acc FinishLog(Acc a, int64_t) { return std::log(a); }

const ReduceOpInfo kReduceOps[] = {
    {"ReduceSum", "Sum", "Σ x", Linearity::kLinear, true, false, 1,
     {0, StepAdd, FinishSame}},
    {"ReduceMean", "Mean", "(1/n) Σ x", Linearity::kLinear, true, false, 1,
     {0, StepAdd, FinishMean}},
    {"ReduceMax", "Max", "max x", Linearity::kNonlinear, true, true, 1,
     {-kInf, StepMax, FinishSame}},
    {"ReduceMin", "Min", "min x", Linearity::kNonlinear, true, true, 1,
     {kInf, StepMin, FinishSame}},
    {"ReduceProd", "Product", "Π x", Linearity::kNonlinear, true, false, 1,
     {1, StepMul, FinishSame}},
    {"ReduceL1", "L1 norm", "Σ |x|", Linearity::kNonlinear, false, false, 2,
     {0, StepAbsAdd, FinishSame}},
    {"ReduceL2", "L2 norm", "sqrt(Σ x²)", Linearity::kNonlinear, false, false, 2,
     {0, StepSquareAdd, FinishSqrt}},
    {"ReduceSumSquare", "SumSquare", "Σ x²", Linearity::kNonlinear, false, false, 2,
     {0, StepSquareAdd, FinishSame}},
    {"ReduceLogSum", "LogSum", "log(Σ x)", Linearity::kNonlinear, false, false, 1,
     {0, StepAdd, FinishLog}},
    {"ReduceLogSumExp", "LogSumExp", "log(Σ exp(x))", Linearity::kNonlinear, true, false, 3,
     {0, StepExpAdd, FinishLog, /*shift_by_max=*/true}},
};

// Converts an accumulated value to the output element type. Integers take
// numpy's astype behaviour: truncation, wrap-around through int64; infinities
// (max/min of an empty set) saturate to the type's limits, bool's included.
template <typename T>
T FromAcc(Acc v) {
  if constexpr (std::is_same_v<T, bool>) {
    // Saturates like the integers: an empty max (-inf) is false, an empty min true.
    if (std::isinf(v)) return v > 0;
    return v != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    if (std::isinf(v)) {
      return v > 0 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
    }
    if constexpr (std::is_same_v<T, uint64_t>) {
      if (v >= 0) return static_cast<T>(std::fmod(v, 18446744073709551616.0L));
    }
    Acc wrapped = std::fmod(v, 18446744073709551616.0L);  // keep int64 conversion defined
    if (wrapped >= 9223372036854775808.0L) wrapped -= 18446744073709551616.0L;
    if (wrapped < -9223372036854775808.0L) wrapped += 18446744073709551616.0L;
    return static_cast<T>(static_cast<int64_t>(wrapped));
  }
}

// Visits every input element with the offset of the output element it folds into.
template <typename F>
void ForEachReduced(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_strides,
                    F&& visit) {
  const int64_t n = NumElements(in_dims);
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  std::vector<int64_t> idx(in_dims.size(), 0);
  int64_t o = 0;
  for (int64_t i = 0; i < n; ++i) {
    visit(i, o);
    for (int64_t a = rank - 1; a >= 0; --a) {
      const size_t k = static_cast<size_t>(a);
      ++idx[k];
      o += out_strides[k];
      if (idx[k] < in_dims[k]) break;
      o -= out_strides[k] * in_dims[k];
      idx[k] = 0;
    }
  }
}

template <typename T>
Tensor ReduceTyped(const Tensor& x, const ReduceAxes& axes, const ReduceMath& m) {
  const std::vector<int64_t>& in_dims = x.dims();
  ReduceAxes kept = axes;
  kept.keepdims = true;
  const std::vector<int64_t> keep_dims = ReducedDims(in_dims, kept);
  std::vector<int64_t> out_strides = ContiguousStrides(keep_dims);
  int64_t count = 1;
  for (size_t a = 0; a < in_dims.size(); ++a) {
    if (axes.reduced[a]) {
      out_strides[a] = 0;
      count *= in_dims[a];
    }
  }
  const int64_t out_n = NumElements(keep_dims);
  const T* in = x.data<T>();
  std::vector<Acc> shift(static_cast<size_t>(out_n), 0);
  if (m.shift_by_max) {
    shift.assign(static_cast<size_t>(out_n), -kInf);
    ForEachReduced(in_dims, out_strides, [&](int64_t i, int64_t o) {
      shift[static_cast<size_t>(o)] = StepMax(shift[static_cast<size_t>(o)], static_cast<Acc>(in[i]));
    });
  }
  std::vector<Acc> acc(static_cast<size_t>(out_n), m.init);
  ForEachReduced(in_dims, out_strides, [&](int64_t i, int64_t o) {
    const size_t k = static_cast<size_t>(o);
    acc[k] = m.step(acc[k], static_cast<Acc>(in[i]) - shift[k]);
  });
  Tensor y(x.dtype(), ReducedDims(in_dims, axes));
  T* out = y.mutable_data<T>();
  for (int64_t o = 0; o < out_n; ++o) {
    const size_t k = static_cast<size_t>(o);
    Acc v = m.finish(acc[k], count);
    // An infinite or NaN max (all -inf, empty, NaN present) is the answer itself.
    if (m.shift_by_max) v = std::isfinite(shift[k]) ? shift[k] + v : shift[k];
    out[o] = FromAcc<T>(v);
  }
  return y;
}

bool DTypeAllowed(const ReduceOpInfo& info, DType t) {
  return IsFloatingPoint(t) || IsInteger(t) || (info.allows_bool && t == DType::kBool);
}

// Axes for the static view of the node; nullopt when they are not known yet.
absl::StatusOr<std::optional<ReduceAxes>> StaticAxes(const OpContext& ctx, int64_t rank) {
  const bool as_input = ReduceAxesIsInput(ctx.node().op_type, ctx.opset());
  const bool present = as_input && ctx.has_input(1);
  return ResolveReduceAxes(ctx.node(), ctx.opset(), present,
                           present ? ctx.input_constant(1) : nullptr, rank);
}

absl::Status InferReduce(OpContext& ctx, const ReduceOpInfo& info) {
  const TypeInfo& in = ctx.input_type(0);
  if (!in.known()) return absl::OkStatus();
  if (!in.is_tensor()) return ctx.Error("input must be a tensor, got ", in.ToString());
  if (in.dtype != DType::kUndefined && !DTypeAllowed(info, in.dtype)) {
    return ctx.Error("dtype ", DTypeName(in.dtype), " is not supported");
  }
  if (!in.shape.has_rank()) {
    ctx.set_output(0, in.dtype, Shape::UnknownRank());
    return absl::OkStatus();
  }
  AIC_ASSIGN_OR_RETURN(std::optional<ReduceAxes> axes, StaticAxes(ctx, in.shape.rank()));
  if (axes.has_value()) {
    ctx.set_output(0, in.dtype, ReducedShape(in.shape, *axes));
  } else if (ctx.node().GetInt("keepdims", 1) != 0) {
    // Axes only known at run time: the rank stays, each dim is itself or 1.
    std::vector<Dim> dims;
    for (const Dim& d : in.shape.dims()) {
      dims.push_back(d.is_value() && d.value() == 1 ? Dim(1) : ctx.FreshDim());
    }
    ctx.set_output(0, in.dtype, Shape(std::move(dims)));
  } else {
    ctx.set_output(0, in.dtype, Shape::UnknownRank());
  }
  return absl::OkStatus();
}

absl::Status RunReduce(KernelContext& ctx, const ReduceOpInfo& info) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) {
    return ctx.Error("input 0 must be a tensor");
  }
  const Tensor& x = ctx.input(0);
  if (!DTypeAllowed(info, x.dtype())) {
    return ctx.Unimplemented("dtype ", DTypeName(x.dtype()), " is not supported");
  }
  const bool as_input = ReduceAxesIsInput(ctx.node().op_type, ctx.opset());
  const bool present = as_input && ctx.has_input(1);
  if (present && !ctx.input_value(1).is_tensor()) return ctx.Error("axes must be a tensor");
  AIC_ASSIGN_OR_RETURN(
      std::optional<ReduceAxes> axes,
      ResolveReduceAxes(ctx.node(), ctx.opset(), present, present ? &ctx.input(1) : nullptr,
                        x.rank()));
  const Tensor wide = WidenToFloat(x);
  Tensor y;
  AIC_RETURN_IF_ERROR(DispatchNumericOrBool(wide.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    y = ReduceTyped<T>(wide, *axes, info.math);
  }));
  ctx.set_output(0, NarrowFromFloat(y, x.dtype()));
  return absl::OkStatus();
}

Traits ReduceTraits(const OpContext& ctx, const ReduceOpInfo& info) {
  Traits t;
  t.semantic_name = info.semantic;
  t.linearity = info.linearity;
  const Shape& in = ctx.input_shape(0);
  std::optional<ReduceAxes> axes;
  if (in.has_rank()) {
    absl::StatusOr<std::optional<ReduceAxes>> resolved = StaticAxes(ctx, in.rank());
    if (resolved.ok()) axes = *resolved;
  }
  if (axes.has_value() && axes->noop) {
    t.meaning = absl::StrCat("y = ", info.formula, " over each single element (no axes)");
    t.effect = RepresentationEffect::kPreserves;
    t.elementwise = true;
    if (info.noop_is_identity) {
      t.invertibility = Invertibility::kInvertible;
      t.removable_when = "always (no axes to reduce: it is an identity)";
    }
    return t;
  }
  const std::string where = axes.has_value()
                                ? absl::StrCat(" over axes ", ReducedAxesText(*axes))
                                : std::string(" over axes given at run time");
  t.meaning = absl::StrCat("y = ", info.formula, where,
                           ctx.node().GetInt("keepdims", 1) != 0 ? " (axes kept as 1)" : "");
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kReduces;
  t.effect = RepresentationEffect::kRestricts;
  std::optional<int64_t> count;
  if (axes.has_value()) {
    int64_t n = 1;
    for (size_t a = 0; a < axes->reduced.size(); ++a) {
      if (!axes->reduced[a]) continue;
      const Dim& d = in.dims()[a];
      if (!d.is_value()) {
        n = -1;
        break;
      }
      n *= d.value();
    }
    if (n >= 0) count = n;
    t.effect_detail = absl::StrCat(in.ToString(), " → ", ReducedShape(in, *axes).ToString());
  }
  t.collapse_how = count.has_value()
                       ? absl::StrCat(*count, " values → 1 (", info.formula, ")")
                       : absl::StrCat("values along the reduced axes → 1 (", info.formula, ")");
  if (count.has_value() && *count == 1) {
    // Reducing size-1 axes only reshapes the tensor.
    t.collapse = CollapseKind::kNone;
    t.effect = RepresentationEffect::kPreserves;
    if (info.noop_is_identity) {
      t.invertibility = Invertibility::kInvertible;
      t.removable_when = "reduced axes all have size 1 (it is a Reshape)";
    }
  }
  if (info.linearity == Linearity::kLinear) {
    t.safe_transform_when = "commutes with other linear maps on the kept axes (exact up to rounding)";
  }
  return t;
}

Cost ReduceCost(const OpContext& ctx, const ReduceOpInfo& info) {
  Cost c = BytesOnlyCost(ctx);
  const int64_t n = StaticElements(ctx.input_type(0));
  if (n >= 0) c.flops = n * info.flops_per_element;
  return c;
}

}  // namespace

void RegisterReduceOps(OpRegistry& r) {
  for (const ReduceOpInfo& info : kReduceOps) {
    const ReduceOpInfo* p = &info;
    r.Register(OpDef{
        .domain = "",
        .op_type = info.op_type,
        .since_version = 1,
        .infer = [p](OpContext& ctx) { return InferReduce(ctx, *p); },
        .traits = [p](const OpContext& ctx) { return ReduceTraits(ctx, *p); },
        .cost = [p](const OpContext& ctx) { return ReduceCost(ctx, *p); },
        .kernel = [p](KernelContext& ctx) { return RunReduce(ctx, *p); },
    });
  }
}

}  // namespace aic
