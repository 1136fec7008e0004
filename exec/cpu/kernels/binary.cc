#include "exec/cpu/kernels/binary.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <type_traits>
#include <utility>

#include "exec/cpu/kernels/cast.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/pow.h"

namespace aic::cpu::kernels {

namespace {

// y[i] = op(a[i*sa], b[i*sb]), one simple loop per stride pattern so each
// vectorizes.
template <typename A, typename Y, typename Op>
inline void Binary(const void* const* in, const int64_t* s, void* out, int64_t n, Op op) {
  const A* a = static_cast<const A*>(in[0]);
  const A* b = static_cast<const A*>(in[1]);
  Y* y = static_cast<Y*>(out);
  if (s[0] != 0 && s[1] != 0) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], b[i]);
  } else if (s[0] != 0) {
    A bv = b[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = op(a[i], bv);
  } else if (s[1] != 0) {
    A av = a[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = op(av, b[i]);
  } else {
    Y v = op(a[0], b[0]);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

#define AIC_BINARY(name, A, Y, expr)                                                   \
  AIC_KERNEL_CLONES void name(const void* const* in, const int64_t* s, void* out, int64_t n) { \
    Binary<A, Y>(in, s, out, n, [](A a, A b) -> Y { return expr; });                    \
  }

// Integers wrap around (ONNX's and numpy's semantics) instead of
// overflowing, which would be undefined behaviour in C++.
template <typename T>
inline T Wrapped(T a, T b, int op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    U x = static_cast<U>(a), y = static_cast<U>(b);
    return static_cast<T>(op == 0 ? x + y : op == 1 ? x - y : x * y);
  } else {
    return op == 0 ? a + b : op == 1 ? a - b : a * b;
  }
}

// Arithmetic, one set per numeric type.
#define AIC_ARITH(T, suffix)                      \
  AIC_BINARY(Add##suffix, T, T, Wrapped(a, b, 0)) \
  AIC_BINARY(Sub##suffix, T, T, Wrapped(a, b, 1)) \
  AIC_BINARY(Mul##suffix, T, T, Wrapped(a, b, 2)) \
  AIC_BINARY(Max##suffix, T, T, a > b ? a : b)    \
  AIC_BINARY(Min##suffix, T, T, a < b ? a : b)    \
  AIC_BINARY(Equal##suffix, T, bool, a == b)      \
  AIC_BINARY(Less##suffix, T, bool, a < b)        \
  AIC_BINARY(Greater##suffix, T, bool, a > b)     \
  AIC_BINARY(LessEq##suffix, T, bool, a <= b)     \
  AIC_BINARY(GreaterEq##suffix, T, bool, a >= b)

AIC_ARITH(float, F32)
AIC_ARITH(int32_t, I32)
AIC_ARITH(int64_t, I64)
AIC_BINARY(DivF32, float, float, a / b)
AIC_BINARY(PowGeneralF32, float, float, std::pow(a, b))

// x^e for a scalar exponent that is a small integer or 1/2 (x^3 in GELU's
// tanh form, x^2 in hand-written norms): products or a square root, which
// vectorize, where std::pow stays a scalar libm call. Within an ulp or two
// of pow.
AIC_KERNEL_CLONES void PowF32(const void* const* in, const int64_t* s, void* out, int64_t n) {
  const float* a = static_cast<const float*>(in[0]);
  float e = static_cast<const float*>(in[1])[0];
  float* y = static_cast<float*>(out);
  if (s[1] != 0 || s[0] == 0 || !(e == 2.0f || e == 3.0f || e == 4.0f || e == -1.0f || e == 0.5f)) {
    static const RowFn vector_pow = Avx2PowKernel();
    (vector_pow != nullptr ? vector_pow : PowGeneralF32)(in, s, out, n);
    return;
  }
  if (e == 2.0f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i];
  } else if (e == 3.0f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * a[i] * a[i];
  } else if (e == 4.0f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      float sq = a[i] * a[i];
      y[i] = sq * sq;
    }
  } else if (e == -1.0f) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / a[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(a[i]);
  }
}
AIC_BINARY(PReluF32, float, float, a < 0.0f ? a * b : a)
AIC_BINARY(AndB, bool, bool, a && b)
AIC_BINARY(OrB, bool, bool, a || b)
AIC_BINARY(XorB, bool, bool, a != b)

#undef AIC_ARITH
#undef AIC_BINARY

// Where(c, x, y): selects bits, so one kernel per element size covers every
// dtype. Both values are loaded before the select, and each operand is
// contiguous or one broadcast value (the strides the broadcast driver
// passes are 0 or 1), so the loop is a branch-free blend: the conditional
// load it was compiled to before was a branch per element, as fast as the
// mask was predictable (a mask broadcast over 12 heads took 0.17 or 0.62 ms
// on [1,12,128,128] depending on the build's code layout, Zen 3).
template <typename T, bool kC, bool kX, bool kY>
inline void WhereRun(const bool* c, const T* x, const T* y, T* o, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    T a = x[kX ? i : 0];
    T b = y[kY ? i : 0];
    o[i] = c[kC ? i : 0] ? a : b;
  }
}

template <typename T>
inline void Where(const void* const* in, const int64_t* s, void* out, int64_t n) {
  const bool* c = static_cast<const bool*>(in[0]);
  const T* x = static_cast<const T*>(in[1]);
  const T* y = static_cast<const T*>(in[2]);
  T* o = static_cast<T*>(out);
  switch ((s[0] != 0 ? 4 : 0) | (s[1] != 0 ? 2 : 0) | (s[2] != 0 ? 1 : 0)) {
    case 0: return WhereRun<T, false, false, false>(c, x, y, o, n);
    case 1: return WhereRun<T, false, false, true>(c, x, y, o, n);
    case 2: return WhereRun<T, false, true, false>(c, x, y, o, n);
    case 3: return WhereRun<T, false, true, true>(c, x, y, o, n);
    case 4: return WhereRun<T, true, false, false>(c, x, y, o, n);
    case 5: return WhereRun<T, true, false, true>(c, x, y, o, n);
    case 6: return WhereRun<T, true, true, false>(c, x, y, o, n);
    default: return WhereRun<T, true, true, true>(c, x, y, o, n);
  }
}

#define AIC_WHERE(T)                                                                            \
  AIC_KERNEL_CLONES void Where##T(const void* const* in, const int64_t* s, void* out, int64_t n) { \
    Where<T>(in, s, out, n);                                                                    \
  }
AIC_WHERE(uint8_t)
AIC_WHERE(uint16_t)
AIC_WHERE(uint32_t)
AIC_WHERE(uint64_t)
#undef AIC_WHERE

}  // namespace

RowFn BinaryKernel(const std::string& op, DType in, DType* out) {
  using Key = std::pair<std::string, DType>;
  static const auto* table = new std::map<Key, RowFn>{
#define AIC_ROWS(T, suffix)                                                                        \
  {{"Add", T}, Add##suffix}, {{"Sub", T}, Sub##suffix}, {{"Mul", T}, Mul##suffix},                 \
      {{"Max", T}, Max##suffix}, {{"Min", T}, Min##suffix}, {{"Equal", T}, Equal##suffix},         \
      {{"Less", T}, Less##suffix}, {{"Greater", T}, Greater##suffix},                              \
      {{"LessOrEqual", T}, LessEq##suffix}, {{"GreaterOrEqual", T}, GreaterEq##suffix},
      AIC_ROWS(DType::kFloat, F32) AIC_ROWS(DType::kInt32, I32) AIC_ROWS(DType::kInt64, I64)
#undef AIC_ROWS
      {{"Div", DType::kFloat}, DivF32},
      {{"Pow", DType::kFloat}, PowF32},
      {{"PRelu", DType::kFloat}, PReluF32},
      {{"And", DType::kBool}, AndB},
      {{"Or", DType::kBool}, OrB},
      {{"Xor", DType::kBool}, XorB},
  };
  auto it = table->find({op, in});
  if (it == table->end()) return nullptr;
  bool compare = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
  *out = compare ? DType::kBool : in;
  return it->second;
}

RowFn WhereKernel(size_t elem_size) {
  switch (elem_size) {
    case 1: return Whereuint8_t;
    case 2: return Whereuint16_t;
    case 4: return Whereuint32_t;
    case 8: return Whereuint64_t;
    default: return nullptr;
  }
}

void HalfBinary(RowFn fn, const uint16_t* a, const uint16_t* b, uint16_t* y, int64_t n) {
  // Runs of 1024 inside each piece: the three float buffers stay in L1.
  constexpr int64_t kRun = 1024;
  ParallelPieces(n, [&](int64_t begin, int64_t len) {
    alignas(64) float fa[kRun], fb[kRun], fy[kRun];
    const int64_t unit[2] = {1, 1};
    for (int64_t at = begin; at < begin + len; at += kRun) {
      const int64_t m = std::min(kRun, begin + len - at);
      HalfToFloatRow(a + at, fa, m);
      HalfToFloatRow(b + at, fb, m);
      const void* in[2] = {fa, fb};
      fn(in, unit, fy, m);
      FloatToHalfRow(fy, y + at, m);
    }
  });
}

}  // namespace aic::cpu::kernels
