#include "exec/cpu/kernels/streaming_stores.h"

#include <algorithm>
#include <cstdint>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"

namespace aic::cpu::kernels {

namespace {

// Elements a thread streams at a time: 256 KiB of output, a multiple of the
// 64-byte line, so every piece after the first starts aligned.
constexpr int64_t kPiece = int64_t{1} << 16;

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN

template <StreamingOp kOp>
AIC_AVX512 inline __m512 Apply(__m512 a, __m512 b) {
  switch (kOp) {
    case StreamingOp::kAdd: return _mm512_add_ps(a, b);
    case StreamingOp::kSub: return _mm512_sub_ps(a, b);
    case StreamingOp::kMul: return _mm512_mul_ps(a, b);
    case StreamingOp::kDiv: return _mm512_div_ps(a, b);
    // ONNX's Max/Min propagate NaN. max_ps/min_ps return their second
    // operand when either is NaN: (b, a) gives a (NaN) where a is NaN, and b
    // is put back where b is.
    case StreamingOp::kMax: {
      __m512 m = _mm512_max_ps(b, a);
      return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), b);
    }
    case StreamingOp::kMin: {
      __m512 m = _mm512_min_ps(b, a);
      return _mm512_mask_mov_ps(m, _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), b);
    }
  }
  return a;
}

// Plain (masked) stores up to y's first 64-byte boundary, streaming stores
// over whole vectors from there, a masked plain store for the rest.
template <StreamingOp kOp>
AIC_AVX512 void StreamPiece(const float* a, const float* b, float* y, int64_t n) {
  int64_t i = 0;
  const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(y) % 64 / sizeof(float));
  if (misaligned != 0) {
    const int64_t head = std::min<int64_t>(n, 16 - misaligned);
    const auto m = static_cast<__mmask16>((1u << head) - 1);
    _mm512_mask_storeu_ps(y, m, Apply<kOp>(_mm512_maskz_loadu_ps(m, a), _mm512_maskz_loadu_ps(m, b)));
    i = head;
  }
  for (; i + 16 <= n; i += 16) _mm512_stream_ps(y + i, Apply<kOp>(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
  if (i < n) {
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, Apply<kOp>(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i)));
  }
  _mm_sfence();  // the streamed lines reach memory before the step ends
}

AIC_AVX512_END
#endif

#ifdef AIC_HAVE_AVX2_MATH
// The same with 8 lanes for CPUs with AVX2 but not AVX-512 (a Zen 3:
// [8, 512, 768] Add, Mul at 1.17-1.23x ONNX Runtime's time with oneDNN's
// binary at 2 threads).
template <StreamingOp kOp>
AIC_AVX2 inline __m256 Apply8(__m256 a, __m256 b) {
  switch (kOp) {
    case StreamingOp::kAdd: return _mm256_add_ps(a, b);
    case StreamingOp::kSub: return _mm256_sub_ps(a, b);
    case StreamingOp::kMul: return _mm256_mul_ps(a, b);
    case StreamingOp::kDiv: return _mm256_div_ps(a, b);
    // NaN propagated as in Apply: b put back where b is NaN.
    case StreamingOp::kMax: return _mm256_blendv_ps(_mm256_max_ps(b, a), b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
    case StreamingOp::kMin: return _mm256_blendv_ps(_mm256_min_ps(b, a), b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
  }
  return a;
}

template <StreamingOp kOp>
AIC_AVX2 inline float ApplyOne(float a, float b) {
  return _mm256_cvtss_f32(Apply8<kOp>(_mm256_set1_ps(a), _mm256_set1_ps(b)));
}

// Plain stores up to y's first 32-byte boundary and for the tail (one
// element at a time: at most 7 each), streaming stores in between.
template <StreamingOp kOp>
AIC_AVX2 void StreamPieceAvx2(const float* a, const float* b, float* y, int64_t n) {
  int64_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(y + i) % 32 != 0; ++i) y[i] = ApplyOne<kOp>(a[i], b[i]);
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(y + i, Apply8<kOp>(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  for (; i < n; ++i) y[i] = ApplyOne<kOp>(a[i], b[i]);
  _mm_sfence();  // the streamed lines reach memory before the step ends
}

#endif

// piece(a, b, y, len) over pieces of kPiece elements, spread over the threads.
template <typename Piece>
void StreamAll(Piece piece, const float* a, const float* b, float* y, int64_t n) {
  ParallelFor((n + kPiece - 1) / kPiece, kPiece, [&](int64_t p) {
    const int64_t begin = p * kPiece;
    piece(a + begin, b + begin, y + begin, std::min(kPiece, n - begin));
  });
}

template <StreamingOp kOp>
void StreamAny(const float* a, const float* b, float* y, int64_t n) {
#ifdef AIC_HAVE_AVX512_MATH
  if (avx512::HaveAvx512()) return StreamAll(StreamPiece<kOp>, a, b, y, n);
#endif
#ifdef AIC_HAVE_AVX2_MATH
  StreamAll(StreamPieceAvx2<kOp>, a, b, y, n);
#else
  (void)a, (void)b, (void)y, (void)n;
#endif
}

}  // namespace

bool StreamingOpOf(const std::string& op, StreamingOp* out) {
  if (op == "Add") *out = StreamingOp::kAdd;
  else if (op == "Sub") *out = StreamingOp::kSub;
  else if (op == "Mul") *out = StreamingOp::kMul;
  else if (op == "Div") *out = StreamingOp::kDiv;
  else if (op == "Max") *out = StreamingOp::kMax;
  else if (op == "Min") *out = StreamingOp::kMin;
  else return false;
  return true;
}

bool HaveStreamingStores() {
#ifdef AIC_HAVE_AVX512_MATH
  if (avx512::HaveAvx512()) return true;
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) return true;
#endif
  return false;
}

void StreamingBinaryF32(StreamingOp op, const float* a, const float* b, float* y, int64_t n) {
  switch (op) {
    case StreamingOp::kAdd: return StreamAny<StreamingOp::kAdd>(a, b, y, n);
    case StreamingOp::kSub: return StreamAny<StreamingOp::kSub>(a, b, y, n);
    case StreamingOp::kMul: return StreamAny<StreamingOp::kMul>(a, b, y, n);
    case StreamingOp::kDiv: return StreamAny<StreamingOp::kDiv>(a, b, y, n);
    case StreamingOp::kMax: return StreamAny<StreamingOp::kMax>(a, b, y, n);
    case StreamingOp::kMin: return StreamAny<StreamingOp::kMin>(a, b, y, n);
  }
}

}  // namespace aic::cpu::kernels
