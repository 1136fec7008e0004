#include "exec/cpu/kernels/quantize_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <vector>

#include "exec/cpu/kernels/parallel.h"

#include "exec/cpu/kernels/quantize_avx2.h"
#include "exec/cpu/kernels/quantize_avx512.h"

namespace aic::cpu::kernels {

namespace {

template <typename Q>
inline Q QuantizeOne(float x, float scale, float zero, float lo, float hi) {
  float v = std::nearbyint(x / scale) + zero;
  v = v >= lo ? v : lo;  // NaN saturates to lo (a defined cast; the spec leaves it open)
  v = v <= hi ? v : hi;
  return static_cast<Q>(v);
}

template <typename Q>
AIC_KERNEL_CLONES void PortableRun(const float* x, Q* y, int64_t n, float scale, float zero, float lo, float hi) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = QuantizeOne<Q>(x[i], scale, zero, lo, hi);
}

#ifdef AIC_QUANTIZE_AVX512
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <bool kSigned, bool kDivide>
__attribute__((target("avx512f"))) void Avx512Run(const float* x, void* out, int64_t n, float scale, float zero,
                                                  float lo, float hi) {
  auto* y = static_cast<uint8_t*>(out);
  const QuantizeConstants c = MakeQuantizeConstants(scale, zero, lo, hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i iv = _mm512_cvtps_epi32(QuantizedLanes<kDivide>(_mm512_loadu_ps(x + i), c));
    __m128i b = kSigned ? _mm512_cvtsepi32_epi8(iv) : _mm512_cvtusepi32_epi8(iv);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), b);
  }
  for (; i < n; ++i) {
    if (kSigned) {
      reinterpret_cast<int8_t*>(y)[i] = QuantizeOne<int8_t>(x[i], scale, zero, lo, hi);
    } else {
      y[i] = QuantizeOne<uint8_t>(x[i], scale, zero, lo, hi);
    }
  }
}
#pragma GCC diagnostic pop

template <bool kSigned>
void Avx512Pass(const float* x, void* out, int64_t n, float scale, float zero, float lo, float hi) {
  if (QuantizeByDivision()) {
    Avx512Run<kSigned, true>(x, out, n, scale, zero, lo, hi);
  } else {
    Avx512Run<kSigned, false>(x, out, n, scale, zero, lo, hi);
  }
}

// The fast pass needs a normal scale with a normal reciprocal (else x * (1/s)
// is no approximation of x / s).
#endif

#ifdef AIC_HAVE_AVX2_MATH
// Without AVX-512: the portable loop's nearbyint stays a scalar call per
// element (QDQ Add of u8 [1,256,56,56] took 3.5x ONNX Runtime's time on a
// Zen 3); quantize_avx2.h does the same arithmetic 8 lanes at a time.
template <bool kSigned>
AIC_AVX2 void Avx2Run(const float* x, void* out, int64_t n, float scale, float zero, float lo, float hi, bool divide) {
  auto* y = static_cast<uint8_t*>(out);
  const avx2::QuantizeConstants c = avx2::MakeQuantizeConstants(scale, zero, lo, hi, divide);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), avx2::QuantizedBytes(_mm256_loadu_ps(x + i), c, kSigned));
  }
  for (; i < n; ++i) {
    if (kSigned) {
      reinterpret_cast<int8_t*>(y)[i] = QuantizeOne<int8_t>(x[i], scale, zero, lo, hi);
    } else {
      y[i] = QuantizeOne<uint8_t>(x[i], scale, zero, lo, hi);
    }
  }
}
#endif

template <typename Q>
AIC_KERNEL_CLONES void DequantizeLoop(const Q* x, float* y, int64_t n, float scale, float zero) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zero) * scale;
}

}  // namespace

namespace {
std::atomic<int> forced_division{-1};
std::atomic<bool> forced_avx2{false};
}  // namespace

void ForceQuantizeByDivision(int mode) { forced_division.store(mode); }
bool ForceQuantizeWithoutAvx512(bool on) { return forced_avx2.exchange(on); }

bool QuantizeByDivision() {
  if (const int forced = forced_division.load(std::memory_order_relaxed); forced >= 0) return forced == 1;
  // Both ways give the same bytes, so the faster on this CPU is kept: each
  // times a pass over 16K values (best of 5), once per process (~0.1 ms), in
  // the widest form the CPU has.
  static const bool divide = [] {
    std::vector<float> x(16384);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1000) * 0.37f - 150.0f;
    std::vector<uint8_t> y(x.size());
    auto best = [&](auto run) {
      double fastest = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        run(x.data(), y.data(), static_cast<int64_t>(x.size()), 0.7f, 3.0f, 0.0f, 255.0f);
        fastest = std::min(fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return fastest;
    };
#ifdef AIC_QUANTIZE_AVX512
    if (__builtin_cpu_supports("avx512f")) return best(Avx512Run<false, true>) < best(Avx512Run<false, false>);
#endif
#ifdef AIC_HAVE_AVX2_MATH
    if (avx2::HaveAvx2Fma()) {
      auto run = [](bool divide) {
        return [divide](const float* x, void* y, int64_t n, float s, float z, float lo, float hi) {
          Avx2Run<false>(x, y, n, s, z, lo, hi, divide);
        };
      };
      return best(run(true)) < best(run(false));
    }
#endif
    return false;
  }();
  return divide;
}

bool QuantizeRunIsVectorized(float scale) {
#ifdef AIC_QUANTIZE_AVX512
  static const bool has = __builtin_cpu_supports("avx512f");
  return has && !forced_avx2.load(std::memory_order_relaxed) && std::isnormal(scale) && std::isnormal(1.0f / scale);
#else
  (void)scale;
  return false;
#endif
}

void DequantizeRunU8(const uint8_t* x, float* y, int64_t n, float scale, float zero) {
  DequantizeLoop(x, y, n, scale, zero);
}

void DequantizeRunS8(const int8_t* x, float* y, int64_t n, float scale, float zero) {
  DequantizeLoop(x, y, n, scale, zero);
}

void QuantizeRunU8(const float* x, uint8_t* y, int64_t n, float scale, float zero) {
#ifdef AIC_QUANTIZE_AVX512
  if (QuantizeRunIsVectorized(scale)) return Avx512Pass<false>(x, y, n, scale, zero, 0.0f, 255.0f);
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) return Avx2Run<false>(x, y, n, scale, zero, 0.0f, 255.0f, QuantizeByDivision());
#endif
  PortableRun(x, y, n, scale, zero, 0.0f, 255.0f);
}

void QuantizeRunS8(const float* x, int8_t* y, int64_t n, float scale, float zero) {
#ifdef AIC_QUANTIZE_AVX512
  if (QuantizeRunIsVectorized(scale)) return Avx512Pass<true>(x, y, n, scale, zero, -128.0f, 127.0f);
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (avx2::HaveAvx2Fma()) return Avx2Run<true>(x, y, n, scale, zero, -128.0f, 127.0f, QuantizeByDivision());
#endif
  PortableRun(x, y, n, scale, zero, -128.0f, 127.0f);
}

}  // namespace aic::cpu::kernels
