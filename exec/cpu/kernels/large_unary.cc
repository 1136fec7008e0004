// Large unary passes (large_unary.h): the op in registers, 16 lanes with
// AVX-512, 8 with AVX2, plain or streaming stores.
#include "exec/cpu/kernels/large_unary.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

namespace {

// Elements a thread takes at a time: 256 KiB of output, a multiple of the
// 64-byte line, so every piece after the first starts aligned.
constexpr int64_t kPiece = int64_t{1} << 16;

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN

template <LargeUnaryKind kKind>
AIC_AVX512 inline __m512 ApplyUnary(__m512 x, __m512 a, __m512 b) {
  // Sign bit moves as integers: the float forms of andnot/xor are AVX512DQ.
  const __m512i sign = _mm512_set1_epi32(INT32_MIN);
  switch (kKind) {
    // max_ps returns its second operand when one is NaN: (0, x) keeps NaN.
    case LargeUnaryKind::kRelu: return _mm512_max_ps(_mm512_setzero_ps(), x);
    case LargeUnaryKind::kLeakyRelu:
      return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), x, a);
    case LargeUnaryKind::kAbs: return _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
    case LargeUnaryKind::kNeg: return _mm512_castsi512_ps(_mm512_xor_si512(sign, _mm512_castps_si512(x)));
    case LargeUnaryKind::kClip: return _mm512_min_ps(b, _mm512_max_ps(a, x));
  }
  return x;
}

// y = f(x) over one piece: plain (masked) stores up to y's first 64-byte
// boundary and for the tail, streaming or plain aligned stores between.
template <LargeUnaryKind kKind, bool kStream>
AIC_AVX512 void UnaryPiece(const float* x, float* y, int64_t n, float fa, float fb) {
  const __m512 a = _mm512_set1_ps(fa), b = _mm512_set1_ps(fb);
  int64_t i = 0;
  const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(y) % 64 / sizeof(float));
  if (misaligned != 0) {
    const int64_t head = std::min<int64_t>(n, 16 - misaligned);
    const auto m = static_cast<__mmask16>((1u << head) - 1);
    _mm512_mask_storeu_ps(y, m, ApplyUnary<kKind>(_mm512_maskz_loadu_ps(m, x), a, b));
    i = head;
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 v = ApplyUnary<kKind>(_mm512_loadu_ps(x + i), a, b);
    if (kStream) {
      _mm512_stream_ps(y + i, v);
    } else {
      _mm512_store_ps(y + i, v);
    }
  }
  if (i < n) {
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, ApplyUnary<kKind>(_mm512_maskz_loadu_ps(m, x + i), a, b));
  }
  if (kStream) _mm_sfence();
}

AIC_AVX512_END
#endif

#ifdef AIC_HAVE_AVX2_MATH
template <LargeUnaryKind kKind>
AIC_AVX2 inline __m256 ApplyUnary8(__m256 x, __m256 a, __m256 b) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  switch (kKind) {
    case LargeUnaryKind::kRelu: return _mm256_max_ps(_mm256_setzero_ps(), x);
    case LargeUnaryKind::kLeakyRelu:
      return _mm256_blendv_ps(x, _mm256_mul_ps(x, a), _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
    case LargeUnaryKind::kAbs: return _mm256_andnot_ps(sign, x);
    case LargeUnaryKind::kNeg: return _mm256_xor_ps(sign, x);
    case LargeUnaryKind::kClip: return _mm256_min_ps(b, _mm256_max_ps(a, x));
  }
  return x;
}

template <LargeUnaryKind kKind>
AIC_AVX2 inline float ApplyUnaryOne(float x, __m256 a, __m256 b) {
  return _mm256_cvtss_f32(ApplyUnary8<kKind>(_mm256_set1_ps(x), a, b));
}

template <LargeUnaryKind kKind, bool kStream>
AIC_AVX2 void UnaryPieceAvx2(const float* x, float* y, int64_t n, float fa, float fb) {
  const __m256 a = _mm256_set1_ps(fa), b = _mm256_set1_ps(fb);
  int64_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(y + i) % 32 != 0; ++i) y[i] = ApplyUnaryOne<kKind>(x[i], a, b);
  for (; i + 8 <= n; i += 8) {
    const __m256 v = ApplyUnary8<kKind>(_mm256_loadu_ps(x + i), a, b);
    if (kStream) {
      _mm256_stream_ps(y + i, v);
    } else {
      _mm256_store_ps(y + i, v);
    }
  }
  for (; i < n; ++i) y[i] = ApplyUnaryOne<kKind>(x[i], a, b);
  if (kStream) _mm_sfence();
}

#endif

template <LargeUnaryKind kKind, bool kStream>
void UnaryAny(const LargeUnary& op, const float* x, float* y, int64_t n) {
  ParallelFor((n + kPiece - 1) / kPiece, kPiece, [&](int64_t p) {
    const int64_t begin = p * kPiece, len = std::min(kPiece, n - begin);
#ifdef AIC_HAVE_AVX512_MATH
    if (avx512::HaveAvx512()) return UnaryPiece<kKind, kStream>(x + begin, y + begin, len, op.a, op.b);
#endif
#ifdef AIC_HAVE_AVX2_MATH
    UnaryPieceAvx2<kKind, kStream>(x + begin, y + begin, len, op.a, op.b);
#else
    (void)x, (void)y, (void)len;
#endif
  });
}

template <LargeUnaryKind kKind>
void UnaryBySize(const LargeUnary& op, const float* x, float* y, int64_t n) {
  if (LargeUnaryStreams(n)) return UnaryAny<kKind, true>(op, x, y, n);
  UnaryAny<kKind, false>(op, x, y, n);
}

template <LargeUnaryKind kKind>
void UnaryRun(const LargeUnary& op, const float* x, float* y, int64_t n) {
#ifdef AIC_HAVE_AVX512_MATH
  if (avx512::HaveAvx512()) return UnaryPiece<kKind, false>(x, y, n, op.a, op.b);
#endif
#ifdef AIC_HAVE_AVX2_MATH
  UnaryPieceAvx2<kKind, false>(x, y, n, op.a, op.b);
#else
  (void)op, (void)x, (void)y, (void)n;
#endif
}

}  // namespace

void UnaryRunF32(const LargeUnary& op, const float* x, float* y, int64_t n) {
  switch (op.kind) {
    case LargeUnaryKind::kRelu:
      return UnaryRun<LargeUnaryKind::kRelu>(op, x, y, n);
    case LargeUnaryKind::kLeakyRelu:
      return UnaryRun<LargeUnaryKind::kLeakyRelu>(op, x, y, n);
    case LargeUnaryKind::kAbs:
      return UnaryRun<LargeUnaryKind::kAbs>(op, x, y, n);
    case LargeUnaryKind::kNeg:
      return UnaryRun<LargeUnaryKind::kNeg>(op, x, y, n);
    case LargeUnaryKind::kClip:
      return UnaryRun<LargeUnaryKind::kClip>(op, x, y, n);
  }
}

bool LargeUnaryStreams(int64_t n) { return n * static_cast<int64_t>(sizeof(float)) >= kStreamingUnaryMinBytes; }

void LargeUnaryF32(const LargeUnary& op, const float* x, float* y, int64_t n) {
  switch (op.kind) {
    case LargeUnaryKind::kRelu: return UnaryBySize<LargeUnaryKind::kRelu>(op, x, y, n);
    case LargeUnaryKind::kLeakyRelu: return UnaryBySize<LargeUnaryKind::kLeakyRelu>(op, x, y, n);
    case LargeUnaryKind::kAbs: return UnaryBySize<LargeUnaryKind::kAbs>(op, x, y, n);
    case LargeUnaryKind::kNeg: return UnaryBySize<LargeUnaryKind::kNeg>(op, x, y, n);
    case LargeUnaryKind::kClip: return UnaryBySize<LargeUnaryKind::kClip>(op, x, y, n);
  }
}

bool HaveLargeUnary() {
#ifdef AIC_HAVE_AVX512_MATH
  if (avx512::HaveAvx512()) return true;
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) return true;
#endif
  return false;
}

}  // namespace aic::cpu::kernels
