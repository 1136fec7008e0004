#include "exec/cpu/kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "exec/cpu/kernels/cast.h"
#include "exec/cpu/kernels/exp.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/vector_math_avx512.h"
#include "oneapi/dnnl/dnnl.h"

namespace aic::cpu::kernels {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The keys [lo, hi) that the frontier, the window, the valid-key end and the
// mask's width leave visible to the query at position `pos` (the mask's own
// values hide more).
struct KeyRange {
  int64_t lo, hi;
};

KeyRange VisibleKeys(const AttentionGeometry& g, int64_t pos, int64_t key_end) {
  int64_t lo = 0, hi = g.total_seq;
  if (g.causal) hi = std::min(hi, pos + 1);
  if (g.right_window >= 0) hi = std::min(hi, pos + g.right_window + 1);
  if (g.left_window >= 0) lo = std::max<int64_t>(lo, pos - g.left_window);
  hi = std::min(hi, key_end);
  if (g.mask != AttentionGeometry::Mask::kNone) hi = std::min(hi, g.mask_cols);
  return {lo, std::max(lo, hi)};
}

// Reductions over a row with kLanes partial results side by side: GCC
// vectorizes these fixed-width inner loops, which it does not do for the
// same reductions written as one running scalar (floating-point order).
constexpr int kLanes = 16;

AIC_KERNEL_CLONES float MaxOf(const float* x, int64_t n) {
  float lane[kLanes];
  std::fill(lane, lane + kLanes, kNegInf);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
  }
  float m = kNegInf;
  for (int l = 0; l < kLanes; ++l) m = lane[l] > m ? lane[l] : m;
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

#ifdef AIC_HAVE_AVX2_MATH
// ExpInPlaceSum with AVX2 and FMA (avx2::ExpOfNonPositive: x - max <= 0;
// 2 ulp, and flushing below FLT_MIN, as ExpApprox): the AIC_KERNEL_CLONES
// avx2 clone has no FMA, and ExpApprox compiled there took about a third of
// a ViT's attention on a Zen 3.
AIC_AVX2 float ExpInPlaceSumAvx2(float* x, int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 e = avx2::ExpOfNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + j), s));
    _mm256_storeu_ps(x + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = avx2::HorizontalSum(acc);
  for (; j < n; ++j) {
    x[j] = ExpApprox(x[j] - shift);
    sum += x[j];
  }
  return sum;
}
#endif

#ifdef AIC_HAVE_AVX512_MATH
AIC_AVX512_BEGIN
// ExpInPlaceSum with AVX-512 (avx512::Exp, 2 ulp), results under FLT_MIN
// (x - shift < -87.34) flushed to 0 as ExpApprox does, so the weights never
// reach the second GEMM as subnormals; NaN stays NaN. The AIC_KERNEL_CLONES
// form compiled ExpApprox lane by lane in 16-float arrays: 14% of an
// encoder attention's time ([1, 12, 128, 128] scores, 1 thread: 1.14x ONNX
// Runtime's).
AIC_AVX512 float ExpInPlaceSumAvx512(float* x, int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  const __m512 floor = _mm512_set1_ps(-87.3365447f);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = n - j >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - j)) - 1);
    const __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + j), s);
    const __m512 e = _mm512_mask_mov_ps(avx512::Exp(d), _mm512_cmp_ps_mask(d, floor, _CMP_LT_OQ), _mm512_setzero_ps());
    _mm512_mask_storeu_ps(x + j, m, e);
    acc = _mm512_mask_add_ps(acc, m, acc, e);
  }
  return _mm512_reduce_add_ps(acc);
}
AIC_AVX512_END
#endif

// x[j] = e^(x[j] - shift); returns their sum.
AIC_KERNEL_CLONES float ExpInPlaceSumPortable(float* x, int64_t n, float shift) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      float e = ExpApprox(x[j + l] - shift);
      x[j + l] = e;
      lane[l] += e;
    }
  }
  float sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += lane[l];
  for (; j < n; ++j) {
    x[j] = ExpApprox(x[j] - shift);
    sum += x[j];
  }
  return sum;
}

float ExpInPlaceSum(float* x, int64_t n, float shift) {
#ifdef AIC_HAVE_AVX512_MATH
  if (avx512::HaveAvx512()) return ExpInPlaceSumAvx512(x, n, shift);
#endif
#ifdef AIC_HAVE_AVX2_MATH
  if (!avx512::HaveAvx512() && avx2::HaveAvx2Fma()) return ExpInPlaceSumAvx2(x, n, shift);
#endif
  return ExpInPlaceSumPortable(x, n, shift);
}

// One score row -> its unnormalized softmax weights in place (softcap, then
// the bias, then e^(s - max) over [lo, hi), zeros outside it); returns the
// factor 1/sum that normalizes them, which the caller applies to the row of
// Y instead (v_head values, not total_seq). 0 when no key is visible: the
// query gives zeros. Every pass is one vectorized loop. A NaN score needs no
// test of its own: it makes the sum NaN and so the whole row, as in the
// reference kernel.
AIC_KERNEL_CLONES float WeighRow(const AttentionGeometry& g, float* s, KeyRange r, const void* mask_row) {
  const int64_t n = g.total_seq, width = r.hi - r.lo;
  float* row = s + r.lo;
  if (g.softcap > 0) {
    const float cap = g.softcap, inv = 1.0f / g.softcap;
    for (int64_t j = 0; j < width; ++j) row[j] = cap * std::tanh(row[j] * inv);
  }
  // The mask applied in one vectorized pass; whether it left any key
  // visible is asked only when no score is above -inf (counting visible keys
  // in the same loop kept it scalar: 1.2 ms of 7 on BERT-base's attention at
  // batch 8).
  if (g.mask == AttentionGeometry::Mask::kBool) {
    const uint8_t* m = static_cast<const uint8_t*>(mask_row) + r.lo;
    for (int64_t j = 0; j < width; ++j) row[j] = m[j] != 0 ? row[j] : kNegInf;
  } else if (g.mask == AttentionGeometry::Mask::kFloat) {
    const float* m = static_cast<const float*>(mask_row) + r.lo;
    for (int64_t j = 0; j < width; ++j) row[j] += m[j];
  }
  const float mx = MaxOf(row, width);
  if (mx == kNegInf && g.mask != AttentionGeometry::Mask::kNone) {
    bool visible = false;
    if (g.mask == AttentionGeometry::Mask::kBool) {
      const uint8_t* m = static_cast<const uint8_t*>(mask_row) + r.lo;
      for (int64_t j = 0; j < width && !visible; ++j) visible = m[j] != 0;
    } else {
      const float* m = static_cast<const float*>(mask_row) + r.lo;
      for (int64_t j = 0; j < width && !visible; ++j) visible = m[j] != kNegInf;
    }
    if (!visible) {
      std::fill(s, s + n, 0.0f);
      return 0.0f;
    }
  }
  // A visible key whose score is -inf (inputs of inf) leaves mx at -inf:
  // shift by 0 as the reference does, so exp gives zeros, not NaN.
  const float sum = ExpInPlaceSum(row, width, mx == kNegInf ? 0.0f : mx);
  std::fill(s, s + r.lo, 0.0f);
  std::fill(s + r.hi, s + n, 0.0f);
  return sum == 0 ? 1.0f : 1.0f / sum;
}

AIC_KERNEL_CLONES void ScaleRow(float* y, int64_t n, float factor) {
  for (int64_t c = 0; c < n; ++c) y[c] *= factor;
}

// One query head (batch b, head h) over f32 rows at the given strides: its
// Y rows = softmax(...)·V, the same for AttentionF32 and AttentionHalf.
void AttendHead(const AttentionGeometry& g, int64_t b, int64_t h, const float* qb, int64_t q_stride, const float* kb,
                int64_t k_stride, const float* vb, int64_t v_stride, const void* mask, const int64_t* offset,
                const int64_t* key_end, float* yb, int64_t y_stride) {
  const int64_t rows = g.q_seq, n = g.total_seq;
  const size_t mask_bytes = g.mask == AttentionGeometry::Mask::kBool ? 1 : 4;
  if (n == 0) {
    for (int64_t i = 0; i < rows; ++i) std::fill(yb + i * y_stride, yb + i * y_stride + g.v_head, 0.0f);
    return;
  }
  thread_local std::vector<float> scores;
  scores.resize(static_cast<size_t>(rows * n));
  dnnl_sgemm('N', 'T', rows, n, g.head, g.scale, qb, q_stride, kb, k_stride, 0.0f, scores.data(), n);
  thread_local std::vector<float> norm;
  norm.resize(static_cast<size_t>(rows));
  const int64_t end = key_end != nullptr ? key_end[b] : n;
  for (int64_t i = 0; i < rows; ++i) {
    const void* mask_row = nullptr;
    if (g.mask != AttentionGeometry::Mask::kNone) {
      int64_t at = b * g.mask_batch + h * g.mask_head + i * g.mask_row;
      mask_row = static_cast<const char*>(mask) + static_cast<size_t>(at) * mask_bytes;
    }
    norm[static_cast<size_t>(i)] = WeighRow(g, scores.data() + i * n, VisibleKeys(g, offset[b] + i, end), mask_row);
  }
  dnnl_sgemm('N', 'N', rows, g.v_head, n, 1.0f, scores.data(), n, vb, v_stride, 0.0f, yb, y_stride);
  for (int64_t i = 0; i < rows; ++i) ScaleRow(yb + i * y_stride, g.v_head, norm[static_cast<size_t>(i)]);
}

// `count` rows of `size` halves `stride` apart widened into dense f32 rows.
void WidenRows(const uint16_t* x, int64_t stride, int64_t count, int64_t size, std::vector<float>& out) {
  out.resize(static_cast<size_t>(count * size));
  if (stride == size) return HalfToFloatRow(x, out.data(), count * size);
  for (int64_t r = 0; r < count; ++r) HalfToFloatRow(x + r * stride, out.data() + r * size, size);
}

}  // namespace

void AttentionF32(const AttentionGeometry& g, const float* q, const float* k, const float* v, const void* mask,
                  const int64_t* offset, const int64_t* key_end, float* y) {
  const int64_t group = g.q_heads / g.kv_heads;
  ParallelFor(g.batch * g.q_heads, g.q_seq * g.total_seq * (g.head + g.v_head), [&](int64_t item) {
    const int64_t b = item / g.q_heads, h = item % g.q_heads, kh = h / group;
    AttendHead(g, b, h, q + b * g.q.batch + h * g.q.head, g.q.seq, k + b * g.k.batch + kh * g.k.head, g.k.seq,
               v + b * g.v.batch + kh * g.v.head, g.v.seq, mask, offset, key_end, y + b * g.y.batch + h * g.y.head,
               g.y.seq);
  });
}

void AttentionHalf(const AttentionGeometry& g, const uint16_t* q, const uint16_t* k, const uint16_t* v,
                   const void* mask, const int64_t* offset, const int64_t* key_end, uint16_t* y) {
  const int64_t group = g.q_heads / g.kv_heads;
  // Items are (batch, kv head, part of its query heads): parts only where
  // the groups alone are too few for the threads (one kv head: multi-query
  // attention), each part then widening the group's K and V itself.
  const int64_t groups = g.batch * g.kv_heads;
  const int64_t wanted = 2 * static_cast<int64_t>(omp_get_max_threads());
  const int64_t parts = std::min(group, std::max<int64_t>(1, (wanted + groups - 1) / groups));
  const int64_t per_part = (group + parts - 1) / parts;
  const int64_t head_work = g.q_seq * g.total_seq * (g.head + g.v_head);
  ParallelFor(groups * parts, per_part * head_work, [&](int64_t item) {
    const int64_t part = item % parts, b = item / parts / g.kv_heads, kh = item / parts % g.kv_heads;
    const int64_t h0 = kh * group + part * per_part, h1 = std::min(kh * group + group, h0 + per_part);
    if (h0 >= h1) return;
    thread_local std::vector<float> kf, vf, qf, yf;
    WidenRows(k + b * g.k.batch + kh * g.k.head, g.k.seq, g.total_seq, g.head, kf);
    WidenRows(v + b * g.v.batch + kh * g.v.head, g.v.seq, g.total_seq, g.v_head, vf);
    yf.resize(static_cast<size_t>(g.q_seq * g.v_head));
    for (int64_t h = h0; h < h1; ++h) {
      WidenRows(q + b * g.q.batch + h * g.q.head, g.q.seq, g.q_seq, g.head, qf);
      AttendHead(g, b, h, qf.data(), g.head, kf.data(), g.head, vf.data(), g.v_head, mask, offset, key_end, yf.data(),
                 g.v_head);
      uint16_t* yb = y + b * g.y.batch + h * g.y.head;
      for (int64_t i = 0; i < g.q_seq; ++i) FloatToHalfRow(yf.data() + i * g.v_head, yb + i * g.y.seq, g.v_head);
    }
  });
}

}  // namespace aic::cpu::kernels
