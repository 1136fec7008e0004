// How fast can a CPU without VNNI multiply uint8 activations by int8 weights
// exactly? Times GEMM inner loops that hold a 6x16 (or 4x8) output tile in
// registers over a packed operand that stays in L1, and prints multiply-adds
// per second for:
//   f32      FMA on floats;
//   s16      both operands widened to int16, VPMADDWD (exact): the project's
//            own pair kernel (exec/cpu/kernels/pair_gemm.h), what aic-onnx
//            runs QDQ and dynamically quantized products in on such CPUs, on
//            a 6 x 16 product of k = 512 (a 6x16 tile written here the same
//            way, at -O2 or -O3, had GCC hoist its six broadcasts and keep
//            the accumulators on the stack: half the speed);
//   nibble   weights split into signed nibbles, w = 16·hi + lo with hi, lo in
//            [-8, 8], two VPMADDUBSW whose pair sums stay far from int16's
//            bounds, accumulated in int16 for 8 steps (exact);
//   u8s8sat  one VPMADDUBSW then VPMADDWD by ones: ONNX Runtime's AVX2 form,
//            whose pair sums a0·w0 + a1·w1 saturate in int16 (not exact).
// Build and run (not part of the project's build):
//   g++ -O3 -march=native -fopenmp -I. bench/int8_products.cc exec/cpu/kernels/pair_gemm.cc \
//       -o /tmp/int8_products && OMP_NUM_THREADS=1 /tmp/int8_products
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "exec/cpu/kernels/pair_gemm.h"

namespace {

constexpr int kSteps = 256;  // k steps per call: both operands stay in L1

// One call: 6 rows x 16 columns of f32, k steps of one broadcast and two loads.
__attribute__((noinline)) void F32Tile(const float* a, const float* b, float* c) {
  __m256 acc[6][2];
  for (auto& r : acc) r[0] = r[1] = _mm256_setzero_ps();
  for (int k = 0; k < kSteps; ++k) {
    const __m256 b0 = _mm256_load_ps(b + 16 * k), b1 = _mm256_load_ps(b + 16 * k + 8);
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + 6 * k + r);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
  for (int r = 0; r < 6; ++r) {
    _mm256_storeu_ps(c + 16 * r, acc[r][0]);
    _mm256_storeu_ps(c + 16 * r + 8, acc[r][1]);
  }
}

// 4 x 8 int32, each step four k (bytes) per lane, weights as two nibble planes.
__attribute__((noinline)) void NibbleTile(const int32_t* a, const int8_t* b, int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1), sixteen = _mm256_set1_epi16(16);
  __m256i acc[4];
  for (auto& x : acc) x = _mm256_setzero_si256();
  for (int k0 = 0; k0 < kSteps; k0 += 8) {
    __m256i lo[4], hi[4];
    for (int r = 0; r < 4; ++r) lo[r] = hi[r] = _mm256_setzero_si256();
    for (int k = k0; k < k0 + 8; ++k) {
      const __m256i bl = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 64 * k));
      const __m256i bh = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 64 * k + 32));
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r) {
        const __m256i av = _mm256_set1_epi32(a[4 * k + r]);
        lo[r] = _mm256_add_epi16(lo[r], _mm256_maddubs_epi16(av, bl));
        hi[r] = _mm256_add_epi16(hi[r], _mm256_maddubs_epi16(av, bh));
      }
    }
    for (int r = 0; r < 4; ++r) {
      acc[r] = _mm256_add_epi32(acc[r], _mm256_add_epi32(_mm256_madd_epi16(lo[r], ones), _mm256_madd_epi16(hi[r], sixteen)));
    }
  }
  for (int r = 0; r < 4; ++r) _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + 8 * r), acc[r]);
}

// 6 x 16 int32 from 64 bytes of B a step (16 columns of int16 pairs, or of
// byte quads), `product(a, b)` the int32 lanes one instruction form makes of
// a broadcast A and a B vector.
template <typename Product>
__attribute__((noinline)) void IntTile(const int32_t* a, const int8_t* b, int32_t* c, Product product) {
  __m256i acc[6][2];
  // Every loop over the accumulators unrolled: rolled, GCC keeps them on the
  // stack (a load and a store per multiply: an earlier version of this file
  // measured VPMADDWD slower than FMA that way).
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
#pragma GCC unroll 2
  for (int k = 0; k < kSteps; ++k) {
    const __m256i b0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 64 * k));
    const __m256i b1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + 64 * k + 32));
#pragma GCC unroll 6
    for (int r = 0; r < 6; ++r) {
      const __m256i av = _mm256_set1_epi32(a[6 * k + r]);
      acc[r][0] = _mm256_add_epi32(acc[r][0], product(av, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], product(av, b1));
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < 6; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + 16 * r), acc[r][0]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + 16 * r + 8), acc[r][1]);
  }
}

// Each step four k (bytes) per lane: u8 by s8 pairs saturating in int16.
void SaturatingTile(const int32_t* a, const int8_t* b, int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1);
  IntTile(a, b, c, [ones](__m256i av, __m256i bv) { return _mm256_madd_epi16(_mm256_maddubs_epi16(av, bv), ones); });
}

alignas(64) float a_f32[6 * kSteps], b_f32[16 * kSteps], c_f32[96];
alignas(64) int32_t a_i32[6 * kSteps], c_i32[96];
alignas(64) int8_t b_s8[64 * kSteps];  // 16 columns of int16 pairs or byte quads a step

// Multiply-adds per second (billions) of `calls` calls of f, best of 5.
template <typename F>
double Gmacs(F f, double macs_per_call) {
  constexpr int kCalls = 50000;
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (macs_per_call * kCalls / s / 1e9 > best) best = macs_per_call * kCalls / s / 1e9;
  }
  return best;
}

}  // namespace

int main() {
  for (auto& x : a_f32) x = 1e-3f;
  for (auto& x : b_f32) x = 1e-3f;
  for (auto& x : a_i32) x = 0x01010101;
  for (auto& x : b_s8) x = 1;
  const double f32 = Gmacs([] { F32Tile(a_f32, b_f32, c_f32); }, 6.0 * 16 * kSteps);
  // The pair kernel: A (6 x k) and B (k x 16) as int16 with zero points
  // subtracted, packed as it packs them.
  constexpr int64_t kDepth = 512;
  std::vector<uint8_t> a8(6 * kDepth, 200);
  std::vector<int8_t> b8(kDepth * 16, -100);
  std::vector<int16_t> a16(static_cast<size_t>(aic::cpu::kernels::PairRowsSize(6, kDepth)));
  std::vector<int16_t> panels(static_cast<size_t>(aic::cpu::kernels::PairPanelsSize(kDepth, 16)));
  const int32_t a_zero = 3;
  aic::cpu::kernels::WidenPairRows(a8.data(), false, 6, kDepth, kDepth, &a_zero, 1, a16.data());
  aic::cpu::kernels::PackPairPanels(b8.data(), true, kDepth, 16, 16, nullptr, false, panels.data());
  aic::cpu::kernels::PairGemmOutput out;
  out.y = c_i32;
  out.ldy = 16;
  const double s16 = Gmacs(
      [&] { aic::cpu::kernels::PairGemm(a16.data(), 6, panels.data(), kDepth / 2, 16, out, false); },
      6.0 * 16 * kDepth);
  const double nibble = Gmacs([] { NibbleTile(a_i32, b_s8, c_i32); }, 4.0 * 8 * 4 * kSteps);
  const double sat = Gmacs([] { SaturatingTile(a_i32, b_s8, c_i32); }, 6.0 * 16 * 4 * kSteps);
  std::printf("multiply-adds per second, one core (best of 5):\n");
  std::printf("  f32 FMA                 %6.1f G   1.00x\n", f32);
  std::printf("  s16 VPMADDWD (exact)    %6.1f G   %.2fx\n", s16, s16 / f32);
  std::printf("  nibble VPMADDUBSW (exact) %4.1f G   %.2fx\n", nibble, nibble / f32);
  std::printf("  u8s8 VPMADDUBSW (saturating) %.1f G   %.2fx\n", sat, sat / f32);
  return c_f32[0] > 0 && c_i32[0] > 0 ? 0 : 1;
}
