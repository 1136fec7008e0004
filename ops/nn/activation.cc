// Pointwise activations (Relu, Sigmoid, Tanh, Elu, Gelu, ...): each is a
// scalar functor over the shared elementwise driver (ops/math/
// elementwise_driver.h) plus the seed's metadata. Activations with extra
// inputs (Clip's bounds, PRelu's slope) are in activation_parametric.cc.
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/math/elementwise_common.h"
#include "ops/registry.h"

namespace aic {

namespace {

constexpr TypeSet kF = TypeSet::kFloat;
constexpr TypeSet kN = TypeSet::kNumeric;
constexpr int64_t kB = kFlopsBasic;
constexpr int64_t kT = kFlopsTranscendental;

// Attribute read with the op's default, for functors and traits alike.
float Attr(const Node& node, const char* name, float default_value) {
  return node.GetFloat(name, default_value);
}

// Sigmoid without overflow in exp for large |x|.
template <typename T>
T SigmoidOf(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  T e = std::exp(x);
  return e / (T(1) + e);
}

// log(1 + eˣ) without overflow.
template <typename T>
T SoftplusOf(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

PointwiseInfo Clamping(const char* name, const char* meaning, const char* how) {
  return PointwiseInfo(name, meaning)
      .Irreversible()
      .Collapses(CollapseKind::kClampsRange, how)
      .FusesWith(ActivationFusions());
}

// Strictly monotone, but flattening a tail to within float precision.
PointwiseInfo Saturating(const char* name, const char* meaning, const char* how) {
  return PointwiseInfo(name, meaning)
      .Invertible()
      .Collapses(CollapseKind::kSaturates, how)
      .FusesWith(ActivationFusions());
}

void RegisterRectifiers(OpRegistry& r) {
  RegisterUnary<kN>(r, "Relu", 1, kB,
                    Clamping("ReLU", "y = max(x, 0)", "negative half mapped to 0")
                        .RemovableWhen("input already non-negative (after Relu, Sigmoid, Abs)"),
                    [](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); });
  RegisterUnaryWith<kF>(
      r, "LeakyRelu", 1, kB,
      [](const OpContext& ctx) {
        float alpha = Attr(ctx.node(), "alpha", 0.01f);
        PointwiseInfo info("LeakyReLU", absl::StrCat("y = x if x ≥ 0 else ", alpha, "·x"));
        info.FusesWith(ActivationFusions());
        if (alpha > 0) {
          info.Invertible();
        } else {
          info.Irreversible().Collapses(CollapseKind::kClampsRange,
                                        alpha == 0 ? "negative half mapped to 0"
                                                   : "negative half folded onto the positive");
        }
        return PointwiseTraits(ctx, info);
      },
      [](const Node& node) {
        float alpha = Attr(node, "alpha", 0.01f);
        return [alpha](auto x) { return x >= 0 ? x : alpha * x; };
      });
  RegisterUnaryWith<kF>(
      r, "ThresholdedRelu", 10, kB,
      [](const OpContext& ctx) {
        float alpha = Attr(ctx.node(), "alpha", 1.0f);
        return PointwiseTraits(
            ctx, Clamping("ThresholdedReLU", absl::StrCat("y = x if x > ", alpha, " else 0").c_str(),
                          absl::StrCat("(-∞, ", alpha, "] mapped to 0").c_str()));
      },
      [](const Node& node) {
        float alpha = Attr(node, "alpha", 1.0f);
        return [alpha](auto x) { return x > alpha ? x : decltype(x)(0); };
      });
  RegisterUnaryWith<kN>(
      r, "Shrink", 9, kB,
      [](const OpContext& ctx) {
        float lambd = Attr(ctx.node(), "lambd", 0.5f);
        float bias = Attr(ctx.node(), "bias", 0.0f);
        PointwiseInfo info = Clamping(
            "Shrink", absl::StrCat("y = x ∓ ", bias, " if |x| > ", lambd, " else 0").c_str(),
            absl::StrCat("[-", lambd, ", ", lambd, "] mapped to 0").c_str());
        info.fuses_with.clear();
        return PointwiseTraits(ctx, info);
      },
      [](const Node& node) {
        double lambd = Attr(node, "lambd", 0.5f);
        double bias = Attr(node, "bias", 0.0f);
        return [lambd, bias](auto x) {
          using T = decltype(x);
          double v = static_cast<double>(x);
          return v < -lambd ? static_cast<T>(v + bias) : v > lambd ? static_cast<T>(v - bias) : T(0);
        };
      });
}

void RegisterExponentialUnits(OpRegistry& r) {
  RegisterUnaryWith<kF>(
      r, "Elu", 1, kT + 2,
      [](const OpContext& ctx) {
        float alpha = Attr(ctx.node(), "alpha", 1.0f);
        return PointwiseTraits(
            ctx, Saturating("ELU", absl::StrCat("y = x if x ≥ 0 else ", alpha, "·(eˣ - 1)").c_str(),
                            absl::StrCat("negative tail flattens to -", alpha).c_str()));
      },
      [](const Node& node) {
        float alpha = Attr(node, "alpha", 1.0f);
        return [alpha](auto x) { return x >= 0 ? x : alpha * (std::exp(x) - 1); };
      });
  // Defaults are the paper's constants, as float32 like the spec prints them.
  RegisterUnaryWith<kF>(
      r, "Selu", 1, kT + 3,
      [](const OpContext& ctx) {
        return PointwiseTraits(ctx, Saturating("SELU", "y = γ·x if x > 0 else γ·α·(eˣ - 1)",
                                               "negative tail flattens to -γ·α"));
      },
      [](const Node& node) {
        float alpha = Attr(node, "alpha", 1.67326319217681884765625f);
        float gamma = Attr(node, "gamma", 1.05070102214813232421875f);
        return [alpha, gamma](auto x) {
          return x > 0 ? gamma * x : gamma * (alpha * std::exp(x) - alpha);
        };
      });
  RegisterUnaryWith<kF>(
      r, "Celu", 12, kT + 4,
      [](const OpContext& ctx) {
        float alpha = Attr(ctx.node(), "alpha", 1.0f);
        return PointwiseTraits(
            ctx, Saturating("CELU", "y = max(0, x) + min(0, α·(e^(x/α) - 1))",
                            absl::StrCat("negative tail flattens to -", alpha).c_str()));
      },
      [](const Node& node) {
        float alpha = Attr(node, "alpha", 1.0f);
        return [alpha](auto x) {
          using T = decltype(x);
          T neg = static_cast<T>(alpha * (std::exp(x / alpha) - 1));
          return std::max(T(0), x) + std::min(T(0), neg);
        };
      });
  RegisterUnary<kF>(r, "Softplus", 1, kT * 2 + 1,
                    Saturating("Softplus", "y = ln(1 + eˣ)", "negative tail flattens to 0"),
                    [](auto x) { return SoftplusOf(x); });
}

void RegisterSigmoids(OpRegistry& r) {
  RegisterUnary<kF>(r, "Sigmoid", 1, kT + 2,
                    Saturating("Sigmoid", "y = 1 / (1 + e⁻ˣ)", "both tails flatten to 0 and 1"),
                    [](auto x) { return SigmoidOf(x); });
  RegisterUnary<kF>(r, "Tanh", 1, kT,
                    Saturating("Tanh", "y = tanh x", "both tails flatten to -1 and 1"),
                    [](auto x) { return std::tanh(x); });
  RegisterUnary<kF>(r, "Softsign", 1, 3,
                    Saturating("Softsign", "y = x / (1 + |x|)", "both tails flatten to -1 and 1"),
                    [](auto x) { return x / (1 + std::abs(x)); });
  RegisterUnaryWith<kF>(
      r, "HardSigmoid", 1, 4,
      [](const OpContext& ctx) {
        float alpha = Attr(ctx.node(), "alpha", 0.2f), beta = Attr(ctx.node(), "beta", 0.5f);
        return PointwiseTraits(
            ctx, Clamping("HardSigmoid",
                          absl::StrCat("y = max(0, min(1, ", alpha, "·x + ", beta, "))").c_str(),
                          "both tails clamped to 0 and 1"));
      },
      [](const Node& node) {
        float alpha = Attr(node, "alpha", 0.2f), beta = Attr(node, "beta", 0.5f);
        return [alpha, beta](auto x) {
          using T = decltype(x);
          return std::max(T(0), std::min(T(1), static_cast<T>(alpha * x + beta)));
        };
      });
  RegisterUnary<kF>(r, "HardSwish", 14, 5,
                    Clamping("HardSwish", "y = x · max(0, min(1, x/6 + 1/2))",
                             "(-∞, -3] mapped to 0"),
                    [](auto x) {
                      using T = decltype(x);
                      return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
                    });
}

// Smooth, non-monotone gates: a dip below zero means two inputs share an
// output (irreversible), and the negative tail flattens to 0 (saturates).
void RegisterGatedUnits(OpRegistry& r) {
  PointwiseInfo mish("Mish", "y = x · tanh(ln(1 + eˣ))");
  mish.Irreversible()
      .Collapses(CollapseKind::kSaturates, "negative tail flattens to 0")
      .FusesWith(ActivationFusions());
  RegisterUnary<kF>(r, "Mish", 18, kT * 3 + 2, mish,
                    [](auto x) { return x * std::tanh(SoftplusOf(x)); });
  RegisterUnaryWith<kF>(
      r, "Gelu", 20, kT + 4,
      [](const OpContext& ctx) {
        bool tanh = ctx.node().GetString("approximate", "none") == "tanh";
        PointwiseInfo info("GELU", tanh ? "y = x/2 · (1 + tanh(√(2/π)·(x + 0.044715·x³)))"
                                        : "y = x/2 · (1 + erf(x/√2))");
        info.Irreversible()
            .Collapses(CollapseKind::kSaturates, "negative tail flattens to 0")
            .FusesWith(ActivationFusions());
        return PointwiseTraits(ctx, info);
      },
      [](const Node& node) {
        bool tanh = node.GetString("approximate", "none") == "tanh";
        return [tanh](auto x) {
          using T = decltype(x);
          if (tanh) {
            const T k = static_cast<T>(0.7978845608028654);  // √(2/π)
            return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
          }
          return T(0.5) * x * (T(1) + std::erf(x / static_cast<T>(1.4142135623730951)));
        };
      });
  // Swish (opset 24; SiLU at alpha = 1): what exporters write as x * Sigmoid(x).
  RegisterUnaryWith<kF>(
      r, "Swish", 24, kT + 4,
      [](const OpContext& ctx) {
        float alpha = Attr(ctx.node(), "alpha", 1.0f);
        PointwiseInfo info("Swish", absl::StrCat("y = x · sigmoid(", alpha, "·x)").c_str());
        info.Irreversible()
            .Collapses(CollapseKind::kSaturates, "negative tail flattens to 0")
            .FusesWith(ActivationFusions());
        return PointwiseTraits(ctx, info);
      },
      [](const Node& node) {
        float alpha = Attr(node, "alpha", 1.0f);
        return [alpha](auto x) {
          using T = decltype(x);
          return x * SigmoidOf(static_cast<T>(alpha * x));
        };
      });
  // SwiGLU (opset 28): y = Swish_α(a) · b over two inputs of one shape (no
  // broadcasting), the gated MLP of Llama-style models.
  KernelFn swiglu = BinaryKernelWith<kF, false>([](const Node& node) {
    float alpha = Attr(node, "alpha", 1.0f);
    return [alpha](auto a, auto b) {
      using T = decltype(a);
      return a * SigmoidOf(static_cast<T>(alpha * a)) * b;
    };
  });
  r.Register(MakeOpDef(
      "SwiGLU", 28,
      [](OpContext& ctx) -> absl::Status {
        AIC_RETURN_IF_ERROR(InferSameAsInput(ctx, kF));
        const TypeInfo& a = ctx.input_type(0);
        const TypeInfo& b = ctx.input_type(1);
        if (a.known() && b.known() && a.dtype != DType::kUndefined && b.dtype != DType::kUndefined &&
            a.dtype != b.dtype) {
          return ctx.Error("A and B dtypes differ: ", DTypeName(a.dtype), " and ", DTypeName(b.dtype));
        }
        if (a.shape.has_rank() && b.shape.has_rank()) {
          bool same = a.shape.rank() == b.shape.rank();
          for (int64_t d = 0; same && d < a.shape.rank(); ++d) {
            same = !(a.shape[d].is_value() && b.shape[d].is_value()) || a.shape[d] == b.shape[d];
          }
          if (!same) return ctx.Error("A ", a.shape.ToString(), " and B ", b.shape.ToString(), " must have one shape");
        }
        return absl::OkStatus();
      },
      [](const OpContext& ctx) {
        float alpha = Attr(ctx.node(), "alpha", 1.0f);
        PointwiseInfo info("SwiGLU", absl::StrCat("y = a · sigmoid(", alpha, "·a) · b").c_str());
        info.Irreversible().Collapses(CollapseKind::kProjects, "gate and value combined into one");
        return PointwiseTraits(ctx, info);
      },
      ElementwiseCostFn(kT + 5),
      [swiglu](KernelContext& ctx) -> absl::Status {
        AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 2));
        if (ctx.input(0).dims() != ctx.input(1).dims()) {
          return ctx.Error("A ", DimsToString(ctx.input(0).dims()), " and B ",
                           DimsToString(ctx.input(1).dims()), " must have one shape");
        }
        return swiglu(ctx);
      }));
}

}  // namespace

void RegisterActivationOps(OpRegistry& r) {
  RegisterRectifiers(r);
  RegisterExponentialUnits(r);
  RegisterSigmoids(r);
  RegisterGatedUnits(r);
  RegisterParametricActivationOps(r);
}

}  // namespace aic
