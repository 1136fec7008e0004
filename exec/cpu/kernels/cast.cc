// Value rules follow the reference (ops/util/float_convert.cc): floats to
// integers truncate, NaN and infinities become 0, values beyond int64 wrap;
// integers convert exactly between themselves (C++ wrap-around).
#include "exec/cpu/kernels/cast.h"

#include <cmath>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#include <map>
#include <type_traits>
#include <utility>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "support/half.h"

namespace aic::cpu::kernels {

namespace {

template <typename To>
inline To FloatToInt(double d) {
  if (std::isnan(d) || std::isinf(d)) return static_cast<To>(0);
  double tr = std::trunc(d);
  if (tr >= -9.2e18 && tr <= 9.2e18) return static_cast<To>(static_cast<int64_t>(tr));
  return static_cast<To>(static_cast<uint64_t>(tr));
}

template <typename From, typename To>
inline To Convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(static_cast<double>(v));
  } else if constexpr (std::is_floating_point_v<From>) {
    return FloatToInt<To>(v);
  } else if constexpr (std::is_same_v<From, bool> || std::is_unsigned_v<From>) {
    return static_cast<To>(static_cast<uint64_t>(v));
  } else {
    return static_cast<To>(static_cast<int64_t>(v));
  }
}

template <typename From, typename To>
void CastLoop(const void* x, void* y, int64_t n) {
  const From* a = static_cast<const From*>(x);
  To* b = static_cast<To*>(y);
  ParallelFor((n + 8191) / 8192, 8192, [&](int64_t p) {
    int64_t end = (p + 1) * 8192 < n ? (p + 1) * 8192 : n;
    for (int64_t i = p * 8192; i < end; ++i) b[i] = Convert<From, To>(a[i]);
  });
}

AIC_KERNEL_CLONES void HalfToF32Portable(const uint16_t* a, float* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) b[i] = HalfToFloat(a[i]);
}

AIC_KERNEL_CLONES void F32ToHalfPortable(const float* a, uint16_t* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) b[i] = FloatToHalf(a[i]);
}

#if defined(__x86_64__) && defined(__GNUC__)
// F16C converts 8 lanes in one instruction, with the same round-to-nearest-
// even; the only difference from FloatToHalf is a NaN's payload (F16C keeps
// its top mantissa bits, FloatToHalf makes 0x7e00): both are NaN.
__attribute__((target("avx2,f16c"))) void HalfToF32F16c(const uint16_t* a, float* b, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    _mm256_storeu_ps(b + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) b[i] = HalfToFloat(a[i]);
}

__attribute__((target("avx2,f16c"))) void F32ToHalfF16c(const float* a, uint16_t* b, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + i), h);
  }
  for (; i < n; ++i) b[i] = FloatToHalf(a[i]);
}

bool HasF16c() {
  static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2");
  return has;
}

void HalfToF32Run(const uint16_t* a, float* b, int64_t n) {
  HasF16c() ? HalfToF32F16c(a, b, n) : HalfToF32Portable(a, b, n);
}
void F32ToHalfRun(const float* a, uint16_t* b, int64_t n) {
  HasF16c() ? F32ToHalfF16c(a, b, n) : F32ToHalfPortable(a, b, n);
}
#else
void HalfToF32Run(const uint16_t* a, float* b, int64_t n) { HalfToF32Portable(a, b, n); }
void F32ToHalfRun(const float* a, uint16_t* b, int64_t n) { F32ToHalfPortable(a, b, n); }
#endif

AIC_KERNEL_CLONES void BFloat16ToF32Run(const uint16_t* a, float* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) b[i] = BFloat16ToFloat(a[i]);
}

// Truncating, as the reference Cast does (TruncateToBFloat16): the two
// backends agree bit for bit.
AIC_KERNEL_CLONES void F32ToBFloat16Run(const float* a, uint16_t* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) b[i] = TruncateToBFloat16(a[i]);
}

// Pieces of 8K elements over threads, each a vectorized run.
template <typename From, typename To>
void PiecewiseRun(void (*run)(const From*, To*, int64_t), const void* x, void* y, int64_t n) {
  const From* a = static_cast<const From*>(x);
  To* b = static_cast<To*>(y);
  ParallelFor((n + 8191) / 8192, 8192, [&](int64_t p) {
    int64_t begin = p * 8192;
    run(a + begin, b + begin, (begin + 8192 < n ? begin + 8192 : n) - begin);
  });
}

AIC_KERNEL_CLONES void RoundToBFloat16Run(const float* a, float* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) b[i] = BFloat16ToFloat(FloatToBFloat16(a[i]));
}

AIC_KERNEL_CLONES void RoundToFloat16Portable(const float* a, float* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) b[i] = HalfToFloat(FloatToHalf(a[i]));
}

#if defined(__x86_64__) && defined(__GNUC__)
// Through F16C and back: two instructions per 8 floats.
__attribute__((target("avx2,f16c"))) void RoundToFloat16F16c(const float* a, float* b, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(b + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) b[i] = HalfToFloat(FloatToHalf(a[i]));
}
void RoundToFloat16Run(const float* a, float* b, int64_t n) {
  HasF16c() ? RoundToFloat16F16c(a, b, n) : RoundToFloat16Portable(a, b, n);
}
#else
void RoundToFloat16Run(const float* a, float* b, int64_t n) { RoundToFloat16Portable(a, b, n); }
#endif

void HalfToF32(const void* x, void* y, int64_t n) { PiecewiseRun<uint16_t, float>(HalfToF32Run, x, y, n); }
void F32ToHalf(const void* x, void* y, int64_t n) { PiecewiseRun<float, uint16_t>(F32ToHalfRun, x, y, n); }
void BFloat16ToF32(const void* x, void* y, int64_t n) { PiecewiseRun<uint16_t, float>(BFloat16ToF32Run, x, y, n); }
void F32ToBFloat16(const void* x, void* y, int64_t n) { PiecewiseRun<float, uint16_t>(F32ToBFloat16Run, x, y, n); }

// f32 to int64/int32: when every value of a piece is finite and in range
// (checked in one vectorized pass), C++'s truncating conversion is the
// reference's (FloatToInt); otherwise that piece takes the scalar rules.
template <typename To>
AIC_KERNEL_CLONES bool InRangeRun(const float* a, int64_t n) {
  constexpr float kLimit = std::is_same_v<To, int64_t> ? 9.2e18f : 2.1e9f;
  int bad = 0;
#pragma omp simd reduction(| : bad)
  for (int64_t i = 0; i < n; ++i) bad |= !(a[i] > -kLimit && a[i] < kLimit);  // NaN fails both
  return bad == 0;
}

template <typename To>
AIC_KERNEL_CLONES_V4 void TruncateRun(const float* a, To* b, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) b[i] = static_cast<To>(a[i]);
}

#ifdef AIC_HAVE_AVX2_MATH
// f32 to int64 for a piece whose values all truncate into int32 (checked
// here, false otherwise): vcvttps2dq and a sign extension, 8 at a time. AVX2
// has no f32 -> int64 conversion, so TruncateRun converted one element at a
// time: Cast f32 -> int64 of [8, 512, 768] took 1.35x ONNX Runtime's time on
// a Zen 3 (bench/OPS.md).
AIC_AVX2 bool TruncateToInt64ViaInt32(const float* a, int64_t* b, int64_t n) {
  const __m256 limit = _mm256_set1_ps(2147483648.0f);  // 2^31
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 bad = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {  // NaN compares false: bad
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(a + i), abs_mask), limit, _CMP_NLT_UQ));
  }
  if (_mm256_movemask_ps(bad) != 0) return false;
  for (int64_t j = i; j < n; ++j) {
    if (!(std::fabs(a[j]) < 2147483648.0f)) return false;
  }
  for (i = 0; i + 8 <= n; i += 8) {
    __m256i w = _mm256_cvttps_epi32(_mm256_loadu_ps(a + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(w)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i + 4), _mm256_cvtepi32_epi64(_mm256_extracti128_si256(w, 1)));
  }
  for (; i < n; ++i) b[i] = static_cast<int64_t>(a[i]);
  return true;
}
#endif

template <typename To>
void F32ToInt(const void* x, void* y, int64_t n) {
  const float* a = static_cast<const float*>(x);
  To* b = static_cast<To*>(y);
  ParallelFor((n + 8191) / 8192, 8192, [&](int64_t p) {
    int64_t begin = p * 8192, len = (begin + 8192 < n ? begin + 8192 : n) - begin;
#ifdef AIC_HAVE_AVX2_MATH
    if constexpr (std::is_same_v<To, int64_t>) {
      if (avx2::HaveAvx2Fma() && TruncateToInt64ViaInt32(a + begin, b + begin, len)) return;
    }
#endif
    if (InRangeRun<To>(a + begin, len)) {
      TruncateRun(a + begin, b + begin, len);
    } else {
      for (int64_t i = begin; i < begin + len; ++i) b[i] = Convert<float, To>(a[i]);
    }
  });
}

template <typename From>
void AddPairs(std::map<std::pair<DType, DType>, CastFn>& m) {
  constexpr DType f = DTypeOf<From>::value;
  m[{f, DType::kFloat}] = CastLoop<From, float>;
  m[{f, DType::kInt32}] = CastLoop<From, int32_t>;
  m[{f, DType::kInt64}] = CastLoop<From, int64_t>;
  m[{f, DType::kInt8}] = CastLoop<From, int8_t>;
  m[{f, DType::kUint8}] = CastLoop<From, uint8_t>;
  m[{f, DType::kBool}] = CastLoop<From, bool>;
}

}  // namespace

void HalfToFloatRow(const uint16_t* x, float* y, int64_t n) { HalfToF32Run(x, y, n); }
void FloatToHalfRow(const float* x, uint16_t* y, int64_t n) { F32ToHalfRun(x, y, n); }

CastFn CastKernel(DType from, DType to) {
  static const auto* table = [] {
    auto* m = new std::map<std::pair<DType, DType>, CastFn>;
    AddPairs<float>(*m);
    (*m)[{DType::kFloat, DType::kInt64}] = F32ToInt<int64_t>;
    (*m)[{DType::kFloat, DType::kInt32}] = F32ToInt<int32_t>;
    AddPairs<int32_t>(*m);
    AddPairs<int64_t>(*m);
    AddPairs<int8_t>(*m);
    AddPairs<uint8_t>(*m);
    AddPairs<bool>(*m);
    (*m)[{DType::kFloat16, DType::kFloat}] = HalfToF32;
    (*m)[{DType::kFloat, DType::kFloat16}] = F32ToHalf;
    (*m)[{DType::kBFloat16, DType::kFloat}] = BFloat16ToF32;
    (*m)[{DType::kFloat, DType::kBFloat16}] = F32ToBFloat16;
    return m;
  }();
  if (from == to) return nullptr;
  auto it = table->find({from, to});
  return it == table->end() ? nullptr : it->second;
}

void RoundToHalfCopy(const float* x, float* y, int64_t n, DType half) {
  PiecewiseRun<float, float>(half == DType::kBFloat16 ? RoundToBFloat16Run : RoundToFloat16Run, x, y, n);
}

void RoundToHalfInPlace(float* x, int64_t n, DType half) { RoundToHalfCopy(x, x, n, half); }

}  // namespace aic::cpu::kernels
