#include "exec/cpu/kernels/quantized_binary.h"

#include <algorithm>
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

// Whole vectors of [begin, begin + len) of a same-shaped a and b in one pass:
// each operand dequantized, combined and quantized in registers, in
// RunChunk's float order (so bit-equal to it). The three 256-value buffers
// that pass goes through cost 2.4x ONNX Runtime's time on [1, 256, 56, 56];
// returns how many elements it did (a multiple of 16).
template <bool kAdd, bool kRelu, bool kDivide>
__attribute__((target("avx512f"))) int64_t FusedVectors(const QuantizedBinary& p, const void* a, const void* b, void* y,
                                                        int64_t begin, int64_t len) {
  const __m512 a_zero = _mm512_set1_ps(p.a_zero), a_scale = _mm512_set1_ps(p.a_scale);
  const __m512 b_zero = _mm512_set1_ps(p.b_zero), b_scale = _mm512_set1_ps(p.b_scale);
  const QuantizeConstants c = MakeQuantizeConstants(p.y_scale, p.y_zero, p.y_signed ? -128.0f : 0.0f,
                                                    p.y_signed ? 127.0f : 255.0f);
  int64_t i = 0;
  for (; i + 16 <= len; i += 16) {
    const int64_t at = begin + i;
    __m512 fa = _mm512_mul_ps(_mm512_sub_ps(Widened(a, p.a_signed, at), a_zero), a_scale);
    __m512 fb = _mm512_mul_ps(_mm512_sub_ps(Widened(b, p.b_signed, at), b_zero), b_scale);
    asm("" : "+v"(fa), "+v"(fb));  // no FMA contraction: as FusedVectorsAvx2
    __m512 v = kAdd ? _mm512_add_ps(fa, fb) : _mm512_mul_ps(fa, fb);
    // v < 0 ? 0 : v, NaN kept: vmaxps returns its second operand when one is NaN.
    if (kRelu) v = _mm512_max_ps(_mm512_setzero_ps(), v);
    __m512i iv = _mm512_cvtps_epi32(QuantizedLanes<kDivide>(v, c));
    __m128i q = p.y_signed ? _mm512_cvtsepi32_epi8(iv) : _mm512_cvtusepi32_epi8(iv);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(y) + at), q);
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
  if (!p.b_broadcast && QuantizeRunIsVectorized(p.y_scale)) {
    using Fused = int64_t (*)(const QuantizedBinary&, const void*, const void*, void*, int64_t, int64_t);
    static constexpr Fused kFused[2][2][2] = {
        {{FusedVectors<false, false, false>, FusedVectors<false, false, true>},
         {FusedVectors<false, true, false>, FusedVectors<false, true, true>}},
        {{FusedVectors<true, false, false>, FusedVectors<true, false, true>},
         {FusedVectors<true, true, false>, FusedVectors<true, true, true>}}};
    const Fused fused = kFused[p.add][p.relu][QuantizeByDivision()];
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
