// The one strided broadcast driver behind every elementwise op (ggml's way):
// an op is a one-line scalar functor, and these templates walk the tensors,
// broadcast numpy-style, dispatch on dtype and route float16/bfloat16 through
// float. Unary, binary and variadic (Sum/Min/Max/Mean) ops, activations and
// comparisons all go through MapUnary / MapBinary here, so a fast path added
// later lands in one place.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "ops/kernel_context.h"
#include "ops/op_def.h"
#include "ops/util/broadcast.h"
#include "ops/util/dispatch.h"
#include "ops/util/float_convert.h"

namespace aic {

// The dtypes an elementwise functor is instantiated for. fp16/bf16 belong to
// every set that holds float: they are widened before dispatch.
enum class TypeSet { kFloat, kNumeric, kInteger, kBool, kNumericOrBool };

template <TypeSet S, typename F>
absl::Status DispatchSet(DType t, F&& f) {
  if constexpr (S == TypeSet::kFloat) {
    return DispatchFloat(t, std::forward<F>(f));
  } else if constexpr (S == TypeSet::kNumeric) {
    return DispatchNumeric(t, std::forward<F>(f));
  } else if constexpr (S == TypeSet::kInteger) {
    return DispatchInteger(t, std::forward<F>(f));
  } else if constexpr (S == TypeSet::kBool) {
    if (t != DType::kBool) {
      return absl::UnimplementedError(absl::StrCat("dtype ", DTypeName(t), " is not bool"));
    }
    f(TypeTag<bool>{});
    return absl::OkStatus();
  } else {
    return DispatchNumericOrBool(t, std::forward<F>(f));
  }
}

// Whether a dtype belongs to a set (fp16/bf16 count as float). For inference.
bool InTypeSet(TypeSet s, DType t);

template <typename T>
bool IsNanValue(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    (void)v;
    return false;
  }
}

// y[i] = f(x[i]) into a fresh tensor of dtype `out`.
template <typename Out, typename In, typename F>
Tensor MapUnary(const Tensor& x, DType out, F&& f) {
  Tensor y(out, x.dims());
  const In* in = x.data<In>();
  Out* o = y.mutable_data<Out>();
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(in[i]));
  return y;
}

// z = f(a, b) with numpy broadcasting, into a fresh tensor of dtype `out`.
template <typename Out, typename A, typename B, typename F>
absl::StatusOr<Tensor> MapBinary(const Tensor& a, const Tensor& b, DType out, F&& f) {
  AIC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims({a.dims(), b.dims()}));
  Tensor z(out, dims);
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  Out* o = z.mutable_data<Out>();
  const int64_t n = z.num_elements();
  if (a.dims() == b.dims()) {  // the common case: no index arithmetic
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<Out>(f(pa[i], pb[i]));
    return z;
  }
  BroadcastIterator it(dims, {a.dims(), b.dims()});
  for (int64_t i = 0; i < n; ++i, it.Next()) {
    o[i] = static_cast<Out>(f(pa[it.offset(0)], pb[it.offset(1)]));
  }
  return z;
}

// Error unless inputs [0, n) are present tensors: kernels call this before
// ctx.input(), which treats a missing input as our own bug.
absl::Status RequireTensorInputs(const KernelContext& ctx, size_t n);

// The usual unary kernel: output dtype = input dtype; fp16/bf16 computed in
// float. `make(node)` returns the scalar functor (so attributes such as
// LeakyRelu's alpha are read once per run, not per element).
template <TypeSet S, typename Make>
KernelFn UnaryKernelWith(Make make) {
  return [make](KernelContext& ctx) -> absl::Status {
    AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 1));
    const Tensor& x0 = ctx.input(0);
    Tensor x = WidenToFloat(x0);
    auto f = make(ctx.node());
    Tensor y;
    absl::Status s = DispatchSet<S>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      y = MapUnary<T, T>(x, x.dtype(), f);
    });
    if (!s.ok()) return ctx.Unimplemented(s.message());
    ctx.set_output(0, NarrowFromFloat(y, x0.dtype()));
    return absl::OkStatus();
  };
}

template <TypeSet S, typename F>
KernelFn UnaryKernel(F f) {
  return UnaryKernelWith<S>([f](const Node&) { return f; });
}

// Unary predicate kernel (IsNaN, IsInf, Not-like): bool output.
template <TypeSet S, typename Make>
KernelFn PredicateKernelWith(Make make) {
  return [make](KernelContext& ctx) -> absl::Status {
    AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 1));
    Tensor x = WidenToFloat(ctx.input(0));
    auto f = make(ctx.node());
    Tensor y;
    absl::Status s = DispatchSet<S>(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      y = MapUnary<bool, T>(x, DType::kBool, f);
    });
    if (!s.ok()) return ctx.Unimplemented(s.message());
    ctx.set_output(0, std::move(y));
    return absl::OkStatus();
  };
}

// Opset < 7 binary ops broadcast only with broadcast=1, and then B aligns with A
// starting at `axis` (suffix matching when axis is absent). Returns B's dims
// padded with trailing 1s so that numpy broadcasting gives the old result.
std::vector<int64_t> LegacyAlignDims(const Node& node, int64_t opset, size_t rank_a,
                                     std::vector<int64_t> dims_b);

// Same-dtype binary kernel with broadcasting: out dtype = input dtype, or bool
// when kBoolOut (comparisons). fp16/bf16 computed in float.
template <TypeSet S, bool kBoolOut, typename Make>
KernelFn BinaryKernelWith(Make make) {
  return [make](KernelContext& ctx) -> absl::Status {
    AIC_RETURN_IF_ERROR(RequireTensorInputs(ctx, 2));
    const Tensor& a0 = ctx.input(0);
    Tensor a = WidenToFloat(a0);
    Tensor b = WidenToFloat(ctx.input(1));
    if (a.dtype() != b.dtype()) {
      return ctx.Error("input dtypes differ: ", DTypeName(a0.dtype()), " and ",
                       DTypeName(ctx.input(1).dtype()));
    }
    b = b.WithDims(LegacyAlignDims(ctx.node(), ctx.opset(), a.dims().size(), b.dims()));
    auto f = make(ctx.node());
    absl::StatusOr<Tensor> z;
    absl::Status s = DispatchSet<S>(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Out = std::conditional_t<kBoolOut, bool, T>;
      z = MapBinary<Out, T, T>(a, b, kBoolOut ? DType::kBool : a.dtype(), f);
    });
    if (!s.ok()) return ctx.Unimplemented(s.message());
    if (!z.ok()) return ctx.Error(z.status().message());
    ctx.set_output(0, kBoolOut ? *std::move(z) : NarrowFromFloat(*z, a0.dtype()));
    return absl::OkStatus();
  };
}

template <TypeSet S, bool kBoolOut = false, typename F>
KernelFn BinaryKernel(F f) {
  return BinaryKernelWith<S, kBoolOut>([f](const Node&) { return f; });
}

}  // namespace aic
