// The patches are packed pair by pair: rows k and k+1 of the patch matrix
// (one input channel and kernel offset each, one value per output position)
// are built as int16 rows, then interleaved into the panels. A row is built
// output row by output row: the span of output columns whose input column
// lies inside the image is a strided run of the input row (widened 16 at a
// time for strides 1 and 2), the rest is zero.
#include "exec/cpu/kernels/pair_conv.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "exec/cpu/kernels/pair_gemm.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/vector_math_avx2.h"
#include "exec/cpu/kernels/widen_avx2.h"

namespace aic::cpu::kernels {

namespace {

// One patch row: output row by output row, zeros where the kernel tap falls
// in the padding, else the strided run of the input row widened 16 at a time
// (strides 1 and 2) into the row buffer. A last partial 16 is written whole:
// its excess lands in the row's trailing zeros or the next output row, both
// written after it (the buffer has 16 values of slack), and it reads past
// the run only while inside the image. All in one function: a call per
// output row cost more than the row for small images (RegNet's 37-group
// 7x7 convs). Geometry from the conv's shape; lo, hi: the output columns
// whose input column is inside the row; origin: the input column of output
// column 0.
struct PatchRowGeometry {
  const PairConvShape* s;
  int64_t kd, kh, lo, hi, origin;
  int32_t zero;
};

template <bool kSigned>
#ifdef AIC_HAVE_AVX2_MATH
AIC_AVX2
#endif
void BuildPatchRow(const PatchRowGeometry& g, const uint8_t* plane, const uint8_t* image_end, int64_t first,
                   int64_t last, int16_t* row) {
  using T = std::conditional_t<kSigned, int8_t, uint8_t>;
  const PairConvShape& s = *g.s;
  const int64_t out_h = s.out[1], out_w = s.out[2], sw = s.stride[2], count = g.hi - g.lo;
#ifdef AIC_HAVE_AVX2_MATH
  const __m256i z = _mm256_set1_epi16(static_cast<int16_t>(g.zero));
#endif
  // Output rows (od, oh) flattened, [first, last).
  for (int64_t r = first; r < last; ++r) {
    const int64_t od = r / out_h, oh = r % out_h;
    const int64_t id = od * s.stride[0] - s.pad[0] + g.kd * s.dilation[0];
    const int64_t ih = oh * s.stride[1] - s.pad[1] + g.kh * s.dilation[1];
    int16_t* dst = row + (r - first) * out_w;
    if (id < 0 || id >= s.in[0] || ih < 0 || ih >= s.in[1] || count == 0) {
      for (int64_t j = 0; j < out_w; ++j) dst[j] = 0;
      continue;
    }
    const T* src = reinterpret_cast<const T*>(plane + (id * s.in[1] + ih) * s.in[2] + g.lo * sw + g.origin);
    for (int64_t j = 0; j < g.lo; ++j) dst[j] = 0;
    int16_t* out = dst + g.lo;
    int64_t i = 0;
#ifdef AIC_HAVE_AVX2_MATH
    if (sw == 1) {
      for (; i < count && reinterpret_cast<const uint8_t*>(src + i + 16) <= image_end; i += 16) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), avx2::WidenSixteen<kSigned>(src + i, z));
      }
    } else if (sw == 2) {
      for (; i < count && reinterpret_cast<const uint8_t*>(src + 2 * i + 32) <= image_end; i += 16) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), avx2::WidenSixteenEven<kSigned>(src + 2 * i, z));
      }
    }
#endif
    for (; i < count; ++i) out[i] = static_cast<int16_t>(src[i * sw] - g.zero);
    for (int64_t j = g.hi; j < out_w; ++j) dst[j] = 0;
  }
}

}  // namespace

PairConv::PairConv(const PairConvShape& shape, const void* w, bool w_signed, PairConvQuant quant)
    : s_(shape), q_(std::move(quant)) {
  group_in_ = s_.in_channels / s_.groups;
  group_out_ = s_.out_channels / s_.groups;
  k_ = group_in_ * s_.kernel[0] * s_.kernel[1] * s_.kernel[2];
  k_pairs_ = PairCount(k_);
  positions_ = s_.out[0] * s_.out[1] * s_.out[2];
  // Output rows per block: packed patches of about 2 MB (k·positions·2 bytes).
  constexpr int64_t kBlockBytes = int64_t{2} << 20;
  const int64_t block_positions = std::max<int64_t>(kPairPanelCols, kBlockBytes / (4 * k_pairs_));
  block_rows_ = std::clamp<int64_t>(block_positions / s_.out[2], 1, s_.out[0] * s_.out[1]);
  pointwise_ = true;
  for (int d = 0; d < 3; ++d) {
    pointwise_ = pointwise_ && s_.kernel[d] == 1 && s_.stride[d] == 1 && s_.pad[d] == 0 && s_.in[d] == s_.out[d];
  }
  // w - w_zero per group, packed in row tiles.
  std::vector<int16_t> rows(static_cast<size_t>(group_out_ * k_));
  weights_.resize(static_cast<size_t>(s_.groups * PairRowsSize(group_out_, k_)));
  for (int64_t g = 0; g < s_.groups; ++g) {
    for (int64_t r = 0; r < group_out_; ++r) {
      const int64_t c = g * group_out_ + r;
      const int32_t zero = q_.w_zero.empty() ? 0 : q_.w_zero[q_.w_zero.size() == 1 ? 0 : c];
      for (int64_t i = 0; i < k_; ++i) {
        const int64_t at = c * k_ + i;
        const int32_t v = w_signed ? static_cast<const int8_t*>(w)[at] : static_cast<const uint8_t*>(w)[at];
        rows[r * k_ + i] = static_cast<int16_t>(v - zero);
      }
    }
    PackPairRows(rows.data(), k_, group_out_, k_, weights_.data() + g * PairRowsSize(group_out_, k_));
  }
  const int64_t kw = s_.kernel[2], sw = s_.stride[2], in_w = s_.in[2], out_w = s_.out[2];
  for (int64_t j = 0; j < kw; ++j) {
    const int64_t origin = j * s_.dilation[2] - s_.pad[2];  // input column of output column 0
    const int64_t lo = origin >= 0 ? 0 : (-origin + sw - 1) / sw;
    const int64_t last = in_w - 1 - origin;
    const int64_t hi = last < 0 ? 0 : std::min(out_w, last / sw + 1);
    col_lo_.push_back(std::min(lo, out_w));
    col_hi_.push_back(std::max(std::min(lo, out_w), hi));
    col_origin_.push_back(origin);
  }
}

int64_t PairConv::ScratchBytes() const { return PairPanelsSize(k_, block_rows_ * s_.out[2]) * 2; }

void PairConv::PackPair(const void* x_image, int32_t x_zero, int64_t g, int64_t p, int64_t first, int64_t last,
                        int16_t* panels) const {
  const int64_t in_plane = s_.in[0] * s_.in[1] * s_.in[2];
  const int64_t out_w = s_.out[2], begin = first * out_w, n = (last - first) * out_w;
  if (pointwise_) {
    // The patch rows are the input's channel planes.
    const auto* plane = static_cast<const uint8_t*>(x_image) + (g * group_in_ + 2 * p) * in_plane + begin;
    InterleavePairBytes(plane, 2 * p + 1 < k_ ? plane + in_plane : nullptr, q_.x_signed, n, x_zero, p, k_pairs_,
                        panels);
    return;
  }
  // Two rows of n positions, and the slack a row's last partial 16 may spill into.
  thread_local std::vector<int16_t> rows;
  rows.resize(static_cast<size_t>(2 * n + 16));
  const int64_t taps = s_.kernel[0] * s_.kernel[1] * s_.kernel[2];
  const auto* image = static_cast<const uint8_t*>(x_image);
  const uint8_t* image_end = image + s_.in_channels * in_plane;
  for (int64_t half = 0; half < 2; ++half) {
    const int64_t k = 2 * p + half;
    if (k >= k_) break;
    const int64_t c = g * group_in_ + k / taps, t = k % taps;
    const int64_t kd = t / (s_.kernel[1] * s_.kernel[2]), kh = t / s_.kernel[2] % s_.kernel[1], kw = t % s_.kernel[2];
    const PatchRowGeometry geometry{&s_, kd, kh, col_lo_[kw], col_hi_[kw], col_origin_[kw], x_zero};
    int16_t* row = rows.data() + half * n;
    if (q_.x_signed) {
      BuildPatchRow<true>(geometry, image + c * in_plane, image_end, first, last, row);
    } else {
      BuildPatchRow<false>(geometry, image + c * in_plane, image_end, first, last, row);
    }
  }
  InterleavePairRows(rows.data(), 2 * p + 1 < k_ ? rows.data() + n : nullptr, n, p, k_pairs_, panels);
}

void PairConv::Run(const void* x, void* y, void* scratch) const {
  PairGemmOutput out;
  out.kind = PairGemmOutput::Kind::kQuantize;
  out.zero = q_.y_zero;
  out.out_signed = q_.y_signed;
  out.per_row = true;
  out.sums_fit = q_.sums_fit;
  if (q_.scales.size() == 1) out.scale_one = q_.scales[0];
  Convolve(x, q_.x_zero, y, scratch, out);
}

void PairConv::RunSums(const void* x, int32_t x_zero, void* y, void* scratch, const float* scale) const {
  PairGemmOutput out;
  if (scale != nullptr) {
    out.kind = PairGemmOutput::Kind::kScaled;
    out.scale = *scale;
  }
  Convolve(x, x_zero, y, scratch, out);
}

void PairConv::Convolve(const void* x, int32_t x_zero, void* y, void* scratch, PairGemmOutput out) const {
  auto* panels = static_cast<int16_t*>(scratch);
  const int64_t in_image = s_.in_channels * s_.in[0] * s_.in[1] * s_.in[2];
  const int64_t out_bytes = out.kind == PairGemmOutput::Kind::kQuantize ? 1 : 4;
  out.ldy = positions_;
  const int64_t output_rows = s_.out[0] * s_.out[1];
  for (int64_t b = 0; b < s_.batch; ++b) {
    const void* image = static_cast<const uint8_t*>(x) + b * in_image;
    for (int64_t g = 0; g < s_.groups; ++g) {
      const int64_t c0 = g * group_out_;
      if (out.kind == PairGemmOutput::Kind::kQuantize) {
        out.bias = q_.bias.empty() ? nullptr : q_.bias.data() + c0;
        out.scales = q_.scales.size() == 1 ? nullptr : q_.scales.data() + c0;
      }
      // Output rows in blocks whose packed patches stay near L2 (a video
      // conv's whole patch matrix was 87 MB).
      for (int64_t first = 0; first < output_rows; first += block_rows_) {
        const int64_t last = std::min(output_rows, first + block_rows_);
        ParallelFor(k_pairs_, 2 * (last - first) * s_.out[2],
                    [&](int64_t p) { PackPair(image, x_zero, g, p, first, last, panels); });
        out.y = static_cast<uint8_t*>(y) + ((b * s_.out_channels + c0) * positions_ + first * s_.out[2]) * out_bytes;
        PairGemm(weights_.data() + g * PairRowsSize(group_out_, k_), group_out_, panels, k_pairs_,
                 (last - first) * s_.out[2], out);
      }
    }
  }
}

}  // namespace aic::cpu::kernels
