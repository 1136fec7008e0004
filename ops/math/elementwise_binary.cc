// Binary arithmetic (Add, Sub, Mul, Div, Pow, Mod) over the shared broadcast
// driver. Add/Sub with one constant operand are a "Bias" and Mul/Div a
// "Scale" in the seed's report: their traits look at which operand is a
// constant, so the same op type reads as a learned affine map or as a plain
// combination of two activations. Variadic ops (Sum, Mean, Min, Max) live in
// elementwise_variadic.cc; comparisons, logic and bit ops in
// elementwise_logic.cc.
#include <cmath>
#include <optional>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/registry.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

constexpr TypeSet kN = TypeSet::kNumeric;

// Integer a / b truncating toward zero (C, ONNX Runtime and the ONNX reference
// cast do this; the suite only has unsigned cases, where floor is the same).
// Division by zero gives 0 and INT_MIN / -1 wraps instead of trapping.
template <typename T>
T DivScalar(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return static_cast<T>(static_cast<std::make_unsigned_t<T>>(0) -
                                         static_cast<std::make_unsigned_t<T>>(a));
    }
  }
  return static_cast<T>(a / b);
}

// fmod=1: C fmod (sign of the dividend); fmod=0: numpy mod (sign of the
// divisor). x mod 0 is 0 for integers, NaN for floats, as numpy.
template <typename T>
T ModScalar(T a, T b, bool c_fmod) {
  T r;
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
    }
    r = static_cast<T>(a % b);
  } else {
    r = static_cast<T>(std::fmod(a, b));
  }
  if (!c_fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  return r;
}

// numpy power: integer ** integer by squaring (a negative exponent gives 0
// except for bases ±1); anything involving a float in double, then cast to
// the base's type (truncating for integer bases, as astype does).
template <typename X, typename Y>
X PowScalar(X a, Y b) {
  if constexpr (std::is_integral_v<X> && std::is_integral_v<Y>) {
    if constexpr (std::is_signed_v<Y>) {
      if (b < 0) {
        if (a == 1) return 1;
        if constexpr (std::is_signed_v<X>) {
          if (a == -1) return (b % 2 == 0) ? X(1) : X(-1);
        }
        return 0;
      }
    }
    uint64_t e = static_cast<uint64_t>(b);
    uint64_t base = static_cast<uint64_t>(a), acc = 1;  // wraps like numpy
    while (e != 0) {
      if (e & 1) acc *= base;
      base *= base;
      e >>= 1;
    }
    return static_cast<X>(acc);
  } else {
    return static_cast<X>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
}

enum class Arith { kAdd, kSub, kMul, kDiv };

// The input that is a known constant when exactly one is.
std::optional<size_t> ConstantOperand(const OpContext& ctx) {
  bool c0 = ctx.input_constant(0) != nullptr, c1 = ctx.input_constant(1) != nullptr;
  if (c0 == c1) return std::nullopt;
  return c0 ? 0 : 1;
}

Traits WithConstantTraits(const OpContext& ctx, Arith op, size_t c) {
  const Tensor& k = *ctx.input_constant(c);
  const bool additive = op == Arith::kAdd || op == Arith::kSub;
  const bool numerator = op == Arith::kDiv && c == 0;  // c / x is not a scale
  const char* name = additive ? "Bias" : numerator ? "Div" : "Scale";
  const char* meaning = op == Arith::kAdd   ? "y = x + b"
                        : op == Arith::kSub ? (c == 1 ? "y = x - b" : "y = b - x")
                        : op == Arith::kMul ? "y = x · s"
                        : numerator         ? "y = c / x"
                                            : "y = x / s";
  PointwiseInfo info(name, meaning);
  if (additive) {
    info.Linear(Linearity::kAffine).Invertible();
    info.RemovableWhen("adding 0 (b all zeros, x + 0) and b does not widen x's shape");
    info.SafeWhen("fold into the producing Conv/Gemm/MatMul bias when b is constant along "
                  "everything but the output-channel axis");
  } else if (!numerator) {
    info.Linear();
    if (AllNonZero(k)) {
      info.Invertible();
    } else {
      info.Irreversible().Collapses(CollapseKind::kSelects, "elements scaled by 0 are dropped");
    }
    info.RemovableWhen("multiplying by 1 (s all ones, x · 1) and s does not widen x's shape");
    info.SafeWhen("fold into the producing Conv/Gemm/MatMul weights when s is constant along "
                  "everything but the output-channel axis");
  } else if (AllNonZero(k)) {
    info.Invertible();
  }
  if (!numerator) info.FusesWith({"Conv", "Gemm", "MatMul"});
  Traits t = PointwiseTraits(ctx, info);
  // A scalar like the 0.5 in x·0.5 is a fixed constant; a vector is learned.
  t.trainable = !numerator && k.num_elements() > 1;
  t.effect_detail = absl::StrCat(t.effect_detail, ", constant ", DimsToString(k.dims()));
  return t;
}

Traits ArithTraits(const OpContext& ctx, Arith op) {
  if (std::optional<size_t> c = ConstantOperand(ctx)) return WithConstantTraits(ctx, op, *c);
  static const char* const kNames[] = {"Add", "Sub", "Mul", "Div"};
  static const char* const kMeanings[] = {"y = a + b", "y = a - b", "y = a · b", "y = a / b"};
  const int i = static_cast<int>(op);
  PointwiseInfo info(kNames[i], kMeanings[i]);
  // Sum/difference of two activations is linear in the pair; a product or
  // quotient is bilinear, i.e. nonlinear. Either way two values become one.
  info.Linear(op == Arith::kAdd || op == Arith::kSub ? Linearity::kLinear
                                                     : Linearity::kNonlinear);
  info.Irreversible().Collapses(CollapseKind::kProjects, "two inputs combined into one");
  if (op == Arith::kAdd) info.FusesWith({"Conv", "Gemm", "MatMul"});  // residual add post-op
  Traits t = PointwiseTraits(ctx, info);
  t.effect = RepresentationEffect::kRestricts;
  return t;
}

Cost ArithCost(const OpContext& ctx) {
  Cost c = ElementwiseCost(ctx, kFlopsBasic);
  if (std::optional<size_t> k = ConstantOperand(ctx)) {
    c.params = ctx.input_constant(*k)->num_elements();
  }
  return c;
}

template <typename F>
void RegisterArith(OpRegistry& r, const char* op_type, Arith op, F f) {
  r.Register(MakeOpDef(op_type, 1, BinaryInfer(kN),
                       [op](const OpContext& ctx) { return ArithTraits(ctx, op); }, ArithCost,
                       BinaryKernel<kN>(f)));
}

// Pow: the exponent's dtype may differ from the base's; output = base dtype.
absl::Status PowKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 2));
  const Tensor& x0 = ctx.input(0);
  Tensor x = WidenToFloat(x0);
  Tensor y = WidenToFloat(ctx.input(1));
  y = y.WithDims(LegacyAlignDims(ctx.node(), ctx.opset(), x.dims().size(), y.dims()));
  absl::StatusOr<Tensor> z;
  absl::Status inner = absl::OkStatus();
  absl::Status s = DispatchNumeric(x.dtype(), [&](auto xt) {
    using X = typename decltype(xt)::type;
    inner = DispatchNumeric(y.dtype(), [&](auto yt) {
      using Y = typename decltype(yt)::type;
      z = MapBinary<X, X, Y>(x, y, x.dtype(), [](X a, Y b) { return PowScalar(a, b); });
    });
  });
  if (!s.ok()) return ctx.Unimplemented(s.message());
  if (!inner.ok()) return ctx.Unimplemented(inner.message());
  if (!z.ok()) return ctx.Error(z.status().message());
  ctx.set_output(0, NarrowFromFloat(*z, x0.dtype()));
  return absl::OkStatus();
}

absl::Status InferPow(OpContext& ctx) {
  if (ctx.num_inputs() != 2) return ctx.Error("takes 2 inputs, got ", ctx.num_inputs());
  for (size_t i = 0; i < 2; ++i) {
    DType t = ctx.input_dtype(i);
    if (t != DType::kUndefined && !InTypeSet(kN, t)) {
      return ctx.Error("input ", i, " has dtype ", DTypeName(t), ", Pow takes numbers");
    }
  }
  std::vector<Shape> shapes = {ctx.input_shape(0), ctx.input_shape(1)};
  absl::StatusOr<Shape> shape = BroadcastShapes(shapes, [&ctx] { return ctx.FreshDim(); });
  if (!shape.ok()) return ctx.Error(shape.status().message());
  ctx.set_output(0, ctx.input_dtype(0), *std::move(shape));
  return absl::OkStatus();
}

Traits PowTraits(const OpContext& ctx) {
  const Tensor* p = ctx.input_constant(1);
  std::string meaning = "y = xᵖ";
  if (p != nullptr && p->num_elements() == 1 && p->dtype() != DType::kString) {
    meaning = absl::StrCat("y = x^", p->ElementAsDouble(0));
  }
  PointwiseInfo info("Pow", meaning);
  if (p != nullptr && p->num_elements() == 1 && p->dtype() != DType::kString &&
      p->ElementAsDouble(0) == 1.0) {
    info.Linear().Invertible();
  }
  info.RemovableWhen("exponent is 1");
  return PointwiseTraits(ctx, info);
}

}  // namespace

void RegisterElementwiseBinaryOps(OpRegistry& r) {
  RegisterArith(r, "Add", Arith::kAdd, [](auto a, auto b) { return a + b; });
  RegisterArith(r, "Sub", Arith::kSub, [](auto a, auto b) { return a - b; });
  RegisterArith(r, "Mul", Arith::kMul, [](auto a, auto b) { return a * b; });
  RegisterArith(r, "Div", Arith::kDiv, [](auto a, auto b) { return DivScalar(a, b); });
  r.Register(MakeOpDef("Pow", 1, InferPow, PowTraits, ElementwiseCostFn(kFlopsTranscendental),
                       PowKernel));
  r.Register(MakeOpDef(
      "Mod", 10, BinaryInfer(kN),
      PointwiseTraitsFn(PointwiseInfo("Mod", "y = a mod b")
                          .Irreversible()
                          .Collapses(CollapseKind::kQuantizes, "a and a + k·b map together")),
      ElementwiseCostFn(kFlopsBasic), BinaryKernelWith<kN, false>([](const Node& node) {
        bool c_fmod = node.GetInt("fmod", 0) != 0;
        return [c_fmod](auto a, auto b) { return ModScalar(a, b, c_fmod); };
      })));
  RegisterVariadicOps(r);
  RegisterLogicOps(r);
}

}  // namespace aic
