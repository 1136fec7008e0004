#include "exec/cpu/kernels/quantized_binary.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/quantize_avx2.h"
#include "exec/cpu/kernels/quantize_avx512.h"
#include "exec/cpu/kernels/quantize_run.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kChunk = 256;

AIC_KERNEL_CLONES void Combine(float* a, const float* b, int64_t n, bool add, bool relu) {
  if (add) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) a[i] = a[i] + b[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) a[i] = a[i] * b[i];
  }
  if (relu) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) a[i] = a[i] < 0.0f ? 0.0f : a[i];
  }
}

void DequantizeAny(const void* q, bool is_signed, int64_t offset, float* out, int64_t n, float scale, float zero) {
  if (is_signed) {
    DequantizeRunS8(static_cast<const int8_t*>(q) + offset, out, n, scale, zero);
  } else {
    DequantizeRunU8(static_cast<const uint8_t*>(q) + offset, out, n, scale, zero);
  }
}

// Elements [begin, begin + len) of y, len <= kChunk; `bd` is b dequantized
// when it is broadcast. With b_inner == 1 the piece lies within one period of
// b (the caller cuts it so), and reads bd in place.
void RunChunk(const QuantizedBinary& p, const void* a, const void* b, const float* bd, void* y, int64_t begin,
              int64_t len) {
  alignas(64) float fa[kChunk];
  alignas(64) float fb[kChunk];
  const float* bv = fb;
  DequantizeAny(a, p.a_signed, begin, fa, len, p.a_scale, p.a_zero);
  if (!p.b_broadcast) {
    DequantizeAny(b, p.b_signed, begin, fb, len, p.b_scale, p.b_zero);
  } else if (p.b_inner == 1) {
    bv = bd + begin % p.b_count;
  } else {
    for (int64_t i = 0; i < len;) {  // runs of b_inner equal values
      int64_t pos = begin + i;
      int64_t run = std::min(len - i, p.b_inner - pos % p.b_inner);
      std::fill(fb + i, fb + i + run, bd[(pos / p.b_inner) % p.b_count]);
      i += run;
    }
  }
  Combine(fa, bv, len, p.add, p.relu);
  if (p.y_signed) {
    QuantizeRunS8(fa, static_cast<int8_t*>(y) + begin, len, p.y_scale, p.y_zero);
  } else {
    QuantizeRunU8(fa, static_cast<uint8_t*>(y) + begin, len, p.y_scale, p.y_zero);
  }
}

#ifdef AIC_QUANTIZE_AVX512
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Sixteen 8-bit values widened to float, as DequantizeLoop widens them.
__attribute__((target("avx512f"))) inline __m512 Widened(const void* q, bool is_signed, int64_t at) {
  __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint8_t*>(q) + at));
  return _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes));
}

// What FusedVectors keeps in registers, read once.
struct FusedOperands {
  __m512 a_zero, a_scale, b_zero, b_scale;
  bool a_signed, b_signed;
  QuantizeConstants y;
};

// 16 results from position `at` as int32 lanes, within the output type's range.
template <bool kAdd, bool kRelu, bool kDivide, bool kHuge>
__attribute__((target("avx512f"), always_inline)) inline __m512i QuantizedSixteen(const FusedOperands& k, const void* a,
                                                                                  const void* b, int64_t at) {
  __m512 fa = _mm512_mul_ps(_mm512_sub_ps(Widened(a, k.a_signed, at), k.a_zero), k.a_scale);
  __m512 fb = _mm512_mul_ps(_mm512_sub_ps(Widened(b, k.b_signed, at), k.b_zero), k.b_scale);
  asm("" : "+v"(fa), "+v"(fb));  // no FMA contraction: as FusedVectorsAvx2
  __m512 v = kAdd ? _mm512_add_ps(fa, fb) : _mm512_mul_ps(fa, fb);
  // v < 0 ? 0 : v, NaN kept: vmaxps returns its second operand when one is NaN.
  if (kRelu) v = _mm512_max_ps(_mm512_setzero_ps(), v);
  if (kDivide) {
    // The quotient rounded half to even by the conversion itself (the
    // default rounding mode), the zero point added and the range clamped by
    // FusedVectors' saturating 16-bit add and packs: two vector operations
    // where QuantizedLanes spends six. Where the scales allow quotients of
    // 2^30 or more (kHuge), held under it first, as a larger one converts to
    // INT32_MIN (a negative one saturates right as it is).
    __m512 q = _mm512_div_ps(v, k.y.scale);
    if (kHuge) q = _mm512_min_ps(_mm512_set1_ps(0x1p30f), q);
    return _mm512_cvtps_epi32(q);
  }
  return _mm512_cvtps_epi32(QuantizedLanes<kDivide>(v, k.y));
}

// Whole vectors of [begin, begin + len) of a same-shaped a and b in one pass:
// each operand dequantized, combined and quantized in registers, in
// RunChunk's float order (so bit-equal to it). The three 256-value buffers
// that pass goes through cost 2.4x ONNX Runtime's time on [1, 256, 56, 56].
// Sixty-four values a step, narrowed to bytes by two packs and one permute:
// a saturating narrow per 16 (vpmovusdb, two micro-ops on a Zen 4) took a
// third of the loop's samples. The operands' signedness is read once into
// locals: a byte store may alias the parameters, so the compiler re-read
// them and branched on them for every vector. Returns how many elements it
// did (a multiple of 16).
template <bool kAdd, bool kRelu, bool kDivide, bool kHuge>
__attribute__((target("avx512f,avx512bw"))) int64_t FusedVectors(const QuantizedBinary& p, const void* a, const void* b,
                                                                 void* y, int64_t begin, int64_t len) {
  const bool y_signed = p.y_signed;
  const FusedOperands k{
      _mm512_set1_ps(p.a_zero),
      _mm512_set1_ps(p.a_scale),
      _mm512_set1_ps(p.b_zero),
      _mm512_set1_ps(p.b_scale),
      p.a_signed,
      p.b_signed,
      MakeQuantizeConstants(p.y_scale, p.y_zero, y_signed ? -128.0f : 0.0f, y_signed ? 127.0f : 255.0f)};
  auto* out = static_cast<uint8_t*>(y);
  const auto sixteen = QuantizedSixteen<kAdd, kRelu, kDivide, kHuge>;
  const auto zero = static_cast<int32_t>(p.y_zero);
  const __m512i zero16 = _mm512_set1_epi16(static_cast<int16_t>(zero)), zero32 = _mm512_set1_epi32(zero);
  const __m512i lo32 = _mm512_set1_epi32(y_signed ? -128 : 0), hi32 = _mm512_set1_epi32(y_signed ? 127 : 255);
  // The packs interleave their operands by 128-bit lane: dword k of the
  // packed bytes holds 4 values of vector k % 4, 128-bit lane k / 4.
  const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  int64_t i = 0;
  for (; i + 64 <= len; i += 64) {
    const int64_t at = begin + i;
    const __m512i q0 = sixteen(k, a, b, at), q1 = sixteen(k, a, b, at + 16);
    const __m512i q2 = sixteen(k, a, b, at + 32), q3 = sixteen(k, a, b, at + 48);
    __m512i low = _mm512_packs_epi32(q0, q1), high = _mm512_packs_epi32(q2, q3);
    if (kDivide) low = _mm512_adds_epi16(low, zero16), high = _mm512_adds_epi16(high, zero16);
    const __m512i bytes = y_signed ? _mm512_packs_epi16(low, high) : _mm512_packus_epi16(low, high);
    _mm512_storeu_si512(out + at, _mm512_permutexvar_epi32(order, bytes));
  }
  for (; i + 16 <= len; i += 16) {
    __m512i iv = sixteen(k, a, b, begin + i);
    // Zero point and range as the packs give them (iv held within ±2^30 first, so the sum cannot wrap).
    if (kDivide) {
      iv = _mm512_add_epi32(_mm512_max_epi32(iv, _mm512_set1_epi32(-(1 << 30))), zero32);
      iv = _mm512_min_epi32(_mm512_max_epi32(iv, lo32), hi32);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + begin + i),
                     y_signed ? _mm512_cvtsepi32_epi8(iv) : _mm512_cvtusepi32_epi8(iv));
  }
  return i;
}
#pragma GCC diagnostic pop
#endif

#ifdef AIC_HAVE_AVX2_MATH
// 0x80 in every byte for a signed operand (a ^ 0x80 = a + 128), else 0.
AIC_AVX2 inline __m256i SignFlip(bool is_signed) { return _mm256_set1_epi8(is_signed ? static_cast<char>(0x80) : 0); }

// A zero point in every int32 lane, moved by 128 with a signed operand's
// bytes (SignFlip), so (a - zero) is unchanged.
AIC_AVX2 inline __m256i UnsignedZero(float zero, bool is_signed) {
  return _mm256_set1_epi32(static_cast<int32_t>(zero) + (is_signed ? 128 : 0));
}

// 32 unsigned bytes as four vectors of int32 less `zero`, in the order of
// the in-lane unpacks (undone by the in-lane packs that narrow the result).
AIC_AVX2 inline void WidenLessZero(__m256i bytes, __m256i zero, __m256i out[4]) {
  const __m256i z = _mm256_setzero_si256();
  const __m256i lo = _mm256_unpacklo_epi8(bytes, z), hi = _mm256_unpackhi_epi8(bytes, z);
  out[0] = _mm256_sub_epi32(_mm256_unpacklo_epi16(lo, z), zero);
  out[1] = _mm256_sub_epi32(_mm256_unpackhi_epi16(lo, z), zero);
  out[2] = _mm256_sub_epi32(_mm256_unpacklo_epi16(hi, z), zero);
  out[3] = _mm256_sub_epi32(_mm256_unpackhi_epi16(hi, z), zero);
}

// FusedVectors for CPUs with AVX2 but not AVX-512, 32 elements a step,
// quantizing as QuantizeLinear defines it (avx2::QuantizedBytes'
// arithmetic) so bit-equal to RunChunk. Signed operands are read as unsigned
// bytes, a ^ 0x80 = a + 128 with the zero point moved by 128 too, so every
// (a - zero) is unchanged and one loop serves each signedness without a
// branch in it (a branch per operand and vector ran 1.5x slower). Bytes are
// widened by in-lane unpacks whose interleaving the packs at the end undo,
// and zero points subtracted and added as integers (exact at these sizes).
// The buffered passes took 1.4-3.5x ONNX Runtime's time on a Zen 3 (QDQ Add
// of u8 [1,256,56,56] and [1,1024,14,14], run_ops.py); returns how many
// elements it did (a multiple of 32).
template <bool kAdd, bool kRelu>
AIC_AVX2 int64_t FusedVectorsAvx2(const QuantizedBinary& p, const void* a, const void* b, void* y, int64_t begin,
                                  int64_t len) {
  const __m256i a_flip = SignFlip(p.a_signed), b_flip = SignFlip(p.b_signed), y_flip = SignFlip(p.y_signed);
  const __m256i a_zero = UnsignedZero(p.a_zero, p.a_signed), b_zero = UnsignedZero(p.b_zero, p.b_signed);
  const __m256i y_zero = UnsignedZero(p.y_zero, p.y_signed);
  const __m256 a_scale = _mm256_set1_ps(p.a_scale), b_scale = _mm256_set1_ps(p.b_scale);
  const avx2::QuantizeConstants y_quantize = avx2::MakeQuantizeConstants(p.y_scale, 0.0f, 0.0f, 0.0f, QuantizeByDivision());
  // Rounded quotients are clamped here before the conversion to int32 (which
  // cannot hold every float); the int16 and uint8 packs saturate the rest.
  // vmaxps returns its second operand for NaN: NaN becomes -2^22, then the
  // type's lowest value, as QuantizeLinear maps NaN.
  const __m256 limit = _mm256_set1_ps(4194304.0f), neg_limit = _mm256_set1_ps(-4194304.0f);
  const auto* a8 = static_cast<const uint8_t*>(a);
  const auto* b8 = static_cast<const uint8_t*>(b);
  auto* y8 = static_cast<uint8_t*>(y);
  int64_t i = 0;
  for (; i + 32 <= len; i += 32) {
    const int64_t at = begin + i;
    __m256i ia[4], ib[4], iy[4];
    WidenLessZero(_mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a8 + at)), a_flip), a_zero, ia);
    WidenLessZero(_mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b8 + at)), b_flip), b_zero, ib);
    // Unrolled so ia, ib and iy stay in registers (rolled, GCC kept them on
    // the stack: a store and reload per vector, 2.7x ORT's time).
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      __m256 fa = _mm256_mul_ps(_mm256_cvtepi32_ps(ia[k]), a_scale);
      __m256 fb = _mm256_mul_ps(_mm256_cvtepi32_ps(ib[k]), b_scale);
      // Each product rounded, as RunChunk's: GCC contracts a product and the
      // sum into one FMA here (FMA enabled, -ffp-contract=fast), one rounding
      // fewer, which moved some ties by a step. The empty asm makes each a
      // value of its own.
      asm("" : "+x"(fa), "+x"(fb));
      __m256 v = kAdd ? _mm256_add_ps(fa, fb) : _mm256_mul_ps(fa, fb);
      // v < 0 ? 0 : v, NaN kept: vmaxps returns its second operand when one is NaN.
      if (kRelu) v = _mm256_max_ps(_mm256_setzero_ps(), v);
      __m256 q = avx2::RoundedQuotient(v, y_quantize);
      q = _mm256_min_ps(_mm256_max_ps(q, neg_limit), limit);
      iy[k] = _mm256_add_epi32(_mm256_cvtps_epi32(q), y_zero);
    }
    const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(iy[0], iy[1]), _mm256_packs_epi32(iy[2], iy[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y8 + at), _mm256_xor_si256(bytes, y_flip));
  }
  return i;
}
#endif

}  // namespace

void RunQuantizedBinary(const QuantizedBinary& p, const void* a, const void* b, void* y, int64_t n) {
  std::vector<float> bd;
  if (p.b_broadcast) {
    bd.resize(static_cast<size_t>(p.b_count));
    DequantizeAny(b, p.b_signed, 0, bd.data(), p.b_count, p.b_scale, p.b_zero);
  }
#ifdef AIC_QUANTIZE_AVX512
  static const bool avx512bw = __builtin_cpu_supports("avx512bw");
  if (!p.b_broadcast && QuantizeRunIsVectorized(p.y_scale) && avx512bw) {
    using Fused = int64_t (*)(const QuantizedBinary&, const void*, const void*, void*, int64_t, int64_t);
    static constexpr Fused kFused[2][2][2][2] = {
        {{{FusedVectors<false, false, false, false>, FusedVectors<false, false, false, true>},
          {FusedVectors<false, false, true, false>, FusedVectors<false, false, true, true>}},
         {{FusedVectors<false, true, false, false>, FusedVectors<false, true, false, true>},
          {FusedVectors<false, true, true, false>, FusedVectors<false, true, true, true>}}},
        {{{FusedVectors<true, false, false, false>, FusedVectors<true, false, false, true>},
          {FusedVectors<true, false, true, false>, FusedVectors<true, false, true, true>}},
         {{FusedVectors<true, true, false, false>, FusedVectors<true, true, false, true>},
          {FusedVectors<true, true, true, false>, FusedVectors<true, true, true, true>}}}};
    // The largest |quotient| the scales allow: |a - a_zero| and |b - b_zero| are at most 255.
    const double fa = 255.0 * std::fabs(p.a_scale), fb = 255.0 * std::fabs(p.b_scale);
    const bool huge = (p.add ? fa + fb : fa * fb) / std::fabs(p.y_scale) >= 0x1p29;
    const Fused fused = kFused[p.add][p.relu][QuantizeByDivision()][huge];
    ParallelPieces(n, [&](int64_t begin, int64_t len) {
      const int64_t done = fused(p, a, b, y, begin, len);
      if (done < len) RunChunk(p, a, b, nullptr, y, begin + done, len - done);
    });
    return;
  }
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (!p.b_broadcast && avx2::HaveAvx2Fma() && !QuantizeRunIsVectorized(p.y_scale)) {
    using Fused = int64_t (*)(const QuantizedBinary&, const void*, const void*, void*, int64_t, int64_t);
    static constexpr Fused kFused[2][2] = {{FusedVectorsAvx2<false, false>, FusedVectorsAvx2<false, true>},
                                           {FusedVectorsAvx2<true, false>, FusedVectorsAvx2<true, true>}};
    const Fused fused = kFused[p.add][p.relu];
    ParallelPieces(n, [&](int64_t begin, int64_t len) {
      const int64_t done = fused(p, a, b, y, begin, len);
      if (done < len) RunChunk(p, a, b, nullptr, y, begin + done, len - done);
    });
    return;
  }
#endif
  ParallelPieces(n, [&](int64_t begin, int64_t len) {
    for (int64_t c = 0; c < len;) {
      int64_t piece = std::min(kChunk, len - c);
      if (p.b_broadcast && p.b_inner == 1) piece = std::min(piece, p.b_count - (begin + c) % p.b_count);
      RunChunk(p, a, b, bd.data(), y, begin + c, piece);
      c += piece;
    }
  });
}

}  // namespace aic::cpu::kernels
