// Unary math ops (Abs, Neg, Floor, Exp, Sin, Erf, IsNaN, ...): each is one
// scalar functor plugged into the shared elementwise driver, plus the seed's
// metadata for it. Cast/CastLike live in elementwise_cast.cc.
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/math/elementwise_common.h"
#include "ops/registry.h"

namespace aic {

namespace {

constexpr TypeSet kF = TypeSet::kFloat;
constexpr TypeSet kN = TypeSet::kNumeric;
constexpr int64_t kB = kFlopsBasic;
constexpr int64_t kT = kFlopsTranscendental;

// -x without signed-overflow UB (INT_MIN wraps to itself, as numpy does).
template <typename T>
T Negate(T x) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(0) -
                          static_cast<std::make_unsigned_t<T>>(x));
  } else {
    return -x;
  }
}

template <typename T>
T AbsValue(T x) {
  if constexpr (std::is_unsigned_v<T>) {
    return x;
  } else {
    return x < T(0) ? Negate(x) : x;
  }
}

// numpy's sign: -1, 0, 1, and NaN for NaN.
template <typename T>
T SignOf(T x) {
  if (IsNanValue(x)) return x;
  if constexpr (std::is_unsigned_v<T>) {
    return static_cast<T>(x > 0);
  } else {
    return static_cast<T>((x > T(0)) - (x < T(0)));
  }
}

PointwiseInfo Bijective(const char* name, const char* meaning, const char* removable = "") {
  return PointwiseInfo(name, meaning).Invertible().RemovableWhen(removable);
}

PointwiseInfo Quantizing(const char* name, const char* meaning, const char* how) {
  return PointwiseInfo(name, meaning)
      .Irreversible()
      .Collapses(CollapseKind::kQuantizes, how)
      .RemovableWhen("input already integral (after Floor, Ceil, Round or a Cast from int)");
}

PointwiseInfo Saturating(const char* name, const char* meaning, const char* how) {
  return PointwiseInfo(name, meaning).Invertible().Collapses(CollapseKind::kSaturates, how);
}

// Even functions and periodic ones fold distinct inputs together; no enum
// value names "folds", and kSelects (some information discarded, what remains
// passed through) is the closest: the sign or the period is discarded.
PointwiseInfo Folding(const char* name, const char* meaning, const char* how) {
  return PointwiseInfo(name, meaning).Irreversible().Collapses(CollapseKind::kSelects, how);
}

void RegisterRoundingAndSign(OpRegistry& r) {
  RegisterUnary<kN>(r, "Abs", 1, kB,
                    Folding("Abs", "y = |x|", "x and -x map to the same |x| (sign discarded)"),
                    [](auto x) { return AbsValue(x); });
  RegisterUnary<kN>(r, "Neg", 1, kB,
                    PointwiseInfo("Neg", "y = -x").Linear().Invertible().RemovableWhen(
                        "followed by another Neg"),
                    [](auto x) { return Negate(x); });
  RegisterUnary<kN>(r, "Sign", 9, kB,
                    Quantizing("Sign", "y = sign(x)", "every value mapped to -1, 0 or 1"),
                    [](auto x) { return SignOf(x); });
  RegisterUnary<kF>(r, "Floor", 1, kB,
                    Quantizing("Floor", "y = ⌊x⌋", "each interval [n, n+1) mapped to n"),
                    [](auto x) { return std::floor(x); });
  RegisterUnary<kF>(r, "Ceil", 1, kB,
                    Quantizing("Ceil", "y = ⌈x⌉", "each interval (n-1, n] mapped to n"),
                    [](auto x) { return std::ceil(x); });
  // nearbyint in the default rounding mode rounds half to even, as ONNX asks.
  RegisterUnary<kF>(r, "Round", 11, kB,
                    Quantizing("Round", "y = round_half_to_even(x)",
                               "each interval around n mapped to n (ties to even)"),
                    [](auto x) { return std::nearbyint(x); });
}

void RegisterPowersAndLogs(OpRegistry& r) {
  RegisterUnary<kF>(r, "Reciprocal", 1, kB, Bijective("Reciprocal", "y = 1/x"),
                    [](auto x) { return decltype(x)(1) / x; });
  RegisterUnary<kF>(r, "Sqrt", 1, kT, Bijective("Sqrt", "y = √x (x ≥ 0)"),
                    [](auto x) { return std::sqrt(x); });
  RegisterUnary<kF>(r, "Exp", 1, kT, Bijective("Exp", "y = eˣ", "followed by Log"),
                    [](auto x) { return std::exp(x); });
  RegisterUnary<kF>(r, "Log", 1, kT, Bijective("Log", "y = ln x", "followed by Exp"),
                    [](auto x) { return std::log(x); });
  RegisterUnary<kF>(r, "Erf", 9, kT, Saturating("Erf", "y = erf(x)", "tails flatten to ±1"),
                    [](auto x) { return std::erf(x); });
}

void RegisterTrigonometric(OpRegistry& r) {
  const char* periodic = "periodic: x and x + 2πk map together";
  RegisterUnary<kF>(r, "Sin", 7, kT, Folding("Sin", "y = sin x", periodic),
                    [](auto x) { return std::sin(x); });
  RegisterUnary<kF>(r, "Cos", 7, kT, Folding("Cos", "y = cos x", periodic),
                    [](auto x) { return std::cos(x); });
  RegisterUnary<kF>(r, "Tan", 7, kT, Folding("Tan", "y = tan x", "periodic: x and x + πk map together"),
                    [](auto x) { return std::tan(x); });
  RegisterUnary<kF>(r, "Asin", 7, kT, Bijective("Asin", "y = asin x (|x| ≤ 1)"),
                    [](auto x) { return std::asin(x); });
  RegisterUnary<kF>(r, "Acos", 7, kT, Bijective("Acos", "y = acos x (|x| ≤ 1)"),
                    [](auto x) { return std::acos(x); });
  RegisterUnary<kF>(r, "Atan", 7, kT, Saturating("Atan", "y = atan x", "tails flatten to ±π/2"),
                    [](auto x) { return std::atan(x); });
  RegisterUnary<kF>(r, "Sinh", 9, kT, Bijective("Sinh", "y = sinh x"),
                    [](auto x) { return std::sinh(x); });
  RegisterUnary<kF>(r, "Cosh", 9, kT,
                    Folding("Cosh", "y = cosh x", "x and -x map together (even function)"),
                    [](auto x) { return std::cosh(x); });
  RegisterUnary<kF>(r, "Asinh", 9, kT, Bijective("Asinh", "y = asinh x"),
                    [](auto x) { return std::asinh(x); });
  RegisterUnary<kF>(r, "Acosh", 9, kT, Bijective("Acosh", "y = acosh x (x ≥ 1)"),
                    [](auto x) { return std::acosh(x); });
  RegisterUnary<kF>(r, "Atanh", 9, kT, Bijective("Atanh", "y = atanh x (|x| < 1)"),
                    [](auto x) { return std::atanh(x); });
}

void RegisterFloatPredicates(OpRegistry& r) {
  PointwiseInfo is_nan = Quantizing("IsNaN", "y = isnan(x)", "every value mapped to true/false");
  is_nan.removable_when = "input is an integer type (always false)";
  r.Register(MakeOpDef("IsNaN", 9, PredicateInfer(kF), PointwiseTraitsFn(is_nan),
                       ElementwiseCostFn(kB), PredicateKernelWith<kF>([](const Node&) {
                         return [](auto x) { return std::isnan(x); };
                       })));
  PointwiseInfo is_inf = Quantizing("IsInf", "y = isinf(x)", "every value mapped to true/false");
  is_inf.removable_when = "";
  r.Register(MakeOpDef("IsInf", 10, PredicateInfer(kF), PointwiseTraitsFn(is_inf),
                       ElementwiseCostFn(kB), PredicateKernelWith<kF>([](const Node& node) {
                         bool neg = node.GetInt("detect_negative", 1) != 0;
                         bool pos = node.GetInt("detect_positive", 1) != 0;
                         return [neg, pos](auto x) {
                           return std::isinf(x) && (x > 0 ? pos : neg);
                         };
                       })));
}

}  // namespace

void RegisterElementwiseUnaryOps(OpRegistry& r) {
  RegisterRoundingAndSign(r);
  RegisterPowersAndLogs(r);
  RegisterTrigonometric(r);
  RegisterFloatPredicates(r);
  RegisterCastOps(r);
  RegisterBitCastOps(r);
}

}  // namespace aic
