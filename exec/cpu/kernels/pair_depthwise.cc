#include "exec/cpu/kernels/pair_depthwise.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "exec/cpu/kernels/pair_gemm.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/requantize_avx2.h"

namespace aic::cpu::kernels {

namespace {

constexpr int64_t kBlock = 16;  // outputs per step: two int32 vectors

#ifdef AIC_HAVE_AVX2_MATH
// out[o] for o in [0, grid) of one output channel, over its phase planes:
// requantized bytes (k set) or, for ConvInteger, the int32 sums or
// f32(sum)·scale (f32_scale set).
AIC_AVX2 void ChannelAvx2(const int16_t* planes, const int64_t* offsets, const int32_t* weight_pairs,
                          int64_t tap_pairs, int64_t grid, int32_t bias, double scale,
                          const avx2::RequantizeConstants* k, const float* f32_scale, void* out) {
  const __m256i b = _mm256_set1_epi32(bias);
  const __m256d s = _mm256_set1_pd(scale);
  for (int64_t o = 0; o < grid; o += kBlock) {
    // unpack interleaves within 128-bit lanes: a holds outputs 0-3 | 8-11,
    // c holds 4-7 | 12-15.
    __m256i a = _mm256_setzero_si256(), c = _mm256_setzero_si256();
    for (int64_t t = 0; t < tap_pairs; ++t) {
      const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(planes + offsets[2 * t] + o));
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(planes + offsets[2 * t + 1] + o));
      const __m256i w = _mm256_set1_epi32(weight_pairs[t]);
      a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_unpacklo_epi16(v0, v1), w));
      c = _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_unpackhi_epi16(v0, v1), w));
    }
    const __m256i lo = _mm256_add_epi32(_mm256_permute2x128_si256(a, c, 0x20), b);
    const __m256i hi = _mm256_add_epi32(_mm256_permute2x128_si256(a, c, 0x31), b);
    if (k != nullptr) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(out) + o),
                       avx2::RequantizeSixteen(lo, hi, nullptr, s, *k));
    } else if (f32_scale != nullptr) {
      const __m256 fs = _mm256_set1_ps(*f32_scale);
      float* y = static_cast<float*>(out) + o;
      _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(lo), fs));
      _mm256_storeu_ps(y + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(hi), fs));
    } else {
      int32_t* y = static_cast<int32_t*>(out) + o;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y), lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + 8), hi);
    }
  }
}
#endif

}  // namespace

bool PairDepthwiseConv::Covers(const PairConvShape& s) {
  return s.in[0] == 1 && s.out[0] == 1 && s.kernel[0] == 1 && s.groups > 1 && s.groups == s.in_channels &&
         s.out_channels % s.groups == 0;
}

PairDepthwiseConv::PairDepthwiseConv(const PairConvShape& shape, const void* w, bool w_signed, PairConvQuant quant)
    : s_(shape), q_(std::move(quant)) {
  static std::atomic<uint64_t> next_id{1};
  id_ = next_id++;
  multiplier_ = s_.out_channels / s_.in_channels;
  const int64_t kh = s_.kernel[1], kw = s_.kernel[2], sh = s_.stride[1], sw = s_.stride[2];
  const int64_t dh = s_.dilation[1], dw = s_.dilation[2];
  taps_ = kh * kw;
  tap_pairs_ = (taps_ + 1) / 2;
  // The padded extent the outputs read, split by stride phase.
  const int64_t padded_h = (s_.out[1] - 1) * sh + (kh - 1) * dh + 1;
  const int64_t padded_w = (s_.out[2] - 1) * sw + (kw - 1) * dw + 1;
  plane_rows_ = (padded_h + sh - 1) / sh;
  plane_cols_ = (padded_w + sw - 1) / sw;
  // Reads reach one block past the grid, from the largest tap offset.
  plane_size_ = plane_rows_ * plane_cols_ + plane_cols_ + kBlock;
  grid_ = (s_.out[1] * plane_cols_ + kBlock - 1) / kBlock * kBlock;
  for (int64_t i = 0; i < kh; ++i) {
    for (int64_t j = 0; j < kw; ++j) {
      const int64_t r = i * dh, c = j * dw;
      const int64_t phase = (r % sh) * sw + c % sw;
      tap_offsets_.push_back(phase * plane_size_ + (r / sh) * plane_cols_ + c / sw);
    }
  }
  if (taps_ % 2 != 0) tap_offsets_.push_back(tap_offsets_[0]);
  // The input columns of each column phase b: from the first ≡ b - pad_l
  // (mod sw) on, every sw-th, while inside the padded width.
  const int64_t in_w = s_.in[2], pad_l = s_.pad[2];
  const int64_t cols = std::max<int64_t>(0, std::min(in_w, plane_cols_ * sw - pad_l));
  for (int64_t b = 0; b < sw; ++b) {
    const int64_t first = ((b - pad_l) % sw + sw) % sw;
    if (first >= cols) continue;
    phase_columns_.push_back({first, (cols - first + sw - 1) / sw, b * plane_size_, (first + pad_l) / sw});
  }
  for (int64_t oc = 0; oc < s_.out_channels; ++oc) {
    const int32_t zero = q_.w_zero.empty() ? 0 : q_.w_zero[q_.w_zero.size() == 1 ? 0 : oc];
    auto weight = [&](int64_t t) -> int32_t {
      if (t >= taps_) return 0;
      const int64_t at = oc * taps_ + t;
      return (w_signed ? static_cast<const int8_t*>(w)[at] : static_cast<const uint8_t*>(w)[at]) - zero;
    };
    for (int64_t t = 0; t < tap_pairs_; ++t) {
      const uint32_t lo = static_cast<uint16_t>(weight(2 * t)), hi = static_cast<uint16_t>(weight(2 * t + 1));
      weight_pairs_.push_back(static_cast<int32_t>(lo | hi << 16));
    }
  }
}

void PairDepthwiseConv::Channel(const uint8_t* x_plane, int64_t c, int32_t x_zero, const float* f32_scale,
                                bool quantized, uint8_t* y_image) const {
#ifdef AIC_HAVE_AVX2_MATH
  const int64_t sh = s_.stride[1], sw = s_.stride[2], phases = sh * sw;
  const int64_t in_h = s_.in[1], in_w = s_.in[2], out_h = s_.out[1], out_w = s_.out[2];
  const int64_t pad_t = s_.pad[1];
  const int64_t padded_h = plane_rows_ * sh;
  // The planes' padding is zeroed when this conv takes the thread's buffer
  // over; its channels then rewrite only the interior.
  thread_local std::vector<int16_t> planes;
  thread_local std::vector<int32_t> grid_out;  // bytes, int32 or f32 by output kind
  thread_local uint64_t planes_owner = 0;
  if (planes_owner != id_) {
    planes.assign(static_cast<size_t>(phases * plane_size_), 0);
    planes_owner = id_;
  }
  grid_out.resize(static_cast<size_t>(grid_));  // 4 bytes an output, whatever the kind
  // x - x_zero into the phase planes; the border stays zero. Padded row r
  // is row r / sh of the phases (r % sh, ·), counted without divisions.
  const int64_t rows = std::min(in_h, padded_h - pad_t);
  int64_t phase_row = pad_t % sh, plane_row = pad_t / sh;
  for (int64_t ih = 0; ih < rows; ++ih) {
    int16_t* row = planes.data() + phase_row * sw * plane_size_ + plane_row * plane_cols_;
    const uint8_t* src = x_plane + ih * in_w;
    for (const PhaseColumns& p : phase_columns_) {
      WidenStrided(src + p.first, q_.x_signed, sw, p.count, x_zero, row + p.plane + p.column);
    }
    if (++phase_row == sh) {
      phase_row = 0;
      ++plane_row;
    }
  }
  const avx2::RequantizeConstants k = avx2::MakeRequantizeConstants(q_.y_zero, q_.y_signed, q_.sums_fit);
  const int64_t bytes = quantized ? 1 : 4;  // per output element
  const auto* grid_bytes = reinterpret_cast<const uint8_t*>(grid_out.data());
  for (int64_t m = 0; m < multiplier_; ++m) {
    const int64_t oc = c * multiplier_ + m;
    const double scale = quantized ? q_.scales[q_.scales.size() == 1 ? 0 : oc] : 1.0;
    const int32_t bias = quantized && !q_.bias.empty() ? q_.bias[oc] : 0;
    ChannelAvx2(planes.data(), tap_offsets_.data(), weight_pairs_.data() + oc * tap_pairs_, tap_pairs_, grid_, bias,
                scale, quantized ? &k : nullptr, f32_scale, grid_out.data());
    uint8_t* y = y_image + oc * out_h * out_w * bytes;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      std::memcpy(y + oh * out_w * bytes, grid_bytes + oh * plane_cols_ * bytes, static_cast<size_t>(out_w * bytes));
    }
  }
#else
  (void)x_plane, (void)c, (void)x_zero, (void)f32_scale, (void)quantized, (void)y_image;
#endif
}

void PairDepthwiseConv::Run(const void* x, void* y) const { Convolve(x, q_.x_zero, nullptr, true, y); }

void PairDepthwiseConv::RunSums(const void* x, int32_t x_zero, void* y, const float* scale) const {
  Convolve(x, x_zero, scale, false, y);
}

void PairDepthwiseConv::Convolve(const void* x, int32_t x_zero, const float* f32_scale, bool quantized,
                                 void* y) const {
  const int64_t in_plane = s_.in[1] * s_.in[2];
  const int64_t out_image = s_.out_channels * s_.out[1] * s_.out[2] * (quantized ? 1 : 4);  // bytes
  const int64_t channels = s_.in_channels;
  ParallelFor(s_.batch * channels, plane_size_ * multiplier_ * taps_, [&](int64_t i) {
    const int64_t b = i / channels, c = i % channels;
    Channel(static_cast<const uint8_t*>(x) + (b * channels + c) * in_plane, c, x_zero, f32_scale, quantized,
            static_cast<uint8_t*>(y) + b * out_image);
  });
}

}  // namespace aic::cpu::kernels
