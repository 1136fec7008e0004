#include "exec/cpu/kernels/byte_lookup.h"

#include "exec/cpu/kernels/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define AIC_LOOKUP_VBMI 1
#endif

namespace aic::cpu::kernels {

namespace {

void PortableRun(const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table, uint8_t flip) {
  for (int64_t i = 0; i < n; ++i) y[i] = table[x[i] ^ flip];
}

#ifdef AIC_LOOKUP_VBMI
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void VbmiRun(const uint8_t* x, uint8_t* y, int64_t n,
                                                                  const uint8_t* table, uint8_t flip) {
  const __m512i t0 = _mm512_loadu_si512(table);
  const __m512i t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128);
  const __m512i t3 = _mm512_loadu_si512(table + 192);
  const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i idx = _mm512_xor_si512(_mm512_loadu_si512(x + i), vflip);
    // Bits 0-6 pick within a 128-byte half; bit 7 picks the half.
    __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
    __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
    __mmask64 upper = _mm512_movepi8_mask(idx);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(upper, lo, hi));
  }
  PortableRun(x + i, y + i, n - i, table, flip);
}
#pragma GCC diagnostic pop

bool HasVbmi() {
  static const bool has = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  return has;
}
#endif

}  // namespace

void LookupBytes(const uint8_t* x, uint8_t* y, int64_t n, const uint8_t* table, bool signed_index) {
  const uint8_t flip = signed_index ? 0x80 : 0;
  ParallelPieces(n, [&](int64_t begin, int64_t len) {
#ifdef AIC_LOOKUP_VBMI
    if (HasVbmi()) return VbmiRun(x + begin, y + begin, len, table, flip);
#endif
    PortableRun(x + begin, y + begin, len, table, flip);
  });
}

}  // namespace aic::cpu::kernels
