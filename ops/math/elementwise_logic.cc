// Comparisons (Equal, Less, ...), boolean logic (And, Or, Xor, Not), integer
// bit ops (BitShift, Bitwise*) and Where. All are scalar functors over the
// shared broadcast driver; Where, which only moves elements, copies them by
// size so it serves every dtype (strings and fp16 included) without dispatch.
#include <cstring>
#include <type_traits>

#include "ops/math/elementwise_common.h"
#include "ops/registry.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

constexpr TypeSet kNB = TypeSet::kNumericOrBool;
constexpr TypeSet kBool = TypeSet::kBool;
constexpr TypeSet kInt = TypeSet::kInteger;

PointwiseInfo Comparison(const char* name, const char* meaning) {
  return PointwiseInfo(name, meaning)
      .Irreversible()
      .Collapses(CollapseKind::kQuantizes, "every pair mapped to true/false");
}

template <typename F>
void RegisterComparison(OpRegistry& r, const char* op_type, int since, const char* meaning, F f) {
  r.Register(MakeOpDef(op_type, since, BinaryInfer(kNB, DType::kBool),
                       PointwiseTraitsFn(Comparison(op_type, meaning)),
                       ElementwiseCostFn(kFlopsBasic), BinaryKernel<kNB, true>(f)));
}

template <TypeSet S, typename F>
void RegisterLogic(OpRegistry& r, const char* op_type, int since, const char* meaning, F f) {
  r.Register(MakeOpDef(op_type, since, BinaryInfer(S),
                       PointwiseTraitsFn(PointwiseInfo(op_type, meaning)
                                             .Irreversible()
                                             .Collapses(CollapseKind::kProjects,
                                                        "two inputs combined into one")),
                       ElementwiseCostFn(kFlopsBasic), BinaryKernel<S>(f)));
}

// A shift that is negative or the type's width or more (undefined in C++) gives
// what the sign extension alone leaves (opset 28 spells it out): -1 for a right
// shift of a negative x, 0 otherwise. Right shifts of signed x are arithmetic;
// left shifts go through the unsigned type, so bits past the sign bit are
// dropped without signed overflow.
template <typename T>
T ShiftScalar(T x, T n, bool left) {
  if (n < 0 || static_cast<uint64_t>(n) >= sizeof(T) * 8) {
    if constexpr (std::is_signed_v<T>) {
      if (!left && x < 0) return T(-1);
    }
    return T(0);
  }
  if (left) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) << n));
  }
  return static_cast<T>(x >> n);
}

absl::Status WhereKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 3));
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (c.dtype() != DType::kBool) return ctx.Error("condition must be bool, not ", DTypeName(c.dtype()));
  if (x.dtype() != y.dtype()) {
    return ctx.Error("X and Y dtypes differ: ", DTypeName(x.dtype()), " and ", DTypeName(y.dtype()));
  }
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims({c.dims(), x.dims(), y.dims()});
  if (!dims.ok()) return ctx.Error(dims.status().message());
  Tensor out(x.dtype(), *dims);
  BroadcastIterator it(*dims, {c.dims(), x.dims(), y.dims()});
  const bool* cond = c.data<bool>();
  const bool strings = x.dtype() == DType::kString;
  const size_t es = ElementSize(x.dtype());
  for (int64_t i = 0; i < it.size(); ++i, it.Next()) {
    const bool pick_x = cond[it.offset(0)];
    const Tensor& src = pick_x ? x : y;
    const int64_t at = it.offset(pick_x ? 1 : 2);
    if (strings) {
      out.mutable_strings()[static_cast<size_t>(i)] = src.strings()[static_cast<size_t>(at)];
    } else {
      std::memcpy(static_cast<uint8_t*>(out.mutable_raw_data()) + static_cast<size_t>(i) * es,
                  static_cast<const uint8_t*>(src.raw_data()) + static_cast<size_t>(at) * es, es);
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status InferWhere(OpContext& ctx) {
  if (ctx.num_inputs() != 3) return ctx.Error("takes 3 inputs, got ", ctx.num_inputs());
  DType c = ctx.input_dtype(0), x = ctx.input_dtype(1), y = ctx.input_dtype(2);
  if (c != DType::kUndefined && c != DType::kBool) {
    return ctx.Error("condition must be bool, not ", DTypeName(c));
  }
  if (x != DType::kUndefined && y != DType::kUndefined && x != y) {
    return ctx.Error("X and Y dtypes differ: ", DTypeName(x), " and ", DTypeName(y));
  }
  absl::StatusOr<Shape> shape =
      BroadcastShapes({ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2)},
                      [&ctx] { return ctx.FreshDim(); });
  if (!shape.ok()) return ctx.Error(shape.status().message());
  ctx.set_output(0, x != DType::kUndefined ? x : y, *std::move(shape));
  return absl::OkStatus();
}

void RegisterNot(OpRegistry& r, const char* op_type, int since, TypeSet s) {
  PointwiseInfo info(op_type, "y = ¬x");
  info.Invertible().RemovableWhen("followed by the same negation");
  auto flip = [](auto x) {
    if constexpr (std::is_same_v<decltype(x), bool>) {
      return !x;
    } else {
      return static_cast<decltype(x)>(~x);
    }
  };
  KernelFn kernel = s == kBool ? UnaryKernel<kBool>(flip) : UnaryKernel<kInt>(flip);
  r.Register(MakeOpDef(op_type, since, SameAsInputInfer(s), PointwiseTraitsFn(info),
                       ElementwiseCostFn(kFlopsBasic), std::move(kernel)));
}

// Equal also compares strings (opset 19): byte equality, broadcasting.
absl::Status StringEqualKernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (b.dtype() != DType::kString) return ctx.Error("input dtypes differ: string and ", DTypeName(b.dtype()));
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims({a.dims(), b.dims()});
  if (!dims.ok()) return ctx.Error(dims.status().message());
  Tensor out(DType::kBool, *dims);
  bool* o = out.mutable_data<bool>();
  BroadcastIterator it(*dims, {a.dims(), b.dims()});
  for (int64_t i = 0; i < it.size(); ++i, it.Next()) o[i] = a.strings()[it.offset(0)] == b.strings()[it.offset(1)];
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

void RegisterEqual(OpRegistry& r) {
  InferFn numeric_infer = BinaryInfer(kNB, DType::kBool);
  KernelFn numeric = BinaryKernel<kNB, true>([](auto a, auto b) { return a == b; });
  r.Register(MakeOpDef(
      "Equal", 1,
      [numeric_infer](OpContext& ctx) -> absl::Status {
        const bool strings = ctx.num_inputs() == 2 && ctx.has_input(0) && ctx.has_input(1) &&
                             (ctx.input_dtype(0) == DType::kString || ctx.input_dtype(1) == DType::kString);
        if (!strings) return numeric_infer(ctx);
        if (ctx.opset() < 19) return ctx.Error("string inputs need opset 19");
        if (ctx.input_dtype(0) != ctx.input_dtype(1)) return ctx.Error("input dtypes differ");
        absl::StatusOr<Shape> shape = BroadcastShapes({ctx.input_shape(0), ctx.input_shape(1)},
                                                      [&ctx] { return ctx.FreshDim(); });
        if (!shape.ok()) return ctx.Error(shape.status().message());
        ctx.set_output(0, DType::kBool, *shape);
        return absl::OkStatus();
      },
      PointwiseTraitsFn(Comparison("Equal", "y = (a == b)")), ElementwiseCostFn(kFlopsBasic),
      [numeric](KernelContext& ctx) -> absl::Status {
        AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 2));
        return ctx.input(0).dtype() == DType::kString ? StringEqualKernel(ctx) : numeric(ctx);
      }));
}

}  // namespace

void RegisterLogicOps(OpRegistry& r) {
  RegisterEqual(r);
  RegisterComparison(r, "Less", 1, "y = (a < b)", [](auto a, auto b) { return a < b; });
  RegisterComparison(r, "Greater", 1, "y = (a > b)", [](auto a, auto b) { return a > b; });
  RegisterComparison(r, "LessOrEqual", 12, "y = (a ≤ b)", [](auto a, auto b) { return a <= b; });
  RegisterComparison(r, "GreaterOrEqual", 12, "y = (a ≥ b)",
                     [](auto a, auto b) { return a >= b; });

  RegisterLogic<kBool>(r, "And", 1, "y = a ∧ b", [](bool a, bool b) { return a && b; });
  RegisterLogic<kBool>(r, "Or", 1, "y = a ∨ b", [](bool a, bool b) { return a || b; });
  RegisterLogic<kBool>(r, "Xor", 1, "y = a ⊕ b", [](bool a, bool b) { return a != b; });
  RegisterNot(r, "Not", 1, kBool);

  RegisterLogic<kInt>(r, "BitwiseAnd", 18, "y = a & b", [](auto a, auto b) { return a & b; });
  RegisterLogic<kInt>(r, "BitwiseOr", 18, "y = a | b", [](auto a, auto b) { return a | b; });
  RegisterLogic<kInt>(r, "BitwiseXor", 18, "y = a ^ b", [](auto a, auto b) { return a ^ b; });
  RegisterNot(r, "BitwiseNot", 18, kInt);

  r.Register(MakeOpDef("BitShift", 11, BinaryInfer(kInt),
                       PointwiseTraitsFn(PointwiseInfo("BitShift", "y = x << s or x >> s")
                                             .Irreversible()
                                             .Collapses(CollapseKind::kQuantizes,
                                                        "bits shifted out are lost")),
                       ElementwiseCostFn(kFlopsBasic),
                       BinaryKernelWith<kInt, false>([](const Node& node) {
                         bool left = node.GetString("direction", "") == "LEFT";
                         return [left](auto x, auto n) { return ShiftScalar(x, n, left); };
                       })));

  r.Register(MakeOpDef("Where", 9, InferWhere,
                       PointwiseTraitsFn(PointwiseInfo("Where", "y = c ? a : b")
                                             .Irreversible()
                                             .Collapses(CollapseKind::kSelects,
                                                        "the unselected input is dropped")),
                       ElementwiseCostFn(kFlopsBasic), WhereKernel));
}

}  // namespace aic
